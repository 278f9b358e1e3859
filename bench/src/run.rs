//! The measurement: closed loop on one thread, engines alternating, three
//! passes; and the checks that run alongside it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use quarry::{ExecMode, SearchOptions, SearchRequest, SortKey, SortSpec, TotalMode, Value};
use tantivy::Order;
use tantivy::collector::sort_key::{SortBySimilarityScore, SortByStaticFastValue, SortByString};
use tantivy::collector::{Collector, Count, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query as TQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, ReloadPolicy, Term};

use crate::index::{Engine, Layout, tantivy_analyzer, tantivy_open};
use crate::queries::QueryClass;
use crate::util::{cpu_seconds, median, quantile};

/// Hits returned per query.
pub const TOP_K: usize = 10;
/// Fewest queries in one measurement, however slow they are.
pub const MIN_QUERIES: usize = 10;
/// The engine that runs second in a pair runs the first one's queries, but
/// for at most this many times the measured period (then the prefix of the
/// same query sequence that fitted), so a much slower engine cannot blow the
/// time budget.
pub const SECOND_CAP: f64 = 3.0;

/// Timing settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Warm-up seconds per class, op and engine, before each measurement.
    pub warmup_s: f64,
    /// Measured seconds (for the engine that runs first; the other runs the
    /// same queries).
    pub measure_s: f64,
    /// Passes over the class list (forward, reverse, forward, ...).
    pub passes: usize,
    /// Perturb quarry's fast-path results before the check (proves the
    /// check works).
    pub sabotage: Sabotage,
    /// Threads of the concurrent phase (sharing one searcher); 1 skips it.
    pub threads: usize,
    /// Run only the sorted ops of [`SORTED_CLASSES`].
    pub sorted_only: bool,
    /// Run only the seq classes, as phrases.
    pub phrases: bool,
    /// The counting regimes measured, each for every class and op.
    pub regimes: Vec<Regime>,
}

/// The test-only knob `QUARRY_BENCH_SABOTAGE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sabotage {
    /// Results are checked as they are.
    Off,
    /// `=1`: one score bit of the last hit of every fifth query flipped.
    Hits,
    /// `=total`: one added to quarry's total of every fifth query, which
    /// neither regime may accept (exact: a wrong count; lower bound: above
    /// the exact count).
    Total,
}

impl Sabotage {
    /// From the variable's value: unset, empty or `0` is off, `total`
    /// perturbs totals, anything else hits.
    pub fn from_env_value(v: Option<&str>) -> Sabotage {
        match v {
            None | Some("") | Some("0") => Sabotage::Off,
            Some("total") => Sabotage::Total,
            Some(_) => Sabotage::Hits,
        }
    }
}

/// How matches are counted: each regime pits quarry against the tantivy
/// collector doing the same work (BENCH.md item 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Regime {
    /// quarry `TotalMode::LowerBound` against tantivy's `TopDocs` alone:
    /// neither counts every match, both may skip.
    LowerBound,
    /// quarry `TotalMode::Exact` against tantivy's `(Count, TopDocs)`: both
    /// count every match.
    Exact,
}

impl Regime {
    /// Both, in the order they run.
    pub const ALL: [Regime; 2] = [Regime::LowerBound, Regime::Exact];

    /// The option name.
    pub fn name(self) -> &'static str {
        match self {
            Regime::LowerBound => "lower-bound",
            Regime::Exact => "exact",
        }
    }

    /// Parses an option name.
    pub fn from_name(s: &str) -> Option<Regime> {
        Regime::ALL.into_iter().find(|r| r.name() == s)
    }

    /// What the two engines do, for headings.
    pub fn describe(self) -> &'static str {
        match self {
            Regime::LowerBound => {
                "quarry TotalMode::LowerBound vs tantivy TopDocs (neither counts every match)"
            }
            Regime::Exact => {
                "quarry TotalMode::Exact vs tantivy (Count, TopDocs) (both count every match)"
            }
        }
    }

    /// quarry's total mode in this regime.
    pub fn total(self) -> TotalMode {
        match self {
            Regime::LowerBound => TotalMode::LowerBound,
            Regime::Exact => TotalMode::Exact,
        }
    }
}

/// A top-k list: (score bits, doc) best first. quarry docs are snapshot
/// doc numbers; tantivy docs are `segment_ord << 32 | doc_id`.
pub type TopList = Vec<(u32, u64)>;

/// What one search returned: the hits and the total, `(count, exact)`.
/// quarry always reports a total; tantivy only in the exact regime (its
/// `Count`), and `None` with `TopDocs` alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The top-k list.
    pub hits: TopList,
    /// The total and whether it is exact.
    pub total: Option<(u64, bool)>,
}

/// The order a query's top 10 is taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortMode {
    /// BM25 score descending (ties: lower doc first).
    Score,
    /// `year` descending, then score descending.
    YearScore,
    /// `category` ascending, then `year` descending.
    CategoryYear,
}

/// Classes that are also run sorted (BENCH.md: top-10 by year descending
/// then score, and by category then year).
pub const SORTED_CLASSES: [&str; 3] = ["mid-df-1", "mid-df-2", "mid-df-3"];

/// How a query's tokens combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Every token must occur.
    And,
    /// At least one must.
    Or,
    /// The tokens in order at consecutive positions (an exact phrase).
    Phrase,
}

impl Op {
    /// `and`, `or` or `phrase`.
    pub fn from_name(s: &str) -> Option<Op> {
        match s {
            "and" => Some(Op::And),
            "or" => Some(Op::Or),
            "phrase" => Some(Op::Phrase),
            _ => None,
        }
    }
}

/// A query prepared for both engines.
pub struct Prepared {
    /// The text.
    pub text: String,
    quarry: quarry::Query,
    tantivy: Box<dyn TQuery>,
    sort: SortMode,
    regime: Regime,
}

/// One engine's measurement of one class and op in one pass.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Index of the first query run.
    pub start: usize,
    /// Queries run.
    pub count: usize,
    /// Process CPU seconds.
    pub cpu_s: f64,
    /// Wall seconds.
    pub wall_s: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
}

impl Measurement {
    /// CPU ms per query.
    pub fn cpu_ms(&self) -> f64 {
        self.cpu_s * 1e3 / self.count as f64
    }
}

/// Agreement of the two engines' top-k lists over one class and op.
#[derive(Clone, Debug, Default)]
pub struct Agreement {
    /// Queries compared.
    pub queries: usize,
    /// Same set of ids.
    pub same_set: usize,
    /// Same ids in the same order.
    pub same_order: usize,
    /// Lists that differ, but whose scores agree rank by rank within 1e-5
    /// (relative): the difference is the choice or order among near-ties.
    pub near_ties: usize,
    /// Largest relative difference between the two engines' scores of the
    /// same document at the same rank.
    pub max_rel_score_diff: f64,
}

/// Results of one class and op.
#[derive(Clone, Debug)]
pub struct ClassResult {
    /// Class name.
    pub class: String,
    /// AND or OR.
    pub op: &'static str,
    /// The counting regime.
    pub regime: Regime,
    /// quarry's measurements, one per pass.
    pub quarry: Vec<Measurement>,
    /// tantivy's measurements, one per pass.
    pub tantivy: Vec<Measurement>,
    /// Top-k agreement.
    pub agreement: Agreement,
    /// Distinct queries checked against the exhaustive path.
    pub oracle_checked: usize,
    /// Of those, how many quarry reported an exact total for (all of them
    /// in the exact regime).
    pub totals_exact: usize,
    /// The concurrent phase (quarry, tantivy), when it ran.
    pub concurrent: Option<(Measurement, Measurement)>,
}

impl ClassResult {
    fn med(ms: &[Measurement], f: impl Fn(&Measurement) -> f64) -> f64 {
        median(&ms.iter().map(f).collect::<Vec<_>>())
    }
    /// Median CPU ms per query over the passes.
    pub fn cpu_ms(&self, e: Engine) -> f64 {
        Self::med(self.of(e), Measurement::cpu_ms)
    }
    /// Median p50 over the passes.
    pub fn p50(&self, e: Engine) -> f64 {
        Self::med(self.of(e), |m| m.p50_ms)
    }
    /// Median p99 over the passes.
    pub fn p99(&self, e: Engine) -> f64 {
        Self::med(self.of(e), |m| m.p99_ms)
    }
    /// Median over the passes of the pass's quarry/tantivy CPU ratio.
    pub fn ratio(&self) -> f64 {
        let r: Vec<f64> = self
            .quarry
            .iter()
            .zip(&self.tantivy)
            .map(|(q, t)| q.cpu_ms() / t.cpu_ms())
            .collect();
        median(&r)
    }
    /// Queries measured per engine over all passes.
    pub fn measured(&self) -> usize {
        self.quarry.iter().map(|m| m.count).sum()
    }
    fn of(&self, e: Engine) -> &[Measurement] {
        match e {
            Engine::Quarry => &self.quarry,
            Engine::Tantivy => &self.tantivy,
        }
    }
}

/// Both engines opened on one layout.
pub struct Engines {
    quarry: quarry::Searcher,
    oracle: quarry::Searcher,
    quarry_body: quarry::FieldId,
    quarry_id: quarry::FieldId,
    tantivy: tantivy::Searcher,
    tantivy_body: tantivy::schema::Field,
    tantivy_ids: Vec<Column<i64>>,
    /// Segments of each.
    pub segments: (usize, usize),
    /// Whether tantivy's segment ordinals follow insertion order (its
    /// tie-break among equal scores is by segment ordinal, then doc id).
    pub tantivy_segments_in_order: bool,
}

impl Engines {
    /// Opens the two indexes.
    pub fn open(quarry_dir: &Path, tantivy_dir: &Path) -> Result<Engines, String> {
        let quarry = quarry::Searcher::open(quarry_dir)
            .map_err(|e| e.to_string())?
            .with_options(SearchOptions {
                exec: ExecMode::Auto,
                ..SearchOptions::from_env().map_err(|e| e.to_string())?
            });
        let oracle = quarry.clone().with_options(SearchOptions {
            exec: ExecMode::Exhaustive,
            ..SearchOptions::default()
        });
        let schema = quarry.schema();
        let quarry_body = schema.field("body").ok_or("quarry index has no body")?;
        let quarry_id = schema.field("id").ok_or("quarry index has no id")?;
        let index = tantivy_open(tantivy_dir, None).map_err(|e| e.to_string())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e: tantivy::TantivyError| e.to_string())?;
        let tantivy = reader.searcher();
        let tantivy_body = index
            .schema()
            .get_field("body")
            .map_err(|e| e.to_string())?;
        let tantivy_ids = tantivy
            .segment_readers()
            .iter()
            .map(|s| s.fast_fields().i64("id"))
            .collect::<tantivy::Result<Vec<_>>>()
            .map_err(|e| e.to_string())?;
        let segments = (
            quarry.snapshot().segments().len(),
            tantivy.segment_readers().len(),
        );
        let firsts: Vec<i64> = tantivy_ids
            .iter()
            .map(|c| c.first(0).unwrap_or(i64::MIN))
            .collect();
        let tantivy_segments_in_order = firsts.windows(2).all(|w| w[0] < w[1]);
        if quarry.num_docs() != tantivy.num_docs() {
            return Err(format!(
                "the indexes differ: quarry has {} documents, tantivy {}",
                quarry.num_docs(),
                tantivy.num_docs()
            ));
        }
        Ok(Engines {
            quarry,
            oracle,
            quarry_body,
            quarry_id,
            tantivy,
            tantivy_body,
            tantivy_ids,
            segments,
            tantivy_segments_in_order,
        })
    }

    /// Prepares `text` for both engines. Errors when the two analyzers
    /// disagree on its tokens.
    pub fn prepare(&self, text: &str, op: Op) -> Result<Prepared, String> {
        let mut mine: Vec<String> = Vec::new();
        for t in quarry::analysis::tokens(text) {
            if !mine.contains(&t) {
                mine.push(t);
            }
        }
        let mut theirs: Vec<String> = Vec::new();
        // Every token, repeats too (a phrase's).
        let mut sequence: Vec<String> = Vec::new();
        let mut analyzer = tantivy_analyzer();
        let mut ts = analyzer.token_stream(text);
        while ts.advance() {
            let t = &ts.token().text;
            sequence.push(t.clone());
            if !theirs.contains(t) {
                theirs.push(t.clone());
            }
        }
        if mine != theirs {
            return Err(format!(
                "the analyzers disagree on {text:?}: quarry {mine:?}, tantivy {theirs:?}"
            ));
        }
        let (occur, mine_occur) = match op {
            Op::And | Op::Phrase => (Occur::Must, quarry::Occur::Must),
            Op::Or => (Occur::Should, quarry::Occur::Should),
        };
        let term = |t: &str| -> Box<dyn TQuery> {
            Box::new(TermQuery::new(
                Term::from_field_text(self.tantivy_body, t),
                IndexRecordOption::WithFreqs,
            ))
        };
        let tantivy: Box<dyn TQuery> = if op == Op::Phrase && sequence.len() > 1 {
            Box::new(PhraseQuery::new(
                sequence
                    .iter()
                    .map(|t| Term::from_field_text(self.tantivy_body, t))
                    .collect(),
            ))
        } else if theirs.len() == 1 {
            term(&theirs[0])
        } else {
            Box::new(BooleanQuery::new(
                theirs.iter().map(|t| (occur, term(t))).collect(),
            ))
        };
        let quarry = match op {
            Op::Phrase => quarry::Query::Phrase {
                field: self.quarry_body,
                text: text.to_owned(),
                slop: 0,
            },
            // Both engines get the terms analysed already, as tantivy's
            // term queries are, so that neither's analyzer is timed.
            _ if mine.len() == 1 => quarry::Query::term(self.quarry_body, &mine[0]),
            _ => mine.iter().fold(quarry::Query::boolean(), |q, t| {
                q.add(mine_occur, quarry::Query::term(self.quarry_body, t))
            }),
        };
        Ok(Prepared {
            text: text.to_owned(),
            quarry,
            tantivy,
            sort: SortMode::Score,
            regime: Regime::Exact,
        })
    }

    /// quarry's request for `q`: top 10 by score, or by its sort spec,
    /// counting as `total` says.
    fn quarry_request(&self, q: &Prepared, total: TotalMode) -> SearchRequest {
        let schema = self.quarry.schema();
        let field = |n: &str| SortKey::Field(schema.field(n).expect("bench schema field"));
        let mut spec = SortSpec::new();
        match q.sort {
            SortMode::Score => return SearchRequest::top(TOP_K).with_total(total),
            SortMode::YearScore => {
                spec.push(field("year"), true).push(SortKey::Score, true);
            }
            SortMode::CategoryYear => {
                spec.push(field("category"), false)
                    .push(field("year"), true);
            }
        }
        SearchRequest {
            offset: 0,
            limit: TOP_K,
            sort: Some(spec),
            total,
        }
    }

    /// `q` run on one of the quarry searchers (measured or oracle).
    #[inline]
    fn quarry_top(
        &self,
        searcher: &quarry::Searcher,
        q: &Prepared,
        total: TotalMode,
        what: &str,
    ) -> Outcome {
        let hits = searcher
            .search(&q.quarry, &self.quarry_request(q, total))
            .expect(what);
        Outcome {
            hits: hits
                .hits
                .iter()
                .map(|h| (h.score.to_bits(), h.doc))
                .collect(),
            total: Some((hits.total_hits, hits.total_is_exact)),
        }
    }

    #[inline]
    fn search_quarry(&self, q: &Prepared) -> Outcome {
        self.quarry_top(&self.quarry, q, q.regime.total(), "quarry search")
    }

    /// `c` alone in the lower-bound regime, `(Count, c)` in the exact one.
    #[inline]
    fn tantivy_collect<C: Collector>(&self, q: &Prepared, c: C) -> (C::Fruit, Option<(u64, bool)>) {
        match q.regime {
            Regime::LowerBound => (
                self.tantivy
                    .search(&*q.tantivy, &c)
                    .expect("tantivy search"),
                None,
            ),
            Regime::Exact => {
                let (n, fruit) = self
                    .tantivy
                    .search(&*q.tantivy, &(Count, c))
                    .expect("tantivy search");
                (fruit, Some((n as u64, true)))
            }
        }
    }

    #[inline]
    fn search_tantivy(&self, q: &Prepared) -> Outcome {
        let addr = |a: &DocAddress| (u64::from(a.segment_ord) << 32) | u64::from(a.doc_id);
        let (hits, total) = match q.sort {
            SortMode::Score => {
                let (hits, total) =
                    self.tantivy_collect(q, TopDocs::with_limit(TOP_K).order_by_score());
                let hits: Vec<(f32, DocAddress)> = hits;
                (
                    hits.iter().map(|(s, a)| (s.to_bits(), addr(a))).collect(),
                    total,
                )
            }
            SortMode::YearScore => {
                let c = TopDocs::with_limit(TOP_K).order_by((
                    (SortByStaticFastValue::<i64>::for_field("year"), Order::Desc),
                    (SortBySimilarityScore, Order::Desc),
                ));
                let (hits, total) = self.tantivy_collect(q, c);
                (
                    hits.iter()
                        .map(|((_, s), a)| (s.to_bits(), addr(a)))
                        .collect(),
                    total,
                )
            }
            SortMode::CategoryYear => {
                let c = TopDocs::with_limit(TOP_K).order_by((
                    (SortByString::for_field("category"), Order::Asc),
                    (SortByStaticFastValue::<i64>::for_field("year"), Order::Desc),
                ));
                let (hits, total) = self.tantivy_collect(q, c);
                (
                    hits.iter()
                        .map(|(_, a)| (0f32.to_bits(), addr(a)))
                        .collect(),
                    total,
                )
            }
        };
        Outcome { hits, total }
    }

    /// The exhaustive evaluation of `q`, always counting exactly.
    fn oracle(&self, q: &Prepared) -> Outcome {
        self.quarry_top(
            &self.oracle,
            q,
            TotalMode::Exact,
            "quarry exhaustive search",
        )
    }

    fn quarry_corpus_id(&self, doc: u64, cache: &mut HashMap<u64, i64>) -> i64 {
        *cache.entry(doc).or_insert_with(|| {
            self.quarry
                .stored(doc)
                .expect("stored fields")
                .into_iter()
                .find(|(f, _)| *f == self.quarry_id)
                .and_then(|(_, v)| match v {
                    Value::I64(x) => Some(x),
                    _ => None,
                })
                .unwrap_or(-1)
        })
    }

    fn tantivy_corpus_id(&self, doc: u64) -> i64 {
        let seg = (doc >> 32) as usize;
        self.tantivy_ids[seg].first(doc as u32).unwrap_or(-1)
    }
}

/// Results of every execution of one engine on one class/op: the first
/// list seen per query index (later executions must equal it).
type Seen = BTreeMap<usize, Outcome>;

struct Loop<'a> {
    engines: &'a Engines,
    sabotage: Sabotage,
}

impl Loop<'_> {
    /// Runs queries closed loop from `start`: for `seconds` (at least
    /// MIN_QUERIES), or exactly `count` queries. Records results in `seen`.
    fn run(
        &self,
        engine: Engine,
        queries: &[Prepared],
        start: usize,
        until: Until,
        seen: Option<&mut Seen>,
    ) -> Result<Measurement, String> {
        let n = queries.len();
        let mut lat: Vec<f64> = Vec::with_capacity(1024);
        let mut results: Vec<(usize, Outcome)> = Vec::new();
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        let mut i = 0usize;
        loop {
            match until {
                Until::Seconds(s) => {
                    if i >= MIN_QUERIES && t0.elapsed().as_secs_f64() >= s {
                        break;
                    }
                }
                Until::Count(c, cap) => {
                    if i >= c || (i >= MIN_QUERIES && t0.elapsed().as_secs_f64() >= cap) {
                        break;
                    }
                }
            }
            let qi = (start + i) % n;
            let q = &queries[qi];
            let t = Instant::now();
            let r = match engine {
                Engine::Quarry => self.engines.search_quarry(q),
                Engine::Tantivy => self.engines.search_tantivy(q),
            };
            lat.push(t.elapsed().as_secs_f64() * 1e3);
            if seen.is_some() {
                results.push((qi, r));
            }
            i += 1;
        }
        let wall_s = t0.elapsed().as_secs_f64();
        let cpu_s = cpu_seconds() - cpu0;
        if let Some(seen) = seen {
            for (qi, mut r) in results {
                if engine == Engine::Quarry {
                    sabotage(self.sabotage, qi, &mut r);
                }
                match seen.get(&qi) {
                    Some(first) if *first != r => {
                        return Err(format!(
                            "{} returned different hits or totals for the same query {:?} on two runs:\n  {first:?}\n  {r:?}",
                            engine.name(),
                            queries[qi].text
                        ));
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(qi, r);
                    }
                }
            }
        }
        Ok(Measurement {
            start,
            count: i,
            cpu_s,
            wall_s,
            p50_ms: quantile(&mut lat, 0.5),
            p99_ms: quantile(&mut lat, 0.99),
        })
    }
}

/// The test-only knob: a fast path that is off by one ulp on every fifth
/// query (QUARRY_BENCH_SABOTAGE=1), or miscounts it
/// (QUARRY_BENCH_SABOTAGE=total), so the check must fail the run.
fn sabotage(mode: Sabotage, qi: usize, r: &mut Outcome) {
    if !qi.is_multiple_of(5) {
        return;
    }
    match mode {
        Sabotage::Off => {}
        Sabotage::Hits => {
            if let Some(last) = r.hits.last_mut() {
                last.0 ^= 1;
            }
        }
        Sabotage::Total => {
            if let Some(t) = r.total.as_mut() {
                t.0 += 1;
            }
        }
    }
}

/// What one thread of the concurrent phase returns: latencies and results.
type ThreadOut = (Vec<f64>, Vec<(usize, Outcome)>);

/// `threads` threads share the searchers, each closed loop over the queries
/// from its own offset, for `seconds` after a warm-up. Returns the
/// combined measurement (latencies of all threads) and every result.
fn run_concurrent(
    lp: &Loop<'_>,
    engine: Engine,
    queries: &[Prepared],
    start: usize,
    threads: usize,
    warmup_s: f64,
    seconds: f64,
) -> (Measurement, Vec<(usize, Outcome)>) {
    let n = queries.len();
    let per_thread = |t: usize, secs: f64, keep: bool| {
        let mut lat = Vec::new();
        let mut results = Vec::new();
        let t0 = Instant::now();
        let mut i = 0usize;
        while i < MIN_QUERIES || t0.elapsed().as_secs_f64() < secs {
            let qi = (start + t * n / threads + i) % n;
            let q = &queries[qi];
            let ts = Instant::now();
            let mut r = match engine {
                Engine::Quarry => lp.engines.search_quarry(q),
                Engine::Tantivy => lp.engines.search_tantivy(q),
            };
            lat.push(ts.elapsed().as_secs_f64() * 1e3);
            if keep {
                if engine == Engine::Quarry {
                    sabotage(lp.sabotage, qi, &mut r);
                }
                results.push((qi, r));
            }
            i += 1;
        }
        (lat, results)
    };
    std::thread::scope(|sc| {
        for t in 0..threads {
            sc.spawn(move || per_thread(t, warmup_s, false));
        }
    });
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let outs: Vec<ThreadOut> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| sc.spawn(move || per_thread(t, seconds, true)))
            .collect();
        hs.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = cpu_seconds() - cpu0;
    let mut lat = Vec::new();
    let mut results = Vec::new();
    for (l, r) in outs {
        lat.extend(l);
        results.extend(r);
    }
    let m = Measurement {
        start,
        count: lat.len(),
        cpu_s,
        wall_s,
        p50_ms: quantile(&mut lat, 0.5),
        p99_ms: quantile(&mut lat, 0.99),
    };
    (m, results)
}

#[derive(Clone, Copy)]
enum Until {
    /// Closed loop for this many seconds (and at least MIN_QUERIES).
    Seconds(f64),
    /// Exactly this many queries, unless that takes longer than the cap
    /// (seconds): then the prefix of the same query sequence that fitted.
    Count(usize, f64),
}

fn describe_diff(fast: &TopList, exact: &TopList) -> String {
    let fmt = |l: &TopList| {
        l.iter()
            .map(|(s, d)| format!("{d}:{}({s:08x})", f32::from_bits(*s)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!("  fast path:  {}\n  exhaustive: {}", fmt(fast), fmt(exact))
}

/// Checks one measured outcome of `engine` against the exhaustive one.
/// quarry: the same hits (doc ids and score bits); in the exact regime the
/// exact total, flagged exact; in the lower-bound regime a total no larger
/// than the exact one, flagged inexact when smaller. tantivy, exact regime:
/// its `Count` equals the exhaustive total (there are no deletes, so the
/// number of matches does not depend on the segment layout). The error
/// names what differs, with both values.
fn check_outcome(
    engine: Engine,
    regime: Regime,
    got: &Outcome,
    exact: &Outcome,
) -> Result<(), String> {
    let (want, _) = exact.total.expect("the exhaustive path reports a total");
    match engine {
        Engine::Quarry => {
            if got.hits != exact.hits {
                return Err(format!(
                    "quarry's fast path differs from its exhaustive path\n{}",
                    describe_diff(&got.hits, &exact.hits)
                ));
            }
            let (n, is_exact) = got.total.expect("quarry reports a total");
            let ok = match regime {
                Regime::Exact => n == want && is_exact,
                // A lower bound may happen to be the exact count; when it is
                // smaller it must say so.
                Regime::LowerBound => n <= want && (n == want || !is_exact),
            };
            if !ok {
                return Err(format!(
                    "quarry's total is wrong in the {} regime: it reports {n} ({}), the exhaustive path counts {want}",
                    regime.name(),
                    if is_exact {
                        "flagged exact"
                    } else {
                        "flagged a lower bound"
                    }
                ));
            }
        }
        Engine::Tantivy => {
            if let Some((n, _)) = got.total
                && n != want
            {
                return Err(format!(
                    "tantivy's Count is {n}, quarry's exhaustive total {want}"
                ));
            }
        }
    }
    Ok(())
}

/// Runs every class with both ops on one layout.
pub fn run_layout(
    layout: Layout,
    engines: &Engines,
    classes: &[QueryClass],
    settings: &Settings,
) -> Result<Vec<ClassResult>, String> {
    let all_ops = [
        (Op::And, SortMode::Score, "AND"),
        (Op::Or, SortMode::Score, "OR"),
        (Op::And, SortMode::YearScore, "AND year:desc,score"),
        (Op::Or, SortMode::YearScore, "OR year:desc,score"),
        (Op::And, SortMode::CategoryYear, "AND category,year:desc"),
        (Op::Or, SortMode::CategoryYear, "OR category,year:desc"),
    ];
    let phrase_ops = [(Op::Phrase, SortMode::Score, "PHRASE")];
    let ops: &[_] = if settings.phrases {
        &phrase_ops
    } else {
        &all_ops
    };
    // Prepared queries and per class/op state, in class-list order.
    struct Slot {
        class: usize,
        op: usize,
        queries: Vec<Prepared>,
        cursor: usize,
        seen_q: Seen,
        seen_t: Seen,
        /// Exhaustive outcomes, per query index, computed once.
        oracle: Seen,
        /// Query indexes whose first run has been checked, per engine.
        checked: HashSet<(Engine, usize)>,
        result: ClassResult,
    }
    let mut slots: Vec<Slot> = Vec::new();
    for (ci, c) in classes.iter().enumerate() {
        if c.queries.is_empty() || settings.phrases && !c.name.starts_with("seq-") {
            continue;
        }
        for (oi, (op, sort, name)) in ops.iter().enumerate() {
            let sorted_class = SORTED_CLASSES.contains(&c.name.as_str());
            let wanted = if *sort == SortMode::Score {
                !settings.sorted_only
            } else {
                sorted_class
            };
            if !wanted {
                continue;
            }
            for &regime in &settings.regimes {
                let queries = c
                    .queries
                    .iter()
                    .map(|t| {
                        engines.prepare(t, *op).map(|mut p| {
                            p.sort = *sort;
                            p.regime = regime;
                            p
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                slots.push(Slot {
                    class: ci,
                    op: oi,
                    queries,
                    cursor: 0,
                    seen_q: Seen::new(),
                    seen_t: Seen::new(),
                    oracle: Seen::new(),
                    checked: HashSet::new(),
                    result: ClassResult {
                        class: c.name.clone(),
                        op: name,
                        regime,
                        quarry: Vec::new(),
                        tantivy: Vec::new(),
                        agreement: Agreement::default(),
                        oracle_checked: 0,
                        totals_exact: 0,
                        concurrent: None,
                    },
                });
            }
        }
    }
    let lp = Loop {
        engines,
        sabotage: settings.sabotage,
    };
    let n_slots = slots.len();
    for pass in 0..settings.passes {
        let mut order: Vec<usize> = (0..slots.len()).collect();
        if pass % 2 == 1 {
            order.reverse();
        }
        for (k, &si) in order.iter().enumerate() {
            let slot = &mut slots[si];
            // Alternate which engine goes first, per class and per pass.
            let first = if (slot.class + pass).is_multiple_of(2) {
                Engine::Quarry
            } else {
                Engine::Tantivy
            };
            let second = match first {
                Engine::Quarry => Engine::Tantivy,
                Engine::Tantivy => Engine::Quarry,
            };
            let start = slot.cursor;
            let mut m = HashMap::new();
            let mut count = None;
            for e in [first, second] {
                // Warm-up on the same class, then the measurement.
                lp.run(
                    e,
                    &slot.queries,
                    start,
                    Until::Seconds(settings.warmup_s),
                    None,
                )?;
                let until = match count {
                    None => Until::Seconds(settings.measure_s),
                    Some(c) => Until::Count(c, SECOND_CAP * settings.measure_s),
                };
                let seen = match e {
                    Engine::Quarry => &mut slot.seen_q,
                    Engine::Tantivy => &mut slot.seen_t,
                };
                let meas = lp.run(e, &slot.queries, start, until, Some(seen))?;
                count = Some(meas.count);
                m.insert(e.name(), meas);
            }
            let (mq, mt) = (
                m.remove("quarry").expect("q"),
                m.remove("tantivy").expect("t"),
            );
            slot.cursor = (start + mq.count) % slot.queries.len();
            // The check: every distinct query measured, against the oracle
            // (every later run of a query already equals its first run):
            // quarry's hits and totals always, tantivy's Count in the exact
            // regime.
            let regime = slot.result.regime;
            let mut engines_checked = vec![Engine::Quarry];
            if regime == Regime::Exact {
                engines_checked.push(Engine::Tantivy);
            }
            for e in engines_checked {
                let seen = match e {
                    Engine::Quarry => &slot.seen_q,
                    Engine::Tantivy => &slot.seen_t,
                };
                for (&qi, got) in seen {
                    if !slot.checked.insert((e, qi)) {
                        continue;
                    }
                    let exact = slot
                        .oracle
                        .entry(qi)
                        .or_insert_with(|| engines.oracle(&slot.queries[qi]));
                    check_outcome(e, regime, got, exact).map_err(|why| {
                        format!(
                            "MISMATCH: {why}\n  layout {}, {} regime, class {}, {}, query {:?}",
                            layout.name(),
                            regime.name(),
                            slot.result.class,
                            slot.result.op,
                            slot.queries[qi].text,
                        )
                    })?;
                }
            }
            eprintln!(
                "  [{} pass {} {:>2}/{}] {:<14} {:<3} {:<11} quarry {:>8.3} ms/q  tantivy {:>8.3} ms/q  ratio {:>5.2}  ({} queries)",
                layout.name(),
                pass + 1,
                k + 1,
                order.len(),
                slot.result.class,
                slot.result.op,
                regime.name(),
                mq.cpu_ms(),
                mt.cpu_ms(),
                mq.cpu_ms() / mt.cpu_ms(),
                mq.count
            );
            slot.result.quarry.push(mq);
            slot.result.tantivy.push(mt);
        }
    }
    if settings.threads > 1 {
        for (k, slot) in slots.iter_mut().enumerate() {
            let mut got = Vec::new();
            let first = if slot.class.is_multiple_of(2) {
                Engine::Quarry
            } else {
                Engine::Tantivy
            };
            let order = match first {
                Engine::Quarry => [Engine::Quarry, Engine::Tantivy],
                Engine::Tantivy => [Engine::Tantivy, Engine::Quarry],
            };
            for e in order {
                let (m, results) = run_concurrent(
                    &lp,
                    e,
                    &slot.queries,
                    slot.cursor,
                    settings.threads,
                    settings.warmup_s,
                    settings.measure_s,
                );
                let regime = slot.result.regime;
                if e == Engine::Quarry || regime == Regime::Exact {
                    // Every result of every thread, against the oracle.
                    for (qi, r) in results {
                        let exact = slot
                            .oracle
                            .entry(qi)
                            .or_insert_with(|| engines.oracle(&slot.queries[qi]));
                        check_outcome(e, regime, &r, exact).map_err(|why| {
                            format!(
                                "MISMATCH: {why} ({} threads)\n  layout {}, {} regime, class {}, {}, query {:?}",
                                settings.threads,
                                layout.name(),
                                regime.name(),
                                slot.result.class,
                                slot.result.op,
                                slot.queries[qi].text,
                            )
                        })?;
                    }
                }
                got.push((e, m));
            }
            let take = |e: Engine, got: &mut Vec<(Engine, Measurement)>| {
                let i = got.iter().position(|(x, _)| *x == e).expect("engine");
                got.remove(i).1
            };
            let mq = take(Engine::Quarry, &mut got);
            let mt = take(Engine::Tantivy, &mut got);
            eprintln!(
                "  [{} {} threads {:>2}/{}] {:<14} {:<3} {:<11} quarry {:>8.3} ms/q {:>8.0} q/s  tantivy {:>8.3} ms/q {:>8.0} q/s",
                layout.name(),
                settings.threads,
                k + 1,
                n_slots,
                slot.result.class,
                slot.result.op,
                slot.result.regime.name(),
                mq.cpu_ms(),
                mq.count as f64 / mq.wall_s,
                mt.cpu_ms(),
                mt.count as f64 / mt.wall_s,
            );
            slot.result.concurrent = Some((mq, mt));
        }
    }
    let mut out = Vec::new();
    let mut id_cache = HashMap::new();
    for mut slot in slots {
        slot.result.oracle_checked = slot.seen_q.len();
        slot.result.totals_exact = slot
            .seen_q
            .values()
            .filter(|o| o.total.is_some_and(|(_, exact)| exact))
            .count();
        slot.result.agreement = agreement(engines, &slot.seen_q, &slot.seen_t, &mut id_cache);
        let _ = slot.op;
        out.push(slot.result);
    }
    Ok(out)
}

fn agreement(engines: &Engines, q: &Seen, t: &Seen, cache: &mut HashMap<u64, i64>) -> Agreement {
    let mut a = Agreement::default();
    for (qi, qo) in q {
        let Some(to) = t.get(qi) else { continue };
        let (ql, tl) = (&qo.hits, &to.hits);
        a.queries += 1;
        let qids: Vec<i64> = ql
            .iter()
            .map(|&(_, d)| engines.quarry_corpus_id(d, cache))
            .collect();
        let tids: Vec<i64> = tl
            .iter()
            .map(|&(_, d)| engines.tantivy_corpus_id(d))
            .collect();
        let mut qs = qids.clone();
        let mut ts = tids.clone();
        qs.sort_unstable();
        ts.sort_unstable();
        if qs == ts {
            a.same_set += 1;
        }
        if qids == tids {
            a.same_order += 1;
        }
        let rel = |x: u32, y: u32| {
            let (x, y) = (f64::from(f32::from_bits(x)), f64::from(f32::from_bits(y)));
            (x - y).abs() / x.abs().max(y.abs()).max(f64::MIN_POSITIVE)
        };
        for (i, (qd, td)) in qids.iter().zip(&tids).enumerate() {
            if qd == td {
                a.max_rel_score_diff = a.max_rel_score_diff.max(rel(ql[i].0, tl[i].0));
            }
        }
        if qids != tids
            && ql.len() == tl.len()
            && ql.iter().zip(tl).all(|(x, y)| rel(x.0, y.0) <= 1e-5)
        {
            a.near_ties += 1;
        }
    }
    a
}

/// The hidden `__count` subcommand's work: every query of `texts` run once
/// on one engine, in the given regime, top 10 by score. A separate
/// function, never inlined, so that `valgrind --tool=callgrind
/// --toggle-collect='*count_batch*'` counts the two engines' instructions
/// over the same queries and nothing else (instruction counts are steady on
/// a noisy machine where CPU time is not).
#[inline(never)]
pub fn count_batch(
    engines: &Engines,
    engine: Engine,
    texts: &[String],
    op: Op,
    regime: Regime,
) -> Result<u64, String> {
    let prepared = prepare_all(engines, texts, op, regime)?;
    Ok(count_run(engines, engine, &prepared))
}

/// Every query of `texts` prepared for both engines, in `regime`.
fn prepare_all(
    engines: &Engines,
    texts: &[String],
    op: Op,
    regime: Regime,
) -> Result<Vec<Prepared>, String> {
    texts
        .iter()
        .map(|t| {
            let mut q = engines.prepare(t, op)?;
            q.regime = regime;
            Ok(q)
        })
        .collect()
}

/// Per query, the fastest of `reps` runs on each engine, in nanoseconds:
/// `(quarry, tantivy)` in the order of `texts` (the hidden `__each`).
pub fn each_batch(
    engines: &Engines,
    texts: &[String],
    op: Op,
    regime: Regime,
    reps: usize,
) -> Result<Vec<(u64, u64)>, String> {
    let mut out = Vec::with_capacity(texts.len());
    for t in texts {
        let mut q = engines.prepare(t, op)?;
        q.regime = regime;
        let mut best = [u64::MAX; 2];
        for _ in 0..reps {
            for (i, engine) in [Engine::Quarry, Engine::Tantivy].into_iter().enumerate() {
                let start = std::time::Instant::now();
                let r = count_run(engines, engine, std::slice::from_ref(&q));
                std::hint::black_box(r);
                best[i] = best[i].min(start.elapsed().as_nanos() as u64);
            }
        }
        out.push((best[0], best[1]));
    }
    Ok(out)
}

/// Mean nanoseconds a query, `(quarry, tantivy)`, over `rounds` rounds of
/// every query of `texts` in turn on each engine (the hidden `__cycle`).
pub fn cycle_batch(
    engines: &Engines,
    texts: &[String],
    op: Op,
    regime: Regime,
    rounds: usize,
) -> Result<(f64, f64), String> {
    let prepared = prepare_all(engines, texts, op, regime)?;
    let mut total = [0u128; 2];
    for _ in 0..rounds {
        for (i, engine) in [Engine::Quarry, Engine::Tantivy].into_iter().enumerate() {
            let start = std::time::Instant::now();
            std::hint::black_box(count_run(engines, engine, &prepared));
            total[i] += start.elapsed().as_nanos();
        }
    }
    let per = (rounds * prepared.len()).max(1) as f64;
    Ok((total[0] as f64 / per, total[1] as f64 / per))
}

#[inline(never)]
fn count_run(engines: &Engines, engine: Engine, queries: &[Prepared]) -> u64 {
    let mut hits = 0u64;
    for q in queries {
        let r = match engine {
            Engine::Quarry => engines.search_quarry(q),
            Engine::Tantivy => engines.search_tantivy(q),
        };
        hits += r.hits.len() as u64;
    }
    hits
}
