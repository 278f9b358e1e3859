//! `quarry bench`: closed-loop benchmark of query classes.

use std::time::{Duration, Instant};

use quarry::{ExecMode, Hits, Operator, Query, SearchRequest, Searcher, TotalMode};

use crate::cli::{self, CliError, Cmd};
use crate::search::{self, FastPath, PathArgs, RawRule};

pub const USAGE: &str = "\
Usage: quarry bench DIR --queries FILE.tsv [OPTIONS]

Runs each query class of FILE.tsv ('class<TAB>query text' lines) closed
loop, cycling through the class's queries in file order: a warm-up, then a
measured period. Reports per class the queries, completed searches, process
CPU time per query (getrusage-style CPU of the whole process / completed),
and the p50 and p99 of the per-search wall-clock latency.

Before measuring, every query's hits are checked against the exhaustive
path: the same documents with the same f32 score bits, and the same
total, except that with --total lower-bound or N a total flagged as a
lower bound must be at most the exact one (and at least N). A mismatch
fails the run (skip with --no-check).

Options:
  --queries FILE      the queries (required)
  --field NAME        the field searched [default: body]
  --op and|or         how the query's terms combine [default: or]
  --k N               hits per query [default: 10]
  --sort SPEC         sort order, as for 'quarry search'
  --total MODE        exact, lower-bound or N, as for 'quarry search'
                      [default: exact, so that every path pays for a full
                      count and the figures compare across paths; N
                      measures what a host counting N matches pays, the
                      library's default being 1000]
  --exec MODE         auto, exhaustive or daat [default: $QUARRY_EXEC, else auto]
  --path NAME=auto|off
                      the kill switch of one fast path (repeatable), as
                      for 'quarry search': term-topk, block-max-or,
                      bulk-and [default: their environment variables,
                      else auto]
  --warmup-s SECS     warm-up per class [default: 3]
  --measure-s SECS    measured time per class [default: 12]
  --threads N         threads sharing one searcher [default: 1]
  --search-threads N  threads each search runs its segments on, as for
                      'quarry search' [default: $QUARRY_SEARCH_THREADS, else 1]
  --json-out FILE     also write the results as JSON
  --no-check          skip the check against the exhaustive path
  -h, --help          show this help
";

struct Args {
    dir: String,
    queries: String,
    field: String,
    op: Operator,
    k: usize,
    sort: Option<Vec<RawRule>>,
    total: TotalMode,
    paths: PathArgs,
    warmup: f64,
    measure: f64,
    threads: usize,
    json_out: Option<String>,
    check: bool,
}

fn parse(p: &mut lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let mut dir = None;
    let mut queries = None;
    let mut a = Args {
        dir: String::new(),
        queries: String::new(),
        field: "body".into(),
        op: Operator::Or,
        k: 10,
        sort: None,
        total: TotalMode::Exact,
        paths: PathArgs::default(),
        warmup: 3.0,
        measure: 12.0,
        threads: 1,
        json_out: None,
        check: true,
    };
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("queries") => queries = Some(cli::string_value(p, "--queries")?),
            Long("field") => a.field = cli::string_value(p, "--field")?,
            Long("op") => a.op = cli::choice_value(p, "--op", "'and' or 'or'", search::parse_op)?,
            Long("k") => a.k = cli::parsed_value(p, "--k", "a non-negative integer")?,
            Long("sort") => a.sort = Some(search::parse_sort(&cli::string_value(p, "--sort")?)?),
            Long("total") => a.total = search::total_value(p)?,
            Long("exec") => a.paths.exec = Some(search::exec_value(p)?),
            Long("path") => a.paths.paths.push(search::path_value(p)?),
            Long("search-threads") => a.paths.threads = Some(search::threads_value(p)?),
            Long("warmup-s") => a.warmup = cli::seconds_value(p, "--warmup-s")?,
            Long("measure-s") => a.measure = cli::seconds_value(p, "--measure-s")?,
            Long("threads") => {
                a.threads = cli::parsed_value(p, "--threads", "a positive integer")?;
                if a.threads == 0 || a.threads > 1024 {
                    return Err(CliError::usage(
                        None,
                        "invalid value for --threads: expected 1 to 1024",
                    ));
                }
            }
            Long("json-out") => a.json_out = Some(cli::string_value(p, "--json-out")?),
            Long("no-check") => a.check = false,
            Value(v) => cli::positional(&mut dir, v, "DIR")?,
            other => return Err(other.unexpected().into()),
        }
    }
    a.dir = cli::required(dir, "the index directory DIR")?;
    a.queries = cli::required(queries, "--queries FILE.tsv")?;
    Ok(Some(a))
}

pub fn run(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::Bench, parse, run_args)
}

struct Class {
    name: String,
    queries: Vec<(String, Query)>,
}

struct ClassResult {
    name: String,
    queries: usize,
    completed: u64,
    cpu_ms_per_query: f64,
    p50_ms: f64,
    p99_ms: f64,
    wall_s: f64,
}

fn run_args(a: &Args) -> Result<(), CliError> {
    let searcher = search::open_searcher(&a.dir, &a.paths)?;
    let schema = searcher.schema().clone();
    let field = search::search_field(&schema, &a.field)?;
    let sort = a
        .sort
        .as_ref()
        .map(|r| search::resolve_sort(r, &schema))
        .transpose()?;
    let req = SearchRequest {
        offset: 0,
        limit: a.k,
        sort,
        total: a.total,
    };
    // Classes in order of first appearance.
    let mut classes: Vec<Class> = Vec::new();
    for q in search::read_queries(&a.queries)? {
        let query = Query::matching(field, &q.text, a.op);
        match classes.iter_mut().find(|c| c.name == q.class) {
            Some(c) => c.queries.push((q.text, query)),
            None => classes.push(Class {
                name: q.class,
                queries: vec![(q.text, query)],
            }),
        }
    }

    if a.check && searcher.options().exec != ExecMode::Exhaustive {
        check(&searcher, &classes, &req)?;
    }

    let mut results = Vec::new();
    for class in &classes {
        if a.warmup > 0.0 {
            run_loop(&searcher, class, &req, a.warmup, a.threads)?;
        }
        let cpu0 = process_cpu_seconds();
        let t0 = Instant::now();
        let mut samples = run_loop(&searcher, class, &req, a.measure, a.threads)?;
        let wall_s = t0.elapsed().as_secs_f64();
        let cpu = process_cpu_seconds() - cpu0;
        samples.sort_unstable();
        let completed = samples.len() as u64;
        results.push(ClassResult {
            name: class.name.clone(),
            queries: class.queries.len(),
            completed,
            cpu_ms_per_query: cpu * 1e3 / completed as f64,
            p50_ms: percentile(&samples, 0.50),
            p99_ms: percentile(&samples, 0.99),
            wall_s,
        });
    }

    let mut table = format!(
        "{:<20} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "class", "queries", "completed", "cpu_ms/q", "p50_ms", "p99_ms", "qps"
    );
    for r in &results {
        table.push_str(&format!(
            "{:<20} {:>8} {:>10} {:>10.4} {:>10.4} {:>10.4} {:>10.0}\n",
            r.name,
            r.queries,
            r.completed,
            r.cpu_ms_per_query,
            r.p50_ms,
            r.p99_ms,
            r.completed as f64 / r.wall_s.max(1e-9),
        ));
    }
    cli::print_stdout(&table)?;

    if let Some(path) = &a.json_out {
        let paths: serde_json::Map<String, serde_json::Value> = FastPath::ALL
            .into_iter()
            .map(|p| {
                let switch = p.get(searcher.options());
                (p.name().to_owned(), search::switch_name(switch).into())
            })
            .collect();
        let classes: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                serde_json::json!({
                    "class": r.name,
                    "queries": r.queries,
                    "completed": r.completed,
                    "cpu_ms_per_query": r.cpu_ms_per_query,
                    "p50_ms": r.p50_ms,
                    "p99_ms": r.p99_ms,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "classes": classes,
            "config": {
                "index": a.dir,
                "queries_file": a.queries,
                "field": a.field,
                "op": if a.op == Operator::And { "and" } else { "or" },
                "k": a.k,
                "sort": a.sort.as_ref().map(|r| r.iter().map(|r| format!("{}:{}", r.key, if r.descending { "desc" } else { "asc" })).collect::<Vec<_>>().join(",")),
                "exec": format!("{:?}", searcher.options().exec).to_lowercase(),
                "paths": paths,
                "total": total_name(a.total),
                "threads": a.threads,
                "search_threads": searcher.options().threads,
                "warmup_s": a.warmup,
                "measure_s": a.measure,
            },
        });
        let mut text =
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::failed(e.to_string()))?;
        text.push('\n');
        std::fs::write(path, text)
            .map_err(|e| CliError::failed(format!("cannot write {path}: {e}")))?;
    }
    Ok(())
}

/// `--total` as given: `exact`, `lower-bound` or N.
fn total_name(t: TotalMode) -> String {
    match t {
        TotalMode::Exact => "exact".into(),
        TotalMode::LowerBound => "lower-bound".into(),
        TotalMode::AtLeast(n) => n.to_string(),
    }
}

/// Compares every query's hits with the exhaustive path's, and its total
/// with the exact count ([`check_total`]).
fn check(searcher: &Searcher, classes: &[Class], req: &SearchRequest) -> Result<(), CliError> {
    let mut o = searcher.options().clone();
    o.exec = ExecMode::Exhaustive;
    let oracle = searcher.clone().with_options(o);
    let exact = req.clone().with_total(TotalMode::Exact);
    for c in classes {
        for (text, q) in &c.queries {
            let got = searcher.search(q, req)?;
            let want = oracle.search(q, &exact)?;
            let hits = |h: &Hits| -> Vec<(u64, u32)> {
                h.hits.iter().map(|h| (h.doc, h.score.to_bits())).collect()
            };
            let total = check_total(req.total, &got, want.total_hits);
            if hits(&got) != hits(&want) || total.is_err() {
                return Err(CliError::failed(format!(
                    "class {}, query {text:?}: the path ({:?}) disagrees with the exhaustive path{}\n  got:  total {}{} {:?}\n  want: total {} {:?}",
                    c.name,
                    searcher.options(),
                    total.err().map(|e| format!(": {e}")).unwrap_or_default(),
                    got.total_hits,
                    if got.total_is_exact { "" } else { "+" },
                    hits(&got),
                    want.total_hits,
                    hits(&want),
                )));
            }
        }
    }
    Ok(())
}

/// Whether `got`'s total is right for the mode, given the exact count: an
/// exact total equals it (and `TotalMode::Exact` must give an exact one);
/// a total flagged as a lower bound is at most it and, having stopped
/// counting only once the mode allowed, at least the mode's threshold.
fn check_total(mode: TotalMode, got: &Hits, exact: u64) -> Result<(), String> {
    let total = got.total_hits;
    if got.total_is_exact {
        if total != exact {
            return Err(format!(
                "a total of {total} flagged exact, but {exact} documents match"
            ));
        }
    } else if mode == TotalMode::Exact {
        return Err(format!(
            "an exact total was asked for, but {total} is flagged as a lower bound"
        ));
    } else if total > exact {
        return Err(format!(
            "the lower bound {total} exceeds the {exact} documents that match"
        ));
    } else if total < mode.threshold().min(exact) {
        return Err(format!(
            "the lower bound {total} counts fewer than the {} matches asked for",
            mode.threshold()
        ));
    }
    Ok(())
}

/// Runs the class's queries round-robin on `threads` threads for `secs`
/// seconds (each thread runs at least one query). Returns the latency of
/// every search in nanoseconds.
fn run_loop(
    searcher: &Searcher,
    class: &Class,
    req: &SearchRequest,
    secs: f64,
    threads: usize,
) -> Result<Vec<u64>, CliError> {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let n = class.queries.len();
    let one = |t: usize| -> Result<Vec<u64>, quarry::Error> {
        let mut samples = Vec::new();
        let mut i = t % n;
        loop {
            let t0 = Instant::now();
            let hits = searcher.search(&class.queries[i].1, req)?;
            let t1 = Instant::now();
            std::hint::black_box(&hits);
            samples.push((t1 - t0).as_nanos() as u64);
            i = (i + 1) % n;
            if t1 >= deadline {
                return Ok(samples);
            }
        }
    };
    let per_thread: Vec<Result<Vec<u64>, quarry::Error>> = if threads == 1 {
        vec![one(0)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || one(t))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a benchmark thread panicked"))
                .collect()
        })
    };
    let mut all = Vec::new();
    for r in per_thread {
        all.extend(r?);
    }
    Ok(all)
}

/// Nearest-rank percentile of sorted nanosecond samples, in milliseconds.
fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1e6
}

/// CPU time (user + system) of the whole process so far, in seconds.
fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
    }
    // SAFETY: an all-zero rusage is a valid value, and getrusage only writes into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(total_hits: u64, total_is_exact: bool) -> Hits {
        Hits {
            hits: Vec::new(),
            total_hits,
            total_is_exact,
            scored_docs: 0,
        }
    }

    #[test]
    fn totals_are_checked_against_the_exact_count() {
        let (exact, lower, at_100) = (
            TotalMode::Exact,
            TotalMode::LowerBound,
            TotalMode::AtLeast(100),
        );
        // Exact totals must be the count, whatever the mode.
        for mode in [exact, lower, at_100] {
            assert!(check_total(mode, &hits(500, true), 500).is_ok());
            assert!(check_total(mode, &hits(499, true), 500).is_err());
            assert!(check_total(mode, &hits(501, true), 500).is_err());
        }
        // Exact mode never accepts a lower bound.
        assert!(check_total(exact, &hits(500, false), 500).is_err());
        assert!(check_total(exact, &hits(10, false), 500).is_err());
        // A lower bound is at most the count...
        assert!(check_total(lower, &hits(10, false), 500).is_ok());
        assert!(check_total(lower, &hits(0, false), 500).is_ok());
        assert!(check_total(lower, &hits(501, false), 500).is_err());
        assert!(check_total(at_100, &hits(501, false), 500).is_err());
        // ...and at least the threshold (or the count, when smaller).
        assert!(check_total(at_100, &hits(100, false), 500).is_ok());
        assert!(check_total(at_100, &hits(99, false), 500).is_err());
        assert!(check_total(at_100, &hits(60, false), 60).is_ok());
        assert!(check_total(at_100, &hits(59, false), 60).is_err());
    }
}
