//! Where a compiled query's corpus statistics come from.
//!
//! BM25 takes four kinds of integers from the corpus: N (its documents,
//! deleted ones included until merged away), each field's token total
//! (avgdl is it over N), each term's document frequency, and, for the
//! expansion limit of prefixes and dictionary ranges, the number of
//! distinct terms an expansion finds. [`crate::query::plan`] asks a
//! [`Statistics`] for each, once per term or expansion, whatever any
//! segment holds, so that every shard of a corpus asks for the same ones.
//! Three sources answer:
//!
//! - [`SegmentStats`]: the searched segments themselves (a searcher of one
//!   index, or of several shards whose segments it numbers as one corpus);
//! - [`Imported`]: a [`CorpusStats`] summed over every shard, so that one
//!   shard scores in the whole corpus's space; a number it lacks is an
//!   error, never a silent 0;
//! - [`Recorder`]: another source, writing down every answer into a
//!   [`CorpusStats`] (the export of a shard's statistics).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::format::stats::CorpusStats;
use crate::read::LiveSegment;
use crate::schema::{FieldId, Schema};

/// The corpus statistics a query is compiled with (see the module docs).
/// `local` arguments are what the searched segments hold, which the
/// compiler reads anyway for the postings.
pub trait Statistics {
    /// The corpus's documents, deleted ones included (BM25's N).
    fn doc_count(&self) -> u64;

    /// The tokens `field` holds over the corpus.
    fn total_tokens(&self, field: FieldId) -> Result<u64>;

    /// The corpus's documents holding the term; the searched segments hold
    /// `local`.
    fn doc_freq(&self, field: FieldId, key: &[u8], local: u64) -> Result<u64>;

    /// The distinct terms expansion `e` finds over the corpus.
    fn expansion(&self, e: &Expansion) -> Result<usize>;
}

/// An expansion: a prefix, or a range served from the dictionary.
pub struct Expansion<'a> {
    /// Its terms are of this field,
    pub field: FieldId,
    /// from this key on,
    pub lower: Bound<&'a [u8]>,
    /// while this holds (for a prefix of those keys in key order).
    pub within: &'a dyn Fn(&[u8]) -> bool,
    /// The distinct terms the searched segments hold: all of theirs when
    /// `complete`, otherwise only the first past the expansion limit (the
    /// walk stopped there).
    pub local: &'a BTreeSet<Vec<u8>>,
    /// Whether `local` holds every term the searched segments hold.
    pub complete: bool,
}

/// The statistics of the searched segments themselves.
pub struct SegmentStats<'a>(pub &'a [LiveSegment]);

impl Statistics for SegmentStats<'_> {
    fn doc_count(&self) -> u64 {
        self.0.iter().map(|s| u64::from(s.entry.doc_count)).sum()
    }

    fn total_tokens(&self, field: FieldId) -> Result<u64> {
        Ok(self.0.iter().map(|s| s.reader.total_tokens(field)).sum())
    }

    fn doc_freq(&self, _field: FieldId, _key: &[u8], local: u64) -> Result<u64> {
        Ok(local)
    }

    fn expansion(&self, e: &Expansion) -> Result<usize> {
        Ok(e.local.len())
    }
}

/// Statistics imported from the whole corpus, for one of its shards.
pub struct Imported<'a> {
    /// The corpus's statistics.
    pub stats: &'a CorpusStats,
    /// The shard's schema (for the errors' field names).
    pub schema: &'a Schema,
}

impl Imported<'_> {
    fn field_name(&self, field: FieldId) -> &str {
        self.schema.get(field).map_or("?", |d| d.name.as_str())
    }

    fn lacks(&self, what: String) -> Error {
        Error::InvalidArgument(format!(
            "the imported corpus statistics lack {what}, which the query needs \
             (export the statistics for the queries searched)"
        ))
    }
}

impl Statistics for Imported<'_> {
    fn doc_count(&self) -> u64 {
        self.stats.doc_count()
    }

    fn total_tokens(&self, field: FieldId) -> Result<u64> {
        self.stats.total_tokens(field).ok_or_else(|| {
            self.lacks(format!(
                "the token total of field {:?}",
                self.field_name(field)
            ))
        })
    }

    fn doc_freq(&self, field: FieldId, key: &[u8], local: u64) -> Result<u64> {
        let term = || {
            format!(
                "term {:?} of field {:?}",
                String::from_utf8_lossy(key),
                self.field_name(field)
            )
        };
        let df = self
            .stats
            .doc_freq(field, key)
            .ok_or_else(|| self.lacks(term()))?;
        if df < local {
            return Err(Error::InvalidArgument(format!(
                "the imported corpus statistics give {} {df} documents, fewer than the \
                 {local} of this shard: they are not statistics of its corpus",
                term()
            )));
        }
        Ok(df)
    }

    fn expansion(&self, e: &Expansion) -> Result<usize> {
        // Every shard records the terms its expansions found (its first
        // past the limit, when it stopped there), so the statistics' terms
        // in this expansion's range are the corpus's.
        let from = match e.lower {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let corpus = self
            .stats
            .expanded_from(e.field, from)
            .filter(|k| !matches!(e.lower, Bound::Excluded(x) if x == *k))
            .take_while(|k| (e.within)(k))
            .count();
        if e.complete
            && let Some(k) = e.local.iter().find(|k| !self.stats.is_expanded(e.field, k))
        {
            return Err(self.lacks(format!(
                "the expanded term {:?} of field {:?}",
                String::from_utf8_lossy(k),
                self.field_name(e.field)
            )));
        }
        Ok(corpus.max(e.local.len()))
    }
}

/// A source whose every answer is also written down into a
/// [`CorpusStats`] ([`Recorder::into_stats`]). A term's answer records its
/// field's token total too, so that every shard records the totals of the
/// same fields, whether or not it holds the term.
pub struct Recorder<'a> {
    inner: &'a dyn Statistics,
    out: RefCell<CorpusStats>,
}

impl<'a> Recorder<'a> {
    /// Records `inner`'s answers into `out`.
    pub fn new(inner: &'a dyn Statistics, out: CorpusStats) -> Recorder<'a> {
        Recorder {
            inner,
            out: RefCell::new(out),
        }
    }

    /// What was recorded.
    pub fn into_stats(self) -> CorpusStats {
        self.out.into_inner()
    }
}

impl Statistics for Recorder<'_> {
    fn doc_count(&self) -> u64 {
        self.inner.doc_count()
    }

    fn total_tokens(&self, field: FieldId) -> Result<u64> {
        let tokens = self.inner.total_tokens(field)?;
        self.out.borrow_mut().set_total_tokens(field, tokens);
        Ok(tokens)
    }

    fn doc_freq(&self, field: FieldId, key: &[u8], local: u64) -> Result<u64> {
        let df = self.inner.doc_freq(field, key, local)?;
        self.total_tokens(field)?;
        self.out.borrow_mut().set_doc_freq(field, key, df);
        Ok(df)
    }

    fn expansion(&self, e: &Expansion) -> Result<usize> {
        self.out.borrow_mut().add_expanded(e.field, e.local);
        self.inner.expansion(e)
    }
}

/// Per field, BM25's 256 length factors ([`crate::query::bm25::length_factors`]),
/// computed on first use from one source's statistics and kept as long as
/// they hold (a searcher's life).
#[derive(Debug)]
pub struct FieldTables(Vec<OnceLock<Arc<[f32; 256]>>>);

impl FieldTables {
    /// Empty tables for a schema of `fields` fields.
    pub fn new(fields: usize) -> FieldTables {
        FieldTables((0..fields).map(|_| OnceLock::new()).collect())
    }

    /// The table of `field`, made by `init` the first time.
    pub fn get(
        &self,
        field: FieldId,
        init: impl FnOnce() -> Result<[f32; 256]>,
    ) -> Result<Arc<[f32; 256]>> {
        let Some(cell) = self.0.get(field.0 as usize) else {
            return Ok(Arc::new(init()?));
        };
        if let Some(t) = cell.get() {
            return Ok(t.clone());
        }
        let table = Arc::new(init()?);
        Ok(cell.get_or_init(|| table).clone())
    }
}
