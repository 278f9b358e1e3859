//! One search on several threads (`SearchOptions::threads`) returns what
//! it returns on one: the same documents, score bits and order, the same
//! exact totals, and lower-bound totals that stay lower bounds. The
//! corpus is made of few distinct texts, each repeated in every segment,
//! so that most scores tie across segments and threads: a thread must not
//! reject a document that ties another thread's k-th score, which a lower
//! document number may still put in the results.

mod common;

use common::Rng;
use quarry::*;

const WORDS: [&str; 8] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
];

struct Index {
    _dir: tempfile::TempDir,
    searcher: Searcher,
    body: FieldId,
    year: FieldId,
}

/// About 7,000 documents in 7 segments, some deleted: 40 distinct texts
/// (so scores repeat in every segment), posting lists long enough for
/// skip data, and a sortable year of 5 values (so sort keys tie too).
fn index() -> Index {
    let dir = common::fast_tempdir();
    let (schema, f) = common::id_body_year();
    let config = WriterConfig {
        max_docs_per_segment: Some(1000),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
    let mut rng = Rng(7);
    let texts: Vec<String> = (0..40)
        .map(|_| {
            let n = 1 + rng.below(6);
            (0..n)
                .map(|_| WORDS[rng.below(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for id in 0..7000i64 {
        let mut d = Document::new();
        d.add_i64(f.id, id);
        d.add_str(f.body, &texts[rng.below(texts.len())]);
        d.add_i64(f.year, 2000 + rng.below(5) as i64);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    for id in (0..7000i64).step_by(13) {
        w.delete_term(f.id, &Value::I64(id)).unwrap();
    }
    w.commit().unwrap();
    let searcher = Searcher::open(dir.path()).unwrap();
    assert!(searcher.snapshot().segments().len() >= 7);
    Index {
        _dir: dir,
        searcher,
        body: f.body,
        year: f.year,
    }
}

fn queries(body: FieldId) -> Vec<Query> {
    let mut out = common::word_pair_queries(body, &WORDS, 1);
    out.push(Query::Match {
        field: body,
        text: "alpha gamma epsilon eta".into(),
        op: Operator::Or,
    });
    out
}

fn with(s: &Searcher, exec: ExecMode, threads: usize) -> Searcher {
    s.clone().with_options(SearchOptions {
        exec,
        threads,
        ..SearchOptions::default()
    })
}

fn bits(h: &Hits) -> Vec<(u64, u32, Vec<Option<Value>>)> {
    h.hits
        .iter()
        .map(|h| (h.doc, h.score.to_bits(), h.sort_values.clone()))
        .collect()
}

#[test]
fn several_threads_give_one_threads_hits_in_score_order() {
    let ix = index();
    let one = with(&ix.searcher, ExecMode::Exhaustive, 1);
    let mut compared = 0;
    for q in queries(ix.body) {
        for (limit, offset) in [(1, 0), (10, 0), (10, 7), (100, 3)] {
            let exact = SearchRequest {
                offset,
                limit,
                sort: None,
                total: TotalMode::Exact,
            };
            let want = one.search(&q, &exact).unwrap();
            assert!(want.total_hits > 100, "{q:?} matches too little to test");
            for exec in [ExecMode::Auto, ExecMode::Daat] {
                for threads in [2, 3, 8] {
                    let s = with(&ix.searcher, exec, threads);
                    let got = s.search(&q, &exact).unwrap();
                    let ctx = format!("{q:?} {exec:?} threads {threads} k {limit} +{offset}");
                    assert_eq!(bits(&got), bits(&want), "{ctx}");
                    assert_eq!(got.total_hits, want.total_hits, "{ctx}");
                    assert!(got.total_is_exact, "{ctx}");
                    for total in [TotalMode::LowerBound, TotalMode::AtLeast(50)] {
                        let req = SearchRequest {
                            total,
                            ..exact.clone()
                        };
                        let got = s.search(&q, &req).unwrap();
                        assert_eq!(bits(&got), bits(&want), "{ctx} {total:?}");
                        assert!(got.total_hits <= want.total_hits, "{ctx} {total:?}");
                        assert!(
                            got.total_hits >= total.threshold().min(want.total_hits),
                            "{ctx} {total:?}"
                        );
                        assert!(
                            !got.total_is_exact || got.total_hits == want.total_hits,
                            "{ctx} {total:?}"
                        );
                    }
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 100);
}

#[test]
fn several_threads_give_one_threads_hits_sorted() {
    let ix = index();
    let one = with(&ix.searcher, ExecMode::Exhaustive, 1);
    let mut year_then_score = SortSpec::new();
    year_then_score.push(SortKey::Field(ix.year), true);
    year_then_score.push(SortKey::Score, true);
    let mut year_only = SortSpec::new();
    year_only.push(SortKey::Field(ix.year), false);
    for q in queries(ix.body) {
        for spec in [&year_then_score, &year_only] {
            for (limit, offset) in [(10, 0), (25, 5)] {
                let req = SearchRequest {
                    offset,
                    limit,
                    sort: Some(spec.clone()),
                    total: TotalMode::Exact,
                };
                let want = one.search(&q, &req).unwrap();
                for threads in [2, 4] {
                    let got = with(&ix.searcher, ExecMode::Auto, threads)
                        .search(&q, &req)
                        .unwrap();
                    let ctx = format!("{q:?} {spec:?} threads {threads}");
                    assert_eq!(bits(&got), bits(&want), "{ctx}");
                    assert_eq!(got.total_hits, want.total_hits, "{ctx}");
                }
            }
        }
    }
}

#[test]
fn a_thread_count_of_zero_is_refused_from_the_environment() {
    // The variable is read by `SearchOptions::from_env`; run in a child so
    // that no other test sees it.
    if std::env::var_os("QUARRY_PARALLEL_CHILD").is_some() {
        let err = SearchOptions::from_env().unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument(ref m) if m.contains("QUARRY_SEARCH_THREADS")),
            "{err}"
        );
        return;
    }
    let out = common::rerun_self(
        "a_thread_count_of_zero_is_refused_from_the_environment",
        &[
            ("QUARRY_PARALLEL_CHILD", "1"),
            ("QUARRY_SEARCH_THREADS", "0"),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
