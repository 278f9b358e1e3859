//! Golden index files of format version 1, committed under
//! `tests/golden/v1/`. A build must keep reading them and answering their
//! queries with the recorded hits, and writing the same documents must
//! produce the same bytes (the writer is deterministic).
//!
//! `QUARRY_UPDATE_GOLDEN=1 cargo test --test golden` rewrites them, which is
//! only right together with a format version bump.

use std::path::{Path, PathBuf};

use quarry::*;

mod common;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/v1")
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
fn golden_v1_index_reads_and_rebuilds_identically() {
    let golden = golden_dir();
    if std::env::var_os("QUARRY_UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&golden);
        build(&golden);
        let _ = std::fs::remove_file(golden.join("LOCK"));
        std::fs::write(golden.join("expected.txt"), results(&golden)).unwrap();
    }
    // Read a copy, so the committed files are never touched.
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes) in index_files(&golden) {
        std::fs::write(tmp.path().join(name), bytes).unwrap();
    }
    let expected = std::fs::read_to_string(golden.join("expected.txt")).unwrap();
    assert_eq!(results(tmp.path()), expected);
    let rebuilt = tempfile::tempdir().unwrap();
    build(rebuilt.path());
    let a = index_files(&golden);
    let b = index_files(rebuilt.path());
    assert_eq!(
        a.len(),
        b.len(),
        "{:?} vs {:?}",
        a.iter().map(|x| &x.0).collect::<Vec<_>>(),
        b.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        assert!(
            ba == bb,
            "{na} differs from a fresh build: the writer is not deterministic or the format changed"
        );
    }
}
