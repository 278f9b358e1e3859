//! A bounded concurrency soak: eight threads search, reopen and open
//! (half of them mapping segments, half reading them into memory) while a
//! writer adds, deletes, commits and merges. Every commit adds one batch of
//! documents tagged with its number and may delete an earlier batch whole,
//! so a search from one consistent snapshot sees each batch entirely or
//! not at all, and exactly the batches its generation committed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quarry::*;

mod common;

/// Documents in batch `k`.
fn batch_size(k: i64) -> usize {
    1 + (k as usize * 7) % 13
}

const READERS: usize = 8;
const WRITE_FOR: Duration = Duration::from_secs(3);

/// What one search saw: its generation and the batches in it.
type Seen = (u64, BTreeSet<i64>);

/// Checks one snapshot's consistency and returns what it holds.
fn check(s: &Searcher, body: FieldId, batch: FieldId, probe: i64) -> Seen {
    let mut spec = SortSpec::new();
    spec.push(SortKey::Field(batch), false);
    let all = Query::term(body, "all");
    let hits = s
        .search(
            &all,
            &SearchRequest {
                offset: 0,
                limit: s.max_doc() as usize,
                sort: Some(spec),
                total: TotalMode::Exact,
            },
        )
        .unwrap();
    let mut counts = BTreeMap::<i64, usize>::new();
    for h in &hits.hits {
        match h.sort_values.first() {
            Some(Some(Value::I64(b))) => *counts.entry(*b).or_default() += 1,
            other => panic!("document {} has batch {other:?}", h.doc),
        }
    }
    for (&b, &n) in &counts {
        assert_eq!(n, batch_size(b), "batch {b} seen in part");
    }
    let total: usize = counts.values().sum();
    assert_eq!(hits.total_hits, total as u64);
    assert_eq!(s.num_docs(), total as u64);
    // The same snapshot by other paths: a score-ordered count, and one
    // batch looked up by its term.
    let top = s
        .search(&all, &SearchRequest::top(10).with_total(TotalMode::Exact))
        .unwrap();
    assert_eq!(top.total_hits, total as u64);
    let one = s
        .search(
            &Query::term_i64(batch, probe),
            &SearchRequest::top(20).with_total(TotalMode::Exact),
        )
        .unwrap();
    let expect = counts.get(&probe).copied().unwrap_or(0) as u64;
    assert_eq!(one.total_hits, expect, "batch {probe}");
    (s.generation(), counts.into_keys().collect())
}

#[test]
fn searches_see_whole_commits_while_a_writer_commits_deletes_and_merges() {
    let tmp = common::fast_tempdir();
    let dir = tmp.path().to_owned();
    let mut schema = Schema::new();
    let (id, body) = common::add_id_and_body(&mut schema, false);
    let batch = schema
        .add_field(
            "batch",
            FieldType::I64,
            FieldFlags {
                indexed: true,
                sortable: true,
                stored: false,
            },
        )
        .unwrap();
    let config = WriterConfig {
        merge_factor: 4,
        ..Default::default()
    };
    let mut w = IndexWriter::create(&dir, &schema, config).unwrap();
    // Generation -> the batches it holds.
    let log = Arc::new(Mutex::new(BTreeMap::from([(
        w.generation(),
        BTreeSet::new(),
    )])));
    let stop = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..READERS)
        .map(|t| {
            let (dir, stop) = (dir.clone(), stop.clone());
            let mode = if t % 2 == 0 {
                ReadMode::Mmap
            } else {
                ReadMode::Heap
            };
            std::thread::spawn(move || {
                let mut seen: Vec<Seen> = Vec::new();
                let mut s = Searcher::open_with(&dir, mode).unwrap();
                let mut i = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    seen.push(check(&s, body, batch, i % 64));
                    s = if i % 5 == 4 {
                        Searcher::open_with(&dir, mode)
                    } else {
                        s.reopen()
                    }
                    .unwrap();
                    assert_eq!(s.snapshot().read_mode(), mode);
                    i += 1;
                }
                // The writer is done: a reopen now sees its last commit.
                let s = s.reopen().unwrap();
                seen.push(check(&s, body, batch, 0));
                seen
            })
        })
        .collect();

    let start = Instant::now();
    let mut live = BTreeSet::new();
    let mut next_id = 0i64;
    let mut k = 0i64;
    while start.elapsed() < WRITE_FOR && k < 2000 {
        for _ in 0..batch_size(k) {
            let mut d = Document::new();
            d.add_i64(id, next_id)
                .add_str(body, &format!("all w{}", next_id % 5))
                .add_i64(batch, k);
            w.add_document(&d).unwrap();
            next_id += 1;
        }
        live.insert(k);
        if k % 3 == 2 && k >= 5 {
            w.delete_term(batch, &Value::I64(k - 5)).unwrap();
            live.remove(&(k - 5));
        }
        let before = w.generation();
        if k % 10 == 9 {
            w.merge(2).unwrap();
        } else {
            w.commit().unwrap();
        }
        // The commit and the merges after it: the same batches.
        let mut log = log.lock().unwrap();
        for g in before + 1..=w.generation() {
            log.insert(g, live.clone());
        }
        drop(log);
        k += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let log = log.lock().unwrap();
    let mut generations = BTreeSet::new();
    let mut searches = 0;
    for r in readers {
        for (g, batches) in r.join().expect("a reader failed") {
            assert_eq!(log.get(&g), Some(&batches), "generation {g}");
            generations.insert(g);
            searches += 1;
        }
    }
    let last = *log.keys().next_back().unwrap();
    assert!(k >= 10, "only {k} commits");
    assert!(generations.contains(&last), "the last commit was seen");
    assert!(
        generations.len() >= 5,
        "{searches} searches saw {} generations of {last}",
        generations.len()
    );
}
