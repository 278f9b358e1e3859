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

    /// The distinct terms an expansion (a prefix, or a range served from
    /// the dictionary: the terms of `field` from `lower` on while `within`
    /// holds) finds over the corpus. The searched segments hold `local`,
    /// all of theirs when `complete`, otherwise only the first past the
    /// expansion limit (the walk stopped there).
    fn expansion(
        &self,
        field: FieldId,
        lower: Bound<&[u8]>,
        within: &dyn Fn(&[u8]) -> bool,
        local: &BTreeSet<Vec<u8>>,
        complete: bool,
    ) -> Result<usize>;
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

    fn expansion(
        &self,
        _field: FieldId,
        _lower: Bound<&[u8]>,
        _within: &dyn Fn(&[u8]) -> bool,
        local: &BTreeSet<Vec<u8>>,
        _complete: bool,
    ) -> Result<usize> {
        Ok(local.len())
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

    fn expansion(
        &self,
        field: FieldId,
        lower: Bound<&[u8]>,
        within: &dyn Fn(&[u8]) -> bool,
        local: &BTreeSet<Vec<u8>>,
        complete: bool,
    ) -> Result<usize> {
        // Every shard records the terms its expansions found (its first
        // past the limit, when it stopped there), so the statistics' terms
        // in this expansion's range are the corpus's.
        let from = match lower {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let corpus = self
            .stats
            .expanded_from(field, from)
            .filter(|k| !matches!(lower, Bound::Excluded(x) if x == *k))
            .take_while(|k| within(k))
            .count();
        if complete && let Some(k) = local.iter().find(|k| !self.stats.is_expanded(field, k)) {
            return Err(self.lacks(format!(
                "the expanded term {:?} of field {:?}",
                String::from_utf8_lossy(k),
                self.field_name(field)
            )));
        }
        Ok(corpus.max(local.len()))
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

    fn expansion(
        &self,
        field: FieldId,
        lower: Bound<&[u8]>,
        within: &dyn Fn(&[u8]) -> bool,
        local: &BTreeSet<Vec<u8>>,
        complete: bool,
    ) -> Result<usize> {
        self.out.borrow_mut().add_expanded(field, local);
        self.inner.expansion(field, lower, within, local, complete)
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
