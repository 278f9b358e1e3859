//! A build on several indexing threads (`WriterConfig::indexing_threads`)
//! searches like a one-thread build of the same documents: the same
//! documents in the same order, the same score bits, the same totals and
//! the same stored values, with deletes between the additions.

mod common;

use common::Rng;
use quarry::*;

const WORDS: [&str; 12] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu",
];

struct Built {
    _dir: tempfile::TempDir,
    searcher: Searcher,
}

/// Indexes 4,000 documents (seeded) on `threads` indexing threads (0: the
/// caller's) with a small
/// memory budget (many runs and segments), deleting some ids after each
/// 500 documents and committing every 1,200; then merges to one segment
/// when `merge`.
fn build(threads: usize, deletes: bool, merge: bool) -> (Built, common::IdBodyYear) {
    let dir = common::fast_tempdir();
    let (mut schema, f) = common::id_body_year();
    schema.set_positions(f.body, true).unwrap();
    let config = WriterConfig {
        memory_budget: 256 << 10,
        merge_factor: 0,
        indexing_threads: threads,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
    let mut rng = Rng(11);
    for id in 0..4000i64 {
        let d = common::skewed_doc(&f, id, &WORDS, 40, &mut rng);
        w.add_document(&d).unwrap();
        if deletes && id % 500 == 499 {
            // Hits documents added before (and one not added yet: kept).
            for victim in [id - 3, id - 250, id + 1] {
                w.delete_term(f.id, &Value::I64(victim)).unwrap();
            }
        }
        if id % 1200 == 1199 {
            w.commit().unwrap();
        }
    }
    w.commit().unwrap();
    if merge {
        w.merge(1).unwrap();
    }
    drop(w);
    let searcher = Searcher::open(dir.path()).unwrap();
    (
        Built {
            _dir: dir,
            searcher,
        },
        f,
    )
}

fn queries(body: FieldId) -> Vec<Query> {
    let mut out = common::word_pair_queries(body, &WORDS, 3);
    for (i, w) in WORDS.iter().enumerate() {
        out.push(Query::Phrase {
            field: body,
            text: format!("{w} {}", WORDS[(i + 1) % WORDS.len()]),
            slop: 0,
        });
    }
    out
}

type HitBits = Vec<(u64, u32, Vec<(FieldId, Value)>)>;

fn hits(s: &Searcher, q: &Query) -> (HitBits, u64) {
    let req = SearchRequest {
        offset: 0,
        limit: 50,
        sort: None,
        total: TotalMode::Exact,
    };
    let h = s.search(q, &req).unwrap();
    let list = h
        .hits
        .iter()
        .map(|x| (x.doc, x.score.to_bits(), s.stored(x.doc).unwrap()))
        .collect();
    (list, h.total_hits)
}

fn compare(threads: usize, deletes: bool, merge: bool) {
    let (one, f) = build(0, deletes, merge);
    let (many, _) = build(threads, deletes, merge);
    if !merge {
        assert!(
            many.searcher.snapshot().segments().len() > one.searcher.snapshot().segments().len(),
            "the threads' runs cut more segments"
        );
    }
    assert_eq!(
        common::live_ids(&many.searcher, f.id),
        common::live_ids(&one.searcher, f.id)
    );
    for q in queries(f.body) {
        let want = hits(&one.searcher, &q);
        assert!(want.1 > 0, "{q:?} matches nothing");
        assert_eq!(hits(&many.searcher, &q), want, "{q:?}, {threads} threads");
    }
}

#[test]
fn several_threads_search_like_one() {
    compare(3, false, false);
    compare(2, false, true);
}

#[test]
fn several_threads_with_deletes_search_like_one_after_merging() {
    compare(3, true, true);
}

/// The index directory's files and their bytes, but the writer's lock.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "LOCK")
        .map(|e| {
            let name = e.file_name().into_string().unwrap();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn one_indexing_thread_writes_the_callers_segments() {
    for (deletes, merge) in [(false, false), (true, false), (true, true)] {
        let (caller, _) = build(0, deletes, merge);
        let (one, _) = build(1, deletes, merge);
        let (a, b) = (files(caller._dir.path()), files(one._dir.path()));
        let segs = a.iter().filter(|f| f.0.ends_with(".qsg")).count();
        assert!(merge || segs > 1, "{segs} segments");
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "deletes {deletes}, merge {merge}");
        for (x, y) in a.iter().zip(&b) {
            assert!(
                x.1 == y.1,
                "{} differs (deletes {deletes}, merge {merge})",
                x.0
            );
        }
    }
}
