//! Sorted search against sort-and-truncate of the exhaustive match list:
//! every ord width, both directions, multi-rule specs, missing values,
//! ties, many segments, deletes and paging.

use std::cmp::Ordering;
use std::collections::HashMap;

use proptest::prelude::*;
use quarry::*;

mod common;

struct Fields {
    id: FieldId,
    body: FieldId,
    num: FieldId,
    cat: FieldId,
    price: FieldId,
}

#[derive(Clone, Debug)]
struct Row {
    num: Option<i64>,
    cat: Option<String>,
    price: Option<f64>,
    words: Vec<u8>,
}

fn build(dir: &std::path::Path, rows: &[Row], segment_docs: u32, deletes: &[usize]) -> Fields {
    let mut s = Schema::new();
    let sortable = FieldFlags {
        sortable: true,
        ..Default::default()
    };
    let (id, body) = common::add_id_and_body(&mut s, false);
    let num = s.add_field("num", FieldType::I64, sortable).unwrap();
    let cat = s.add_field("cat", FieldType::String, sortable).unwrap();
    let price = s.add_field("price", FieldType::F64, sortable).unwrap();
    let config = WriterConfig {
        max_docs_per_segment: Some(segment_docs),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &s, config).unwrap();
    for (i, r) in rows.iter().enumerate() {
        let mut d = Document::new();
        d.add_i64(id, i as i64);
        let text: Vec<&str> = r
            .words
            .iter()
            .map(|&x| ["a", "b", "c", "d"][x as usize])
            .collect();
        d.add_str(body, &text.join(" "));
        if let Some(v) = r.num {
            d.add_i64(num, v);
        }
        if let Some(v) = &r.cat {
            d.add_str(cat, v);
        }
        if let Some(v) = r.price {
            d.add_f64(price, v);
        }
        w.add_document(&d).unwrap();
    }
    for &d in deletes {
        w.delete_term(id, &Value::I64(d as i64)).unwrap();
    }
    w.commit().unwrap();
    Fields {
        id,
        body,
        num,
        cat,
        price,
    }
}

fn model_value(r: &Row, key: SortKey, f: &Fields, doc: u64, score: f32) -> Option<Value> {
    match key {
        SortKey::Score => Some(Value::F64(f64::from(score))),
        SortKey::Doc => Some(Value::I64(doc as i64)),
        SortKey::Field(x) if x == f.num => r.num.map(Value::I64),
        SortKey::Field(x) if x == f.cat => r.cat.clone().map(Value::Str),
        SortKey::Field(x) if x == f.price => r.price.map(Value::F64),
        _ => unreachable!(),
    }
}

fn model_cmp(a: &Option<Value>, b: &Option<Value>, desc: bool) -> Ordering {
    let o = match (a, b) {
        (None, None) => return Ordering::Equal,
        (None, _) => return Ordering::Greater,
        (_, None) => return Ordering::Less,
        (Some(Value::I64(x)), Some(Value::I64(y))) => x.cmp(y),
        (Some(Value::F64(x)), Some(Value::F64(y))) => x.total_cmp(y),
        (Some(Value::Str(x)), Some(Value::Str(y))) => x.as_bytes().cmp(y.as_bytes()),
        _ => unreachable!(),
    };
    if desc { o.reverse() } else { o }
}

/// Checks every spec and page against sort-and-truncate of the full match list.
fn check(
    dir: &std::path::Path,
    rows: &[Row],
    f: &Fields,
    specs: &[SortSpec],
    pages: &[(usize, usize)],
) {
    let s = Searcher::open(dir).unwrap();
    let exhaustive = s.clone().with_options(SearchOptions {
        exec: ExecMode::Exhaustive,
        ..SearchOptions::default()
    });
    let auto = s.clone().with_options(SearchOptions {
        exec: ExecMode::Auto,
        ..SearchOptions::default()
    });
    let daat = s.clone().with_options(SearchOptions {
        exec: ExecMode::Daat,
        ..SearchOptions::default()
    });
    let id_of: HashMap<u64, usize> = (0..s.max_doc())
        .map(|d| (d, s.stored(d).unwrap()[0].1.as_i64().unwrap() as usize))
        .collect();
    for q in [
        Query::matching(f.body, "a b", Operator::Or),
        Query::term(f.body, "c"),
        Query::matching(f.body, "a d", Operator::And),
        Query::matching(f.body, "b c d", Operator::Or),
        Query::matching(f.body, "c b a", Operator::And),
        // Must + should + must_not + filter, and a nested boolean (which
        // runs document-at-a-time).
        Query::boolean()
            .add(Occur::Must, Query::term(f.body, "a"))
            .add(Occur::Should, Query::term(f.body, "c"))
            .add(Occur::MustNot, Query::term(f.body, "d"))
            .add(Occur::Filter, Query::term(f.body, "b")),
        Query::boolean()
            .add(Occur::Should, Query::term(f.body, "d"))
            .add(Occur::Should, Query::term(f.body, "b"))
            .add(Occur::MustNot, Query::term(f.body, "c")),
        Query::boolean()
            .add(Occur::Should, Query::term(f.body, "d"))
            .add(Occur::Should, Query::matching(f.body, "a c", Operator::And)),
    ] {
        let all = exhaustive
            .search(&q, &SearchRequest::top(rows.len() + 1))
            .unwrap();
        for spec in specs {
            let mut want: Vec<(u64, f32, Vec<Option<Value>>)> = all
                .hits
                .iter()
                .map(|h| {
                    let r = &rows[id_of[&h.doc]];
                    (
                        h.doc,
                        h.score,
                        spec.rules
                            .iter()
                            .map(|rule| model_value(r, rule.key, f, h.doc, h.score))
                            .collect(),
                    )
                })
                .collect();
            want.sort_by(|a, b| {
                for (i, rule) in spec.rules.iter().enumerate() {
                    let o = model_cmp(&a.2[i], &b.2[i], rule.descending);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.0.cmp(&b.0)
            });
            let needs_score = spec.rules.iter().any(|r| r.key == SortKey::Score);
            for (&(offset, limit), total) in pages
                .iter()
                .flat_map(|p| [(p, TotalMode::Exact), (p, TotalMode::LowerBound)])
            {
                let req = SearchRequest {
                    offset,
                    limit,
                    sort: Some(spec.clone()),
                    total,
                };
                let expect: Vec<_> = want.iter().skip(offset).take(limit).collect();
                for (name, searcher) in [
                    ("auto", &auto),
                    ("daat", &daat),
                    ("exhaustive", &exhaustive),
                ] {
                    let got = searcher.search(&q, &req).unwrap();
                    let ctx = format!("{name} {q:?} {spec:?} offset {offset} limit {limit}");
                    assert_eq!(got.hits.len(), expect.len(), "{ctx}");
                    for (g, e) in got.hits.iter().zip(&expect) {
                        assert_eq!(g.doc, e.0, "{ctx}");
                        // Values compare by their bits (f64 values are exact copies).
                        assert_eq!(
                            format!("{:?}", g.sort_values),
                            format!("{:?}", e.2),
                            "{ctx}"
                        );
                        let want_score = if needs_score { e.1 } else { 0.0 };
                        assert_eq!(g.score.to_bits(), want_score.to_bits(), "{ctx}");
                    }
                    assert!(got.total_is_exact || total != TotalMode::Exact, "{ctx}");
                    if got.total_is_exact {
                        assert_eq!(got.total_hits, all.total_hits, "{ctx}");
                    } else {
                        assert!(got.total_hits <= all.total_hits, "{ctx}");
                    }
                    if name != "exhaustive" && !needs_score {
                        assert_eq!(
                            got.scored_docs, 0,
                            "a sort by fields alone computes no score: {ctx}"
                        );
                    }
                }
            }
        }
    }
}

fn spec(rules: &[(SortKey, bool)]) -> SortSpec {
    let mut s = SortSpec::new();
    for &(k, d) in rules {
        s.push(k, d);
    }
    s
}

fn row_strategy(card: u64) -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.85, 0..card as i64),
        proptest::option::weighted(0.8, 0..card),
        proptest::option::weighted(0.8, -3i32..3),
        proptest::collection::vec(0u8..4, 0..6),
    )
        .prop_map(move |(num, cat, price, words)| Row {
            num: num.map(|v| v * 1000 - 7),
            cat: cat.map(|c| format!("c{c:05}")),
            price: price.map(|p| f64::from(p) * 0.5),
            words,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn sorted_search_equals_sort_and_truncate(
        card in prop_oneof![Just(2u64), Just(3), Just(15), Just(200)],
        rows in proptest::collection::vec(row_strategy(200), 1..400),
        segment_docs in 1u32..150,
        deletes in proptest::collection::vec(0usize..400, 0..40),
        rules_pick in proptest::collection::vec((0usize..5, any::<bool>()), 1..4),
        offset in 0usize..5,
        limit in 0usize..30,
    ) {
        let rows: Vec<Row> = rows
            .into_iter()
            .map(|mut r| {
                r.num = r.num.map(|v| (v + 7) / 1000 % card as i64);
                r.cat = r.cat.map(|c| format!("c{:05}", c[1..].parse::<u64>().unwrap() % card));
                r
            })
            .collect();
        let tmp = tempfile::tempdir().unwrap();
        let deletes: Vec<usize> = deletes.into_iter().filter(|&d| d < rows.len()).collect();
        let f = build(tmp.path(), &rows, segment_docs, &deletes);
        let keys = [SortKey::Field(f.num), SortKey::Field(f.cat), SortKey::Field(f.price), SortKey::Score, SortKey::Doc];
        let rules: Vec<(SortKey, bool)> = rules_pick.iter().map(|&(k, d)| (keys[k], d)).collect();
        check(tmp.path(), &rows, &f, &[spec(&rules)], &[(offset, limit)]);
    }
}

#[test]
fn every_ord_width_and_the_usual_specs() {
    // Cardinalities that need 1, 2, 4, 8, 16 and 32-bit ords; enough
    // documents that blocks of 4096 can be skipped.
    for (card, n, segment_docs) in [
        (1u64, 9000usize, 9000u32),
        (3, 9000, 2500),
        (15, 9000, 9000),
        (200, 12000, 5000),
        (60_000, 60_000, 60_000),
        (100_500, 100_500, 40_000),
    ] {
        let rows: Vec<Row> = (0..n as u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
                Row {
                    num: (i % 11 != 0).then_some((h % card) as i64),
                    cat: (i % 13 != 0).then(|| format!("k{:06}", (h >> 7) % card)),
                    price: (i % 7 != 0).then_some(((h >> 3) % 97) as f64 - 40.0),
                    words: vec![(i % 4) as u8, (h % 4) as u8, ((h >> 9) % 3) as u8],
                }
            })
            .collect();
        let tmp = tempfile::tempdir().unwrap();
        let deletes: Vec<usize> = (0..n).step_by(17).collect();
        let f = build(tmp.path(), &rows, segment_docs, &deletes);
        let specs = [
            spec(&[(SortKey::Field(f.num), true), (SortKey::Score, true)]),
            spec(&[
                (SortKey::Field(f.cat), false),
                (SortKey::Field(f.num), true),
            ]),
            spec(&[(SortKey::Score, false)]),
            spec(&[(SortKey::Field(f.price), false)]),
            spec(&[(SortKey::Field(f.num), false), (SortKey::Doc, true)]),
            spec(&[
                (SortKey::Score, true),
                (SortKey::Doc, false),
                (SortKey::Field(f.cat), true),
            ]),
        ];
        check(tmp.path(), &rows, &f, &specs, &[(0, 10), (7, 25)]);
        let _ = f.id;
    }
}

#[test]
fn a_deep_page_grows_the_queue_past_its_first_reservation() {
    // offset + limit above the hits the collector reserves up front.
    let n = 9000usize;
    let rows: Vec<Row> = (0..n as u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
            Row {
                num: (i % 11 != 0).then_some((h % 40) as i64),
                cat: (i % 13 != 0).then(|| format!("k{:06}", (h >> 7) % 15)),
                price: None,
                words: vec![(i % 4) as u8, (h % 4) as u8],
            }
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let f = build(tmp.path(), &rows, 3000, &[5, 77, 4500]);
    let specs = [
        spec(&[(SortKey::Field(f.num), true), (SortKey::Score, true)]),
        spec(&[
            (SortKey::Field(f.cat), false),
            (SortKey::Field(f.num), true),
        ]),
    ];
    check(tmp.path(), &rows, &f, &specs, &[(4100, 30), (0, 5000)]);
}

#[test]
fn blocks_that_cannot_compete_are_skipped_and_the_total_says_so() {
    // Values rise with the doc number, so once the queue holds the first
    // block's smallest values, every later block is skipped by its min ord.
    let n = 20_000usize;
    let rows: Vec<Row> = (0..n)
        .map(|i| Row {
            num: Some((i / 50) as i64),
            cat: None,
            price: None,
            words: vec![0, (i % 4) as u8],
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let f = build(tmp.path(), &rows, n as u32, &[]);
    let s = Searcher::open(tmp.path()).unwrap();
    let asc = spec(&[(SortKey::Field(f.num), false)]);
    let q = Query::term(f.body, "a");
    let hits = s
        .search(
            &q,
            &SearchRequest {
                offset: 0,
                limit: 10,
                sort: Some(asc.clone()),
                total: TotalMode::LowerBound,
            },
        )
        .unwrap();
    assert!(!hits.total_is_exact, "later blocks were skipped");
    assert!(hits.total_hits < n as u64 && hits.total_hits >= 10);
    assert_eq!(
        hits.hits.iter().map(|h| h.doc).collect::<Vec<_>>(),
        (0..10).collect::<Vec<u64>>()
    );
    assert_eq!(hits.scored_docs, 0);
    check(
        tmp.path(),
        &rows,
        &f,
        &[asc, spec(&[(SortKey::Field(f.num), true)])],
        &[(0, 10), (3, 100)],
    );
}
