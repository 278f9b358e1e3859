//! The query types beyond terms: prefixes, ranges, match-all/none, boosts
//! and parsed queries, on layouts the random model does not reach (ord
//! blocks skipped whole, sorted search, the expansion limit), and their
//! errors.

use quarry::*;

fn flags(stored: bool, indexed: bool, sortable: bool) -> FieldFlags {
    FieldFlags {
        stored,
        indexed,
        sortable,
    }
}

struct Idx {
    _dir: tempfile::TempDir,
    s: Searcher,
    body: FieldId,
    year: FieldId,
    year_idx: FieldId,
    price: FieldId,
    weight: FieldId,
    tag: FieldId,
}

/// One segment of 10 000 documents whose years rise with the doc id (so
/// most 4096-document ord blocks miss a narrow range), a price per
/// document, tags, and words with a shared prefix.
fn index() -> Idx {
    let dir = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let body = schema
        .add_field("body", FieldType::Text, flags(false, true, false))
        .unwrap();
    let year = schema
        .add_field("year", FieldType::I64, flags(false, false, true))
        .unwrap();
    let year_idx = schema
        .add_field("year_idx", FieldType::I64, flags(false, true, false))
        .unwrap();
    let price = schema
        .add_field("price", FieldType::F64, flags(false, false, true))
        .unwrap();
    let weight = schema
        .add_field("weight", FieldType::F64, flags(true, false, false))
        .unwrap();
    let tag = schema
        .add_field("tag", FieldType::String, flags(false, true, true))
        .unwrap();
    let mut w = IndexWriter::create(dir.path(), &schema, WriterConfig::default()).unwrap();
    for i in 0..10_000i64 {
        let mut d = Document::new();
        let words = format!(
            "w{} common {}",
            i % 1500,
            if i % 7 == 0 { "rare seven" } else { "other" }
        );
        d.add_str(body, &words);
        if i % 11 != 0 {
            d.add_i64(year, 1950 + i / 200);
            d.add_i64(year_idx, 1950 + i / 200);
        }
        d.add_f64(price, (i % 100) as f64 / 4.0 - 5.0);
        d.add_f64(weight, 1.0);
        d.add_str(tag, ["red", "green", "blue", "grey"][(i % 4) as usize]);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    let s = Searcher::open(dir.path()).unwrap();
    Idx {
        _dir: dir,
        s,
        body,
        year,
        year_idx,
        price,
        weight,
        tag,
    }
}

fn bits(h: &Hits) -> Vec<(u64, u32)> {
    h.hits.iter().map(|h| (h.doc, h.score.to_bits())).collect()
}

/// Every path and collector gives the oracle's hits for `q`.
fn same_on_every_path(s: &Searcher, q: &Query, sort: Option<SortSpec>) -> Hits {
    let req = SearchRequest {
        offset: 3,
        limit: 20,
        sort,
        total: TotalMode::Exact,
    };
    let run = |exec| {
        s.clone()
            .with_options(SearchOptions {
                exec,
                ..SearchOptions::default()
            })
            .search(q, &req)
            .unwrap()
    };
    let want = run(ExecMode::Exhaustive);
    for exec in [ExecMode::Daat, ExecMode::Auto] {
        let got = run(exec);
        assert_eq!(bits(&got), bits(&want), "{exec:?} {q:?}");
        assert_eq!(got.total_hits, want.total_hits, "{exec:?} {q:?}");
        let vals = |h: &Hits| {
            h.hits
                .iter()
                .map(|h| h.sort_values.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(vals(&got), vals(&want), "{exec:?} {q:?}");
    }
    want
}

/// How many of the documents' numbers satisfy `pred`.
fn count(pred: impl Fn(i64) -> bool) -> u64 {
    (0..10_000).filter(|&d| pred(d)).count() as u64
}

fn i(v: i64) -> Value {
    Value::I64(v)
}

#[test]
fn ranges_prefixes_and_boosts_agree_on_every_path() {
    use Bound::*;
    let x = index();
    let (s, body) = (&x.s, x.body);
    let by_year = {
        let mut spec = SortSpec::new();
        spec.push(SortKey::Field(x.year), true);
        spec
    };
    let years = |lo: i64, hi: i64| count(|d| d % 11 != 0 && (lo..=hi).contains(&(1950 + d / 200)));
    let cases: Vec<(Query, u64)> = vec![
        (
            Query::range(x.year, Included(i(1960)), Included(i(1961))),
            years(1960, 1961),
        ),
        (
            Query::range(x.year_idx, Included(i(1960)), Excluded(i(1962))),
            years(1960, 1961),
        ),
        (
            Query::range(x.year, Excluded(i(1959)), Excluded(i(1962))),
            years(1960, 1961),
        ),
        (
            Query::range(x.year, Unbounded, Unbounded),
            count(|d| d % 11 != 0),
        ),
        (Query::range(x.year, Included(i(2100)), Unbounded), 0),
        (
            Query::range(x.year, Included(i(1970)), Included(i(1960))),
            0,
        ),
        (
            Query::range(
                x.price,
                Included(Value::F64(-5.0)),
                Excluded(Value::F64(-4.0)),
            ),
            count(|d| d % 100 < 4),
        ),
        (
            Query::range(x.price, Excluded(Value::F64(19.5)), Unbounded),
            count(|d| d % 100 > 98),
        ),
        (
            Query::range(x.tag, Included(Value::Str("gr".into())), Unbounded),
            count(|d| d % 4 != 2),
        ),
        (
            Query::prefix(body, "w14"),
            count(|d| format!("w{}", d % 1500).starts_with("w14")),
        ),
        (
            Query::prefix(x.tag, "gr"),
            count(|d| d % 4 == 1 || d % 4 == 3),
        ),
        (Query::All, 10_000),
        (Query::None, 0),
        (
            Query::All.add(Occur::MustNot, Query::term(body, "seven")),
            count(|d| d % 7 != 0),
        ),
        (
            Query::term(body, "rare")
                .boost(2.5)
                .add(
                    Occur::Filter,
                    Query::range(x.year, Included(i(1960)), Unbounded),
                )
                .add(Occur::Should, Query::prefix(body, "w1").boost(0.5)),
            count(|d| d % 7 == 0 && d % 11 != 0 && d >= 2000),
        ),
        (
            Query::boolean()
                .add(Occur::Should, Query::term(body, "seven").boost(3.0))
                .add(Occur::Should, Query::term(body, "w3").boost(0.0))
                .add(
                    Occur::Should,
                    Query::range(x.price, Included(Value::F64(0.0)), Unbounded),
                )
                .boost(1.5),
            u64::MAX,
        ),
    ];
    for (q, total) in cases {
        let hits = same_on_every_path(s, &q, None);
        if total != u64::MAX {
            assert_eq!(hits.total_hits, total, "{q:?}");
        }
        same_on_every_path(s, &q, Some(by_year.clone()));
    }
    // A range is constant: its boost is the score.
    let q = Query::range(x.year, Included(i(1960)), Unbounded).boost(2.5);
    let hits = s.search(&q, &SearchRequest::top(3)).unwrap();
    assert!(hits.hits.iter().all(|h| h.score == 2.5), "{hits:?}");
    // A boost of 1.0 changes no bit; one of 2 changes the term's.
    let t = Query::term(body, "rare");
    let plain = s.search(&t, &SearchRequest::top(5)).unwrap();
    let one = s
        .search(&t.clone().boost(1.0), &SearchRequest::top(5))
        .unwrap();
    let two = s.search(&t.boost(2.0), &SearchRequest::top(5)).unwrap();
    assert_eq!(bits(&plain), bits(&one));
    assert!(two.hits[0].score > plain.hits[0].score * 1.99);
}

#[test]
fn expansions_past_the_limit_are_an_error_or_use_the_column() {
    use Bound::*;
    let x = index();
    let limited = |n| {
        x.s.clone().with_options(SearchOptions {
            max_expansions: n,
            ..SearchOptions::default()
        })
    };
    let req = SearchRequest::top(5).with_total(TotalMode::Exact);
    // "w1" prefixes w1, w10..w19, w100..w199, w1000..w1499: 611 terms.
    let p = Query::prefix(x.body, "w1");
    let want = count(|d| format!("w{}", d % 1500).starts_with("w1"));
    assert_eq!(x.s.search(&p, &req).unwrap().total_hits, want);
    match limited(610).search(&p, &req) {
        Err(Error::TooManyTerms { limit: 610, what }) => {
            assert!(what.contains("\"w1\"") && what.contains("body"), "{what}")
        }
        other => panic!("{other:?}"),
    }
    assert!(limited(611).search(&p, &req).is_ok());
    // 50 years: the indexed-only field fails, the sortable one uses its column.
    let years = |f| Query::range(f, Included(i(1950)), Excluded(i(2000)));
    let err = limited(10).search(&years(x.year_idx), &req).unwrap_err();
    assert!(
        matches!(err, Error::TooManyTerms { limit: 10, .. }),
        "{err}"
    );
    let want = x.s.search(&years(x.year), &req).unwrap().total_hits;
    assert_eq!(
        limited(10).search(&years(x.year), &req).unwrap().total_hits,
        want
    );
}

#[test]
fn unsupported_and_invalid_queries_are_clear_errors() {
    use Bound::*;
    let x = index();
    let req = SearchRequest::top(5);
    let err = |q: Query| x.s.search(&q, &req).unwrap_err();
    // Phrases need a text field (and positions: tests/phrase.rs).
    let phrase = Query::Phrase {
        field: x.year_idx,
        text: "rare seven".into(),
        slop: 1,
    };
    match err(phrase) {
        Error::Schema(m) => assert!(m.contains("\"year_idx\"") && m.contains("text"), "{m}"),
        other => panic!("{other}"),
    }
    for b in [f32::NAN, -1.0, f32::INFINITY] {
        let e = err(Query::term(x.body, "rare").boost(b));
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    }
    let f64_bound = |v: f64| Query::range(x.price, Included(Value::F64(v)), Unbounded);
    assert!(matches!(
        err(f64_bound(f64::NAN)),
        Error::InvalidArgument(_)
    ));
    let schema_err = |q: Query, what: &str| match err(q) {
        Error::Schema(m) => assert!(m.contains(what), "{m}"),
        other => panic!("{other}"),
    };
    schema_err(
        Query::range(x.weight, Included(Value::F64(0.0)), Unbounded),
        "f64 fields are never indexed",
    );
    schema_err(
        Query::range(x.year, Included(Value::F64(1.0)), Unbounded),
        "must be i64",
    );
    schema_err(Query::range(x.body, Unbounded, Unbounded), "is text");
    schema_err(Query::prefix(x.year_idx, "1"), "prefix queries need");
}

#[test]
fn parsed_queries_run_like_the_queries_they_stand_for() {
    use Bound::*;
    let x = index();
    let config = ParserConfig::new(x.body, Operator::And);
    let parse = |t: &str| Query::parse(t, x.s.schema(), &config).unwrap();
    let pairs = vec![
        (
            "rare year:[1960 TO 1961]",
            Query::term(x.body, "rare").add(
                Occur::Must,
                Query::range(x.year, Included(i(1960)), Included(i(1961))),
            ),
        ),
        (
            "(seven OR w3*)^2 -tag:red",
            Query::boolean()
                .add(
                    Occur::Must,
                    Query::boolean()
                        .add(Occur::Should, Query::term(x.body, "seven"))
                        .add(Occur::Should, Query::prefix(x.body, "w3"))
                        .boost(2.0),
                )
                .add(Occur::MustNot, Query::term(x.tag, "red")),
        ),
        (
            "price:{* TO 0} AND NOT common",
            Query::range(x.price, Unbounded, Excluded(Value::F64(0.0)))
                .add(Occur::MustNot, Query::term(x.body, "common")),
        ),
    ];
    for (text, want) in pairs {
        let q = parse(text);
        assert_eq!(q, want, "{text}");
        same_on_every_path(&x.s, &q, None);
    }
    // A parsed phrase runs on every path: every seventh document holds
    // "rare seven", none "seven rare" exactly.
    let hits = same_on_every_path(&x.s, &parse("\"rare seven\""), None);
    assert_eq!(hits.total_hits, 10_000u64.div_ceil(7));
    let swapped = same_on_every_path(&x.s, &parse("\"seven rare\""), None);
    assert_eq!(swapped.total_hits, 0);
    let sloppy = same_on_every_path(&x.s, &parse("\"seven rare\"~2"), None);
    assert_eq!(sloppy.total_hits, hits.total_hits);
}

/// The body words of document `d` of [`index`].
fn body_words(d: i64) -> Vec<String> {
    let rest: &[&str] = if d % 7 == 0 {
        &["common", "rare", "seven"]
    } else {
        &["common", "other"]
    };
    let mut words = vec![format!("w{}", d % 1500)];
    words.extend(rest.iter().map(|w| w.to_string()));
    words
}

#[test]
fn prefixes_and_ranges_expand_across_dictionary_blocks_and_at_its_end() {
    use Bound::*;
    let x = index();
    let req = SearchRequest::top(5).with_total(TotalMode::Exact);
    let total = |s: &Searcher, q: &Query| s.search(q, &req).map(|h| h.total_hits);
    // Body keys in order: common, other, rare, seven, w0, w1, w10, ...,
    // w999 (1504 terms, 94 version-2 blocks of 16): "w" spans 1500 of
    // them, "w99" the dictionary's last 11, "w999" its last key.
    for prefix in [
        "w", "w1", "w14", "w149", "w99", "w999", "w9999", "x", "c", "common", "commons", "rare",
        "s", "a", "",
    ] {
        let q = Query::prefix(x.body, prefix);
        let docs = (0..10_000)
            .filter(|&d| body_words(d).iter().any(|w| w.starts_with(prefix)))
            .count() as u64;
        let terms = (0..1500)
            .map(|i| format!("w{i}"))
            .chain(["common", "other", "rare", "seven"].map(String::from))
            .filter(|k| k.starts_with(prefix))
            .count();
        let wide = x.s.clone().with_options(SearchOptions {
            max_expansions: 2000,
            ..SearchOptions::default()
        });
        assert_eq!(total(&wide, &q).unwrap(), docs, "prefix {prefix:?}");
        if terms <= 1024 {
            // (Under the default expansion limit, which it searches with.)
            same_on_every_path(&x.s, &q, None);
        }
        // Capped by the number of distinct terms it expands to.
        if terms > 0 {
            let capped = |n| {
                let s = x.s.clone().with_options(SearchOptions {
                    max_expansions: n,
                    ..SearchOptions::default()
                });
                total(&s, &q)
            };
            assert_eq!(capped(terms).unwrap(), docs, "prefix {prefix:?}");
            match capped(terms - 1) {
                Err(Error::TooManyTerms { limit, .. }) => assert_eq!(limit, terms - 1),
                other => panic!("prefix {prefix:?} capped at {}: {other:?}", terms - 1),
            }
        }
    }
    // String ranges over the tag dictionary (blue, green, grey, red),
    // bounds on keys and between them, at both ends.
    let s = |v: &str| Value::Str(v.into());
    let tags = ["red", "green", "blue", "grey"];
    let ranges: Vec<(Bound<Value>, Bound<Value>, &[&str])> = vec![
        (Excluded(s("green")), Included(s("red")), &["grey", "red"]),
        (Included(s("green")), Excluded(s("red")), &["green", "grey"]),
        (Excluded(s("red")), Unbounded, &[]),
        (Included(s("red")), Unbounded, &["red"]),
        (Unbounded, Excluded(s("blue")), &[]),
        (Unbounded, Included(s("blue")), &["blue"]),
        (
            Excluded(s("a")),
            Excluded(s("zz")),
            &["blue", "green", "grey", "red"],
        ),
        (Included(s("gz")), Included(s("r")), &[]),
    ];
    for (lo, hi, want) in ranges {
        let q = Query::range(x.tag, lo.clone(), hi.clone());
        let docs = (0..10_000)
            .filter(|&d| want.contains(&tags[(d % 4) as usize]))
            .count() as u64;
        assert_eq!(total(&x.s, &q).unwrap(), docs, "{lo:?}..{hi:?}");
    }
    // An i64 range over the indexed-only field with an excluded lower
    // bound on a key.
    let q = Query::range(x.year_idx, Excluded(i(1960)), Included(i(1962)));
    let want = count(|d| d % 11 != 0 && (1961..=1962).contains(&(1950 + d / 200)));
    assert_eq!(total(&x.s, &q).unwrap(), want);
}

#[test]
fn expansion_limits_count_distinct_terms_over_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let body = schema
        .add_field("body", FieldType::Text, flags(false, true, false))
        .unwrap();
    let config = WriterConfig {
        max_docs_per_segment: Some(100),
        merge_factor: 0,
        ..WriterConfig::default()
    };
    let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
    // Three segments of 100 documents, each holding the words p000..p199
    // (200 distinct terms overall) and its own q<segment>.
    for d in 0..300 {
        let mut doc = Document::new();
        doc.add_str(
            body,
            &format!("p{:03} p{:03} q{}", d % 200, (d + 37) % 200, d / 100),
        );
        w.add_document(&doc).unwrap();
    }
    w.commit().unwrap();
    let s = Searcher::open(dir.path()).unwrap();
    assert_eq!(s.snapshot().segments().len(), 3);
    let limited = |n| {
        s.clone().with_options(SearchOptions {
            max_expansions: n,
            ..SearchOptions::default()
        })
    };
    let req = SearchRequest::top(3).with_total(TotalMode::Exact);
    let p = Query::prefix(body, "p");
    assert_eq!(limited(200).search(&p, &req).unwrap().total_hits, 300);
    assert!(matches!(
        limited(199).search(&p, &req),
        Err(Error::TooManyTerms { limit: 199, .. })
    ));
    let q = Query::prefix(body, "q");
    assert_eq!(limited(3).search(&q, &req).unwrap().total_hits, 300);
    assert!(matches!(
        limited(2).search(&q, &req),
        Err(Error::TooManyTerms { limit: 2, .. })
    ));
}
