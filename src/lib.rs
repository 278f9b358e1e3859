//! quarry: a full-text search core with a stable C ABI.
//!
//! Documents go in through an [`IndexWriter`], which writes immutable
//! segments and publishes them atomically with a commit. A [`Searcher`]
//! maps one committed snapshot and answers ranked (BM25) top-k queries
//! whose results are exactly what an exhaustive evaluation returns.
//!
//! ```no_run
//! use quarry::{FieldFlags, FieldType, IndexWriter, Query, Schema, SearchRequest, Searcher, WriterConfig};
//!
//! let mut schema = Schema::new();
//! let body = schema.add_field("body", FieldType::Text, FieldFlags::default())?;
//! let mut writer = IndexWriter::create("/tmp/idx", &schema, WriterConfig::default())?;
//! let mut doc = quarry::Document::new();
//! doc.add_str(body, "the quick brown fox");
//! writer.add_document(&doc)?;
//! writer.commit()?;
//!
//! let searcher = Searcher::open("/tmp/idx")?;
//! let hits = searcher.search(&Query::term(body, "fox"), &SearchRequest::top(10))?;
//! assert_eq!(hits.total_hits, 1);
//! # Ok::<(), quarry::Error>(())
//! ```
//!
//! `ARCHITECTURE.md` walks through the modules; `docs/FORMAT.md` describes
//! every byte on disk.

#![warn(missing_docs)]

pub mod analysis;
pub mod capi;
pub mod check;
pub mod collect;
mod document;
mod error;
pub mod format;
pub mod highlight;
#[doc(hidden)]
pub mod kernels;
pub mod query;
pub mod read;
mod schema;
mod searcher;
pub mod write;

pub use analysis::{Analyzer, Token};
pub use collect::{Hit, SortKey, SortRule, SortSpec, compare_values};
pub use document::{Document, Value};
pub use error::{Error, Result};
pub use format::stats::CorpusStats;
pub use highlight::{Escape, HighlightOptions};
pub use query::parser::ParserConfig;
pub use query::{Bound, Occur, Operator, Query};
pub use read::ReadMode;
pub use schema::{FieldDef, FieldFlags, FieldId, FieldType, Schema};
pub use searcher::{
    ExecMode, Hits, SearchOptions, SearchRequest, Searcher, Switch, TotalMode, merge_hits,
    merge_order,
};
pub use write::{IndexWriter, WriterConfig};
