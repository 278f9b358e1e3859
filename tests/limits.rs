//! The limits every query keeps to (`src/query/limits.rs`), on every
//! execution path, on one thread and on several: a query nests at most
//! `MAX_DEPTH` levels, and a deeper one is refused before anything
//! recurses over it, however deep (a query value of any depth also drops,
//! clones, compares and prints without overflowing a small stack); the
//! parser gives no deeper query; boosts that would take a weight, a
//! constant or a sum of scores beyond the largest f32 are refused rather
//! than give infinite or NaN scores, and other boosts score as before.

mod common;

use quarry::*;

struct Index {
    _dir: tempfile::TempDir,
    s: Searcher,
    body: FieldId,
    year: FieldId,
}

const TEXTS: [&str; 5] = [
    "the quick brown fox",
    "a lazy dog sleeps",
    "quick quick dog",
    "brown bread and quick jam",
    "nothing to see",
];

/// 200 documents in 4 segments of 50.
fn index() -> Index {
    let dir = common::fast_tempdir();
    let (schema, f) = common::id_body_year();
    let config = WriterConfig {
        max_docs_per_segment: Some(50),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
    for id in 0..200i64 {
        let mut d = Document::new();
        d.add_i64(f.id, id);
        d.add_str(f.body, TEXTS[id as usize % TEXTS.len()]);
        d.add_i64(f.year, 2000 + id % 7);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    let s = Searcher::open(dir.path()).unwrap();
    assert_eq!(s.snapshot().segments().len(), 4);
    Index {
        _dir: dir,
        s,
        body: f.body,
        year: f.year,
    }
}

/// Every execution path, on one thread and on three.
fn searchers(s: &Searcher) -> Vec<Searcher> {
    let mut out = Vec::new();
    for exec in [ExecMode::Auto, ExecMode::Daat, ExecMode::Exhaustive] {
        for threads in [1, 3] {
            out.push(s.clone().with_options(SearchOptions {
                exec,
                threads,
                ..SearchOptions::default()
            }));
        }
    }
    out
}

/// Each hit's document and score bits.
fn bits(h: &Hits) -> Vec<(u64, u32)> {
    h.hits.iter().map(|x| (x.doc, x.score.to_bits())).collect()
}

/// The message of an [`Error::InvalidArgument`], which `r` must be.
fn invalid<T: std::fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected an invalid-argument error, got {other:?}"),
    }
}

/// `q` wrapped `levels` times in `boolean(must=[q], should=[term])`.
fn nested(mut q: Query, term: &Query, levels: usize) -> Query {
    for _ in 0..levels {
        q = Query::boolean()
            .add(Occur::Must, q)
            .add(Occur::Should, term.clone());
    }
    q
}

/// `q` wrapped `levels` times in a boolean of one MUST clause.
fn chain(mut q: Query, levels: usize) -> Query {
    for _ in 0..levels {
        q = Query::Boolean(vec![(Occur::Must, q)]);
    }
    q
}

/// `q` boosted `levels` times by `b`.
fn boosted(mut q: Query, b: f32, levels: usize) -> Query {
    for _ in 0..levels {
        q = q.boost(b);
    }
    q
}

/// The hits of `q` on every path and thread count, which must agree bit
/// for bit.
fn agreed(ix: &Index, q: &Query) -> Vec<(u64, u32)> {
    let mut want: Option<Vec<(u64, u32)>> = None;
    for s in searchers(&ix.s) {
        let got = bits(&s.search(q, &SearchRequest::top(20)).unwrap());
        match &want {
            None => want = Some(got),
            Some(w) => assert_eq!(&got, w, "{:?}", s.options()),
        }
    }
    want.unwrap()
}

/// Every path refuses `q` as nesting too deep, in a score-order search,
/// a sorted one and a highlight, naming the limit.
fn refused_as_too_deep(ix: &Index, q: &Query) {
    let mut sort = SortSpec::new();
    sort.push(SortKey::Field(ix.year), true);
    let sorted = SearchRequest {
        sort: Some(sort),
        ..SearchRequest::top(10)
    };
    for s in searchers(&ix.s) {
        for req in [&SearchRequest::top(10), &sorted] {
            let m = invalid(s.search(q, req));
            assert!(m.contains("at most 64 levels"), "{m}");
        }
    }
    let m = invalid(ix.s.highlight(q, 0, ix.body, &HighlightOptions::default()));
    assert!(m.contains("at most 64 levels"), "{m}");
}

#[test]
fn the_deepest_query_allowed_runs_on_every_path_and_one_level_more_is_refused() {
    let ix = index();
    assert_eq!(Query::MAX_DEPTH, 64);
    assert_eq!(query::parser::MAX_DEPTH, Query::MAX_DEPTH);
    let quick = Query::term(ix.body, "quick");
    let fox = Query::term(ix.body, "fox");
    assert_eq!(quick.depth(), 1);
    assert_eq!(Query::boolean().depth(), 1);

    // boolean(must=[q], should=[fox]), 63 levels around a term.
    let deepest = nested(quick.clone(), &fox, 63);
    assert_eq!(deepest.depth(), 64);
    let hits = agreed(&ix, &deepest);
    // Every quick document, the one with fox first.
    assert_eq!(hits.len(), 20);
    assert_eq!(hits[0].0, 0);
    let deeper = nested(deepest.clone(), &fox, 1);
    assert_eq!(deeper.depth(), 65);
    // The compiler refuses it, before any path runs (an empty page still
    // compiles the query).
    let none = SearchRequest::top(0);
    assert!(ix.s.search(&deepest, &none).is_ok());
    let m = invalid(ix.s.search(&deeper, &none));
    assert!(
        m.contains("65 levels") && m.contains("at most 64 levels"),
        "{m}"
    );
    refused_as_too_deep(&ix, &deeper);

    // Single-MUST booleans and boosts of 1.0 score as the term, bit for bit.
    let plain = agreed(&ix, &quick);
    for q in [chain(quick.clone(), 63), boosted(quick.clone(), 1.0, 63)] {
        assert_eq!(q.depth(), 64);
        assert_eq!(agreed(&ix, &q), plain);
        refused_as_too_deep(&ix, &chain(q.clone(), 1));
        refused_as_too_deep(&ix, &q.boost(1.0));
    }
    // The depth is the deepest clause's, whatever the clauses' order.
    let wide = Query::boolean()
        .add(Occur::Should, chain(quick.clone(), 62))
        .add(Occur::Should, fox.clone());
    assert_eq!(wide.depth(), 64);
    agreed(&ix, &wide);
    refused_as_too_deep(&ix, &wide.add(Occur::MustNot, chain(fox.clone(), 63)));
}

/// What a thread with a 512 KiB stack does with `work`: a query thousands
/// deep taken apart recursively would need several MiB.
fn on_a_small_stack(work: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(work)
        .unwrap()
        .join()
        .expect("the work ran on a small stack");
}

#[test]
fn queries_thousands_deep_are_refused_and_dropped_without_recursing() {
    let ix = index();
    on_a_small_stack(move || {
        let quick = Query::term(ix.body, "quick");
        let fox = Query::term(ix.body, "fox");
        let deep = [
            (nested(quick.clone(), &fox, 9_999), 10_000),
            (chain(quick.clone(), 99_999), 100_000),
            (boosted(quick.clone(), 2.0, 99_999), 100_000),
        ];
        for (q, depth) in deep {
            assert_eq!(q.depth(), depth);
            refused_as_too_deep(&ix, &q);
            let copy = q.clone();
            assert_eq!(copy, q);
            assert_ne!(copy, chain(q.clone(), 1));
            // Debug shows 64 levels, then "..".
            let shown = format!("{q:?}");
            assert!(
                shown.contains("..") && shown.len() < 100_000,
                "{}",
                shown.len()
            );
            drop(q);
            drop(copy);
        }
        // Nothing short of the limit is refused for its depth.
        let fine = chain(quick, 63);
        assert!(ix.s.search(&fine, &SearchRequest::top(5)).is_ok());
    });
}

#[test]
fn clone_eq_and_debug_are_those_of_the_fields() {
    let f = FieldId(3);
    let q = Query::boolean()
        .add(Occur::Must, Query::term(f, "a").boost(2.5))
        .add(Occur::MustNot, Query::All)
        .add(
            Occur::Filter,
            Query::range(f, Bound::Included(Value::I64(1)), Bound::Unbounded),
        )
        .add(
            Occur::Should,
            Query::Phrase {
                field: f,
                text: "x y".into(),
                slop: 1,
            },
        );
    assert_eq!(
        format!("{q:?}"),
        "Boolean([(Must, Boost(Term { field: FieldId(3), key: [97] }, 2.5)), (MustNot, All), \
         (Filter, Range { field: FieldId(3), lower: Included(I64(1)), upper: Unbounded }), \
         (Should, Phrase { field: FieldId(3), text: \"x y\", slop: 1 })])"
    );
    assert_eq!(q.clone(), q);
    assert_eq!(q.depth(), 3);
    let changes = [
        Query::boolean().add(Occur::Must, Query::term(f, "a").boost(2.0)),
        Query::boolean().add(Occur::Should, Query::term(f, "a").boost(2.5)),
        Query::boolean().add(Occur::Must, Query::term(f, "b").boost(2.5)),
        Query::boolean().add(Occur::Must, Query::prefix(f, "a").boost(2.5)),
    ];
    for other in changes {
        assert_ne!(other, q);
    }
    assert_eq!(Query::None.add(Occur::Should, Query::All).depth(), 2);
    assert_ne!(Query::All, Query::None);
    assert_ne!(Query::All.boost(f32::NAN), Query::All.boost(f32::NAN));
}

#[test]
fn parsed_queries_nest_at_most_the_limit() {
    let ix = index();
    let schema = ix.s.schema().clone();
    let config = ParserConfig::new(ix.body, Operator::Or);
    // Each group `(quick OR inner^2)` is two levels: fewer than 64 groups
    // can nest too deep.
    let groups = |n: usize| {
        let mut t = "fox".to_owned();
        for _ in 0..n {
            t = format!("(quick OR {t}^2)");
        }
        t
    };
    let q = Query::parse(&groups(31), &schema, &config).unwrap();
    assert_eq!(q.depth(), 63);
    let ok = format!("dog AND {}", groups(31));
    let q = Query::parse(&ok, &schema, &config).unwrap();
    assert_eq!(q.depth(), 64);
    agreed(&ix, &q);
    let cases = [
        // The group that nests too deep.
        (format!("dog AND {}", groups(32)), 8),
        // The whole query.
        (format!("dog AND {}^2", groups(31)), 0),
    ];
    for (text, at) in cases {
        match Query::parse(&text, &schema, &config) {
            Err(Error::QuerySyntax { position, message }) => {
                assert_eq!(position, at, "{message}");
                assert!(
                    message.contains("65 levels") && message.contains("64"),
                    "{message}"
                );
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn boosts_beyond_the_largest_f32_are_refused() {
    let ix = index();
    let quick = Query::term(ix.body, "quick");
    let phrase = Query::Phrase {
        field: ix.body,
        text: "quick brown".into(),
        slop: 0,
    };
    let max = f32::MAX;
    let refused = [
        // A term's weight idf * 2.2 * boost: the reported NaN scores.
        quick.clone().boost(3.4e38),
        phrase.clone().boost(3.4e38),
        // Nested boosts multiply.
        quick.clone().boost(1e20).boost(1e20),
        Query::All.boost(1e20).boost(1e20),
        Query::prefix(ix.body, "qu").boost(max).boost(2.0),
        Query::range(ix.year, Bound::Unbounded, Bound::Unbounded)
            .boost(max)
            .boost(2.0),
        // Products of boosts beyond f64's range, and infinity times 0.
        boosted(Query::All, max, 10),
        boosted(Query::All.boost(0.0), max, 10),
        // A sum of clause scores beyond the largest f32.
        Query::boolean()
            .add(Occur::Should, Query::All.boost(max))
            .add(Occur::Should, Query::All.boost(max)),
        Query::boolean()
            .add(Occur::Must, quick.clone().boost(1e37))
            .add(Occur::Should, Query::All.boost(max)),
        // Clauses that do not score may not overflow either.
        Query::boolean()
            .add(Occur::Must, quick.clone())
            .add(Occur::Filter, quick.clone().boost(3.4e38)),
        Query::boolean()
            .add(Occur::Must, Query::All)
            .add(Occur::MustNot, quick.clone().boost(3.4e38)),
    ];
    for q in &refused {
        for s in searchers(&ix.s) {
            let m = invalid(s.search(q, &SearchRequest::top(10)));
            assert!(m.contains("beyond the largest f32"), "{q:?}: {m}");
        }
    }
}

#[test]
fn large_boosts_within_f32_keep_finite_scores() {
    let ix = index();
    let quick = Query::term(ix.body, "quick");
    let max = f32::MAX;
    // A constant may be the largest f32, and a sum may reach it.
    for (q, score) in [
        (Query::All.boost(3.4e38), 3.4e38f32),
        (Query::All.boost(max), max),
        (
            Query::boolean()
                .add(Occur::Should, Query::All.boost(max / 2.0))
                .add(Occur::Should, Query::All.boost(max / 2.0)),
            max,
        ),
        (Query::All.boost(1e20).boost(1e-20), 1.0),
    ] {
        let hits = agreed(&ix, &q);
        assert_eq!(hits.len(), 20);
        assert!(hits.iter().all(|&(_, s)| s == score.to_bits()), "{q:?}");
    }
    // A large boost on a term keeps its order and finite scores.
    let plain = agreed(&ix, &quick);
    let big = agreed(&ix, &quick.clone().boost(1e36));
    let docs = |h: &[(u64, u32)]| h.iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(docs(&big), docs(&plain));
    assert!(big.iter().all(|&(_, s)| f32::from_bits(s).is_finite()));
    // A boost of 0 above or below huge ones scores 0.
    for q in [
        quick.boost(0.0).boost(max),
        boosted(Query::All, max, 10).boost(0.0),
    ] {
        let zero = agreed(&ix, &q);
        assert!(
            !zero.is_empty() && zero.iter().all(|&(_, s)| s == 0),
            "{q:?}"
        );
    }
}
