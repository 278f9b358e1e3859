//! Golden index files, one set per format version under `tests/golden/`.
//! A build must keep reading every set and answering its queries with the
//! recorded hits; for the version it writes, writing the same documents
//! must also produce the same bytes (the writer is deterministic).
//!
//! Version 1 (read only now, never regenerated: they are the proof that
//! version-1 indexes stay readable): `v1/` (the small index),
//! `v1-blocks/` (an index large enough for packed blocks, skip data at
//! both levels, capped impacts, PFOR exceptions, every ord width up to 16
//! bits, several stored blocks and tombstones; the test asserts these are
//! present), `v1-ord32/` (32-bit ords), `v1-damaged/` (single files of the
//! v1 index, each with one damage, that must give `Corrupt` or
//! `UnsupportedVersion` naming the file).
//!
//! Version 2 (read only now, like version 1): `v2/` (the small index
//! again: its dictionaries have several front-coded blocks per field, its
//! body has positions), `v2-mixed/` (the v1 index appended to, deleted
//! from and committed by a version-2 build: v1 and v2 segments side by
//! side), `v2-damaged/` (the damages over `v2/`).
//!
//! Version 3 (manifests name each text field's analyzer; read only now):
//! `v3/` (the small index again, every text field `default`),
//! `v3-analyzers/` (one text field per analyzer, and queries that only
//! match as each analyzes), `v3-damaged/` (the damages over `v3/`, and an
//! analyzer name this build does not know).
//!
//! Version 4 (positions in packed runs): `v4/`, `v4-analyzers/` and
//! `v4-damaged/` as in version 3, and `v4-positions/` (long documents
//! whose positions fill runs of 128 gaps, with exceptions, over several
//! posting blocks, and the phrase queries that read them). Its segment
//! was rebuilt when the writer began choosing which runs of a long impact
//! frontier to merge by their keys under the segment's average length
//! instead of evenly: the layout and its meaning did not change, so v4
//! readers read both alike; `v1-blocks/` keeps evenly merged impacts.
//!
//! Version 5 (dense posting lists end with presence bitmaps): `v5/`,
//! `v5-analyzers/`, `v5-damaged/` and `v5-positions/` as in version 4;
//! only `v5-positions/` has lists dense enough for a bitmap, and its test
//! asserts they are there. The version-4 sets are read only now: a
//! version-4 segment has no bitmaps, and its totals are counted as
//! before.
//!
//! `QUARRY_UPDATE_GOLDEN=1 cargo test --test golden` rewrites the sets of
//! the version this build writes, which is only right together with a
//! format change of that version (a new version keeps its own golden sets
//! beside these).

use std::path::{Path, PathBuf};

use quarry::*;

mod common;

fn golden(set: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(set)
}

fn golden_dir() -> PathBuf {
    golden("v1")
}

/// How a golden set is checked: a set of an older version is only read;
/// one of the version this build writes is also rebuilt byte for byte
/// (and regenerated under `QUARRY_UPDATE_GOLDEN=1`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Set {
    Frozen,
    Current,
}

const TEXTS: &[&str] = &[
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    "The family of Dashwood had long been settled in Sussex.",
    "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy disposition.",
    "No one who had ever seen Catherine Morland in her infancy would have supposed her born to be an heroine.",
    "Sir Walter Elliot, of Kellynch Hall, in Somersetshire, was a man who, for his own amusement, never took up any book but the Baronetage.",
    "About thirty years ago Miss Maria Ward, of Huntingdon, with only seven thousand pounds, had the good luck to captivate Sir Thomas Bertram.",
];

fn build(dir: &Path) {
    let mut schema = Schema::new();
    let (id, body) = common::add_id_and_body(&mut schema, true);
    let year = schema
        .add_field(
            "year",
            FieldType::I64,
            FieldFlags {
                stored: false,
                indexed: false,
                sortable: true,
            },
        )
        .unwrap();
    let cat = schema
        .add_field(
            "category",
            FieldType::String,
            FieldFlags {
                stored: true,
                indexed: true,
                sortable: true,
            },
        )
        .unwrap();
    let price = schema
        .add_field(
            "price",
            FieldType::F64,
            FieldFlags {
                stored: true,
                indexed: false,
                sortable: true,
            },
        )
        .unwrap();
    let config = WriterConfig {
        max_docs_per_segment: Some(50),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    for round in 0..40 {
        for (i, t) in TEXTS.iter().enumerate() {
            let n = (round * TEXTS.len() + i) as i64;
            let mut d = Document::new();
            d.add_i64(id, n)
                .add_str(body, t)
                .add_i64(year, 1811 + (n % 7));
            if n % 3 != 0 {
                d.add_str(cat, ["novel", "letters", "fragment"][(n % 3) as usize]);
            }
            d.add_f64(price, n as f64 * 0.25);
            w.add_document(&d).unwrap();
        }
        if round == 20 {
            w.commit().unwrap();
        }
    }
    w.delete_term(id, &Value::I64(7)).unwrap();
    w.delete_term(cat, &Value::Str("fragment".into())).unwrap();
    w.commit().unwrap();
    w.merge(3).unwrap();
    // One more commit, so the files only the pre-merge commit used go away.
    w.commit().unwrap();
}

fn results(dir: &Path) -> String {
    let s = Searcher::open(dir).unwrap();
    let schema = s.schema().clone();
    let body = schema.field("body").unwrap();
    let mut out = String::new();
    for (q, op) in [
        ("man good", Operator::Or),
        ("man good", Operator::And),
        ("sir walter elliot", Operator::Or),
        ("heroine", Operator::Or),
    ] {
        let hits = s
            .search(&Query::matching(body, q, op), &SearchRequest::top(5))
            .unwrap();
        out += &format!("{q} {op:?} total={}\n", hits.total_hits);
        for h in hits.hits {
            let stored = s.stored(h.doc).unwrap();
            out += &format!(
                "  doc={} score={:08x} stored={:?}\n",
                h.doc,
                h.score.to_bits(),
                stored
            );
        }
    }
    let mut spec = SortSpec::new();
    spec.push(SortKey::Field(schema.field("category").unwrap()), false);
    spec.push(SortKey::Field(schema.field("price").unwrap()), true);
    let hits = s
        .search(
            &Query::matching(body, "a", Operator::Or),
            &SearchRequest {
                offset: 3,
                limit: 4,
                sort: Some(spec),
                total: quarry::TotalMode::Exact,
            },
        )
        .unwrap();
    out += &format!("sorted total={}\n", hits.total_hits);
    for h in hits.hits {
        out += &format!("  doc={} values={:?}\n", h.doc, h.sort_values);
    }
    out
}

fn index_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "LOCK" && e.file_name() != "expected.txt")
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn golden_v1_index_reads_with_the_recorded_results() {
    golden_round_trip(&golden_dir(), Set::Frozen, build, results);
    let r = quarry::check::check_index(golden_dir()).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.structures.segment_versions, [3]);
}

#[test]
fn a_phrase_over_an_index_without_positions_names_the_field() {
    // Version 1 wrote no positions, and a version-2 build appending to its
    // index keeps its schema: a phrase is an error on every path.
    for exec in [ExecMode::Auto, ExecMode::Daat, ExecMode::Exhaustive] {
        let options = SearchOptions {
            exec,
            ..SearchOptions::default()
        };
        let s = Searcher::open(golden("v2-mixed"))
            .unwrap()
            .with_options(options);
        let q = Query::Phrase {
            field: s.schema().field("body").unwrap(),
            text: "a b".into(),
            slop: 0,
        };
        match s.search(&q, &SearchRequest::top(5)) {
            Err(Error::Unsupported(m)) => assert!(
                m.contains("field \"body\"") && m.contains("positions"),
                "{m}"
            ),
            other => panic!("{exec:?}: {other:?}"),
        }
    }
}

#[test]
fn golden_v2_index_reads_with_the_recorded_results() {
    let dir = golden("v2");
    golden_round_trip(&dir, Set::Frozen, build, results);
    let r = quarry::check::check_index(&dir).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.structures.segment_versions, [0, 3]);
    // Each of the three segments has several dictionary blocks for the
    // body and id fields.
    assert!(r.structures.term_blocks >= 3 * 6, "{:?}", r.structures);
    // The body's terms have positions.
    assert!(r.structures.position_lists > 0, "{:?}", r.structures);
    // The same documents give the same answers in both versions.
    assert_eq!(
        std::fs::read_to_string(dir.join("expected.txt")).unwrap(),
        std::fs::read_to_string(golden_dir().join("expected.txt")).unwrap()
    );
}

/// The small index of version 3 on, as `set` (its segments of format
/// `version`).
fn small_index_since_v3(name: &str, set: Set, version: usize) {
    let dir = golden(name);
    golden_round_trip(&dir, set, build, results);
    let r = quarry::check::check_index(&dir).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let mut versions = vec![0; version];
    versions[version - 1] = 3;
    assert_eq!(r.structures.segment_versions, versions);
    assert!(r.structures.position_lists > 0, "{:?}", r.structures);
    // The same documents give the same answers in every version: the
    // default analyzer is the analysis versions 1 and 2 knew.
    assert_eq!(
        std::fs::read_to_string(dir.join("expected.txt")).unwrap(),
        std::fs::read_to_string(golden_dir().join("expected.txt")).unwrap()
    );
    let s = Searcher::open(&dir).unwrap();
    assert!(
        s.schema()
            .fields()
            .iter()
            .all(|f| f.analyzer == Analyzer::Default)
    );
}

#[test]
fn golden_v3_index_reads_with_the_recorded_results() {
    small_index_since_v3("v3", Set::Frozen, 3);
}

#[test]
fn golden_v4_index_reads_with_the_recorded_results() {
    small_index_since_v3("v4", Set::Frozen, 4);
}

#[test]
fn golden_v5_index_reads_and_rebuilds_identically() {
    small_index_since_v3("v5", Set::Current, 5);
}

#[test]
fn golden_older_versions_are_default_analyzed() {
    for set in ["v1", "v2", "v2-mixed", "v1-blocks"] {
        let s = Searcher::open(golden(set)).unwrap();
        assert!(
            s.schema()
                .fields()
                .iter()
                .all(|f| f.analyzer == Analyzer::Default),
            "{set}"
        );
    }
}

// ---------------------------------------------------------------------------
// v3-analyzers: one text field per analyzer.
// ---------------------------------------------------------------------------

/// The analyzers' fields, each holding the same texts.
const ANALYZED: &[(&str, Analyzer)] = &[
    ("plain", Analyzer::Default),
    ("english", Analyzer::English),
    ("stop", Analyzer::EnglishStop),
    ("ws", Analyzer::Whitespace),
    ("kw", Analyzer::Keyword),
];

fn build_analyzers(dir: &Path) {
    let mut schema = Schema::new();
    let (id, _) = common::add_id_and_body(&mut schema, false);
    let fields: Vec<FieldId> = ANALYZED
        .iter()
        .map(|(name, a)| {
            let f = schema
                .add_field(name, FieldType::Text, FieldFlags::default())
                .unwrap();
            schema.set_analyzer(f, *a).unwrap();
            f
        })
        .collect();
    let mut w = IndexWriter::create(dir, &schema, WriterConfig::default()).unwrap();
    for (n, t) in TEXTS
        .iter()
        .chain(&["Running runs; the RUNNER ran.", "Sussex"])
        .enumerate()
    {
        let mut d = Document::new();
        d.add_i64(id, n as i64);
        for f in &fields {
            d.add_str(*f, t);
        }
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
}

fn analyzers_results(dir: &Path) -> String {
    let s = Searcher::open(dir).unwrap();
    let exact = SearchRequest {
        offset: 0,
        limit: 5,
        sort: None,
        total: TotalMode::Exact,
    };
    let mut out = String::new();
    for (name, _) in ANALYZED {
        let f = s.schema().field(name).unwrap();
        for q in ["run", "settled sussex", "the man", "Sussex", "Sussex."] {
            out += &pinned_hits(
                &s,
                &format!("{name}: {q}"),
                &Query::matching(f, q, Operator::Or),
                &exact,
            );
        }
        let parsed = quarry::query::parser::parse(
            "Run* Families",
            s.schema(),
            &ParserConfig::new(f, Operator::Or),
        )
        .unwrap();
        out += &pinned_hits(&s, &format!("{name}: parsed"), &parsed, &exact);
    }
    out
}

/// The analyzers' index, as `set`.
fn analyzers_index(name: &str, set: Set) {
    let dir = golden(name);
    golden_round_trip(&dir, set, build_analyzers, analyzers_results);
    let r = quarry::check::check_index(&dir).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let s = Searcher::open(&dir).unwrap();
    for (name, a) in ANALYZED {
        let f = s.schema().field(name).unwrap();
        assert_eq!(s.schema().def(f).analyzer, *a);
    }
    // Each analyzer answers as it analyzes: the stemmed fields find "run"
    // in "Running runs", the plain one does not; without stop words "the"
    // matches every text; the whitespace field keeps the period of
    // "Sussex.", the keyword field matches only a whole value.
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    for line in [
        "english: run total=1",
        "stop: run total=1",
        "plain: run total=0",
        "plain: the man total=5",
        "stop: the man total=2",
        "kw: Sussex total=1",
        "kw: settled sussex total=0",
        "plain: Sussex total=2",
        "ws: Sussex total=1",
        "ws: Sussex. total=1",
    ] {
        assert!(expected.contains(line), "{line}");
    }
}

#[test]
fn golden_v3_analyzers_pin_each_analyzer() {
    analyzers_index("v3-analyzers", Set::Frozen);
}

#[test]
fn golden_v4_analyzers_pin_each_analyzer() {
    analyzers_index("v4-analyzers", Set::Frozen);
}

#[test]
fn golden_v5_analyzers_pin_each_analyzer() {
    analyzers_index("v5-analyzers", Set::Current);
}

// ---------------------------------------------------------------------------
// v2-mixed: a v1 index that this build appended to.
// ---------------------------------------------------------------------------

/// Words sharing long prefixes (front coding across many blocks) and the
/// v1 index's words, in documents appended to a copy of the v1 index,
/// with deletions in its v1 segments and the new one.
fn build_mixed(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in index_files(&golden_dir()) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let mut w = IndexWriter::open(dir, WriterConfig::default()).unwrap();
    let schema = w.schema().clone();
    let (id, body) = (schema.field("id").unwrap(), schema.field("body").unwrap());
    for n in 0..120i64 {
        let mut d = Document::new();
        let text = format!(
            "{} internationalisation{:03} internationalization{} man",
            TEXTS[n as usize % TEXTS.len()],
            n * 7 % 100,
            n % 3
        );
        d.add_i64(id, 1000 + n).add_str(body, &text);
        w.add_document(&d).unwrap();
    }
    w.delete_term(id, &Value::I64(10)).unwrap();
    w.delete_term(id, &Value::I64(1005)).unwrap();
    w.commit().unwrap();
}

fn mixed_results(dir: &Path) -> String {
    let s = Searcher::open(dir).unwrap();
    let body = s.schema().field("body").unwrap();
    let exact = SearchRequest {
        offset: 0,
        limit: 6,
        sort: None,
        total: TotalMode::Exact,
    };
    let mut out = results(dir);
    for (q, op) in [
        ("internationalisation042", Operator::Or),
        ("internationalization1 man", Operator::And),
        ("emma internationalisation007 heroine", Operator::Or),
    ] {
        out += &pinned_hits(&s, q, &Query::matching(body, q, op), &exact);
    }
    out
}

#[test]
fn golden_v2_mixed_reads_v1_and_v2_segments_side_by_side() {
    let dir = golden("v2-mixed");
    golden_round_trip(&dir, Set::Frozen, build_mixed, mixed_results);
    let r = quarry::check::check_index(&dir).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.structures.segment_versions, [3, 1]);

    // Merging the v1 and v2 segments writes the current version, and the
    // same documents still match.
    let matching = |d: &Path| {
        let s = Searcher::open(d).unwrap();
        let body = s.schema().field("body").unwrap();
        ["man good", "internationalisation042 man", "sir"]
            .iter()
            .map(|q| {
                let req = SearchRequest {
                    offset: 0,
                    limit: 1000,
                    sort: None,
                    total: TotalMode::Exact,
                };
                let hits = s
                    .search(&Query::matching(body, q, Operator::Or), &req)
                    .unwrap();
                let mut ids: Vec<String> = hits
                    .hits
                    .iter()
                    .map(|h| format!("{:?}", s.stored(h.doc).unwrap()))
                    .collect();
                ids.sort();
                (hits.total_hits, ids)
            })
            .collect::<Vec<_>>()
    };
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes) in index_files(&dir) {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
    }
    let before = matching(tmp.path());
    let mut w = IndexWriter::open(tmp.path(), WriterConfig::default()).unwrap();
    w.merge(1).unwrap();
    drop(w);
    assert_eq!(matching(tmp.path()), before);
    let r = quarry::check::check_index(tmp.path()).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    // The merged segment is of the version this build writes.
    let mut versions = vec![0; quarry::format::FORMAT_VERSION as usize];
    versions[quarry::format::FORMAT_VERSION as usize - 1] = 1;
    assert_eq!(r.structures.segment_versions, versions);
}

// ---------------------------------------------------------------------------
// v1-blocks: the structures the small v1 index never reaches.
// ---------------------------------------------------------------------------

fn blocks_dir() -> PathBuf {
    golden("v1-blocks")
}

/// A 5000-document segment and a 300-document one, with deletions. "common"
/// is in every document of the first (39 packed blocks, two second-level
/// entries) with frequencies that vary with the document length (long
/// impact frontiers, capped) and a rare large one (frequency exceptions);
/// "gappy" leaves a gap of 1000 documents inside a block (a doc-gap
/// exception); five sortable fields have 1, 3, 14, 200 and 5000+ values
/// (ord widths 1, 2, 4, 8 and 16); ids are stored (several stored blocks).
fn build_blocks(dir: &Path) {
    let mut schema = Schema::new();
    let (id, body) = common::add_id_and_body(&mut schema, false);
    let sortable = FieldFlags {
        stored: false,
        indexed: false,
        sortable: true,
    };
    let w1 = schema.add_field("w1", FieldType::String, sortable).unwrap();
    let w2 = schema.add_field("w2", FieldType::I64, sortable).unwrap();
    let w4 = schema.add_field("w4", FieldType::I64, sortable).unwrap();
    let w8 = schema.add_field("w8", FieldType::I64, sortable).unwrap();
    let w16 = schema.add_field("w16", FieldType::F64, sortable).unwrap();
    let config = WriterConfig {
        max_docs_per_segment: Some(5000),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    const WORDS: [&str; 12] = [
        "red", "green", "blue", "cyan", "teal", "gold", "grey", "pink", "plum", "rust", "sand",
        "snow",
    ];
    for n in 0..5300u64 {
        let mut text = String::new();
        let tf = if n % 97 == 0 { 40 } else { 1 + (n * 7) % 5 };
        for _ in 0..tf {
            text += "common ";
        }
        // Zipf-like: word k in every (k + 1)-th document.
        for (k, word) in WORDS.iter().enumerate() {
            if n % (k as u64 + 1) == 0 {
                text += word;
                text += " ";
            }
        }
        for _ in 0..n % 11 {
            text += "pad ";
        }
        if n % 2 == 0 && !(1000..2000).contains(&n) {
            text += "gappy";
        }
        let mut d = Document::new();
        d.add_i64(id, n as i64)
            .add_str(body, &text)
            .add_str(w1, "only")
            .add_i64(w2, (n % 3) as i64)
            .add_i64(w4, (n % 14) as i64 - 7)
            .add_i64(w8, (n * 31 % 200) as i64)
            .add_f64(w16, n as f64 * 0.25 - 100.0);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    for n in (3..5300).step_by(17) {
        w.delete_term(id, &Value::I64(n)).unwrap();
    }
    w.commit().unwrap();
}

/// One line per hit, each with its score bits and its stored values (or
/// its sort values for sorted requests).
fn pinned_hits(s: &Searcher, label: &str, q: &Query, req: &SearchRequest) -> String {
    let hits = s.search(q, req).unwrap();
    let mut out = format!("{label} total={}\n", hits.total_hits);
    for h in hits.hits {
        out += &format!(
            "  doc={} score={:08x} stored={:?} values={:?}\n",
            h.doc,
            h.score.to_bits(),
            s.stored(h.doc).unwrap(),
            h.sort_values
        );
    }
    out
}

fn blocks_results(dir: &Path) -> String {
    let s = Searcher::open(dir).unwrap();
    let schema = s.schema().clone();
    let body = schema.field("body").unwrap();
    let exact = |limit| SearchRequest {
        offset: 0,
        limit,
        sort: None,
        total: TotalMode::Exact,
    };
    let mut out = String::new();
    for (q, op) in [
        ("common", Operator::Or),
        ("gappy", Operator::Or),
        ("common snow", Operator::And),
        ("rust gold plum", Operator::Or),
        ("gappy teal", Operator::And),
    ] {
        out += &pinned_hits(&s, q, &Query::matching(body, q, op), &exact(8));
    }
    let mut spec = SortSpec::new();
    spec.push(SortKey::Field(schema.field("w4").unwrap()), true);
    spec.push(SortKey::Field(schema.field("w16").unwrap()), false);
    let req = SearchRequest {
        offset: 5,
        limit: 6,
        sort: Some(spec),
        total: TotalMode::Exact,
    };
    out += &pinned_hits(
        &s,
        "sorted",
        &Query::matching(body, "sand", Operator::Or),
        &req,
    );
    out
}

/// Checks the committed files answer with the recorded results; for a set
/// of the current version, regenerates it from `build` when asked to and
/// checks that a fresh build writes the same bytes.
fn golden_round_trip(golden: &Path, set: Set, build: fn(&Path), results: fn(&Path) -> String) {
    if set == Set::Current && std::env::var_os("QUARRY_UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(golden);
        build(golden);
        let _ = std::fs::remove_file(golden.join("LOCK"));
        std::fs::write(golden.join("expected.txt"), results(golden)).unwrap();
    }
    // Read a copy, so the committed files are never touched.
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes) in index_files(golden) {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
    }
    let expected = std::fs::read_to_string(golden.join("expected.txt")).unwrap();
    assert_eq!(results(tmp.path()), expected);
    if set == Set::Frozen {
        return;
    }
    let rebuilt = tempfile::tempdir().unwrap();
    build(rebuilt.path());
    let a = index_files(golden);
    let b = index_files(rebuilt.path());
    assert_eq!(
        a.iter().map(|x| &x.0).collect::<Vec<_>>(),
        b.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    for ((na, ba), (_, bb)) in a.iter().zip(&b) {
        assert!(
            ba == bb,
            "{na} differs from a fresh build: the writer is not deterministic or the format changed"
        );
    }
}

#[test]
fn golden_v1_blocks_pin_packed_blocks_skips_impacts_and_ord_widths() {
    let golden = blocks_dir();
    golden_round_trip(&golden, Set::Frozen, build_blocks, blocks_results);
    let r = quarry::check::check_index(&golden).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!((r.segments, r.documents), (2, 5300));
    let st = &r.structures;
    assert!(st.packed_blocks >= 39, "{st:?}");
    assert!(
        st.multi_l2_lists >= 1 && st.l2_entries > st.skip_lists,
        "{st:?}"
    );
    assert!(st.doc_exceptions >= 1 && st.tf_exceptions >= 1, "{st:?}");
    assert!(st.full_impact_lists >= 1, "{st:?}");
    assert!(st.tail_blocks >= 1 && st.stored_blocks >= 3, "{st:?}");
    assert_eq!(st.ord_widths, [1, 2, 4, 8, 16]);
    assert!(st.tombstone_files >= 1 && r.deleted > 0);
}

// ---------------------------------------------------------------------------
// v1-damaged: single damaged files laid over the v1 golden index.
// ---------------------------------------------------------------------------

fn ord32_dir() -> PathBuf {
    golden("v1-ord32")
}

/// One segment of 65,600 documents, each with the word "x" and one of as
/// many distinct values of a sortable i64 field: the widest ord width (32 bits,
/// past 65,536 values), which `v1-blocks` cannot hold at its size. Values
/// are a permutation, so the ords are not the document order.
fn build_ord32(dir: &Path) {
    let mut schema = Schema::new();
    let body = schema
        .add_field(
            "body",
            FieldType::Text,
            FieldFlags {
                stored: false,
                indexed: true,
                sortable: false,
            },
        )
        .unwrap();
    let v = schema
        .add_field(
            "v",
            FieldType::I64,
            FieldFlags {
                stored: false,
                indexed: false,
                sortable: true,
            },
        )
        .unwrap();
    let config = WriterConfig {
        max_docs_per_segment: None,
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    const N: i64 = 65_600;
    for n in 0..N {
        let mut d = Document::new();
        // 7919 is prime to N: a permutation of 0..N, spread out.
        d.add_str(body, "x").add_i64(v, (n * 7919) % N - 30_000);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
}

fn ord32_results(dir: &Path) -> String {
    let s = Searcher::open(dir).unwrap();
    let v = s.schema().field("v").unwrap();
    let x = Query::term(s.schema().field("body").unwrap(), "x");
    let mut out = String::new();
    for (desc, offset) in [(true, 0), (false, 0), (false, 65_590), (true, 32_800)] {
        let mut spec = SortSpec::new();
        spec.push(SortKey::Field(v), desc);
        let req = SearchRequest {
            offset,
            limit: 5,
            sort: Some(spec),
            total: TotalMode::Exact,
        };
        out += &pinned_hits(&s, &format!("v desc={desc} offset={offset}"), &x, &req);
    }
    out
}

#[test]
fn golden_v1_ord32_pins_the_widest_ord_width() {
    let golden = ord32_dir();
    golden_round_trip(&golden, Set::Frozen, build_ord32, ord32_results);
    let r = quarry::check::check_index(&golden).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.structures.ord_widths, [32]);
}

/// Each case: its directory name (its expected outcome first), the golden
/// file it replaces, and how it is damaged. The version stamps are one past
/// the version written (`FORMAT_VERSION + 1`, and 9 for tombstones). The
/// `v1-damaged` set was made by the same cases with version 1 current.
#[allow(clippy::type_complexity)]
const DAMAGES: &[(&str, &str, fn(&mut Vec<u8>))] = &[
    (
        "corrupt-segment-checksum",
        "seg-0000000000000001.qsg",
        |b| b[100] ^= 0x01,
    ),
    (
        "corrupt-segment-truncated",
        "seg-0000000000000001.qsg",
        |b| b.truncate(b.len() / 2),
    ),
    ("corrupt-segment-magic", "seg-0000000000000007.qsg", |b| {
        b[0] = b'X';
        common::fix_crc(b)
    }),
    (
        "corrupt-segment-directory",
        "seg-0000000000000007.qsg",
        |b| {
            // The directory offset points past the file.
            let at = b.len() - 12;
            b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
            common::fix_crc(b)
        },
    ),
    (
        "corrupt-manifest-checksum",
        "manifest-0000000000000006.qmf",
        |b| b[20] ^= 0x80,
    ),
    (
        "corrupt-tombstones-count",
        "seg-0000000000000002-0000000000000003.qdl",
        |b| {
            // The deleted count disagrees with the bits.
            b[12] ^= 0x01;
            common::fix_crc(b)
        },
    ),
    (
        "unsupported-segment-version",
        "seg-0000000000000002.qsg",
        |b| {
            b[4] = quarry::format::FORMAT_VERSION as u8 + 1;
            common::fix_crc(b)
        },
    ),
    (
        "unsupported-manifest-version",
        "manifest-0000000000000006.qmf",
        |b| {
            b[4] = quarry::format::FORMAT_VERSION as u8 + 1;
            common::fix_crc(b)
        },
    ),
    (
        "unsupported-tombstones-version",
        "seg-0000000000000001-0000000000000003.qdl",
        |b| {
            b[4] = 9;
            common::fix_crc(b)
        },
    ),
    (
        "corrupt-manifest-analyzer",
        "manifest-0000000000000006.qmf",
        |b| {
            // The body's analyzer renamed to a name no build knows.
            let at = b
                .windows(8)
                .position(|w| w == b"\x07default")
                .expect("the body's analyzer");
            b[at + 1..at + 8].copy_from_slice(b"klingon");
            common::fix_crc(b)
        },
    ),
];

/// The cases of [`DAMAGES`] made before version 3 (the frozen sets).
const DAMAGES_BEFORE_V3: usize = 9;

/// What a damaged case must do.
enum Outcome {
    /// `Corrupt` naming the file.
    Corrupt,
    /// `UnsupportedVersion` naming the file.
    Unsupported,
    /// Open and answer with `expected.txt` of the set it lies over.
    Reads,
}

/// Lays each damaged file of `damaged` over a copy of the golden set
/// `base` and checks its outcome: by its name's first word, unless
/// `outcome` says otherwise.
fn damaged_files_give_their_errors(
    base: &Path,
    damaged: &Path,
    cases: usize,
    outcome: impl Fn(&str) -> Option<Outcome>,
) {
    let mut seen = 0;
    for e in std::fs::read_dir(damaged).unwrap() {
        let case = e.unwrap().path();
        let tmp = tempfile::tempdir().unwrap();
        for (name, bytes) in index_files(base) {
            std::fs::write(tmp.path().join(name), bytes).unwrap();
        }
        let mut files = Vec::new();
        for f in std::fs::read_dir(&case).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), tmp.path().join(f.file_name())).unwrap();
            files.push(tmp.path().join(f.file_name()));
        }
        assert_eq!(files.len(), 1, "{}", case.display());
        let name = case.file_name().unwrap().to_str().unwrap();
        let expect = outcome(name).unwrap_or(match name.split('-').next() {
            Some("corrupt") => Outcome::Corrupt,
            Some("unsupported") => Outcome::Unsupported,
            _ => panic!("{name}: no outcome"),
        });
        seen += 1;
        if let Outcome::Reads = expect {
            let expected = std::fs::read_to_string(base.join("expected.txt")).unwrap();
            assert_eq!(results(tmp.path()), expected, "{name}");
            continue;
        }
        let err = Searcher::open(tmp.path()).expect_err(name);
        let path = match (&err, expect) {
            (Error::Corrupt { path, .. }, Outcome::Corrupt) => path,
            (Error::UnsupportedVersion { path, .. }, Outcome::Unsupported) => path,
            _ => panic!("{name}: unexpected error {err}"),
        };
        assert_eq!(path, &files[0], "{name}: {err}");
        let r = quarry::check::check_index(tmp.path()).unwrap();
        assert!(
            r.problems.iter().any(|p| p.file == files[0]),
            "{name}: {:?}",
            r.problems
        );
    }
    assert_eq!(seen, cases);
}

#[test]
fn golden_v1_damaged_files_give_their_errors_naming_the_file() {
    // Two cases stamp version 2 on version-1 files, which was newer than
    // any version when they were made. This build reads version 2: the
    // segment's version-1 dictionary is then no version-2 dictionary, and
    // the manifest's layout is the same in both versions, so it reads.
    damaged_files_give_their_errors(
        &golden_dir(),
        &golden("v1-damaged"),
        DAMAGES_BEFORE_V3,
        |name| match name {
            "unsupported-segment-version" => Some(Outcome::Corrupt),
            "unsupported-manifest-version" => Some(Outcome::Reads),
            _ => None,
        },
    );
}

#[test]
fn golden_v2_damaged_files_give_their_errors_naming_the_file() {
    // Two cases stamp version 3 on version-2 files, which was newer than
    // any version when they were made. This build reads version 3: the
    // segment layout is the same in both, so the segment reads; a
    // version-3 manifest names its text fields' analyzers, which the
    // version-2 bytes do not, so the manifest is corrupt.
    damaged_files_give_their_errors(
        &golden("v2"),
        &golden("v2-damaged"),
        DAMAGES_BEFORE_V3,
        |name| match name {
            "unsupported-segment-version" => Some(Outcome::Reads),
            "unsupported-manifest-version" => Some(Outcome::Corrupt),
            _ => None,
        },
    );
}

#[test]
fn golden_v3_damaged_files_give_their_errors_naming_the_file() {
    // Two cases stamp version 4 on version-3 files, which was newer than
    // any version when they were made. This build reads version 4: the
    // manifest's layout is the same in both, and so is the segment's but
    // for its positions, which none of the set's queries reads.
    damaged_files_give_their_errors(
        &golden("v3"),
        &golden("v3-damaged"),
        DAMAGES.len(),
        |name| match name {
            "unsupported-segment-version" | "unsupported-manifest-version" => Some(Outcome::Reads),
            _ => None,
        },
    );
}

#[test]
fn golden_v4_damaged_files_give_their_errors_naming_the_file() {
    // Two cases stamp version 5 on version-4 files, which was newer than
    // any version when they were made. This build reads version 5, whose
    // layout is version 4's with presence bitmaps after dense lists' blocks;
    // the set's lists are all short, so both read.
    damaged_files_give_their_errors(
        &golden("v4"),
        &golden("v4-damaged"),
        DAMAGES.len(),
        |name| match name {
            "unsupported-segment-version" | "unsupported-manifest-version" => Some(Outcome::Reads),
            _ => None,
        },
    );
}

#[test]
fn golden_v5_damaged_files_give_their_errors_naming_the_file() {
    let root = golden("v5-damaged");
    if std::env::var_os("QUARRY_UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&root);
        for (case, file, damage) in DAMAGES {
            let mut b = std::fs::read(golden("v5").join(file)).unwrap();
            damage(&mut b);
            std::fs::create_dir_all(root.join(case)).unwrap();
            std::fs::write(root.join(case).join(file), b).unwrap();
        }
    }
    damaged_files_give_their_errors(&golden("v5"), &root, DAMAGES.len(), |_| None);
}

// ---------------------------------------------------------------------------
// v4-positions: positions that fill packed runs.
// ---------------------------------------------------------------------------

/// 300 documents of 40 to 1,200 tokens over a few words: "a" is in most
/// places (long runs of small gaps), "b" and "c" in bursts, and "z" once
/// in a document at a position that grows with it (first positions past
/// the rest's width, so exceptions), each document deterministic in its
/// number.
fn build_positions(dir: &Path) {
    let mut schema = Schema::new();
    let (id, body) = common::add_id_and_body(&mut schema, false);
    let mut w = IndexWriter::create(dir, &schema, WriterConfig::default()).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for n in 0..300u64 {
        let len = 40 + (n * 37) % 1161;
        let mut text = String::new();
        for p in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let word = match x % 10 {
                _ if p == (n * n) % len => "z",
                0..=5 => "a",
                6 | 7 if (p / 50) % 3 == n % 3 => "b",
                6 | 7 => "c",
                8 => "b",
                _ => "d",
            };
            text += word;
            text += " ";
        }
        let mut d = Document::new();
        d.add_i64(id, n as i64);
        d.add_str(body, &text);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
}

fn positions_results(dir: &Path) -> String {
    let s = Searcher::open(dir).unwrap();
    let body = s.schema().field("body").unwrap();
    let mut out = String::new();
    for (text, slop) in [
        ("a b", 0),
        ("b a c", 0),
        ("a a a a", 0),
        ("z a", 0),
        ("a z b", 1),
        ("c b", 2),
        ("d z", 3),
    ] {
        let q = Query::Phrase {
            field: body,
            text: text.into(),
            slop,
        };
        for total in [TotalMode::Exact, TotalMode::LowerBound] {
            let req = SearchRequest::top(5).with_total(total);
            out += &pinned_hits(&s, &format!("\"{text}\"~{slop} {total:?}"), &q, &req);
        }
    }
    out
}

#[test]
fn golden_v4_positions_pin_packed_runs_and_phrases() {
    positions_index("v4-positions", Set::Frozen);
}

#[test]
fn golden_v5_positions_pin_packed_runs_phrases_and_presence() {
    let r = positions_index("v5-positions", Set::Current);
    // "a", "b", "c" and "d" are in most documents: their lists end with
    // presence bitmaps, which the check compared with their documents.
    assert!(r.structures.presence_lists >= 4, "{:?}", r.structures);
}

/// The positions index, as `set`; its check report.
fn positions_index(name: &str, set: Set) -> quarry::check::Report {
    let dir = golden(name);
    golden_round_trip(&dir, set, build_positions, positions_results);
    let r = quarry::check::check_index(&dir).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    // Several posting blocks per common term, so several runs of gaps
    // each; every phrase matches.
    let s = Searcher::open(&dir).unwrap();
    let seg = &s.snapshot().segments()[0].reader;
    let body = s.schema().field("body").unwrap();
    let a = seg.term(body, b"a").unwrap().unwrap();
    assert!(seg.postings(&a).unwrap().num_blocks() >= 2);
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    assert!(!expected.contains("total=0"), "{expected}");
    r
}
