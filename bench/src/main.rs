//! quarry-bench: the macro benchmark of BENCH.md, quarry against tantivy on
//! one corpus, one query set and one machine, in one run.
//!
//! ```text
//! cargo run --release -p quarry-bench -- --quick          # 200k docs, < 15 min
//! cargo run --release -p quarry-bench                     # 1M docs, then 10M indexed: < 1.5 hours
//! ```
//!
//! Test-only knob: `QUARRY_BENCH_SABOTAGE=1` perturbs quarry's fast-path
//! hits (one score bit of every fifth query) before they are checked
//! against the exhaustive path, to show that the check fails the run;
//! `QUARRY_BENCH_SABOTAGE=total` adds one to quarry's totals instead.

mod corpus;
mod index;
mod queries;
mod report;
mod run;
mod util;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use corpus::{CorpusSpec, Synth};
use index::{Engine, Layout};
use report::{LayoutReport, RunReport};
use run::{Regime, Sabotage, Settings};

const USAGE: &str = "\
quarry-bench: quarry against tantivy, per query class (BENCH.md)

USAGE: quarry-bench [OPTIONS]

OPTIONS:
  --quick              200,000 documents and short timings (< 15 min here)
  --docs N             synthetic documents (default 1,000,000; large-vocab 120,000),
                       or a limit with --corpus
  --seed S             corpus and query seed (default 42)
  --corpus-kind K      synthetic corpus preset: standard (10,000 words, Zipf s=1.2,
                       100-600 tokens a document) or large-vocab (1,000,000 distinct
                       made-up words, Zipf s=1.2, 50-160 tokens, 120,000 documents:
                       ~400k distinct terms, about half of them occurring once)
  --vocab N            override the preset's vocabulary size (distinct words)
  --zipf S             override the preset's Zipf exponent
  --doc-len A-B        override the preset's body length range, in tokens
  --corpus FILE.jsonl  read {id,title,body,year,category} lines instead of generating
  --regimes R          counting regimes to measure, comma-separated (default
                       lower-bound,exact): lower-bound = quarry TotalMode::LowerBound
                       vs tantivy TopDocs (neither counts every match); exact =
                       quarry TotalMode::Exact vs tantivy (Count, TopDocs) (both do)
  --total R            the same as --regimes R, for a single regime
  --out DIR            output directory (default bench-out/)
  --warmup-s S         warm-up seconds per class, op and engine (default 1; quick 0.25)
  --measure-s S        measured seconds per class, op and engine (default 4; quick 0.75)
  --passes N           passes over the classes, forward/reverse/... (default 3)
  --layouts L          one, several or one,several (default one,several)
  --threads N          also run each class with N threads sharing one searcher
  --index-threads N    also index (the one layout) with N writer threads in both
                       engines (quarry WriterConfig::indexing_threads, tantivy
                       writer_with_num_threads(N, budget)), reported next to one
  --index-only         build and report the indexes only (no search measurement)
  --scale-docs N       also index N documents of the same synthetic corpus shape (one
                       layout, 1 writer thread and --index-threads, both engines; no
                       search), reported apart, each index removed once measured
                       (default 10,000,000 in a full run of the standard corpus, else 0)
  --commit-every N     (__index only) commit after every N documents, so the
                       automatic merges run while indexing continues
  --sorted-only        run only the sorted classes (year:desc,score; category,year:desc)
  --positions          index the text fields' token positions in both engines (quarry
                       positions on, tantivy WithFreqsAndPositions), in their own
                       index directories (idx-*-positions)
  --phrases            run the seq-2, seq-3 and seq-5 classes as exact phrases (quarry
                       Query::Phrase against tantivy PhraseQuery), and only them;
                       implies --positions
  --reuse-indexes      reuse indexes in DIR built by an earlier run of the same corpus
  -h, --help           this text

Writes DIR/queries.tsv, DIR/results.md, DIR/results.json and DIR/results.svg.
Exit status 2 when quarry's fast path disagrees with its exhaustive path (hits,
or totals: exact in the exact regime, a flagged lower bound otherwise), or when
tantivy's Count differs from the exhaustive total.

QUARRY_BENCH_SABOTAGE=1 (test only) perturbs quarry's fast-path hits before
the check, so the run must fail: it proves the check catches a broken path.
QUARRY_BENCH_SABOTAGE=total perturbs quarry's totals instead.";

struct Args {
    corpus: CorpusSpec,
    seed: u64,
    out: PathBuf,
    settings: Settings,
    layouts: Vec<Layout>,
    reuse: bool,
    /// Index the text fields' positions (both engines).
    positions: bool,
    /// Writer threads of the extra indexing run (1: none).
    index_threads: usize,
    /// Stop after indexing.
    index_only: bool,
    /// Documents of the builds at scale (0: none).
    scale_docs: u64,
    /// The `__index` child commits after every this many documents
    /// (none: once, at the end).
    commit_every: Option<u64>,
}

fn parse_regimes(v: &str) -> Result<Vec<Regime>, String> {
    let mut out = Vec::new();
    for s in v.split(',') {
        let r = Regime::from_name(s.trim())
            .ok_or(format!("unknown regime {s:?} (lower-bound or exact)"))?;
        if !out.contains(&r) {
            out.push(r);
        }
    }
    Ok(out)
}

fn parse_args(raw: Vec<String>) -> Result<Args, String> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(raw);
    let (mut quick, mut docs, mut seed, mut corpus) = (false, None, 42u64, None);
    let (mut out, mut warmup, mut measure, mut passes) =
        (PathBuf::from("bench-out"), None, None, 3usize);
    let mut layouts = vec![Layout::One, Layout::Several];
    let mut reuse = false;
    let mut threads = 1usize;
    let (mut index_threads, mut index_only, mut scale_docs) = (1usize, false, None);
    let mut commit_every = None;
    let mut sorted_only = false;
    let (mut positions, mut phrases) = (false, false);
    let mut regimes = Regime::ALL.to_vec();
    let mut kind: Option<Synth> = None;
    let (mut vocab, mut zipf, mut doc_len) = (None, None, None);
    let e = |e: lexopt::Error| e.to_string();
    while let Some(arg) = p.next().map_err(e)? {
        match arg {
            Long("quick") => quick = true,
            Long("docs") => docs = Some(p.value().map_err(e)?.parse::<u64>().map_err(e)?),
            Long("seed") => seed = p.value().map_err(e)?.parse().map_err(e)?,
            Long("corpus") => corpus = Some(PathBuf::from(p.value().map_err(e)?)),
            Long("out") => out = PathBuf::from(p.value().map_err(e)?),
            Long("warmup-s") => warmup = Some(p.value().map_err(e)?.parse::<f64>().map_err(e)?),
            Long("measure-s") => measure = Some(p.value().map_err(e)?.parse::<f64>().map_err(e)?),
            Long("passes") => passes = p.value().map_err(e)?.parse().map_err(e)?,
            Long("layouts") => {
                let v = p.value().map_err(e)?.string().map_err(e)?;
                layouts = v
                    .split(',')
                    .map(|s| Layout::from_name(s.trim()).ok_or(format!("unknown layout {s:?}")))
                    .collect::<Result<_, _>>()?;
            }
            Long("regimes") | Long("total") => {
                regimes = parse_regimes(&p.value().map_err(e)?.string().map_err(e)?)?;
            }
            Long("corpus-kind") => {
                let v = p.value().map_err(e)?.string().map_err(e)?;
                kind = Some(Synth::from_kind(&v).ok_or(format!(
                    "unknown corpus kind {v:?} (standard or large-vocab)"
                ))?);
            }
            Long("vocab") => vocab = Some(p.value().map_err(e)?.parse::<usize>().map_err(e)?),
            Long("zipf") => zipf = Some(p.value().map_err(e)?.parse::<f64>().map_err(e)?),
            Long("doc-len") => {
                let v = p.value().map_err(e)?.string().map_err(e)?;
                let bad = || format!("--doc-len {v:?}: expected A-B, e.g. 50-200");
                let (a, b) = v.split_once('-').ok_or_else(bad)?;
                doc_len = Some((
                    a.trim().parse::<usize>().map_err(|_| bad())?,
                    b.trim().parse::<usize>().map_err(|_| bad())?,
                ));
            }
            Long("reuse-indexes") => reuse = true,
            Long("sorted-only") => sorted_only = true,
            Long("positions") => positions = true,
            Long("phrases") => phrases = true,
            Long("threads") => threads = p.value().map_err(e)?.parse().map_err(e)?,
            Long("scale-docs") => scale_docs = Some(p.value().map_err(e)?.parse().map_err(e)?),
            Long("index-threads") => index_threads = p.value().map_err(e)?.parse().map_err(e)?,
            Long("index-only") => index_only = true,
            Long("commit-every") => {
                commit_every = Some(p.value().map_err(e)?.parse::<u64>().map_err(e)?.max(1));
            }
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected().to_string()),
        }
    }
    let shaped = kind.is_some() || vocab.is_some() || zipf.is_some() || doc_len.is_some();
    let corpus = match corpus {
        Some(_) if shaped => {
            return Err(
                "--corpus-kind, --vocab, --zipf and --doc-len shape a synthetic corpus; not with --corpus"
                    .into(),
            );
        }
        Some(path) => CorpusSpec::Jsonl { path, limit: docs },
        None => {
            let mut synth = kind.unwrap_or(Synth::STANDARD);
            let default_docs = if synth == Synth::LARGE_VOCAB {
                Synth::LARGE_VOCAB_DOCS
            } else if quick {
                200_000
            } else {
                1_000_000
            };
            synth.vocab = vocab.unwrap_or(synth.vocab);
            synth.zipf = zipf.unwrap_or(synth.zipf);
            if let Some((a, b)) = doc_len {
                (synth.min_len, synth.max_len) = (a, b);
            }
            synth.validate()?;
            CorpusSpec::Synthetic {
                seed,
                docs: docs.unwrap_or(default_docs),
                synth,
            }
        }
    };
    // The full run of the standard corpus measures indexing at scale too.
    let full_standard = !quick
        && !phrases
        && !sorted_only
        && matches!(&corpus, CorpusSpec::Synthetic { synth, .. } if *synth == Synth::STANDARD);
    let scale_docs = scale_docs.unwrap_or(if full_standard { 10_000_000 } else { 0 });
    if scale_docs > 0 && !matches!(corpus, CorpusSpec::Synthetic { .. }) {
        return Err("--scale-docs needs a synthetic corpus".into());
    }
    if regimes.is_empty() {
        return Err("--regimes needs at least one regime".into());
    }
    if passes == 0 {
        return Err("--passes must be at least 1".into());
    }
    Ok(Args {
        corpus,
        seed,
        out,
        settings: Settings {
            warmup_s: warmup.unwrap_or(if quick { 0.25 } else { 1.0 }),
            measure_s: measure.unwrap_or(if quick { 0.75 } else { 4.0 }),
            passes,
            threads: threads.max(1),
            sorted_only,
            phrases,
            regimes,
            sabotage: Sabotage::from_env_value(
                std::env::var("QUARRY_BENCH_SABOTAGE").ok().as_deref(),
            ),
        },
        layouts,
        reuse,
        positions: positions || phrases,
        index_threads: index_threads.max(1),
        index_only,
        scale_docs,
        commit_every,
    })
}

/// The hidden child subcommand: `__index ENGINE LAYOUT DIR <corpus args>`.
fn child(raw: &[String]) -> ExitCode {
    let (Some(engine), Some(layout), Some(dir)) = (raw.first(), raw.get(1), raw.get(2)) else {
        eprintln!("usage: quarry-bench __index ENGINE LAYOUT DIR [corpus args]");
        return ExitCode::from(1);
    };
    let Some(engine) = Engine::from_name(engine) else {
        eprintln!("unknown engine {engine:?}");
        return ExitCode::from(1);
    };
    let Some(layout) = Layout::from_name(layout) else {
        eprintln!("unknown layout {layout:?}");
        return ExitCode::from(1);
    };
    let args = match parse_args(raw[3..].to_vec()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    ExitCode::from(index::child_main(
        engine,
        layout,
        Path::new(dir),
        &args.corpus,
        args.positions,
        args.index_threads,
        args.commit_every,
    ) as u8)
}

/// A class's queries as the hidden subcommands run them: the two indexes
/// opened, the texts of the class's queries in a `queries.tsv`, and the
/// op and regime named.
struct ClassRun {
    engines: run::Engines,
    texts: Vec<String>,
    op: run::Op,
    regime: run::Regime,
}

impl ClassRun {
    /// From the arguments `QUARRY_DIR TANTIVY_DIR QUERIES CLASS OP
    /// REGIME`; errors say what failed (`usage` for a bad op or regime).
    fn open(args: &[String], usage: &str) -> Result<ClassRun, String> {
        let [qdir, tdir, tsv, class, op, regime] = args else {
            return Err(usage.to_owned());
        };
        let (Some(op), Some(regime)) = (run::Op::from_name(op), run::Regime::from_name(regime))
        else {
            return Err(usage.to_owned());
        };
        let s = std::fs::read_to_string(tsv).map_err(|e| format!("{tsv}: {e}"))?;
        let texts = s
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(c, _)| c == class)
            .map(|(_, q)| q.to_owned())
            .collect();
        let engines = run::Engines::open(Path::new(qdir), Path::new(tdir))?;
        Ok(ClassRun {
            engines,
            texts,
            op,
            regime,
        })
    }
}

/// The hidden subcommand `__each QUARRY_DIR TANTIVY_DIR QUERIES CLASS OP
/// REGIME`: per query of the class, the fastest of 10 runs on each engine
/// (see [`run::each_batch`]), one line each: nanoseconds quarry, tantivy,
/// their ratio and the query, to find the queries a class's mean rests on.
fn each(raw: &[String]) -> ExitCode {
    let usage = "usage: quarry-bench __each QUARRY_DIR TANTIVY_DIR QUERIES.tsv CLASS and|or|phrase lower-bound|exact";
    let result = ClassRun::open(raw, usage).and_then(|r| {
        let times = run::each_batch(&r.engines, &r.texts, r.op, r.regime, 10)?;
        Ok((times, r.texts))
    });
    match result {
        Ok((times, texts)) => {
            for ((q, t), text) in times.iter().zip(&texts) {
                println!("{q}\t{t}\t{:.3}\t{text}", *q as f64 / (*t).max(1) as f64);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// The hidden subcommand `__cycle QUARRY_DIR TANTIVY_DIR QUERIES CLASS OP
/// REGIME`: the class's queries run in turn, the whole list on one engine
/// then on the other, 20 rounds, as the measured passes cycle through a
/// class (no query meets its own warm branch history or caches); prints
/// each engine's mean nanoseconds a query and their ratio.
fn cycle(raw: &[String]) -> ExitCode {
    let usage = "usage: quarry-bench __cycle QUARRY_DIR TANTIVY_DIR QUERIES.tsv CLASS and|or|phrase lower-bound|exact";
    match ClassRun::open(raw, usage)
        .and_then(|r| run::cycle_batch(&r.engines, &r.texts, r.op, r.regime, 20))
    {
        Ok((q, t)) => {
            println!("{q:.0}\t{t:.0}\t{:.3}", q / t.max(1.0));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// The hidden subcommand `__count ENGINE QUARRY_DIR TANTIVY_DIR QUERIES CLASS
/// OP REGIME`: runs the class's queries of a `queries.tsv` once on one
/// engine (see [`run::count_batch`], the function to count instructions
/// in), and prints how many queries ran.
fn count(raw: &[String]) -> ExitCode {
    let usage = "usage: quarry-bench __count quarry|tantivy QUARRY_DIR TANTIVY_DIR QUERIES.tsv CLASS and|or|phrase lower-bound|exact";
    let Some(engine) = raw.first().and_then(|e| Engine::from_name(e)) else {
        eprintln!("{usage}");
        return ExitCode::from(1);
    };
    let result = ClassRun::open(&raw[1..], usage).and_then(|r| {
        run::count_batch(&r.engines, engine, &r.texts, r.op, r.regime)?;
        Ok(r.texts.len())
    });
    match result {
        Ok(n) => {
            println!("{n} queries");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    sh("lscpu", &[])
        .lines()
        .find_map(|l| l.strip_prefix("Model name:"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Checks that the two engines are configured alike, before measuring.
fn self_checks() -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    // Field-length norms: both decode the same 256 lengths (Lucene's SmallFloat).
    for id in 0..=255u8 {
        let t = tantivy::fieldnorm::FieldNormReader::id_to_fieldnorm(id);
        let q = quarry::format::norms::norm_to_length(id);
        if t != q {
            return Err(format!(
                "norm byte {id}: tantivy decodes {t}, quarry {q}; scores cannot agree"
            ));
        }
    }
    out.push(
        "norm tables agree: all 256 length codes decode alike (Lucene SmallFloat intToByte4)"
            .into(),
    );
    // Analysis: the same tokens on tricky text.
    let long = format!("{} {} {}", "a".repeat(40), "b".repeat(41), "é".repeat(20));
    let samples = [
        "The quick brown fox — jumped over 12 lazy dogs.",
        "ÀÉÎÕÜ straße ǅungla naïve café x2y",
        "a\u{0}b\tc\nd_e-f'g",
        "٣٤«ab» İstanbul",
        long.as_str(),
    ];
    let mut analyzer = index::tantivy_analyzer();
    for s in samples {
        let mine = quarry::analysis::tokens(s);
        let mut theirs = Vec::new();
        let mut ts = analyzer.token_stream(s);
        while ts.advance() {
            theirs.push(ts.token().text.clone());
        }
        if mine != theirs {
            return Err(format!(
                "analyzers disagree on {s:?}: quarry {mine:?}, tantivy {theirs:?}"
            ));
        }
    }
    out.push(format!(
        "analyzers agree on {} tricky samples (punctuation, Unicode letters and digits, \u{2264}40/>40-byte tokens), and on every query",
        samples.len()
    ));
    Ok(out)
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("__index") {
        return child(&raw[1..]);
    }
    if raw.first().map(String::as_str) == Some("__count") {
        return count(&raw[1..]);
    }
    if raw.first().map(String::as_str) == Some("__each") {
        return each(&raw[1..]);
    }
    if raw.first().map(String::as_str) == Some("__cycle") {
        return cycle(&raw[1..]);
    }
    if raw.first().map(String::as_str) == Some("__bytes") {
        // `__bytes ENGINE DIR`: the live and total bytes of an index.
        let Some(engine) = raw.get(1).and_then(|e| Engine::from_name(e)) else {
            return ExitCode::from(1);
        };
        let dir = Path::new(raw.get(2).map_or(".", String::as_str));
        return match index::live_bytes(engine, dir) {
            Ok(b) => {
                println!("live {b} bytes, directory {} bytes", util::dir_bytes(dir));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(1)
            }
        };
    }
    let args = match parse_args(raw.clone()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    match run_all(&args, &raw) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.starts_with("MISMATCH") => {
            eprintln!("\nFAILED: {e}");
            eprintln!(
                "The run is void: quarry must return exactly what the exhaustive evaluation returns (hits and totals), and tantivy's Count the exhaustive total."
            );
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn run_all(args: &Args, raw: &[String]) -> Result<(), String> {
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let command = format!("quarry-bench {}", raw.join(" "));
    let date = sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    let cpu = cpu_model();
    eprintln!("{command}\n{date}; {cpu}; load {}", loadavg());
    if args.settings.sabotage != Sabotage::Off {
        eprintln!(
            "QUARRY_BENCH_SABOTAGE is set: quarry's {} will be perturbed; this run must fail.",
            if args.settings.sabotage == Sabotage::Total {
                "totals"
            } else {
                "hits"
            }
        );
    }
    let checks = self_checks()?;
    for c in &checks {
        eprintln!("check: {c}");
    }

    eprintln!("making queries from {}", args.corpus.describe());
    let t = std::time::Instant::now();
    let (classes, st) = queries::make(&args.corpus, args.seed)?;
    let tsv = args.out.join("queries.tsv");
    queries::write_tsv(&tsv, &classes).map_err(|e| format!("{}: {e}", tsv.display()))?;
    let stats = format!(
        "{} docs, {} body tokens ({:.0} per doc), {} distinct terms, {} of them occurring once ({:.1} %); {} mid-df (1-6 %), {} rare (0.02-0.3 %), {} common (>= 10 %) terms",
        st.docs,
        st.tokens,
        st.tokens as f64 / st.docs as f64,
        st.terms,
        st.hapax,
        100.0 * st.hapax as f64 / st.terms.max(1) as f64,
        st.mid,
        st.rare,
        st.common
    );
    let short: Vec<String> = classes
        .iter()
        .filter(|c| c.queries.len() < queries::PER_CLASS)
        .map(|c| format!("{} {}", c.name, c.queries.len()))
        .collect();
    let stats = if short.is_empty() {
        format!(
            "{stats}; {} queries in each of the {} classes",
            queries::PER_CLASS,
            classes.len()
        )
    } else {
        format!(
            "{stats}; {} queries a class except: {}",
            queries::PER_CLASS,
            short.join(", ")
        )
    };
    eprintln!(
        "{stats}; queries in {} ({:.1} s)",
        tsv.display(),
        t.elapsed().as_secs_f64()
    );

    let mut indexing = Vec::new();
    let mut builds: Vec<(Layout, usize)> = args.layouts.iter().map(|&l| (l, 1)).collect();
    if args.index_threads > 1 {
        builds.push((Layout::One, args.index_threads));
    }
    for (layout, threads) in builds {
        for engine in [Engine::Quarry, Engine::Tantivy] {
            let dir = index_dir(&args.out, engine, layout, args.positions);
            let rep = build(args, &args.corpus, engine, layout, threads, &dir)?;
            indexing.push((engine, layout, rep));
        }
    }
    let scale = match &args.corpus {
        CorpusSpec::Synthetic { seed, synth, .. } if args.scale_docs > 0 => {
            let corpus = CorpusSpec::Synthetic {
                seed: *seed,
                docs: args.scale_docs,
                synth: *synth,
            };
            let mut builds = Vec::new();
            let more = (args.index_threads > 1).then_some(args.index_threads);
            for threads in std::iter::once(1).chain(more) {
                for engine in [Engine::Quarry, Engine::Tantivy] {
                    let dir = args.out.join(format!("idx-{}-scale", engine.name()));
                    let rep = build(args, &corpus, engine, Layout::One, threads, &dir)?;
                    // Measured: the report keeps what the index showed.
                    let _ = std::fs::remove_dir_all(&dir);
                    builds.push((engine, Layout::One, rep));
                }
            }
            Some((args.scale_docs, builds))
        }
        _ => None,
    };

    let mut layouts = Vec::new();
    let measured: &[Layout] = if args.index_only { &[] } else { &args.layouts };
    for &layout in measured {
        let engines = run::Engines::open(
            &index_dir(&args.out, Engine::Quarry, layout, args.positions),
            &index_dir(&args.out, Engine::Tantivy, layout, args.positions),
        )?;
        let load_before = loadavg();
        eprintln!(
            "measuring, {} layout (quarry {} segment(s), tantivy {}), load {load_before}",
            layout.name(),
            engines.segments.0,
            engines.segments.1
        );
        let results = run::run_layout(layout, &engines, &classes, &args.settings)?;
        layouts.push(LayoutReport {
            layout,
            segments: engines.segments,
            tantivy_segments_in_order: engines.tantivy_segments_in_order,
            load_before,
            load_after: loadavg(),
            results,
        });
    }

    let rr = RunReport {
        command,
        corpus: args.corpus.describe(),
        cpu,
        date,
        settings: format!(
            "warm-up {} s and measure {} s per class, op, counting regime and engine (the second engine of a pair runs the same query sequence as the first, for at most 3x as long), {} passes forward/reverse/forward, top-{}, one thread, closed loop; regimes {}",
            args.settings.warmup_s,
            args.settings.measure_s,
            args.settings.passes,
            run::TOP_K,
            args.settings
                .regimes
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        stats,
        threads: Some(args.settings.threads),
        checks,
        indexing,
        scale,
        layouts,
    };
    let md = args.out.join("results.md");
    std::fs::write(&md, report::markdown(&rr)).map_err(|e| format!("{}: {e}", md.display()))?;
    let js = args.out.join("results.json");
    std::fs::write(
        &js,
        serde_json::to_string_pretty(&report::json(&rr)).expect("json"),
    )
    .map_err(|e| format!("{}: {e}", js.display()))?;
    let sv = args.out.join("results.svg");
    report::svg(&rr, &sv)?;
    eprintln!(
        "wrote {}, {} and {}",
        md.display(),
        js.display(),
        sv.display()
    );
    Ok(())
}

/// Builds the index of `corpus` with `engine` in `layout` on `threads`
/// writer threads at `dir` (suffixed `-tN` for more than one thread), or,
/// with `--reuse-indexes`, takes the report an earlier build of the same
/// corpus saved beside it; prints the report's line.
fn build(
    args: &Args,
    corpus: &CorpusSpec,
    engine: Engine,
    layout: Layout,
    threads: usize,
    dir: &Path,
) -> Result<index::IndexReport, String> {
    let dir = if threads > 1 {
        dir.with_file_name(format!(
            "{}-t{threads}",
            dir.file_name().expect("named").to_string_lossy()
        ))
    } else {
        dir.to_path_buf()
    };
    let saved = dir.with_extension("report.json");
    let stamp = format!("{} [{}]", corpus.describe(), corpus.fingerprint());
    let reused = if args.reuse {
        std::fs::read_to_string(&saved)
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .filter(|v| v["corpus"].as_str() == Some(stamp.as_str()))
            .and_then(|v| index::IndexReport::from_json(&v))
    } else {
        None
    };
    let rep = match reused {
        Some(r) => {
            eprintln!("reusing {}", dir.display());
            r
        }
        None => {
            eprintln!(
                "indexing with {} ({} layout) into {} ...",
                engine.name(),
                layout.name(),
                dir.display()
            );
            let r = index::run_child(engine, layout, &dir, corpus, args.positions, threads)?;
            let mut v = r.to_json();
            v["corpus"] = stamp.into();
            let _ = std::fs::write(&saved, v.to_string());
            r
        }
    };
    eprintln!(
        "  {} {} ({threads} thread(s)): {:.0} docs/s, {:.1} s wall, {:.1} s CPU, peak RSS {:.0} MiB, {:.1} MiB on disk, {} segment(s)",
        engine.name(),
        layout.name(),
        rep.docs_per_s(),
        rep.wall_s,
        rep.cpu_s,
        rep.vm_hwm_kib as f64 / 1024.0,
        rep.bytes as f64 / 1048576.0,
        rep.segments
    );
    Ok(rep)
}

/// Where an engine's index of a layout goes; indexes with positions
/// apart from those without.
fn index_dir(out: &Path, engine: Engine, layout: Layout, positions: bool) -> PathBuf {
    let pos = if positions { "-positions" } else { "" };
    out.join(format!("idx-{}-{}{pos}", engine.name(), layout.name()))
}
