//! Phrase queries: every path bit-identical to the exhaustive one (alone,
//! in booleans, boosted, sorted; one segment and many, with deletes, each
//! counting mode), an independent float64 model of the phrase frequency
//! and its BM25 score, the slop cases, and the errors.

mod common;

use common::Rng;
use quarry::format::norms::{length_to_norm, norm_to_length};
use quarry::*;

const WORDS: &[&str] = &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];

/// A word, Zipf-like: "a" most often.
fn word(rng: &mut Rng) -> &'static str {
    let r = rng.below(55);
    let mut acc = 0;
    for (i, w) in WORDS.iter().enumerate() {
        acc += 10 - i;
        if r < acc {
            return w;
        }
    }
    WORDS[0]
}

/// Documents: random words, some with a planted phrase "c d e" or
/// repeated "a b", the first ones long runs of "a b" (so a queue of the
/// best "a b" documents fills early and later blocks can be passed).
fn corpus(n: usize, seed: u64) -> Vec<Vec<&'static str>> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let len = 1 + rng.below(24);
            let mut d: Vec<&str> = (0..len).map(|_| word(&mut rng)).collect();
            if rng.chance(20) {
                let at = rng.below(d.len() + 1);
                d.splice(at..at, ["c", "d", "e"]);
            }
            if i < 40 {
                d.extend(std::iter::repeat_n(["a", "b"], 6).flatten());
            }
            d
        })
        .collect()
}

struct Index {
    _dir: tempfile::TempDir,
    s: Searcher,
    body: FieldId,
    /// A text field without positions.
    flat: FieldId,
    year: FieldId,
}

fn build(docs: &[Vec<&str>], segment_docs: Option<u32>, delete_every: Option<usize>) -> Index {
    let dir = common::fast_tempdir();
    let (mut schema, f) = common::id_body_year();
    let flat = schema
        .add_field("flat", FieldType::Text, FieldFlags::default())
        .unwrap();
    schema.set_positions(flat, false).unwrap();
    let config = WriterConfig {
        max_docs_per_segment: segment_docs,
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir.path(), &schema, config).unwrap();
    for (i, d) in docs.iter().enumerate() {
        let mut doc = Document::new();
        doc.add_i64(f.id, i as i64);
        doc.add_str(f.body, &d.join(" "));
        doc.add_str(flat, &d.join(" "));
        doc.add_i64(f.year, (i % 17) as i64);
        w.add_document(&doc).unwrap();
    }
    w.commit().unwrap();
    if let Some(every) = delete_every {
        for i in (0..docs.len()).filter(|i| i % every == 3 || *i < 20) {
            w.delete_term(f.id, &Value::I64(i as i64)).unwrap();
        }
        w.commit().unwrap();
    }
    let s = Searcher::open(dir.path()).unwrap();
    Index {
        _dir: dir,
        s,
        body: f.body,
        flat,
        year: f.year,
    }
}

fn phrase(field: FieldId, text: &str, slop: u32) -> Query {
    Query::Phrase {
        field,
        text: text.into(),
        slop,
    }
}

fn bits(h: &Hits) -> Vec<(u64, u32)> {
    h.hits.iter().map(|h| (h.doc, h.score.to_bits())).collect()
}

fn with(s: &Searcher, f: impl FnOnce(&mut SearchOptions)) -> Searcher {
    let mut o = SearchOptions::default();
    f(&mut o);
    s.clone().with_options(o)
}

/// Every path, kill switch and counting mode gives the exhaustive path's
/// hits (and with exact totals, its total); returns the exhaustive hits
/// with exact totals.
fn same_on_every_path(s: &Searcher, q: &Query, k: usize, sort: Option<SortSpec>) -> Hits {
    let exhaustive = with(s, |o| o.exec = ExecMode::Exhaustive);
    let others = [
        with(s, |_| {}),
        with(s, |o| o.exec = ExecMode::Daat),
        with(s, |o| o.bulk_and = Switch::Off),
        with(s, |o| o.term_topk = Switch::Off),
        with(s, |o| o.block_max_or = Switch::Off),
    ];
    let mut exact = None;
    for mode in [
        TotalMode::Exact,
        TotalMode::LowerBound,
        TotalMode::AtLeast(25),
    ] {
        for offset in [0, 3] {
            let req = SearchRequest {
                offset,
                limit: k,
                sort: sort.clone(),
                total: mode,
            };
            let want = exhaustive.search(q, &req).unwrap();
            assert!(want.total_is_exact);
            for (i, o) in others.iter().enumerate() {
                let got = o.search(q, &req).unwrap();
                let ctx = format!("{q:?} k {k} offset {offset} {mode:?} path {i}");
                assert_eq!(bits(&got), bits(&want), "{ctx}");
                if mode == TotalMode::Exact {
                    assert_eq!(got.total_hits, want.total_hits, "{ctx}");
                    assert!(got.total_is_exact, "{ctx}");
                } else {
                    assert!(got.total_hits <= want.total_hits, "{ctx}");
                    assert!(!got.total_is_exact || got.total_hits == want.total_hits);
                    assert!(got.total_hits >= mode.threshold().min(want.total_hits));
                }
            }
            if mode == TotalMode::Exact && offset == 0 {
                exact = Some(want);
            }
        }
    }
    exact.unwrap()
}

/// The float64 BM25 score of every matching document: the phrase scores as
/// a term with the phrase frequency and the sum of the tokens' idfs.
fn model(docs: &[Vec<&str>], phrase: &[&str], slop: u32) -> Vec<(u64, f64)> {
    let n = docs.len() as f64;
    let avgdl = docs.iter().map(|d| d.len()).sum::<usize>() as f64 / n;
    let idf: f64 = phrase
        .iter()
        .map(|t| {
            let df = docs.iter().filter(|d| d.contains(t)).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .sum();
    let mut out: Vec<(u64, f64)> = docs
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let pf = f64::from(common::phrase_freq(d, phrase, slop));
            let dl = f64::from(norm_to_length(length_to_norm(d.len() as u32)));
            (pf > 0.0).then(|| {
                let s = idf * 2.2 * pf / (pf + 1.2 * (0.25 + 0.75 * dl / avgdl));
                (i as u64, s)
            })
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// The engine's top 10 agrees with the model's, ties aside (the rule of
/// scripts/bm25_check.py): as many hits, each a match whose f32 score is
/// its float64 one within 1e-5, position by position the model's score,
/// and the same total.
fn agrees_with_model(x: &Index, docs: &[Vec<&str>], text: &str, slop: u32) -> u64 {
    let tokens: Vec<&str> = text.split(' ').collect();
    let want = model(docs, &tokens, slop);
    let req = SearchRequest::top(10).with_total(TotalMode::Exact);
    let got = x.s.search(&phrase(x.body, text, slop), &req).unwrap();
    let ctx = format!("{text:?}~{slop}");
    assert_eq!(got.total_hits, want.len() as u64, "{ctx}");
    assert_eq!(got.hits.len(), want.len().min(10), "{ctx}");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs().max(1e-9);
    for (h, w) in got.hits.iter().zip(&want) {
        let mine = want.iter().find(|m| m.0 == h.doc);
        let mine = mine.unwrap_or_else(|| panic!("{ctx}: doc {} does not match", h.doc));
        assert!(
            close(f64::from(h.score), mine.1),
            "{ctx}: {h:?} vs {mine:?}"
        );
        assert!(close(mine.1, w.1), "{ctx}: rank of {h:?}, want {w:?}");
    }
    got.total_hits
}

/// Phrases taken from the documents (2 to 4 tokens), some reversed.
fn sampled_phrases(docs: &[Vec<&str>], rng: &mut Rng, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    while out.len() < n {
        let d = &docs[rng.below(docs.len())];
        let len = 2 + rng.below(3);
        if d.len() < len {
            continue;
        }
        let at = rng.below(d.len() - len + 1);
        let mut p: Vec<&str> = d[at..at + len].to_vec();
        if rng.chance(25) {
            p.reverse();
        }
        out.push(p.join(" "));
    }
    out
}

#[test]
fn phrases_agree_with_the_float64_model() {
    let docs = corpus(3000, 7);
    let x = build(&docs, None, None);
    let mut rng = Rng(11);
    let mut phrases = sampled_phrases(&docs, &mut rng, 25);
    phrases.extend(
        ["c d e", "e d c", "a b", "b a", "a a", "a b a", "j i", "c e"]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut matched = 0;
    for p in &phrases {
        for slop in [0, 1, 2, 5] {
            matched += u64::from(agrees_with_model(&x, &docs, p, slop) > 0);
        }
    }
    assert!(matched > 100, "the phrases match: {matched}");
}

#[test]
fn slop_reorders_gaps_and_repeats() {
    let docs: Vec<Vec<&str>> = [
        "a b c",   // 0: exact "a b", "b c"
        "b a",     // 1: swapped: "a b"~2
        "a x b",   // 2: a gap of one: "a b"~1
        "a x x b", // 3: a gap of two: "a b"~2
        "a a a",   // 4: "a a" twice
        "a",       // 5: never "a a"
        "a b a b", // 6: "a b" twice, "a b a" once
        "c b a",   // 7: "a b c" reversed: 4 moves
    ]
    .iter()
    .map(|s| s.split(' ').collect())
    .collect();
    let x = build(&docs, None, None);
    let req = SearchRequest::top(20).with_total(TotalMode::Exact);
    let ids = |text: &str, slop: u32| -> Vec<u64> {
        let mut v: Vec<u64> = (x.s.search(&phrase(x.body, text, slop), &req).unwrap().hits)
            .iter()
            .map(|h| h.doc)
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(ids("a b", 0), vec![0, 6]);
    assert_eq!(ids("A, B!", 0), vec![0, 6], "analysed like the field");
    assert_eq!(ids("a b", 1), vec![0, 2, 6]);
    assert_eq!(ids("a b", 2), vec![0, 1, 2, 3, 6, 7]);
    assert_eq!(ids("a a", 0), vec![4]);
    assert_eq!(ids("a a", 3), vec![4, 6]);
    assert_eq!(ids("a b a", 0), vec![6]);
    assert_eq!(ids("a b c", 3), vec![0]);
    assert_eq!(ids("a b c", 4), vec![0, 7]);
    // Frequencies: doc 6 holds "a b" twice, doc 0 once, same idf sum.
    let h = x.s.search(&phrase(x.body, "a b", 0), &req).unwrap();
    assert_eq!(h.hits[0].doc, 6);
    // "a a" in "a a a" counts 2, as a model of two frequencies says.
    assert_eq!(common::phrase_freq(&docs[4], &["a", "a"], 0), 2);
    for text in ["a b", "b a", "a a", "a b a", "a b c", "x b"] {
        for slop in 0..5 {
            agrees_with_model(&x, &docs, text, slop);
            same_on_every_path(&x.s, &phrase(x.body, text, slop), 3, None);
        }
    }
    // One token is the term query; none matches nothing.
    let one = x.s.search(&phrase(x.body, "b", 3), &req).unwrap();
    let term = x.s.search(&Query::term(x.body, "b"), &req).unwrap();
    assert_eq!(bits(&one), bits(&term));
    let none = x.s.search(&phrase(x.body, " ,!", 0), &req).unwrap();
    assert_eq!((none.total_hits, none.hits.len()), (0, 0));
    let absent = x.s.search(&phrase(x.body, "a zzz", 9), &req).unwrap();
    assert_eq!(absent.total_hits, 0);
}

fn queries(x: &Index, docs: &[Vec<&str>]) -> Vec<Query> {
    let b = x.body;
    let mut rng = Rng(5);
    let mut qs: Vec<Query> = sampled_phrases(docs, &mut rng, 10)
        .iter()
        .enumerate()
        .map(|(i, p)| phrase(b, p, [0, 0, 1, 3][i % 4]))
        .collect();
    qs.extend([
        phrase(b, "a b", 0),
        phrase(b, "a b", 1),
        phrase(b, "c d e", 0),
        phrase(b, "a a", 2),
        // One term in several slots: the window loop's lone lead, whose
        // matches its positions still confirm.
        phrase(b, "a a", 0),
        phrase(b, "b b b", 0),
        phrase(b, "c d e", 0).boost(2.5),
        Query::boolean()
            .add(Occur::Must, phrase(b, "c d", 0))
            .add(Occur::Should, Query::term(b, "a")),
        Query::boolean()
            .add(Occur::Should, phrase(b, "a b", 0))
            .add(Occur::Should, phrase(b, "d e", 1).boost(0.5)),
        Query::boolean()
            .add(Occur::Must, Query::term(b, "b"))
            .add(Occur::MustNot, phrase(b, "a b", 0)),
        Query::boolean()
            .add(Occur::Filter, phrase(b, "d e", 0))
            .add(Occur::Must, Query::term(b, "a")),
        Query::boolean().add(Occur::Must, phrase(b, "b c", 2)).add(
            Occur::Filter,
            Query::range(x.year, Bound::Included(Value::I64(3)), Bound::Unbounded),
        ),
    ]);
    qs
}

#[test]
fn every_path_is_the_exhaustive_one() {
    let docs = corpus(2500, 3);
    for (segment_docs, deletes) in [(None, None), (Some(500), None), (Some(600), Some(7))] {
        let x = build(&docs, segment_docs, deletes);
        assert_eq!(
            x.s.snapshot().segments().len() > 1,
            segment_docs.is_some(),
            "the layout"
        );
        for q in queries(&x, &docs) {
            for k in [1, 20] {
                same_on_every_path(&x.s, &q, k, None);
            }
            // Sorted search, by a field then the score.
            let mut spec = SortSpec::new();
            spec.push(SortKey::Field(x.year), false)
                .push(SortKey::Score, true);
            same_on_every_path(&x.s, &q, 10, Some(spec));
        }
    }
}

#[test]
fn positions_are_read_only_for_competitive_candidates() {
    // "a b" is in most documents; the first 40 hold it 6 times and more,
    // so once they fill the queue, the rest cannot compete.
    let docs = corpus(20_000, 9);
    let x = build(&docs, None, None);
    let q = phrase(x.body, "a b", 0);
    let want = same_on_every_path(&x.s, &q, 10, None);
    let req = SearchRequest::top(10).with_total(TotalMode::LowerBound);
    let got = x.s.search(&q, &req).unwrap();
    assert_eq!(bits(&got), bits(&want));
    assert!(
        got.scored_docs * 5 < want.total_hits,
        "scored {} of {}",
        got.scored_docs,
        want.total_hits
    );
}

#[test]
fn a_field_without_positions_is_a_clear_error() {
    let docs = corpus(50, 1);
    let x = build(&docs, None, None);
    let req = SearchRequest::top(5);
    match x.s.search(&phrase(x.flat, "a b", 0), &req) {
        Err(Error::Unsupported(m)) => assert!(m.contains("\"flat\"") && m.contains("positions")),
        other => panic!("{other:?}"),
    }
    match x.s.search(&phrase(x.year, "a b", 0), &req) {
        Err(Error::Schema(m)) => assert!(m.contains("text field"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Parsed, a quoted phrase is the same query.
    let config = ParserConfig::new(x.body, Operator::Or);
    let parsed = Query::parse("\"c d e\"~1", x.s.schema(), &config).unwrap();
    assert_eq!(parsed, phrase(x.body, "c d e", 1));
}
