//! Per-field analyzers end to end: the index is analysed by each field's
//! analyzer, queries are analysed by the same one (match, parsed words),
//! term queries are not, prefixes are only case-normalised, positions
//! come from the analyzer (stop words leave gaps), and every path returns
//! the exhaustive path's hits bit for bit.

use std::path::Path;

use quarry::read::Snapshot;
use quarry::*;

mod common;

const FAMILIES: &[&[&str]] = &[
    &["run", "runs", "running", "RUN"],
    &[
        "connect",
        "connected",
        "connection",
        "connecting",
        "connects",
    ],
    &["pony", "ponies"],
    &["generous", "generously"],
];
const OTHERS: &[&str] = &["the", "a", "of", "fox", "river", "stone", "Übung", "naïve"];

/// A deterministic text of 1 to 12 words; word `i` of document `n`.
fn text(n: usize) -> String {
    let len = 1 + n * 7 % 12;
    (0..len)
        .map(|i| {
            let k = (n * 31 + i * 17 + n / 3) % 23;
            if k < FAMILIES.len() * 3 {
                let f = FAMILIES[k % FAMILIES.len()];
                f[(n + i) % f.len()]
            } else {
                OTHERS[k % OTHERS.len()]
            }
        })
        .collect::<Vec<_>>()
        .join(if n.is_multiple_of(5) { ", " } else { " " })
}

const DOCS: usize = 700;

fn build(dir: &Path, segment_docs: Option<u32>) -> (FieldId, FieldId, FieldId) {
    let mut schema = Schema::new();
    let (id, en) = common::add_id_and_body(&mut schema, false);
    schema.set_analyzer(en, Analyzer::English).unwrap();
    let stop = schema
        .add_field("stop", FieldType::Text, FieldFlags::default())
        .unwrap();
    schema.set_analyzer(stop, Analyzer::EnglishStop).unwrap();
    let kw = schema
        .add_field("kw", FieldType::Text, FieldFlags::default())
        .unwrap();
    schema.set_analyzer(kw, Analyzer::Keyword).unwrap();
    let config = WriterConfig {
        max_docs_per_segment: segment_docs,
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    for n in 0..DOCS {
        let t = text(n);
        let mut d = Document::new();
        d.add_i64(id, n as i64)
            .add_str(en, &t)
            .add_str(stop, &t)
            .add_str(kw, if n % 4 == 0 { "New York" } else { "new york" });
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    for n in (0..DOCS).step_by(13) {
        w.delete_term(id, &Value::I64(n as i64)).unwrap();
    }
    w.commit().unwrap();
    (en, stop, kw)
}

fn searcher(dir: &Path, exec: ExecMode) -> Searcher {
    Searcher::open(dir).unwrap().with_options(SearchOptions {
        exec,
        ..SearchOptions::default()
    })
}

fn req(limit: usize, total: TotalMode) -> SearchRequest {
    SearchRequest {
        offset: 0,
        limit,
        sort: None,
        total,
    }
}

/// Hits as (doc, score bits), and the total.
fn run(s: &Searcher, q: &Query, r: &SearchRequest) -> (Vec<(u64, u32)>, u64) {
    let hits = s.search(q, r).unwrap();
    (
        hits.hits
            .iter()
            .map(|h| (h.doc, h.score.to_bits()))
            .collect(),
        hits.total_hits,
    )
}

/// The live ids whose text holds a word of `family` (as the test wrote
/// them, not as any analyzer reads them).
fn ids_with(family: &[&str]) -> Vec<i64> {
    (0..DOCS)
        .filter(|n| n % 13 != 0)
        .filter(|&n| text(n).split([' ', ',']).any(|w| family.contains(&w)))
        .map(|n| n as i64)
        .collect()
}

fn ids_of(s: &Searcher, q: &Query) -> Vec<i64> {
    let hits = s.search(q, &req(DOCS, TotalMode::Exact)).unwrap();
    let mut ids: Vec<i64> = hits
        .hits
        .iter()
        .map(|h| s.stored(h.doc).unwrap()[0].1.as_i64().unwrap())
        .collect();
    ids.sort();
    ids
}

#[test]
fn english_matches_inflected_forms_on_every_path_bit_for_bit() {
    for segment_docs in [None, Some(90)] {
        let tmp = tempfile::tempdir().unwrap();
        let (en, stop, _) = build(tmp.path(), segment_docs);
        let auto = searcher(tmp.path(), ExecMode::Auto);
        let oracle = searcher(tmp.path(), ExecMode::Exhaustive);
        let daat = searcher(tmp.path(), ExecMode::Daat);
        for family in FAMILIES {
            for form in *family {
                // Any form finds every document holding any form.
                let q = Query::matching(en, form, Operator::Or);
                assert_eq!(ids_of(&auto, &q), ids_with(family), "{form}");
                assert_eq!(ids_of(&oracle, &q), ids_with(family), "{form}");
            }
        }
        assert!(ids_with(FAMILIES[0]).len() > 50);
        let queries = [
            Query::matching(en, "running connections", Operator::Or),
            Query::matching(en, "running connections", Operator::And),
            Query::matching(en, "Ponies, the river", Operator::Or),
            Query::matching(stop, "the generously running fox", Operator::Or),
            Query::matching(stop, "the of a", Operator::Or),
            Query::matching(en, "the of a", Operator::Or),
        ];
        for q in &queries {
            for total in [TotalMode::Exact, TotalMode::LowerBound] {
                let r = req(10, total);
                let want = run(&oracle, q, &r);
                if total == TotalMode::Exact {
                    assert_eq!(run(&auto, q, &r), want, "{q:?}");
                    assert_eq!(run(&daat, q, &r), want, "{q:?}");
                } else {
                    // A lower-bound total may count less; the page is exact.
                    assert_eq!(run(&auto, q, &r).0, want.0, "{q:?}");
                    assert_eq!(run(&daat, q, &r).0, want.0, "{q:?}");
                }
            }
        }
        // Stop words match nothing under english_stop, everything they
        // are in under english.
        assert_eq!(run(&oracle, &queries[4], &req(10, TotalMode::Exact)).1, 0);
        assert!(run(&oracle, &queries[5], &req(10, TotalMode::Exact)).1 > 100);
    }
}

#[test]
fn term_queries_are_not_analysed_and_prefixes_are_not_stemmed() {
    let tmp = tempfile::tempdir().unwrap();
    let (en, _, kw) = build(tmp.path(), None);
    let s = searcher(tmp.path(), ExecMode::Auto);
    let schema = s.schema().clone();
    // The index holds stems: the term "running" is not there, "run" is.
    assert!(ids_of(&s, &Query::term(en, "running")).is_empty());
    assert_eq!(ids_of(&s, &Query::term(en, "run")), ids_with(FAMILIES[0]));
    let parse = |field: FieldId, text: &str| {
        quarry::query::parser::parse(text, &schema, &ParserConfig::new(field, Operator::Or))
            .unwrap()
    };
    // Bare words are analysed by the field's analyzer.
    assert_eq!(ids_of(&s, &parse(en, "RUNNING")), ids_with(FAMILIES[0]));
    // Prefixes are lowercased (english lowercases) but not stemmed: they
    // match the indexed stems, so "ponies*" (stemmed it would be "poni*")
    // finds nothing, as the index holds "poni", while "PONI*" finds it.
    assert!(ids_of(&s, &parse(en, "ponies*")).is_empty());
    assert_eq!(ids_of(&s, &parse(en, "PONI*")), ids_with(FAMILIES[2]));
    assert_eq!(ids_of(&s, &parse(en, "connect*")), ids_with(FAMILIES[1]));
    // The keyword field keeps case, in the index and in prefixes.
    let upper: Vec<i64> = (0..DOCS as i64)
        .filter(|n| n % 4 == 0 && n % 13 != 0)
        .collect();
    assert_eq!(ids_of(&s, &parse(kw, "New*")), upper);
    assert_eq!(
        ids_of(&s, &Query::matching(kw, "New York", Operator::And)),
        upper
    );
    assert!(ids_of(&s, &Query::matching(kw, "New", Operator::Or)).is_empty());
}

#[test]
fn positions_come_from_the_analyzer_with_gaps_for_stop_words() {
    let tmp = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let stop = schema
        .add_field("stop", FieldType::Text, FieldFlags::default())
        .unwrap();
    schema.set_analyzer(stop, Analyzer::EnglishStop).unwrap();
    let mut w = IndexWriter::create(tmp.path(), &schema, WriterConfig::default()).unwrap();
    let mut d = Document::new();
    // Two values: the second starts where the first ended, trailing stop
    // word included.
    d.add_str(stop, "The quick foxes of")
        .add_str(stop, "the fox runs");
    w.add_document(&d).unwrap();
    w.commit().unwrap();
    let snap = Snapshot::open(tmp.path()).unwrap();
    let r = &snap.segments()[0].reader;
    let positions_of = |term: &str| {
        let info = r.term(stop, term.as_bytes()).unwrap().unwrap();
        let list = r.postings(&info).unwrap();
        let (mut docs, mut tfs) = ([0u32; 128], [0u32; 128]);
        let n = list.decode_docs(0, &mut docs, &mut tfs).unwrap();
        if list.is_packed(0) {
            list.decode_tfs(0, &mut tfs).unwrap();
        }
        let mut got = Vec::new();
        r.positions(&info)
            .unwrap()
            .unwrap()
            .read(&mut Default::default(), 0, 0, &tfs[..n], &mut got)
            .unwrap();
        got
    };
    // the(0) quick(1) foxes(2) of(3) | the(4) fox(5) runs(6)
    assert_eq!(positions_of("quick"), [1]);
    assert_eq!(positions_of("fox"), [2, 5]);
    assert_eq!(positions_of("run"), [6]);
    assert!(r.term(stop, b"the").unwrap().is_none());
    // The field's length counts the tokens kept.
    assert_eq!(r.total_tokens(stop), 4);
    let report = quarry::check::check_index(tmp.path()).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

/// Phrases are analysed like the field: inflected forms match, and a
/// stop word in the phrase stands for one position, as in documents.
#[test]
fn phrases_are_analysed_by_the_field_and_keep_stop_word_gaps() {
    let tmp = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let (id, en) = common::add_id_and_body(&mut schema, false);
    schema.set_analyzer(en, Analyzer::English).unwrap();
    let stop = schema
        .add_field("stop", FieldType::Text, FieldFlags::default())
        .unwrap();
    schema.set_analyzer(stop, Analyzer::EnglishStop).unwrap();
    let mut w = IndexWriter::create(tmp.path(), &schema, WriterConfig::default()).unwrap();
    let texts = [
        "the dog runs home",   // 0
        "running dogs bark",   // 1
        "dogs and the runner", // 2
        "quick a fox",         // 3: quick _ fox
        "quick fox",           // 4: quick fox
        "quick of the fox",    // 5: quick _ _ fox
    ];
    for (n, t) in texts.iter().enumerate() {
        let mut d = Document::new();
        d.add_i64(id, n as i64).add_str(en, t).add_str(stop, t);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    let phrase = |field, text: &str, slop| Query::Phrase {
        field,
        text: text.into(),
        slop,
    };
    for exec in [ExecMode::Exhaustive, ExecMode::Daat, ExecMode::Auto] {
        let s = searcher(tmp.path(), exec);
        // "run dog": documents 1 ("running dogs"); 0 has "dog runs".
        assert_eq!(ids_of(&s, &phrase(en, "Running Dog", 0)), [1], "{exec:?}");
        assert_eq!(
            ids_of(&s, &phrase(en, "running dog", 2)),
            [0, 1],
            "{exec:?}"
        );
        // One stop word between: quick _ fox.
        assert_eq!(
            ids_of(&s, &phrase(stop, "quick the fox", 0)),
            [3],
            "{exec:?}"
        );
        assert_eq!(ids_of(&s, &phrase(stop, "quick fox", 0)), [4], "{exec:?}");
        assert_eq!(
            ids_of(&s, &phrase(stop, "quick and of fox", 0)),
            [5],
            "{exec:?}"
        );
    }
}

#[test]
fn the_cli_takes_the_analyzer_from_the_schema_and_searches_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = tmp.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"fields":[{"name":"id","type":"i64","stored":true,"indexed":true},
            {"name":"body","type":"text","analyzer":"english"}]}"#,
    )
    .unwrap();
    let docs = tmp.path().join("docs.jsonl");
    std::fs::write(
        &docs,
        "{\"id\":1,\"body\":\"she runs daily\"}\n{\"id\":2,\"body\":\"a quiet day\"}\n",
    )
    .unwrap();
    let idx = tmp.path().join("idx");
    let bin = env!("CARGO_BIN_EXE_quarry");
    let index = |dir: &Path| {
        std::process::Command::new(bin)
            .arg("index")
            .arg(dir)
            .arg("--input")
            .arg(&docs)
            .arg("--schema")
            .arg(&schema)
            .output()
            .unwrap()
    };
    let out = index(&idx);
    assert!(out.status.success(), "{out:?}");
    let search = |q: &str| {
        let out = std::process::Command::new(bin)
            .arg("search")
            .arg(&idx)
            .args([q, "--id-field", "id", "--format", "tsv"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let running = search("running");
    assert!(
        running.lines().nth(1).unwrap().contains("\t1\t"),
        "{running}"
    );
    assert!(search("days").lines().nth(1).unwrap().contains("\t2\t"));
    // An unknown analyzer in the schema is refused, naming it.
    std::fs::write(
        &schema,
        r#"{"fields":[{"name":"body","type":"text","analyzer":"englsh"}]}"#,
    )
    .unwrap();
    let out = index(&tmp.path().join("other"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown analyzer \"englsh\""), "{err}");
}
