//! The searcher: one committed snapshot of each of its indexes (shards of
//! one corpus), shared by any number of threads, and the merge of several
//! shards' hits.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use crate::collect::{
    Hit, SharedFloor, Sink, SortCollector, SortKey, SortSpec, Tally, TopDocsSink, Window,
    compare_values,
};
use crate::document::Value;
use crate::error::{Error, Result};
use crate::format::stats::CorpusStats;
use crate::highlight::HighlightOptions;
use crate::query::plan::{self, Node};
use crate::query::stats::{FieldTables, Imported, Recorder, SegmentStats, Statistics};
use crate::query::{Query, daat, exhaustive, window};
use crate::read::{LiveSegment, ReadMode, Snapshot, locate};
use crate::schema::{FieldDef, FieldId, Schema};

/// Which execution path answers a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExecMode {
    /// The fastest path that applies: window at a time
    /// ([`crate::query::window`]) for flat queries (a term, or a boolean
    /// of terms), each shape behind its own [`Switch`] in
    /// [`SearchOptions`]; otherwise document-at-a-time.
    #[default]
    Auto,
    /// The exhaustive oracle: evaluate every matching document.
    Exhaustive,
    /// Document-at-a-time iterators only (the master kill switch of the
    /// window-at-a-time paths).
    Daat,
}

impl ExecMode {
    /// Parses `auto`, `exhaustive` or `daat`.
    pub fn from_name(s: &str) -> Option<ExecMode> {
        Some(match s {
            "auto" => ExecMode::Auto,
            "exhaustive" => ExecMode::Exhaustive,
            "daat" => ExecMode::Daat,
            _ => return None,
        })
    }
}

/// A kill switch of one fast path: `Auto` runs it wherever it applies,
/// `Off` sends its queries document-at-a-time instead (with identical
/// results).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Switch {
    /// Use the path where it applies.
    #[default]
    Auto,
    /// Never use the path.
    Off,
}

impl Switch {
    /// Parses `auto` or `off`.
    pub fn from_name(s: &str) -> Option<Switch> {
        Some(match s {
            "auto" => Switch::Auto,
            "off" => Switch::Off,
            _ => return None,
        })
    }
}

/// Options of a searcher: the execution-path switches, and the limit of
/// term expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// The execution path; the master switch over the three below.
    pub exec: ExecMode,
    /// Single terms block at a time, skipping blocks by their impacts
    /// (`QUARRY_TERM_TOPK`).
    pub term_topk: Switch,
    /// Disjunctions (booleans without a required clause) window at a time
    /// with block-max MaxScore (`QUARRY_BLOCK_MAX_OR`).
    pub block_max_or: Switch,
    /// Conjunctions (booleans with a required clause) window at a time,
    /// intersected in bulk, with per-window and per-candidate bounds
    /// (`QUARRY_BULK_AND`).
    pub bulk_and: Switch,
    /// The most distinct terms a prefix query (or a range served from the
    /// term dictionary) may expand to over the snapshot; more is
    /// [`Error::TooManyTerms`]. Default 1024
    /// ([`crate::query::plan::DEFAULT_MAX_EXPANSIONS`]).
    pub max_expansions: usize,
    /// How many threads one search may run its segments on
    /// (`QUARRY_SEARCH_THREADS`); default 1. Each takes the next segment
    /// not yet taken, in document order, with its own queue, and in score
    /// order they share the best k-th score any has seen, so each skips
    /// what cannot enter the results; the hits are the same as on one
    /// thread. A search uses at most one thread per segment, and with
    /// more than one spawns them for the search's length (tens of
    /// microseconds each): worth it for an index of several large
    /// segments, not for short queries. The exhaustive path runs on one.
    pub threads: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            exec: ExecMode::default(),
            term_topk: Switch::default(),
            block_max_or: Switch::default(),
            bulk_and: Switch::default(),
            max_expansions: plan::DEFAULT_MAX_EXPANSIONS,
            threads: 1,
        }
    }
}

impl SearchOptions {
    /// Defaults overridden by the environment:
    /// `QUARRY_EXEC=auto|exhaustive|daat` and `QUARRY_TERM_TOPK`,
    /// `QUARRY_BLOCK_MAX_OR`, `QUARRY_BULK_AND` `=auto|off`,
    /// `QUARRY_SEARCH_THREADS` (a count from 1); also checks
    /// `QUARRY_SIMD=auto|scalar` (read by [`crate::kernels`]). A variable
    /// that is unset or empty keeps the default.
    ///
    /// Errors: [`Error::InvalidArgument`] naming the variable and the
    /// values it accepts, for any other value: a misspelt switch would
    /// otherwise silently run the default path.
    pub fn from_env() -> Result<SearchOptions> {
        let mut o = SearchOptions::default();
        if let Some(m) = env_setting(
            "QUARRY_EXEC",
            "auto, exhaustive or daat",
            ExecMode::from_name,
        )? {
            o.exec = m;
        }
        for (name, switch) in [
            ("QUARRY_TERM_TOPK", &mut o.term_topk),
            ("QUARRY_BLOCK_MAX_OR", &mut o.block_max_or),
            ("QUARRY_BULK_AND", &mut o.bulk_and),
        ] {
            if let Some(v) = env_setting(name, "auto or off", Switch::from_name)? {
                *switch = v;
            }
        }
        if let Some(n) = env_setting("QUARRY_SEARCH_THREADS", "a count from 1", |v| {
            v.parse::<usize>().ok().filter(|&n| n >= 1)
        })? {
            o.threads = n;
        }
        env_setting(
            crate::kernels::SIMD_ENV_VAR,
            "auto or scalar",
            crate::kernels::parse_setting,
        )?;
        Ok(o)
    }
}

/// The environment variable `name` parsed by `parse`: `None` when unset or
/// empty, an error naming the variable and the `accepted` values when
/// `parse` does not know the value.
fn env_setting<T>(
    name: &str,
    accepted: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match value.to_str().and_then(parse) {
        Some(v) => Ok(Some(v)),
        None => Err(Error::InvalidArgument(format!(
            "environment variable {name}={value:?} is not a known setting (accepted: {accepted})"
        ))),
    }
}

/// How many matches a search counts ([`Hits::total_hits`]).
///
/// The default is `AtLeast(1000)`, Lucene's default threshold: a host that
/// shows "N results" gets the exact number whenever fewer than a thousand
/// documents match, and "1000+ results" (a lower bound, flagged by
/// [`Hits::total_is_exact`]) otherwise, while the search is free to skip
/// what cannot enter the results once the thousand are counted. `Exact`
/// costs a visit of every match (without scoring those that cannot
/// compete); `LowerBound` counts only what a path happens to see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TotalMode {
    /// Count every match.
    Exact,
    /// Count what is seen; the total is a lower bound when anything was
    /// skipped.
    LowerBound,
    /// Count exactly up to this many matches, then as `LowerBound`: an
    /// inexact total is at least this.
    AtLeast(u64),
}

impl Default for TotalMode {
    fn default() -> Self {
        TotalMode::AtLeast(TotalMode::DEFAULT_THRESHOLD)
    }
}

impl TotalMode {
    /// The threshold of the default mode.
    pub const DEFAULT_THRESHOLD: u64 = 1000;

    /// Parses `exact`, `lower-bound` or a number N (`AtLeast(N)`).
    pub fn from_name(s: &str) -> Option<TotalMode> {
        Some(match s {
            "exact" => TotalMode::Exact,
            "lower-bound" => TotalMode::LowerBound,
            n => TotalMode::AtLeast(n.parse().ok()?),
        })
    }

    /// The number of matches counted exactly: `u64::MAX` for `Exact`, 0
    /// for `LowerBound`.
    pub fn threshold(self) -> u64 {
        match self {
            TotalMode::Exact => u64::MAX,
            TotalMode::LowerBound => 0,
            TotalMode::AtLeast(n) => n,
        }
    }

    /// The mode counting exactly up to `threshold` (the inverse of
    /// [`Self::threshold`]).
    pub fn from_threshold(threshold: u64) -> TotalMode {
        match threshold {
            u64::MAX => TotalMode::Exact,
            0 => TotalMode::LowerBound,
            n => TotalMode::AtLeast(n),
        }
    }
}

/// What to return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchRequest {
    /// Hits to skip (paging).
    pub offset: usize,
    /// Hits to return at most.
    pub limit: usize,
    /// The order; `None` is score descending, doc ascending.
    pub sort: Option<SortSpec>,
    /// How many matches are counted. A path may skip documents that cannot
    /// enter the results once the mode allows it; `Hits::total_hits` is
    /// then a lower bound (flagged by `Hits::total_is_exact`).
    pub total: TotalMode,
}

impl SearchRequest {
    /// The best `limit` hits by score, counted by the default [`TotalMode`].
    pub fn top(limit: usize) -> SearchRequest {
        SearchRequest {
            offset: 0,
            limit,
            sort: None,
            total: TotalMode::default(),
        }
    }

    /// This request with another total mode.
    pub fn with_total(mut self, total: TotalMode) -> SearchRequest {
        self.total = total;
        self
    }
}

/// The results of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Hits {
    /// The hits of the requested page, in order.
    pub hits: Vec<Hit>,
    /// How many documents matched.
    pub total_hits: u64,
    /// Whether `total_hits` is exact (otherwise a lower bound).
    pub total_is_exact: bool,
    /// How many BM25 scores the collector asked for (0 for a sort by
    /// fields alone).
    pub scored_docs: u64,
}

/// A searcher over one committed snapshot of each of its indexes: one
/// index, or several shards of one corpus searched as one
/// ([`Searcher::open_many`]), or one shard scoring with the statistics of
/// its whole corpus ([`Searcher::with_stats`]). `Send + Sync`: share it
/// between threads freely. [`Searcher::reopen`] gives a new searcher on
/// the newest commits without disturbing searches running on this one.
#[derive(Clone, Debug)]
pub struct Searcher {
    corpus: Arc<Corpus>,
    options: SearchOptions,
}

/// What a searcher searches: its shards, their segments numbered as one
/// corpus, and the statistics its scores use.
#[derive(Debug)]
struct Corpus {
    /// In document order.
    shards: Vec<Shard>,
    /// Every shard's segments, in shard order, each `base` its first
    /// document's number in the corpus.
    segments: Vec<LiveSegment>,
    /// Statistics of a whole corpus that this one shard is part of; `None`:
    /// the segments' own.
    imported: Option<CorpusStats>,
    /// The length factors of the statistics in force.
    tables: FieldTables,
}

/// One index of a corpus.
#[derive(Debug)]
struct Shard {
    snap: Arc<Snapshot>,
    /// Its number: its position among the searcher's indexes, or the one
    /// given with imported statistics.
    id: u32,
    /// The corpus number of its first document.
    base: u64,
}

impl Corpus {
    /// `snaps` as one corpus, shard `i` being `snaps[i]`, scoring by their
    /// own statistics. Errors: [`Error::Schema`] when a schema differs from
    /// the first's.
    fn local(snaps: Vec<Arc<Snapshot>>) -> Result<Corpus> {
        let first = snaps
            .first()
            .ok_or_else(|| Error::InvalidArgument("a searcher needs an index at least".into()))?;
        let schema = &first.manifest().schema;
        for (i, snap) in snaps.iter().enumerate().skip(1) {
            if let Some(diff) = schema_difference(schema, &snap.manifest().schema) {
                return Err(Error::Schema(format!(
                    "shard {i} ({}) has another schema than shard 0 ({}): {diff}",
                    snap.dir().display(),
                    first.dir().display()
                )));
            }
        }
        let mut base = 0;
        let shards = snaps
            .into_iter()
            .enumerate()
            .map(|(i, snap)| {
                let shard = Shard {
                    id: i as u32,
                    base,
                    snap,
                };
                base += shard.snap.max_doc();
                shard
            })
            .collect();
        Corpus::new(shards, None)
    }

    /// `snap` as shard `id` of the corpus `stats` describes, scoring by
    /// them. Errors: [`Error::Schema`] for statistics of another schema,
    /// [`Error::InvalidArgument`] for a shard they do not have or whose
    /// document count is not the index's.
    fn imported(snap: Arc<Snapshot>, stats: CorpusStats, id: u32) -> Result<Corpus> {
        if !stats.fits(&snap.manifest().schema) {
            return Err(Error::Schema(format!(
                "the corpus statistics were gathered over another schema than that of {}",
                snap.dir().display()
            )));
        }
        let base = stats.shard_base(id as usize).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "shard {id} is not among the {} shards of the corpus statistics",
                stats.shard_docs().len()
            ))
        })?;
        let docs = stats.shard_docs()[id as usize];
        if docs != snap.max_doc() {
            return Err(Error::InvalidArgument(format!(
                "shard {id} of the corpus statistics holds {docs} documents, the index at {} \
                 {}: statistics of another commit or shard",
                snap.dir().display(),
                snap.max_doc()
            )));
        }
        Corpus::new(vec![Shard { snap, id, base }], Some(stats))
    }

    fn new(shards: Vec<Shard>, imported: Option<CorpusStats>) -> Result<Corpus> {
        let end = shards.last().map_or(0, |s| s.base + s.snap.max_doc());
        if end > u64::from(u32::MAX - 1) {
            return Err(Error::Unsupported(
                "corpora of more than 2^32 - 2 documents".into(),
            ));
        }
        let segments = shards
            .iter()
            .flat_map(|shard| {
                shard.snap.segments().iter().map(|seg| LiveSegment {
                    base: shard.base + seg.base,
                    ..seg.clone()
                })
            })
            .collect();
        let fields = shards[0].snap.manifest().schema.fields().len();
        Ok(Corpus {
            shards,
            segments,
            imported,
            tables: FieldTables::new(fields),
        })
    }

    fn schema(&self) -> &Schema {
        &self.shards[0].snap.manifest().schema
    }

    /// Runs `f` with the statistics the scores use.
    fn with_stats<T>(&self, f: impl FnOnce(&dyn Statistics) -> T) -> T {
        match &self.imported {
            Some(stats) => f(&Imported {
                stats,
                schema: self.schema(),
            }),
            None => f(&SegmentStats(&self.segments)),
        }
    }

    /// `query` compiled over every segment with `stats`.
    fn compile(
        &self,
        query: &Query,
        stats: &dyn Statistics,
        max_expansions: usize,
    ) -> Result<Node> {
        plan::compile(
            query,
            &plan::Target {
                schema: self.schema(),
                segments: &self.segments,
                stats,
                tables: &self.tables,
                max_expansions,
            },
        )
    }

    /// The hit of corpus document `doc`, naming its shard.
    fn hit(&self, doc: u64, score: f32, sort_values: Vec<Option<Value>>) -> Hit {
        let mut hit = Hit::new(doc, score, sort_values);
        self.name_shard(&mut hit);
        hit
    }

    /// Sets the shard fields of a hit of this corpus.
    fn name_shard(&self, hit: &mut Hit) {
        let i = self
            .shards
            .partition_point(|s| s.base + s.snap.max_doc() <= hit.doc);
        if let Some(s) = self.shards.get(i) {
            hit.shard = s.id;
            hit.shard_doc = hit.doc - s.base;
        }
    }
}

/// How schema `b` differs from `a`, for an error message; `None` when they
/// are the same.
fn schema_difference(a: &Schema, b: &Schema) -> Option<String> {
    let describe = |f: &FieldDef| {
        format!(
            "{:?} ({}, {:?}, positions {}, analyzer {})",
            f.name,
            f.ty.name(),
            f.flags,
            f.positions,
            f.analyzer.name()
        )
    };
    let (fa, fb) = (a.fields(), b.fields());
    (0..fa.len().max(fb.len())).find_map(|i| match (fa.get(i), fb.get(i)) {
        (Some(x), Some(y)) if x == y => None,
        (Some(x), Some(y)) => Some(format!(
            "its field {i} is {}, not {}",
            describe(y),
            describe(x)
        )),
        (Some(x), None) => Some(format!("it lacks field {i}, {}", describe(x))),
        (None, Some(y)) => Some(format!("it has another field {i}, {}", describe(y))),
        (None, None) => None,
    })
}

impl Searcher {
    /// Opens the newest commit of the index at `dir`, with options and the
    /// read mode from the environment ([`SearchOptions::from_env`], whose errors it returns,
    /// and [`ReadMode::from_env`]).
    pub fn open(dir: impl AsRef<Path>) -> Result<Searcher> {
        Self::open_with(dir, ReadMode::from_env())
    }

    /// Opens the newest commit of the index at `dir`, reading its segments
    /// in `mode` (reopened searchers keep it), with options from the
    /// environment.
    pub fn open_with(dir: impl AsRef<Path>, mode: ReadMode) -> Result<Searcher> {
        Self::open_many_with(&[dir], mode)
    }

    /// Opens the newest commit of each index in `dirs`, shards of one
    /// corpus split by document order, and searches them as one index
    /// holding their documents in that order would: N, document
    /// frequencies and token totals summed over the shards, one shared
    /// floor, the same hits and score bits; hits name their shard
    /// ([`Hit::shard`], its position in `dirs`). Options and read mode
    /// from the environment, as [`Searcher::open`].
    ///
    /// Errors: [`Error::InvalidArgument`] for no directory,
    /// [`Error::Schema`] naming the first shard whose schema differs from
    /// the first's, [`Error::Unsupported`] for more than 2^32 - 2
    /// documents in all, and those of [`Searcher::open`] for each index.
    pub fn open_many<P: AsRef<Path>>(dirs: &[P]) -> Result<Searcher> {
        Self::open_many_with(dirs, ReadMode::from_env())
    }

    /// [`Searcher::open_many`] reading every shard's segments in `mode`.
    pub fn open_many_with<P: AsRef<Path>>(dirs: &[P], mode: ReadMode) -> Result<Searcher> {
        let options = SearchOptions::from_env()?;
        let snaps = dirs
            .iter()
            .map(|d| Snapshot::open_with(d.as_ref(), mode).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        Ok(Searcher {
            corpus: Arc::new(Corpus::local(snaps)?),
            options,
        })
    }

    /// A searcher of this one index as shard `shard` of the corpus whose
    /// statistics `stats` are (the merge of every shard's
    /// [`Searcher::corpus_stats`], [`CorpusStats::merge`]): its scores are
    /// the bits a searcher of all the shards gives its documents, and its
    /// hits' documents are numbered as there (this shard's first document
    /// is the documents of the shards before it). Searches of queries whose
    /// statistics `stats` lack fail; `stats` must have been gathered with
    /// this searcher's expansion limit ([`SearchOptions::max_expansions`]).
    /// Reopening keeps `stats` (and fails once the index holds other
    /// documents than they say).
    ///
    /// Errors: [`Error::InvalidArgument`] when this searcher has several
    /// shards, when `stats` have no shard `shard` or give it another number
    /// of documents than the index has; [`Error::Schema`] for statistics of
    /// another schema.
    pub fn with_stats(&self, stats: CorpusStats, shard: u32) -> Result<Searcher> {
        let [only] = self.corpus.shards.as_slice() else {
            return Err(Error::InvalidArgument(format!(
                "imported statistics are for a searcher of one shard; this one has {}",
                self.corpus.shards.len()
            )));
        };
        Ok(Searcher {
            corpus: Arc::new(Corpus::imported(only.snap.clone(), stats, shard)?),
            options: self.options.clone(),
        })
    }

    /// The corpus statistics `queries` take from this searcher's indexes
    /// (each shard's documents, and the token totals, document frequencies
    /// and expansions the queries look up), to merge with the other
    /// shards' ([`CorpusStats::merge`]) and import into each
    /// ([`Searcher::with_stats`]). `docs/SCALE-OUT.md` says how they flow.
    ///
    /// Errors: those of compiling each query (as a search would give them),
    /// and [`Error::InvalidArgument`] for a searcher with imported
    /// statistics (export them from the shards themselves).
    pub fn corpus_stats(&self, queries: &[Query]) -> Result<CorpusStats> {
        let c = &self.corpus;
        if c.imported.is_some() {
            return Err(Error::InvalidArgument(
                "a searcher with imported statistics does not export statistics; \
                 export them from each shard"
                    .into(),
            ));
        }
        let shard_docs = c.shards.iter().map(|s| s.snap.max_doc()).collect();
        let out = CorpusStats::new(c.schema(), self.options.max_expansions, shard_docs);
        c.with_stats(|own| {
            let recorder = Recorder::new(own, out);
            for q in queries {
                c.compile(q, &recorder, self.options.max_expansions)?;
            }
            Ok(recorder.into_stats())
        })
    }

    /// A searcher on the newest commits, sharing unchanged segments with this one.
    pub fn reopen(&self) -> Result<Searcher> {
        let c = &self.corpus;
        let mut snaps = c
            .shards
            .iter()
            .map(|s| Snapshot::open_reusing(s.snap.dir(), Some(&s.snap)).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        let corpus = match &c.imported {
            Some(stats) => {
                let snap = snaps.pop().expect("imported statistics have one shard");
                Corpus::imported(snap, stats.clone(), c.shards[0].id)?
            }
            None => Corpus::local(snaps)?,
        };
        Ok(Searcher {
            corpus: Arc::new(corpus),
            options: self.options.clone(),
        })
    }

    /// This searcher with other options.
    pub fn with_options(mut self, options: SearchOptions) -> Searcher {
        self.options = options;
        self
    }

    /// The options in force.
    pub fn options(&self) -> &SearchOptions {
        &self.options
    }

    /// The snapshot searched (of a searcher of several shards, the first
    /// shard's; see [`Searcher::snapshots`]).
    pub fn snapshot(&self) -> &Snapshot {
        &self.corpus.shards[0].snap
    }

    /// Every shard's snapshot, in shard order.
    pub fn snapshots(&self) -> impl Iterator<Item = &Snapshot> {
        self.corpus.shards.iter().map(|s| &*s.snap)
    }

    /// How many indexes (shards) this searcher searches.
    pub fn shard_count(&self) -> usize {
        self.corpus.shards.len()
    }

    /// The corpus statistics imported by [`Searcher::with_stats`], if any.
    pub fn imported_stats(&self) -> Option<&CorpusStats> {
        self.corpus.imported.as_ref()
    }

    /// The index's schema (every shard's).
    pub fn schema(&self) -> &Schema {
        self.corpus.schema()
    }

    /// The commit generation searched (of the first shard).
    pub fn generation(&self) -> u64 {
        self.snapshot().manifest().generation
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        self.snapshots().map(Snapshot::num_docs).sum()
    }

    /// One past the largest document number of the searched shards' own
    /// documents (a searcher with imported statistics numbers its documents
    /// from its shard's first, [`CorpusStats::shard_base`], and ends there
    /// plus this).
    pub fn max_doc(&self) -> u64 {
        self.snapshots().map(Snapshot::max_doc).sum()
    }

    /// The stored values of document `doc`.
    pub fn stored(&self, doc: u64) -> Result<Vec<(FieldId, Value)>> {
        let (seg, local) = locate(&self.corpus.segments, doc)
            .ok_or_else(|| Error::InvalidArgument(format!("document {doc} out of range")))?;
        seg.reader.stored(local)
    }

    /// An excerpt of the stored text or string field `field` of document
    /// `doc` around the region that best matches `query`, its matched
    /// terms between `options.pre` and `options.post`, its text escaped as
    /// `options.escape` says (`crate::highlight` says exactly how the
    /// region, the cuts and the ellipses are chosen). `None` when the
    /// document has no value of the field; a document the query does not
    /// match gets the start of the field.
    ///
    /// Errors: [`Error::Schema`] when `field` is not a stored text or
    /// string field (i64 and f64 fields cannot be highlighted),
    /// [`Error::InvalidArgument`] for a document out of range or a
    /// `max_bytes` of 0, and the errors of compiling `query`.
    pub fn highlight(
        &self,
        query: &Query,
        doc: u64,
        field: FieldId,
        options: &HighlightOptions,
    ) -> Result<Option<String>> {
        crate::highlight::highlight(self, query, doc, field, options)
    }

    /// `query` compiled for this searcher's segments and statistics.
    pub(crate) fn compile(&self, query: &Query) -> Result<Node> {
        let limit = self.options.max_expansions;
        if let Some(stats) = &self.corpus.imported
            && stats.max_expansions() != limit as u64
        {
            return Err(Error::InvalidArgument(format!(
                "the imported corpus statistics were gathered with an expansion limit of {}, \
                 this searcher's is {limit}",
                stats.max_expansions()
            )));
        }
        self.corpus
            .with_stats(|stats| self.corpus.compile(query, stats, limit))
    }

    /// Runs `query`.
    pub fn search(&self, query: &Query, req: &SearchRequest) -> Result<Hits> {
        let node = self.compile(query)?;
        let tally = Tally::new(req.total.threshold());
        if let Some(spec) = req.sort.as_ref().filter(|s| !s.is_score_order()) {
            return self.search_sorted(&node, req, spec, tally);
        }
        let want = req
            .offset
            .saturating_add(req.limit)
            .min(self.max_doc() as usize);
        let enter = |sink: &mut TopDocsSink, seg: &LiveSegment| sink.base = seg.base as u32;
        // Threads share their floors; one alone keeps its own.
        let shared = (self.threads_for(&node) > 1).then(SharedFloor::default);
        let make = || match &shared {
            Some(floor) => TopDocsSink::sharing(want, tally, floor),
            None => TopDocsSink::new(want, tally),
        };
        let mut sinks = self.drive(&node, make, enter)?.into_iter();
        // Each thread's queue holds the best of what it saw; what it left
        // out scored below its own k-th or another thread's, so the best
        // `want` of their union are the search's.
        let first = sinks.next().expect("a search runs on one thread at least");
        let (mut top, mut tally, mut scored) = (first.top, first.tally, first.scored);
        for sink in sinks {
            tally.merge(&sink.tally);
            scored += sink.scored;
            for (score, doc) in sink.top.into_sorted() {
                top.offer(score, doc);
            }
        }
        let hits = top
            .into_sorted()
            .into_iter()
            .skip(req.offset)
            .map(|(score, doc)| {
                let doc = u64::from(doc);
                let sort_values = match (&req.sort, locate(&self.corpus.segments, doc)) {
                    (Some(spec), Some((seg, local))) => sort_values(spec, seg, local, doc, score),
                    _ => Vec::new(),
                };
                self.corpus.hit(doc, score, sort_values)
            })
            .collect();
        Ok(Hits {
            hits,
            total_hits: tally.total(),
            total_is_exact: tally.is_exact(),
            scored_docs: scored,
        })
    }

    /// The path that runs `node` in every segment.
    fn path(&self, node: &Node) -> Route {
        let o = &self.options;
        match o.exec {
            ExecMode::Exhaustive => Route::Exhaustive,
            ExecMode::Daat => Route::Daat,
            ExecMode::Auto => {
                let switch = match window::shape(node) {
                    None => return Route::Daat,
                    Some(window::Shape::Term) => o.term_topk,
                    Some(window::Shape::Conjunction) => o.bulk_and,
                    Some(window::Shape::Disjunction) => o.block_max_or,
                };
                match switch {
                    Switch::Auto => Route::Window,
                    Switch::Off => Route::Daat,
                }
            }
        }
    }

    /// How many threads a search of `node` runs on: the option, at most
    /// one a segment, and one for the exhaustive path.
    fn threads_for(&self, node: &Node) -> usize {
        if self.path(node) == Route::Exhaustive {
            return 1;
        }
        self.options
            .threads
            .clamp(1, self.corpus.segments.len().max(1))
    }

    /// The one loop over the snapshot's segments, on
    /// [`Self::threads_for`] threads (the calling one, and more when
    /// there are several), each with its own sink from `make`: each takes
    /// the next segment not yet taken, so its own segments come in
    /// document order (a sink's floor stays exclusive: ties go to the
    /// lower document, which it saw first); `enter` tells the sink which
    /// segment follows, then the chosen path feeds it that segment's
    /// matches ([`Self::run_segment`]). Returns the sinks, the calling
    /// thread's first; the first error any thread met, if one did.
    fn drive<'s, S: Sink + Send>(
        &'s self,
        node: &Node,
        make: impl Fn() -> S + Sync,
        enter: impl Fn(&mut S, &'s LiveSegment) + Sync,
    ) -> Result<Vec<S>> {
        let path = self.path(node);
        let segments = self.corpus.segments.as_slice();
        let next = AtomicUsize::new(0);
        let work = || -> Result<S> {
            let mut sink = make();
            with_buffers(|buf| {
                while let Some(seg) = segments.get(next.fetch_add(1, AtomicOrdering::Relaxed)) {
                    enter(&mut sink, seg);
                    self.run_segment(path, node, seg, &mut sink, buf)?;
                }
                Ok(())
            })?;
            Ok(sink)
        };
        let threads = self.threads_for(node);
        if threads == 1 {
            return Ok(vec![work()?]);
        }
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut sinks = vec![work()];
            for h in helpers {
                // A panic in a search thread is a bug: pass it on as one.
                sinks.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            sinks.into_iter().collect()
        })
    }

    /// Runs `node` over one segment on `path`, into `sink`.
    fn run_segment<S: Sink>(
        &self,
        path: Route,
        node: &Node,
        seg: &LiveSegment,
        sink: &mut S,
        buf: &mut window::Buffers,
    ) -> Result<()> {
        match path {
            Route::Window => window::run(node, seg, sink, buf),
            Route::Daat => daat::run(node, seg, sink),
            Route::Exhaustive => {
                for (doc, score) in exhaustive::evaluate(node, seg)? {
                    if !seg.is_deleted(doc) {
                        sink.count(1);
                        sink.offer(doc, || score);
                    }
                }
                Ok(())
            }
        }
    }

    /// Sorted search. The exhaustive path collects every match with its
    /// sort values and sorts them (the oracle); the others run the
    /// [`SortCollector`].
    fn search_sorted(
        &self,
        node: &Node,
        req: &SearchRequest,
        spec: &SortSpec,
        tally: Tally,
    ) -> Result<Hits> {
        for r in &spec.rules {
            if let SortKey::Field(f) = r.key {
                let def = self.schema().get(f).ok_or_else(|| {
                    Error::Schema(format!("field id {} is not in the schema", f.0))
                })?;
                if !def.flags.sortable {
                    return Err(Error::Schema(format!(
                        "field {:?} is not sortable",
                        def.name
                    )));
                }
            }
        }
        if self.options.exec == ExecMode::Exhaustive {
            let make = || CollectAll {
                spec,
                keep_score: spec.needs_score(),
                seg: None,
                hits: Vec::new(),
            };
            // One thread (`threads_for`): the oracle stays sequential.
            let mut alls = self.drive(node, make, |all, seg| all.seg = Some(seg))?;
            let mut all = alls.pop().expect("one sink").hits;
            let total = all.len() as u64;
            all.sort_by(|a, b| compare_hits(spec, a, b));
            let hits = all
                .into_iter()
                .skip(req.offset)
                .take(req.limit)
                .map(|mut h| {
                    self.corpus.name_shard(&mut h);
                    h
                })
                .collect();
            return Ok(Hits {
                hits,
                total_hits: total,
                total_is_exact: true,
                scored_docs: total,
            });
        }
        let want = req
            .offset
            .saturating_add(req.limit)
            .min(self.max_doc() as usize);
        fn enter<'s>(c: &mut SortCollector<'s>, seg: &'s LiveSegment) {
            c.set_segment(seg);
        }
        let make = || SortCollector::new(spec, self.schema(), want, tally);
        let collectors = self.drive(node, make, enter)?;
        let one = collectors.len() == 1;
        let mut parts: Vec<Hits> = collectors
            .into_iter()
            .map(|c| {
                let (total, exact, scored) = (c.total(), c.total_is_exact(), c.scored());
                let mut hits = c.into_hits(if one { req.offset } else { 0 });
                hits.iter_mut().for_each(|h| self.corpus.name_shard(h));
                Hits {
                    hits,
                    total_hits: total,
                    total_is_exact: exact,
                    scored_docs: scored,
                }
            })
            .collect();
        if one {
            return Ok(parts.pop().expect("one collector"));
        }
        // Each thread's collector keeps its best `want`: the best `want`
        // of their union are the search's.
        merge_hits(&parts, Some(spec), req.offset, req.limit)
    }
}

/// The page `[offset, offset + limit)` of the hits of several searches
/// (shards searched with the same statistics and request, each page from
/// its first hit: offset 0 and a limit of at least `offset + limit`), in
/// the order one search of all of them gives (sorted by
/// [`Hit::merge_key`]), with their totals summed (exact when every part's
/// is) and their scored documents summed.
///
/// Errors: [`Error::InvalidArgument`] when a hit's sort values do not fit
/// `sort` or a document (shard and shard document) is in two parts.
pub fn merge_hits<H: Borrow<Hits>>(
    parts: &[H],
    sort: Option<&SortSpec>,
    offset: usize,
    limit: usize,
) -> Result<Hits> {
    let parts: Vec<&Hits> = parts.iter().map(Borrow::borrow).collect();
    let lists: Vec<&[Hit]> = parts.iter().map(|h| h.hits.as_slice()).collect();
    let hits = merge_order(&lists, sort, offset, limit)?
        .into_iter()
        .map(|(p, i)| parts[p].hits[i].clone())
        .collect();
    Ok(Hits {
        hits,
        total_hits: parts.iter().map(|h| h.total_hits).sum(),
        total_is_exact: parts.iter().all(|h| h.total_is_exact),
        scored_docs: parts.iter().map(|h| h.scored_docs).sum(),
    })
}

/// The hits [`merge_hits`] returns, as (part, index in the part).
pub fn merge_order(
    parts: &[&[Hit]],
    sort: Option<&SortSpec>,
    offset: usize,
    limit: usize,
) -> Result<Vec<(usize, usize)>> {
    let rules = sort.map_or(0, |s| s.rules.len());
    let mut seen = std::collections::HashSet::new();
    let mut keyed = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for (p, hits) in parts.iter().enumerate() {
        for (i, h) in hits.iter().enumerate() {
            if h.sort_values.len() != rules {
                return Err(Error::InvalidArgument(format!(
                    "hit {i} of part {p} has {} sort values and the sort {rules} rules: \
                     merge the hits of one request only",
                    h.sort_values.len()
                )));
            }
            if !seen.insert((h.shard, h.shard_doc)) {
                return Err(Error::InvalidArgument(format!(
                    "document {} of shard {} is in two parts",
                    h.shard_doc, h.shard
                )));
            }
            keyed.push((h.merge_key(sort), p, i));
        }
    }
    // The keys are distinct (each ends with its shard and document).
    keyed.sort_unstable();
    Ok(keyed
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(_, p, i)| (p, i))
        .collect())
}

/// Runs `f` with this thread's window buffers, kept from one search to
/// the next so that a short query does not allocate (and zero) them
/// again: a union window's score array alone is 64 KiB (when it was 16
/// KiB, allocating it cost rare-3 OR, exact, 7 % of a query's
/// instructions). A nested call, which no
/// search makes, gets fresh buffers.
fn with_buffers<T>(f: impl FnOnce(&mut window::Buffers) -> Result<T>) -> Result<T> {
    thread_local! {
        static BUFFERS: std::cell::Cell<Option<window::Buffers>> = const { std::cell::Cell::new(None) };
    }
    let mut buf = BUFFERS.take().unwrap_or_default();
    let out = f(&mut buf);
    BUFFERS.set(Some(buf));
    out
}

/// How every segment of a search is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Window at a time ([`window`]).
    Window,
    /// Document-at-a-time iterators ([`daat`]).
    Daat,
    /// The oracle ([`exhaustive`]).
    Exhaustive,
}

/// The sorted oracle's sink: every match with its sort values (sorted
/// afterwards). Without a score rule no path reports a score (the
/// collector never computes one), so the hits are the same bits.
struct CollectAll<'s> {
    spec: &'s SortSpec,
    keep_score: bool,
    seg: Option<&'s LiveSegment>,
    hits: Vec<Hit>,
}

impl Sink for CollectAll<'_> {
    fn window(&mut self, _start: u32) -> Window {
        Window::Take(u32::MAX)
    }

    fn prefilter(&self) -> bool {
        false
    }

    fn filter(&self, _docs: &mut Vec<u32>) {}

    fn dropped(&mut self, _n: usize) {}

    fn count(&mut self, _n: usize) {}

    fn offer(&mut self, doc: u32, mut score: impl FnMut() -> f32) {
        let seg = self.seg.expect("a segment is entered before its matches");
        let score = if self.keep_score { score() } else { 0.0 };
        let global = seg.base + u64::from(doc);
        self.hits.push(Hit::new(
            global,
            score,
            sort_values(self.spec, seg, doc, global, score),
        ));
    }
}

fn sort_values(
    spec: &SortSpec,
    seg: &LiveSegment,
    doc: u32,
    global: u64,
    score: f32,
) -> Vec<Option<Value>> {
    spec.rules
        .iter()
        .map(|r| match r.key {
            SortKey::Score => Some(Value::F64(f64::from(score))),
            SortKey::Doc => Some(Value::I64(global as i64)),
            SortKey::Field(f) => {
                let col = seg.reader.sort_column(f)?;
                let o = col.ord(doc);
                (o != col.missing()).then(|| col.value(o))
            }
        })
        .collect()
}

fn compare_hits(spec: &SortSpec, a: &Hit, b: &Hit) -> Ordering {
    for (i, r) in spec.rules.iter().enumerate() {
        let o = compare_values(&a.sort_values[i], &b.sort_values[i], r.descending);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.doc.cmp(&b.doc)
}
