//! Shards: one corpus split by document order into 2 to 4 indexes, each
//! of several segments with deletions, against one index holding the
//! same documents in the same order (the same segments, so even totals
//! that are lower bounds agree on one thread).
//!
//! - the multi-index searcher gives the single index's hits (documents,
//!   score bits, sort values) and totals, on every path, on one thread and
//!   three, in every counting mode, with paging, in score order and
//!   sorted; the exhaustive path of the single index is the oracle;
//! - each shard searched alone with the merged statistics of every shard,
//!   then the shards' pages merged, gives the multi searcher's page;
//! - the multi searcher's exported statistics are the merge of the
//!   shards'; stored fields, highlighting and reopening work across shards;
//! - damaged blobs, statistics lacking a query's term, mismatched schemas
//!   and wrong shard numbers are errors.

use std::path::{Path, PathBuf};

use quarry::*;

mod common;
use common::Rng;

const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "lambda",
    "mu", "nu", "xi",
];
const TAGS: &[&str] = &["red", "green", "blue", "grey"];
const PREFIXES: &[&str] = &["a", "al", "e", "et", "th", "z", "g", "gr", "x", "k"];

#[derive(Clone, Copy)]
struct Fields {
    id: FieldId,
    body: FieldId,
    tag: FieldId,
    year: FieldId,
    price: FieldId,
}

fn schema() -> (Schema, Fields) {
    let s = Schema::from_json(
        r#"{"fields": [
            {"name": "id", "type": "i64", "stored": true, "indexed": true},
            {"name": "body", "type": "text", "stored": true},
            {"name": "year", "type": "i64", "sortable": true},
            {"name": "tag", "type": "string", "stored": true, "indexed": true, "sortable": true},
            {"name": "price", "type": "f64", "sortable": true}
        ]}"#,
    )
    .unwrap();
    let f = |name| s.field(name).unwrap();
    let fields = Fields {
        id: f("id"),
        body: f("body"),
        tag: f("tag"),
        year: f("year"),
        price: f("price"),
    };
    (s, fields)
}

/// What a writer does, in order.
#[derive(Clone, Debug)]
enum Op {
    Add(Document),
    /// Deletes the document of this id.
    Delete(i64),
    Commit,
}

/// A skewed word: the first words are common, the last rare.
fn word(rng: &mut Rng) -> &'static str {
    let n = WORDS.len() as u64;
    WORDS[((rng.below((n * n) as usize) as f64).sqrt() as usize).min(WORDS.len() - 1)]
}

fn document(rng: &mut Rng, f: &Fields, id: i64) -> Document {
    let mut d = Document::new();
    d.add_i64(f.id, id);
    let len = rng.range(0, 30) as usize;
    if len > 0 {
        let text: Vec<&str> = (0..len).map(|_| word(rng)).collect();
        d.add_str(f.body, &text.join(" "));
    }
    if rng.chance(85) {
        d.add_str(f.tag, TAGS[rng.below(TAGS.len())]);
    }
    if rng.chance(80) {
        d.add_i64(f.year, rng.range(1990, 2010) as i64);
    }
    if rng.chance(70) {
        d.add_f64(f.price, (rng.range(0, 40) as f64) / 4.0 - 2.0);
    }
    d
}

/// The corpus: per shard, its writer's operations (the shards split the
/// documents by id, in order).
fn corpus(rng: &mut Rng, f: &Fields) -> Vec<Vec<Op>> {
    let shards = rng.range(2, 5) as usize;
    let mut id = 0i64;
    (0..shards)
        .map(|_| {
            let docs = rng.range(1, 1400);
            let mut ops = Vec::new();
            let first = id;
            for _ in 0..docs {
                ops.push(Op::Add(document(rng, f, id)));
                id += 1;
                if rng.below(400) == 0 {
                    ops.push(Op::Commit);
                }
                if rng.chance(3) {
                    ops.push(Op::Delete(rng.range(first as u64, id as u64) as i64));
                }
            }
            ops
        })
        .collect()
}

fn config() -> WriterConfig {
    WriterConfig {
        merge_factor: 0,
        ..Default::default()
    }
}

fn apply(w: &mut IndexWriter, ops: &[Op], id: FieldId) {
    for op in ops {
        match op {
            Op::Add(d) => w.add_document(d).unwrap(),
            Op::Delete(x) => w.delete_term(id, &Value::I64(*x)).unwrap(),
            Op::Commit => {
                w.commit().unwrap();
            }
        }
    }
    w.commit().unwrap();
}

/// The shards' indexes and the single one, under `root`.
struct Built {
    shards: Vec<PathBuf>,
    single: PathBuf,
}

fn build(root: &Path, schema: &Schema, f: &Fields, ops: &[Vec<Op>]) -> Built {
    let single = root.join("single");
    let mut one = IndexWriter::create(&single, schema, config()).unwrap();
    let shards = ops
        .iter()
        .enumerate()
        .map(|(i, ops)| {
            let dir = root.join(format!("shard{i}"));
            let mut w = IndexWriter::create(&dir, schema, config()).unwrap();
            apply(&mut w, ops, f.id);
            apply(&mut one, ops, f.id);
            dir
        })
        .collect();
    Built { shards, single }
}

fn bound<T>(rng: &mut Rng, v: impl FnOnce(&mut Rng) -> T) -> Bound<T> {
    match rng.below(5) {
        0 | 1 => Bound::Included(v(rng)),
        2 | 3 => Bound::Excluded(v(rng)),
        _ => Bound::Unbounded,
    }
}

fn words(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let n = rng.range(lo, hi);
    let mut v: Vec<&str> = (0..n).map(|_| word(rng)).collect();
    if rng.chance(10) {
        v.push("absent");
    }
    v.join(" ")
}

fn query(rng: &mut Rng, f: &Fields, depth: u32) -> Query {
    let leaves = 11;
    match rng.below(if depth == 0 { leaves } else { leaves + 3 }) {
        0 | 1 => Query::term(f.body, word(rng)),
        2 => Query::matching(f.body, &words(rng, 1, 5), Operator::And),
        3 => Query::matching(f.body, &words(rng, 1, 5), Operator::Or),
        4 => Query::Phrase {
            field: f.body,
            text: words(rng, 2, 4),
            slop: rng.range(0, 3) as u32,
        },
        5 => Query::prefix(f.body, PREFIXES[rng.below(PREFIXES.len())]),
        6 => Query::prefix(f.tag, &TAGS[rng.below(TAGS.len())][..1]),
        7 => Query::range(
            f.year,
            bound(rng, |r| Value::I64(r.range(1988, 2012) as i64)),
            bound(rng, |r| Value::I64(r.range(1988, 2012) as i64)),
        ),
        8 => Query::range(
            f.tag,
            bound(rng, |r| Value::Str(TAGS[r.below(TAGS.len())].into())),
            bound(rng, |r| Value::Str(TAGS[r.below(TAGS.len())].into())),
        ),
        9 => Query::term(f.tag, TAGS[rng.below(TAGS.len())]),
        10 => {
            if rng.chance(50) {
                Query::All
            } else {
                Query::term_i64(f.id, rng.range(0, 3000) as i64)
            }
        }
        _ => {
            let mut b = Query::boolean();
            for _ in 0..rng.range(1, 5) {
                let occur =
                    [Occur::Must, Occur::Should, Occur::MustNot, Occur::Filter][rng.below(4)];
                b = b.add(occur, query(rng, f, depth - 1));
            }
            if rng.chance(25) {
                b.boost([0.5f32, 2.0, 3.5][rng.below(3)])
            } else {
                b
            }
        }
    }
}

fn sort(rng: &mut Rng, f: &Fields) -> Option<SortSpec> {
    let mut s = SortSpec::new();
    match rng.below(7) {
        0 | 1 => return None,
        2 => s.push(SortKey::Score, true),
        3 => s
            .push(SortKey::Field(f.year), true)
            .push(SortKey::Score, true),
        4 => s
            .push(SortKey::Field(f.tag), false)
            .push(SortKey::Field(f.price), true),
        5 => s
            .push(SortKey::Field(f.price), false)
            .push(SortKey::Doc, true),
        _ => s.push(SortKey::Doc, false),
    };
    Some(s.with_scores(rng.chance(50)))
}

const MODES: [TotalMode; 4] = [
    TotalMode::Exact,
    TotalMode::LowerBound,
    TotalMode::AtLeast(5),
    TotalMode::AtLeast(1000),
];

fn with(s: &Searcher, exec: ExecMode, threads: usize) -> Searcher {
    s.clone().with_options(SearchOptions {
        exec,
        threads,
        ..SearchOptions::default()
    })
}

/// A hit as the single index and the multi searcher must agree on it.
fn seen(h: &Hit) -> (u64, u32, Vec<Option<Value>>) {
    (h.doc, h.score.to_bits(), h.sort_values.clone())
}

fn page(h: &Hits) -> Vec<(u64, u32, Vec<Option<Value>>)> {
    h.hits.iter().map(seen).collect()
}

/// The shard and shard document a hit of a corpus of shards `bases` (the
/// first document number of each) must name.
fn check_shard(bases: &[u64], h: &Hit) {
    let s = bases.partition_point(|&b| b <= h.doc) - 1;
    assert_eq!(
        (h.shard, h.shard_doc),
        (s as u32, h.doc - bases[s]),
        "doc {}",
        h.doc
    );
}

/// What the trials' layouts and searches held, so the test can show that
/// they reached what they are meant to check.
#[derive(Default)]
struct Reached {
    /// The most segments of a shard.
    segments: usize,
    /// The largest segment's documents.
    segment_docs: u32,
    /// Deleted documents still counted by the statistics.
    deleted: u64,
    /// Searches on the fast path that left matches unscored.
    pruned: usize,
}

/// One corpus: every check of the module docs.
fn trial(seed: u64, reached: &mut Reached) {
    let mut rng = Rng(seed);
    let (schema, f) = schema();
    let ops = corpus(&mut rng, &f);
    let root = common::fast_tempdir();
    let built = build(root.path(), &schema, &f, &ops);
    let single = Searcher::open(&built.single).unwrap();
    let multi = Searcher::open_many(&built.shards).unwrap();
    let shards: Vec<Searcher> = built
        .shards
        .iter()
        .map(|d| Searcher::open(d).unwrap())
        .collect();
    assert_eq!(multi.shard_count(), shards.len());
    assert_eq!(multi.max_doc(), single.max_doc());
    assert_eq!(multi.num_docs(), single.num_docs());
    let mut bases = vec![0u64];
    for s in &shards {
        bases.push(bases.last().unwrap() + s.max_doc());
    }
    bases.pop();
    for s in &shards {
        let segs = s.snapshot().segments();
        reached.segments = reached.segments.max(segs.len());
        for g in segs {
            reached.segment_docs = reached.segment_docs.max(g.entry.doc_count);
            reached.deleted += u64::from(g.entry.del_count);
        }
    }

    let body_q = Query::matching(f.body, "alpha beta", Operator::Or);
    let mut queries: Vec<Query> = (0..30).map(|_| query(&mut rng, &f, 2)).collect();
    queries.push(body_q.clone());
    let parts: Vec<CorpusStats> = shards
        .iter()
        .map(|s| CorpusStats::decode(&s.corpus_stats(&queries).unwrap().encode()).unwrap())
        .collect();
    let merged = CorpusStats::merge(&parts).unwrap();
    assert_eq!(multi.corpus_stats(&queries).unwrap(), merged);
    assert_eq!(merged.doc_count(), single.max_doc());
    let imported: Vec<Searcher> = shards
        .iter()
        .enumerate()
        .map(|(i, s)| s.with_stats(merged.clone(), i as u32).unwrap())
        .collect();

    for (qi, q) in queries.iter().enumerate() {
        let spec = sort(&mut rng, &f);
        let (offset, limit) = match rng.below(3) {
            0 => (0, 10),
            1 => (rng.range(1, 15) as usize, rng.range(1, 20) as usize),
            _ => (0, 3000),
        };
        let req = |total| SearchRequest {
            offset,
            limit,
            sort: spec.clone(),
            total,
        };
        let what = format!("seed {seed} query {qi} {q:?} sort {spec:?} page {offset}+{limit}");
        let oracle = with(&single, ExecMode::Exhaustive, 1)
            .search(q, &req(TotalMode::Exact))
            .unwrap();
        for total in MODES {
            for (exec, threads) in [
                (ExecMode::Exhaustive, 1),
                (ExecMode::Daat, 1),
                (ExecMode::Auto, 1),
                (ExecMode::Auto, 3),
            ] {
                let got = with(&multi, exec, threads).search(q, &req(total)).unwrap();
                let what = format!("{what} {total:?} {exec:?} x{threads}");
                assert_eq!(page(&got), page(&oracle), "{what}");
                got.hits.iter().for_each(|h| check_shard(&bases, h));
                if exec == ExecMode::Auto && got.scored_docs < oracle.total_hits {
                    reached.pruned += 1;
                }
                if threads == 1 || total == TotalMode::Exact {
                    // The same segments in the same order: the same counts.
                    let one = with(&single, exec, threads).search(q, &req(total)).unwrap();
                    assert_eq!(
                        (got.total_hits, got.total_is_exact),
                        (one.total_hits, one.total_is_exact),
                        "{what}"
                    );
                }
                assert!(got.total_hits <= oracle.total_hits, "{what}");
                if got.total_is_exact {
                    assert_eq!(got.total_hits, oracle.total_hits, "{what}");
                } else {
                    assert!(got.total_hits >= total.threshold().min(oracle.total_hits));
                }
            }
            // Each shard alone, scoring with every shard's statistics, its
            // page from the first hit; then the merge.
            for threads in [1, 3] {
                let want = offset.saturating_add(limit);
                let pieces: Vec<Hits> = imported
                    .iter()
                    .map(|s| {
                        with(s, ExecMode::Auto, threads)
                            .search(
                                q,
                                &SearchRequest {
                                    offset: 0,
                                    limit: want,
                                    sort: spec.clone(),
                                    total,
                                },
                            )
                            .unwrap()
                    })
                    .collect();
                for (i, p) in pieces.iter().enumerate() {
                    for h in &p.hits {
                        assert_eq!(h.shard, i as u32, "{what}");
                        check_shard(&bases, h);
                    }
                }
                let m = merge_hits(&pieces, spec.as_ref(), offset, limit).unwrap();
                let what = format!("{what} {total:?} shards x{threads}");
                let multi_page = with(&multi, ExecMode::Auto, 1)
                    .search(q, &req(total))
                    .unwrap();
                assert_eq!(m.hits, multi_page.hits, "{what}");
                assert!(m.total_hits <= oracle.total_hits, "{what}");
                if total == TotalMode::Exact {
                    assert_eq!(m.total_hits, oracle.total_hits, "{what}");
                }
                if m.total_is_exact {
                    assert_eq!(m.total_hits, oracle.total_hits, "{what}");
                }
            }
        }
    }

    // A query whose statistics were not exported.
    let unknown = Query::term(f.body, "unexported");
    for s in &imported {
        let e = s.search(&unknown, &SearchRequest::top(5)).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("unexported")),
            "{e}"
        );
    }

    // Stored fields, highlighting and reopening across shards.
    let top = multi.search(&body_q, &SearchRequest::top(20)).unwrap();
    for h in &top.hits {
        assert_eq!(multi.stored(h.doc).unwrap(), single.stored(h.doc).unwrap());
        let s = &imported[h.shard as usize];
        assert_eq!(s.stored(h.doc).unwrap(), single.stored(h.doc).unwrap());
        let opts = HighlightOptions::default();
        let want = single.highlight(&body_q, h.doc, f.body, &opts).unwrap();
        assert_eq!(
            multi.highlight(&body_q, h.doc, f.body, &opts).unwrap(),
            want
        );
        assert_eq!(s.highlight(&body_q, h.doc, f.body, &opts).unwrap(), want);
    }
    let reopened = multi.reopen().unwrap();
    assert_eq!(
        reopened.search(&body_q, &SearchRequest::top(20)).unwrap(),
        top
    );
}

#[test]
fn shards_search_as_one_index() {
    let mut reached = Reached::default();
    for seed in 0..6 {
        trial(0x5eed_0000 + seed, &mut reached);
    }
    // Shards of several segments, some of them past two posting blocks
    // (so with skip data and impacts), deleted documents, and pruning.
    assert!(reached.segments >= 3, "{}", reached.segments);
    assert!(reached.segment_docs >= 300, "{}", reached.segment_docs);
    assert!(reached.deleted > 0);
    assert!(reached.pruned > 50, "{}", reached.pruned);
}

/// A small corpus of two shards, of 50 and 60 documents.
fn two_shards(root: &Path) -> (Schema, Fields, Built) {
    let (schema, f) = schema();
    let mut rng = Rng(7);
    let ops: Vec<Vec<Op>> = [0..50, 50..110]
        .into_iter()
        .map(|ids| ids.map(|i| Op::Add(document(&mut rng, &f, i))).collect())
        .collect();
    let built = build(root, &schema, &f, &ops);
    (schema, f, built)
}

#[test]
fn malformed_blobs_are_errors() {
    let root = common::fast_tempdir();
    let (_, f, built) = two_shards(root.path());
    let s = Searcher::open(&built.shards[0]).unwrap();
    let q = [Query::matching(f.body, "alpha beta", Operator::Or)];
    let blob = s.corpus_stats(&q).unwrap().encode();
    for cut in 0..blob.len() {
        let e = CorpusStats::decode(&blob[..cut]).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "cut {cut}: {e}");
    }
    for i in 0..blob.len() {
        let mut b = blob.clone();
        b[i] ^= 0x04;
        let e = CorpusStats::decode(&b).unwrap_err();
        assert!(
            matches!(e, Error::Corrupt { .. } | Error::UnsupportedVersion { .. }),
            "flip {i}: {e}"
        );
    }
    let mut newer = blob.clone();
    newer[4..8].copy_from_slice(&2u32.to_le_bytes());
    let n = newer.len() - 4;
    let crc = crc32fast::hash(&newer[..n]);
    newer[n..].copy_from_slice(&crc.to_le_bytes());
    let e = CorpusStats::decode(&newer).unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedVersion { found: 2, .. }),
        "{e}"
    );
    // A file names its path.
    let path = root.path().join("stats.qst");
    std::fs::write(&path, &blob[..blob.len() - 1]).unwrap();
    let e = CorpusStats::read(&path).unwrap_err();
    assert!(e.to_string().contains("stats.qst"), "{e}");
}

#[test]
fn mismatched_schemas_and_shards_are_errors() {
    let root = common::fast_tempdir();
    let (_, f, built) = two_shards(root.path());
    let other_dir = root.path().join("other");
    let mut other = Schema::new();
    common::add_id_and_body(&mut other, true);
    let mut w = IndexWriter::create(&other_dir, &other, config()).unwrap();
    w.commit().unwrap();
    drop(w);

    let dirs = [
        built.shards[0].clone(),
        built.shards[1].clone(),
        other_dir.clone(),
    ];
    let e = Searcher::open_many(&dirs).unwrap_err();
    match &e {
        Error::Schema(m) => assert!(m.contains("shard 2") && m.contains("other"), "{m}"),
        e => panic!("{e}"),
    }
    assert!(matches!(
        Searcher::open_many::<&Path>(&[]),
        Err(Error::InvalidArgument(_))
    ));

    let q = [Query::term(f.body, "alpha")];
    let shards: Vec<Searcher> = built
        .shards
        .iter()
        .map(|d| Searcher::open(d).unwrap())
        .collect();
    let merged = CorpusStats::merge(
        &shards
            .iter()
            .map(|s| s.corpus_stats(&q).unwrap())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    // Another schema's statistics, a shard the statistics lack, a shard
    // number whose document count is not the index's.
    let o = Searcher::open(&other_dir).unwrap();
    assert!(matches!(
        o.with_stats(merged.clone(), 0),
        Err(Error::Schema(_))
    ));
    assert!(matches!(
        shards[0].with_stats(merged.clone(), 2),
        Err(Error::InvalidArgument(_))
    ));
    // The shards in the other order: shard 0 of those statistics has the
    // documents of the index of shard 1.
    let swapped = CorpusStats::merge(&[
        shards[1].corpus_stats(&q).unwrap(),
        shards[0].corpus_stats(&q).unwrap(),
    ])
    .unwrap();
    assert_ne!(shards[0].max_doc(), shards[1].max_doc());
    assert!(matches!(
        shards[0].with_stats(swapped, 0),
        Err(Error::InvalidArgument(_))
    ));
    let three = Searcher::open(&built.single).unwrap();
    assert!(matches!(
        three.with_stats(merged.clone(), 1),
        Err(Error::InvalidArgument(_))
    ));
    // A searcher of several shards imports no statistics, and one with
    // imported statistics exports none.
    let multi = Searcher::open_many(&built.shards).unwrap();
    assert!(matches!(
        multi.with_stats(merged.clone(), 0),
        Err(Error::InvalidArgument(_))
    ));
    let imported = shards[1].with_stats(merged.clone(), 1).unwrap();
    assert!(matches!(
        imported.corpus_stats(&q),
        Err(Error::InvalidArgument(_))
    ));
    // Statistics gathered under another expansion limit.
    let narrow = imported.clone().with_options(SearchOptions {
        max_expansions: 3,
        ..SearchOptions::default()
    });
    assert!(matches!(
        narrow.search(&q[0], &SearchRequest::top(3)),
        Err(Error::InvalidArgument(_))
    ));
    // Merging: parts of other schemas, and parts of other queries.
    let other_stats = o.corpus_stats(&[Query::term(FieldId(1), "alpha")]).unwrap();
    assert!(CorpusStats::merge(&[merged.clone(), other_stats]).is_err());
    let more = shards[0]
        .corpus_stats(&[Query::term(f.body, "beta")])
        .unwrap();
    assert!(CorpusStats::merge(&[merged.clone(), more]).is_err());
}

/// Writes one index per shard of `texts` (per document its body and tag).
fn small_shards(root: &Path, shards: &[&[(&str, &str)]]) -> (Fields, Vec<PathBuf>) {
    let (schema, f) = schema();
    let mut id = 0;
    let dirs = shards
        .iter()
        .enumerate()
        .map(|(i, docs)| {
            let dir = root.join(format!("s{i}"));
            let mut w = IndexWriter::create(&dir, &schema, config()).unwrap();
            for (body, tag) in docs.iter() {
                let mut d = Document::new();
                d.add_i64(f.id, id)
                    .add_str(f.body, body)
                    .add_str(f.tag, tag);
                id += 1;
                w.add_document(&d).unwrap();
            }
            w.commit().unwrap();
            dir
        })
        .collect();
    (f, dirs)
}

/// A shard's searcher with the expansion limit `limit`.
fn limited(s: Searcher, limit: usize) -> Searcher {
    let o = SearchOptions {
        max_expansions: limit,
        ..s.options().clone()
    };
    s.with_options(o)
}

#[test]
fn expansion_limits_count_the_whole_corpus() {
    let root = common::fast_tempdir();
    let (f, dirs) = small_shards(
        root.path(),
        &[
            &[("aa ab", "red"), ("ab", "green")],
            &[("ac ad", "blue"), ("ad x", "grey")],
        ],
    );
    let prefix = Query::prefix(f.body, "a");
    // Four tags: the dictionary range past the limit falls back to the
    // sort column, matching the same documents.
    let range = Query::range(
        f.tag,
        Bound::Included(Value::Str("a".into())),
        Bound::Included(Value::Str("z".into())),
    );
    let queries = [prefix.clone(), range.clone()];
    for limit in [3, 4] {
        let multi = limited(Searcher::open_many(&dirs).unwrap(), limit);
        let shards: Vec<Searcher> = dirs
            .iter()
            .map(|d| limited(Searcher::open(d).unwrap(), limit))
            .collect();
        // Each shard alone expands to two terms: within the limit.
        let parts: Vec<CorpusStats> = shards
            .iter()
            .map(|s| s.corpus_stats(&queries).unwrap())
            .collect();
        let merged = CorpusStats::merge(&parts).unwrap();
        assert_eq!(merged.max_expansions(), limit as u64);
        let imported: Vec<Searcher> = shards
            .iter()
            .enumerate()
            .map(|(i, s)| s.with_stats(merged.clone(), i as u32).unwrap())
            .collect();
        for q in &queries {
            let req = SearchRequest::top(10).with_total(TotalMode::Exact);
            let whole = multi.search(q, &req);
            let pieces: Vec<Result<Hits>> = imported.iter().map(|s| s.search(q, &req)).collect();
            match whole {
                Err(Error::TooManyTerms { .. }) => {
                    assert!(limit == 3 && q == &prefix);
                    for p in pieces {
                        assert!(matches!(p, Err(Error::TooManyTerms { .. })), "{p:?}");
                    }
                }
                Ok(whole) => {
                    let pieces: Vec<Hits> = pieces.into_iter().map(Result::unwrap).collect();
                    let m = merge_hits(&pieces, None, 0, 10).unwrap();
                    assert_eq!(m.hits, whole.hits);
                    assert_eq!(m.total_hits, 4);
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    // A shard that alone expands past the limit fails its export, as a
    // search of every shard fails.
    let one = limited(Searcher::open(&dirs[0]).unwrap(), 1);
    assert!(matches!(
        one.corpus_stats(std::slice::from_ref(&prefix)),
        Err(Error::TooManyTerms { .. })
    ));
    // Statistics of another query lack this expansion's terms.
    let s1 = Searcher::open(&dirs[1]).unwrap();
    let other = CorpusStats::merge(&[
        Searcher::open(&dirs[0])
            .unwrap()
            .corpus_stats(&[Query::prefix(f.body, "b")])
            .unwrap(),
        s1.corpus_stats(&[Query::prefix(f.body, "b")]).unwrap(),
    ])
    .unwrap();
    let e = s1
        .with_stats(other, 1)
        .unwrap()
        .search(&prefix, &SearchRequest::top(3))
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("expanded")),
        "{e}"
    );
}
