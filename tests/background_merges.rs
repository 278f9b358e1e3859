//! Merges on the writer's merge thread (`WriterConfig::background_merges`)
//! change nothing a search returns: an index built with them returns the
//! documents, score bits and totals of one built with merges inside the
//! commit, with deletes committed while merges run. A merged segment
//! carries the deletes its sources received while it was written; closing
//! or rolling back a writer in the middle of merges leaves no file behind.

mod common;

use common::Rng;
use quarry::*;

const WORDS: [&str; 10] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
];

fn config(background: bool) -> WriterConfig {
    WriterConfig {
        max_docs_per_segment: Some(40),
        merge_factor: 3,
        background_merges: background,
        ..Default::default()
    }
}

fn doc(f: &common::IdBodyYear, id: i64, rng: &mut Rng) -> Document {
    common::skewed_doc(f, id, &WORDS, 30, rng)
}

type Hits = Vec<(Vec<(u64, u32)>, u64)>;

/// Per query, the top 30 (document, score bits) and the exact total.
fn hits(s: &Searcher, body: FieldId) -> Hits {
    common::word_pair_queries(body, &WORDS, 3)
        .iter()
        .map(|q| {
            let h = s
                .search(
                    q,
                    &SearchRequest {
                        total: TotalMode::Exact,
                        ..SearchRequest::top(30)
                    },
                )
                .unwrap();
            let list = h.hits.iter().map(|x| (x.doc, x.score.to_bits())).collect();
            (list, h.total_hits)
        })
        .collect()
}

/// What a search sees after each commit of a seeded workload (adds, and
/// with `deletes` deletes of documents in segments that merges may be
/// reading), then after `merge(1)`: the live ids, and the hits when
/// comparable (without deletes at every commit: scores depend on the
/// documents only; with deletes, only once merged to one segment, since
/// a fully deleted segment leaves the manifest when its last document
/// goes, which changes the document count, at an instant that depends on
/// the merges).
fn run(background: bool, deletes: bool) -> Vec<(Vec<i64>, Option<Hits>)> {
    let dir = common::fast_tempdir();
    let (schema, f) = common::id_body_year();
    let mut w = IndexWriter::create(dir.path(), &schema, config(background)).unwrap();
    let mut rng = Rng(7);
    let mut seen = Vec::new();
    let mut look = |w: &IndexWriter, last: bool| {
        let s = Searcher::open(w.dir()).unwrap();
        let comparable = !deletes || last;
        seen.push((
            common::live_ids(&s, f.id),
            comparable.then(|| hits(&s, f.body)),
        ));
    };
    for id in 0..2400i64 {
        w.add_document(&doc(&f, id, &mut rng)).unwrap();
        if deletes && id % 50 == 49 {
            for _ in 0..4 {
                let victim = rng.below(id as usize + 1) as i64;
                w.delete_term(f.id, &Value::I64(victim)).unwrap();
            }
            // Now and then a whole flushed segment's worth.
            if id % 700 == 699 {
                for victim in id - 300..id - 240 {
                    w.delete_term(f.id, &Value::I64(victim)).unwrap();
                }
            }
        }
        if id % 130 == 129 {
            w.commit().unwrap();
            look(&w, false);
        }
    }
    w.merge(1).unwrap();
    look(&w, true);
    drop(w);
    assert_eq!(common::unreferenced(dir.path()), Vec::<String>::new());
    seen
}

#[test]
fn background_merges_search_like_merges_within_the_commit() {
    for deletes in [false, true] {
        let want = run(false, deletes);
        let got = run(true, deletes);
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.0, w.0, "live ids after commit {i}, deletes {deletes}");
            assert_eq!(g.1, w.1, "hits after commit {i}, deletes {deletes}");
        }
        assert!(want.last().unwrap().1.is_some());
    }
}

/// Five equal segments committed: the policy (factor 3; below the floor
/// every segment counts as one of the floor's size) merges the first three
/// on the merge thread. Deletes committed right after hit them, one
/// source entirely (then dropped from the manifest). Whichever commit or
/// wait publishes the merge (here mostly the wait: the thread has not
/// reported yet when the delete commit looks), the merged segment carries
/// the deletes; segments of 10 and of 1,500 documents.
#[test]
fn deletes_committed_during_a_merge_are_carried_by_the_merged_segment() {
    for round in 0..12 {
        let seg: i64 = if round % 2 == 0 { 10 } else { 1500 };
        let dir = common::fast_tempdir();
        let (schema, f) = common::id_body_year();
        let config = WriterConfig {
            max_docs_per_segment: Some(seg as u32),
            ..config(true)
        };
        let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
        let mut rng = Rng(round);
        for id in 0..5 * seg {
            w.add_document(&doc(&f, id, &mut rng)).unwrap();
        }
        w.commit().unwrap();
        // Some from each segment, and all of the first.
        let mut victims: Vec<i64> = (0..seg).collect();
        victims.extend([seg + 3, seg + 7, 2 * seg + 5, 3 * seg + 1, 3 * seg + 9]);
        for &v in &victims {
            w.delete_term(f.id, &Value::I64(v)).unwrap();
        }
        w.commit().unwrap();
        w.wait_merges().unwrap();
        let s = Searcher::open(dir.path()).unwrap();
        let want: Vec<i64> = (0..5 * seg).filter(|i| !victims.contains(i)).collect();
        assert_eq!(common::live_ids(&s, f.id), want, "round {round}");
        assert_eq!(s.num_docs(), want.len() as u64);
        let segments = s.snapshot().segments();
        assert_eq!(segments.len(), 3, "round {round}: merged");
        // The merge started before the deletes: they are in its tombstones.
        let merged = segments.iter().max_by_key(|x| x.entry.id).unwrap();
        assert!(merged.entry.del_count > 0, "round {round}");
        // A delete by term finds nothing more in any of them.
        for &v in &victims {
            let h = s
                .search(&Query::term_i64(f.id, v), &SearchRequest::top(5))
                .unwrap();
            assert_eq!(h.total_hits, 0, "round {round}: {v}");
        }
        drop(w);
        assert_eq!(common::unreferenced(dir.path()), Vec::<String>::new());
    }
}

/// A writer dropped while merges run finishes them and leaves only the
/// newest manifest's files; a writer rolled back cancels them and leaves
/// the directory as its last commit wrote it.
#[test]
fn closing_or_rolling_back_during_merges_leaves_no_files_behind() {
    for rollback in [false, true] {
        let dir = common::fast_tempdir();
        let (schema, f) = common::id_body_year();
        let mut w = IndexWriter::create(dir.path(), &schema, config(true)).unwrap();
        let mut rng = Rng(3);
        for id in 0..1000 {
            w.add_document(&doc(&f, id, &mut rng)).unwrap();
        }
        w.commit().unwrap();
        let generation = w.generation();
        for id in 1000..1100 {
            w.add_document(&doc(&f, id, &mut rng)).unwrap();
        }
        if rollback {
            w.rollback();
            let (path, _) = quarry::read::latest_manifest(dir.path()).unwrap().unwrap();
            assert!(
                path.ends_with(quarry::format::manifest::manifest_name(generation)),
                "{path:?} {generation}"
            );
        } else {
            drop(w);
        }
        assert_eq!(common::unreferenced(dir.path()), Vec::<String>::new());
        let s = Searcher::open(dir.path()).unwrap();
        assert_eq!(common::live_ids(&s, f.id), (0..1000).collect::<Vec<_>>());
        if !rollback {
            // Dropping finished the merges the policy wanted.
            assert!(s.snapshot().segments().len() <= 10);
        }
    }
}

/// The policy's floor is the writer's to set: eight commits of 100
/// documents (factor 2) are within the budget when segments count as
/// their own size (floor 1: about `2 log2(800)` segments allowed) and
/// over it when each counts as the default floor's 10,000 (five allowed).
#[test]
fn the_merge_floor_decides_when_small_segments_merge() {
    let segments_after = |floor: Option<u64>| {
        let dir = common::fast_tempdir();
        let (schema, f) = common::id_body_year();
        let mut config = WriterConfig {
            merge_factor: 2,
            background_merges: false,
            ..Default::default()
        };
        if let Some(floor) = floor {
            config.merge_floor_docs = floor;
        }
        let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
        let mut rng = Rng(9);
        for c in 0..8 {
            for i in 0..100 {
                w.add_document(&doc(&f, c * 100 + i, &mut rng)).unwrap();
            }
            w.commit().unwrap();
        }
        drop(w);
        let s = Searcher::open(dir.path()).unwrap();
        assert_eq!(common::live_ids(&s, f.id), (0..800).collect::<Vec<_>>());
        s.snapshot().segments().len()
    };
    assert_eq!(segments_after(Some(1)), 8);
    assert_eq!(segments_after(Some(0)), 8);
    let merged = segments_after(None);
    assert!(merged <= 5, "{merged} segments under the default floor");
}
