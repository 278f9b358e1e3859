//! The searcher: one committed snapshot, shared by any number of threads.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use crate::collect::{
    Hit, Sink, SortCollector, SortKey, SortSpec, TopDocs, TopDocsSink, Window, compare_values,
};
use crate::document::Value;
use crate::error::{Error, Result};
use crate::query::plan::{self, Node};
use crate::query::{Query, daat, exhaustive, term_topk, window};
use crate::read::{LiveSegment, Snapshot};
use crate::schema::{FieldId, Schema};

/// Which execution path answers a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecMode {
    /// The fastest path that applies: for sorted search, window-at-a-time
    /// over flat queries (a term, or a boolean of terms); in score order,
    /// block skipping by impacts for a single term
    /// ([`crate::query::term_topk`]) and window-at-a-time with window
    /// skipping (conjunctions) or MaxScore (disjunctions) for flat
    /// booleans; otherwise document-at-a-time.
    Auto,
    /// The exhaustive oracle: evaluate every matching document.
    Exhaustive,
    /// Document-at-a-time iterators only (the kill switch of the
    /// window-at-a-time and block-skipping paths).
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

/// Options of a searcher: the execution-path switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// The execution path.
    pub exec: ExecMode,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            exec: ExecMode::Auto,
        }
    }
}

impl SearchOptions {
    /// Defaults overridden by the environment: `QUARRY_EXEC=auto|exhaustive|daat`.
    /// An unrecognised value is ignored (the default stays).
    pub fn from_env() -> SearchOptions {
        let mut o = SearchOptions::default();
        if let Some(m) = std::env::var("QUARRY_EXEC")
            .ok()
            .as_deref()
            .and_then(ExecMode::from_name)
        {
            o.exec = m;
        }
        o
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
    /// Count every match exactly. When false, a path may skip documents
    /// that cannot enter the results, and `Hits::total_hits` is then a lower
    /// bound (flagged by `Hits::total_is_exact`).
    pub exact_total: bool,
}

impl SearchRequest {
    /// The best `limit` hits by score.
    pub fn top(limit: usize) -> SearchRequest {
        SearchRequest {
            offset: 0,
            limit,
            sort: None,
            exact_total: true,
        }
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

/// A searcher over one committed snapshot. `Send + Sync`: share it between
/// threads freely. [`Searcher::reopen`] gives a new searcher on the newest
/// commit without disturbing searches running on this one.
#[derive(Clone, Debug)]
pub struct Searcher {
    snap: Arc<Snapshot>,
    options: SearchOptions,
}

impl Searcher {
    /// Opens the newest commit of the index at `dir`, with options from the
    /// environment ([`SearchOptions::from_env`]).
    pub fn open(dir: impl AsRef<Path>) -> Result<Searcher> {
        let snap = Snapshot::open(dir.as_ref())?;
        Self::check_size(&snap)?;
        Ok(Searcher {
            snap: Arc::new(snap),
            options: SearchOptions::from_env(),
        })
    }

    fn check_size(snap: &Snapshot) -> Result<()> {
        if snap.max_doc() > u64::from(u32::MAX - 1) {
            return Err(Error::Unsupported(
                "snapshots of more than 2^32 - 2 documents".into(),
            ));
        }
        Ok(())
    }

    /// A searcher on the newest commit, sharing unchanged segments with this one.
    pub fn reopen(&self) -> Result<Searcher> {
        let snap = Snapshot::open_reusing(self.snap.dir(), Some(&self.snap))?;
        Self::check_size(&snap)?;
        Ok(Searcher {
            snap: Arc::new(snap),
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

    /// The snapshot searched.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// The index's schema.
    pub fn schema(&self) -> &Schema {
        &self.snap.manifest().schema
    }

    /// The commit generation searched.
    pub fn generation(&self) -> u64 {
        self.snap.manifest().generation
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        self.snap.num_docs()
    }

    /// One past the largest document number.
    pub fn max_doc(&self) -> u64 {
        self.snap.max_doc()
    }

    /// The stored values of document `doc`.
    pub fn stored(&self, doc: u64) -> Result<Vec<(FieldId, Value)>> {
        let (seg, local) = self
            .snap
            .locate(doc)
            .ok_or_else(|| Error::InvalidArgument(format!("document {doc} out of range")))?;
        seg.reader.stored(local)
    }

    /// Runs `query`.
    pub fn search(&self, query: &Query, req: &SearchRequest) -> Result<Hits> {
        let node = plan::compile(query, &self.snap)?;
        if let Some(spec) = req.sort.as_ref().filter(|s| !s.is_score_order()) {
            return self.search_sorted(&node, req, spec);
        }
        let want = req.offset.saturating_add(req.limit);
        let mut top = TopDocs::new(want.min(self.snap.max_doc() as usize));
        let mut sink = TopDocsSink::new(&mut top, req.exact_total);
        match (self.options.exec, &node) {
            (ExecMode::Auto, Node::Term(t)) => {
                for seg in self.snap.segments() {
                    sink.base = seg.base as u32;
                    term_topk::run(t, seg, &mut sink)?;
                }
            }
            (ExecMode::Auto, Node::Bool(_)) if window::handles(&node) => {
                let mut buf = window::Buffers::new();
                for seg in self.snap.segments() {
                    sink.base = seg.base as u32;
                    window::run(&node, seg, &mut sink, &mut buf)?;
                }
            }
            (ExecMode::Exhaustive, _) => {
                for seg in self.snap.segments() {
                    sink.base = seg.base as u32;
                    for (doc, score) in exhaustive::evaluate(&node, seg)? {
                        if !seg.is_deleted(doc) {
                            sink.count(1);
                            sink.offer(doc, || score);
                        }
                    }
                }
            }
            (ExecMode::Auto | ExecMode::Daat, _) => {
                for seg in self.snap.segments() {
                    sink.base = seg.base as u32;
                    daat::for_each_match(&node, seg, |doc, s| {
                        sink.count(1);
                        sink.offer(doc, || s.score());
                    })?;
                }
            }
        }
        let (total, exact, scored) = (sink.total, !sink.lower_bound, sink.scored);
        let hits = top
            .into_sorted()
            .into_iter()
            .skip(req.offset)
            .map(|(score, doc)| {
                let doc = u64::from(doc);
                let sort_values = match (&req.sort, self.snap.locate(doc)) {
                    (Some(spec), Some((seg, local))) => sort_values(spec, seg, local, doc, score),
                    _ => Vec::new(),
                };
                Hit {
                    doc,
                    score,
                    sort_values,
                }
            })
            .collect();
        Ok(Hits {
            hits,
            total_hits: total,
            total_is_exact: exact,
            scored_docs: scored,
        })
    }

    /// Sorted search. The exhaustive path collects every match with its
    /// sort values and sorts them (the oracle); the others run the
    /// [`SortCollector`], fed window at a time (`query::window`) where the
    /// query's shape allows, else by document-at-a-time iterators.
    fn search_sorted(&self, node: &Node, req: &SearchRequest, spec: &SortSpec) -> Result<Hits> {
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
        if self.options.exec != ExecMode::Exhaustive {
            return self.search_sort_collector(node, req, spec);
        }
        // Without a score rule no path reports a score (the collector never
        // computes one), so every path returns the same hits, bit for bit.
        let keep_score = spec.rules.iter().any(|r| r.key == SortKey::Score);
        let mut all: Vec<Hit> = Vec::new();
        for seg in self.snap.segments() {
            for (doc, score) in exhaustive::evaluate(node, seg)? {
                let score = if keep_score { score } else { 0.0 };
                if !seg.is_deleted(doc) {
                    let global = seg.base + u64::from(doc);
                    all.push(Hit {
                        doc: global,
                        score,
                        sort_values: sort_values(spec, seg, doc, global, score),
                    });
                }
            }
        }
        let total = all.len() as u64;
        all.sort_by(|a, b| compare_hits(spec, a, b));
        let hits = all.into_iter().skip(req.offset).take(req.limit).collect();
        Ok(Hits {
            hits,
            total_hits: total,
            total_is_exact: true,
            scored_docs: total,
        })
    }

    fn search_sort_collector(
        &self,
        node: &Node,
        req: &SearchRequest,
        spec: &SortSpec,
    ) -> Result<Hits> {
        let want = req
            .offset
            .saturating_add(req.limit)
            .min(self.snap.max_doc() as usize);
        let mut c = SortCollector::new(spec, self.schema(), want, !req.exact_total);
        let mut buf = window::Buffers::new();
        let windowed = self.options.exec == ExecMode::Auto && window::handles(node);
        for seg in self.snap.segments() {
            c.set_segment(seg);
            if windowed {
                window::run(node, seg, &mut c, &mut buf)?;
                continue;
            }
            let Some(mut s) = daat::scorer(node, seg)? else {
                continue;
            };
            let mut doc = s.doc();
            let mut window_end = 0;
            while doc != daat::NO_MORE {
                if doc >= window_end {
                    match c.window(doc) {
                        Window::Take(end) => window_end = end,
                        Window::Skip(end) => {
                            doc = s.seek(end);
                            continue;
                        }
                    }
                }
                if !seg.is_deleted(doc) {
                    c.count(1);
                    c.offer(doc, || s.score());
                }
                doc = s.advance();
            }
            if let Some(e) = s.error() {
                return Err(seg.reader.bad(e));
            }
        }
        let (total, exact, scored) = (c.total(), c.total_is_exact(), c.scored());
        Ok(Hits {
            hits: c.into_hits(req.offset),
            total_hits: total,
            total_is_exact: exact,
            scored_docs: scored,
        })
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
