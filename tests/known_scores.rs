//! A lone term's top k starts from a floor its impacts give (scores some
//! of its documents are known to have): documents that tie that floor, in
//! blocks before and after the ones it was read from, must still be kept
//! by their lower numbers, exactly as the exhaustive path keeps them.

use quarry::*;

mod common;

/// Every hit (document, score bits) and the total, on `exec`.
fn run(s: &Searcher, q: &Query, req: &SearchRequest, exec: ExecMode) -> (Vec<(u64, u32)>, u64) {
    let h = s
        .clone()
        .with_options(SearchOptions {
            exec,
            ..SearchOptions::default()
        })
        .search(q, req)
        .unwrap();
    let hits = h.hits.iter().map(|h| (h.doc, h.score.to_bits())).collect();
    (hits, h.total_hits)
}

#[test]
fn ties_at_the_known_floor_keep_the_lowest_documents() {
    // 6000 documents of "t": nearly all of one length and frequency, so
    // thousands tie at the top score across dozens of blocks and more
    // than one second-level run, with a few stronger ones scattered late.
    let mut rng = common::Rng(0x7135);
    for segment_docs in [None, Some(2500)] {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, id, body) = common::id_body_writer(dir.path(), segment_docs);
        for i in 0..6000u32 {
            let mut d = Document::new();
            d.add_i64(id, i64::from(i));
            let text = match rng.below(100) {
                0 => "t t x".to_string(),
                1..=3 => "t x x x x x x".to_string(),
                _ => "t x x".to_string(),
            };
            d.add_str(body, &text);
            w.add_document(&d).unwrap();
        }
        w.commit().unwrap();
        drop(w);
        let s = Searcher::open(dir.path()).unwrap();
        let q = Query::term(body, "t");
        for (limit, offset) in [(1, 0), (10, 0), (10, 90), (200, 0), (5000, 0)] {
            for total in [TotalMode::Exact, TotalMode::LowerBound] {
                let req = SearchRequest {
                    offset,
                    limit,
                    sort: None,
                    total,
                };
                let (want, want_total) = run(&s, &q, &req, ExecMode::Exhaustive);
                let (got, got_total) = run(&s, &q, &req, ExecMode::Auto);
                let ctx = format!("segments {segment_docs:?} k {limit} offset {offset} {total:?}");
                assert_eq!(got, want, "{ctx}");
                assert_eq!(want_total, 6000);
                if total == TotalMode::Exact {
                    assert_eq!(got_total, 6000, "{ctx}");
                } else {
                    assert!(got_total <= 6000, "{ctx}");
                }
            }
        }
    }
}
