//! The fuzz targets' entry points (`fuzz/src/`, compiled in here) in the
//! normal test suite:
//!
//! - every seed of every target is read through (not rejected at the door),
//!   so the coverage-guided runs start deep inside each reader;
//! - every crash input kept under `fuzz/regressions/<target>/` runs again;
//! - a short deterministic mutation run (bit flips, byte overwrites,
//!   truncations) over the seeds, so each build gets a little fuzzing even
//!   without the fuzzing toolchain.
//!
//! `QUARRY_FUZZ_SEEDS=DIR cargo test --test fuzz_smoke` writes the seed
//! corpus to `DIR/<target>/` (what `fuzz/run.sh` does).

use std::path::{Path, PathBuf};

use quarry::format::manifest::Manifest;
use quarry::format::postings;
use quarry::*;

#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod fuzz;

mod common;

type Entry = fn(&[u8]) -> fuzz::Reached;

const TARGETS: [(&str, Entry); 6] = [
    ("segment", fuzz::segment),
    ("postings", fuzz::postings),
    ("manifest", fuzz::manifest),
    ("tombstones", fuzz::tombstones),
    ("stats", fuzz::stats),
    ("capi", fuzz::capi),
];

fn golden() -> PathBuf {
    common::root().join("tests/golden/v1")
}

/// Files of `dir` whose name ends with `ext`, sorted by name.
fn files(dir: &Path, ext: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(ext))
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// A fresh index of the golden schema: a common term in every document
/// (several packed blocks), a Zipf-like tail, two segments and a merged
/// one, some deletes.
fn fresh_index(dir: &Path) {
    let schema = fuzz::schema().clone();
    let field =
        |name: &str| FieldId(schema.fields().iter().position(|f| f.name == name).unwrap() as u16);
    let (id, body, year, cat, price) = (
        field("id"),
        field("body"),
        field("year"),
        field("category"),
        field("price"),
    );
    let config = WriterConfig {
        max_docs_per_segment: Some(300),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    const WORDS: [&str; 8] = [
        "the", "of", "and", "sea", "ship", "whale", "ahab", "ishmael",
    ];
    for n in 0..450i64 {
        let mut d = Document::new();
        let words: Vec<&str> = (0..(n % 9 + 1))
            .map(|j| WORDS[((n * 7 + j * j) % 255 + 1).ilog2() as usize])
            .chain(["the"])
            .collect();
        d.add_i64(id, n)
            .add_str(body, &words.join(" "))
            .add_i64(year, 1800 + n % 13)
            .add_f64(price, n as f64 / 8.0);
        if n % 4 != 0 {
            d.add_str(cat, ["novel", "essay", "letters"][(n % 3) as usize]);
        }
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    for n in (0..450).step_by(7) {
        w.delete_term(id, &Value::I64(n)).unwrap();
    }
    w.commit().unwrap();
}

/// The C API programs the `capi` seeds are (see `fuzz/src/capi.rs` for
/// the opcodes): build an index through the C API and search it.
fn capi_programs() -> Vec<Vec<u8>> {
    let text = |s: &str| {
        let mut v = vec![5, s.len() as u8];
        v.extend_from_slice(s.as_bytes());
        v
    };
    let name = |i: u8| vec![1, i];
    // Opcode 13 (a query) on field `i`, of kind `k`.
    let query = |i: u8, k: u8| [13, 1, i, k];
    let mut p = vec![0];
    for (n, ty, flags) in [(0, 3, 3), (1, 1, 3), (2, 2, 7), (3, 4, 5)] {
        p.push(1);
        p.extend(name(n));
        p.extend([ty, flags]);
    }
    p.extend([3, 0, 0, 5]);
    for (i, body) in ["the whale", "the sea and the whale", "ship"]
        .iter()
        .enumerate()
    {
        p.push(8);
        p.push(7);
        p.extend(name(0));
        p.extend((i as u64).to_le_bytes());
        p.push(0);
        p.push(6);
        p.extend(name(1));
        p.extend(text(body));
        p.push(0);
        p.push(6);
        p.extend(name(2));
        p.extend(text(["red", "blue"][i % 2]));
        p.push(1);
        p.push(7);
        p.extend(name(3));
        p.extend((i as f64).to_bits().to_le_bytes());
        p.push(1);
        p.push(9);
    }
    p.extend([11, 0, 12, 0, 0]);
    // Queries: a term, a match, a boolean of both.
    p.extend(query(1, 0));
    p.extend(text("whale"));
    p.extend(query(1, 2));
    p.extend(text("the sea"));
    p.push(2);
    p.extend(query(1, 3));
    p.extend([14, 2, 0, 1, 14, 2, 1, 2]);
    // Sort by tag then score; search ranked and sorted; read the hits.
    p.extend([15, 16, 1, 2]);
    p.extend(name(2));
    p.extend([16, 2, 0]);
    let searched = p.clone();
    let mut ranked = searched.clone();
    ranked.extend([17, 2, 1, 0, 10, 0, 19, 0, 20, 0]);
    ranked.extend(name(1));
    ranked.push(0);
    let mut sorted = searched.clone();
    sorted.extend([
        17, 0, 0, 0, 10, 1, 1, 21, 0, 0, 0, 21, 0, 0, 3, 22, 2, 1, 0, 23,
    ]);
    // The other query kinds (queries 3 to 9): a prefix, an i64, an f64 and
    // a string range, match-all, a boosted copy of the prefix, a parsed
    // query ("whale OR tag:r*"); each searched with an expansion limit
    // of 4.
    let mut kinds = searched;
    kinds.extend([22, 0, 0, 3, 4]);
    kinds.extend(query(1, 4));
    kinds.extend(text("wh"));
    kinds.extend(query(0, 5));
    kinds.extend(0u64.to_le_bytes());
    kinds.push(1);
    kinds.extend(1u64.to_le_bytes());
    kinds.push(2);
    kinds.extend(query(3, 6));
    kinds.extend(0.5f64.to_bits().to_le_bytes());
    kinds.push(1);
    kinds.extend(0f64.to_bits().to_le_bytes());
    kinds.push(0);
    kinds.extend(query(2, 7));
    kinds.extend(text("a"));
    kinds.push(1);
    kinds.extend(text("s"));
    kinds.push(2);
    // (The field is not read by these two.)
    kinds.extend(query(0, 8));
    kinds.extend(query(0, 10));
    kinds.push(4);
    kinds.extend(1.5f32.to_bits().to_le_bytes());
    kinds.extend([0; 4]);
    kinds.extend(query(1, 11));
    // Tokens 0 ("whale"), 9 (" "), 11 ("OR"), 9, 3 ("tag:"), 7 ("r*").
    kinds.extend([6, 0, 9, 11, 9, 3, 7, 1]);
    for q in 3..=9 {
        kinds.extend([17, q, 1, 0, 10, 0]);
    }
    vec![p, ranked, sorted, kinds]
}

/// The seed corpus of every target.
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    let fresh = tempfile::tempdir().unwrap();
    fresh_index(fresh.path());
    for (origin, dir) in [("golden", golden()), ("fresh", fresh.path().to_owned())] {
        for (name, bytes) in files(&dir, ".qsg") {
            out.push(("segment", format!("{origin}-{name}"), bytes));
        }
        let manifests = files(&dir, ".qmf");
        for (name, bytes) in &manifests {
            out.push(("manifest", format!("{origin}-{name}"), bytes.clone()));
        }
        let m = Manifest::decode(Path::new("m"), &manifests.last().unwrap().1).unwrap();
        for s in m.segments.iter().filter(|s| s.del_gen > 0) {
            let name = quarry::format::manifest::tombstone_name(s.id, s.del_gen);
            let mut bytes = s.doc_count.to_le_bytes().to_vec();
            bytes.extend(std::fs::read(dir.join(&name)).unwrap());
            out.push(("tombstones", format!("{origin}-{name}"), bytes));
        }
    }
    // Posting lists: a short tail, one packed block and a tail, and enough
    // blocks for two second-level skip entries.
    for (n, step) in [(5u32, 3u32), (200, 2), (4200, 1)] {
        let docs: Vec<u32> = (0..n).map(|i| i * step).collect();
        let tfs: Vec<u32> = (0..n).map(|i| 1 + i % 5).collect();
        let max_doc = n * step;
        let mut bytes = n.to_le_bytes().to_vec();
        bytes.extend(max_doc.to_le_bytes());
        postings::encode(
            &docs,
            &tfs,
            max_doc,
            |d| (d % 251) as u8,
            &quarry::query::bm25::length_factors(1000, 100_000, true),
            &mut bytes,
        )
        .unwrap();
        out.push(("postings", format!("list-{n}"), bytes));
    }
    for (i, p) in capi_programs().into_iter().enumerate() {
        out.push(("capi", format!("program-{i}"), p));
    }
    // Statistics of terms and a prefix; and of two shards.
    let searcher = Searcher::open(fresh.path()).unwrap();
    let body = searcher.schema().field("body").unwrap();
    let queries = [
        Query::matching(body, "the sea ship nothing", Operator::Or),
        Query::boolean()
            .add(Occur::Must, Query::term(body, "whale"))
            .add(Occur::MustNot, Query::term(body, "ahab")),
        Query::prefix(body, "s"),
    ];
    let one = searcher.corpus_stats(&queries).unwrap();
    out.push(("stats", "fresh".into(), one.encode()));
    let two = CorpusStats::merge(&[one.clone(), one]).unwrap();
    out.push(("stats", "fresh-twice".into(), two.encode()));
    out
}

fn entry(target: &str) -> Entry {
    TARGETS.iter().find(|t| t.0 == target).unwrap().1
}

#[test]
fn every_seed_is_read_through() {
    let seeds = seeds();
    if let Some(dir) = std::env::var_os("QUARRY_FUZZ_SEEDS") {
        for (target, name, bytes) in &seeds {
            let d = Path::new(&dir).join(target);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(name), bytes).unwrap();
        }
    }
    for (target, _) in TARGETS {
        assert!(
            seeds.iter().any(|s| s.0 == target),
            "no seed for target {target}"
        );
    }
    let mut packed = 0;
    for (target, name, bytes) in &seeds {
        let r = entry(target)(bytes);
        assert!(r.opened, "{target} seed {name} rejected: {r:?}");
        match *target {
            "segment" => {
                assert!(
                    r.blocks > 0 && r.stored_docs > 0 && r.ords > 0,
                    "{name}: {r:?}"
                );
                // Every query (at least four) on every path, three ways.
                assert!(r.searches >= 4 * 3 * 3, "{name}: {r:?}");
            }
            "postings" => assert!(r.blocks > 0, "{name}: {r:?}"),
            "capi" => match name.as_str() {
                "program-1" | "program-2" => assert!(r.searches > 0, "{name}: {r:?}"),
                // Every one of the other query kinds.
                "program-3" => assert!(r.searches >= 7, "{name}: {r:?}"),
                _ => {}
            },
            _ => {}
        }
        packed += r.packed_blocks;
    }
    assert!(packed > 0, "no seed has a packed posting block");
}

#[test]
fn kept_crash_inputs_stay_fixed() {
    let root = common::root().join("fuzz/regressions");
    let mut n = 0;
    for (target, run) in TARGETS {
        let dir = root.join(target);
        if !dir.is_dir() {
            continue;
        }
        for (name, bytes) in files(&dir, "") {
            eprintln!("{target}/{name}");
            run(&bytes);
            n += 1;
        }
    }
    eprintln!("{n} kept inputs");
}

/// A small xorshift generator: the mutation run is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_seeds_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let seeds = seeds();
    for (target, name, bytes) in &seeds {
        let run = entry(target);
        let rounds = if *target == "segment" { 60 } else { 200 };
        for round in 0..rounds {
            let mut m = bytes.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(m.len());
                match rng.below(4) {
                    0 => m[at] ^= 1 << rng.below(8),
                    1 => m[at] = rng.next() as u8,
                    2 => m[at] = [0, 0xff, 0x7f, 0x80][rng.below(4)],
                    _ => m.truncate(at.max(1)),
                }
                if m.is_empty() {
                    break;
                }
            }
            if std::panic::catch_unwind(|| run(&m)).is_err() {
                let kept = Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join(format!("fuzz-smoke-{target}-{name}-{round}"));
                std::fs::write(&kept, &m).unwrap();
                panic!(
                    "{target} seed {name} round {round} panicked; input in {} \
                     (keep it in fuzz/regressions/{target}/ with the fix)",
                    kept.display()
                );
            }
        }
    }
}
