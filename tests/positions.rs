//! Token positions read back exactly: random documents (multi-valued
//! text, a field without positions), after a flush into several segments
//! and after a merge with deletions, in both read modes, through the
//! reader's positions API (`SegmentReader::positions`, then
//! `Positions::read` per block and posting).

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use quarry::format::postings::BLOCK_LEN;
use quarry::read::{ReadMode, Snapshot};
use quarry::*;

/// Per document id: per token, its positions (the model).
type Model = BTreeMap<i64, BTreeMap<String, Vec<u32>>>;

const WORDS: &[&str] = &["a", "b", "c", "dd", "ee", "fff", "g", "hh"];

fn model_of(docs: &[(i64, Vec<String>)]) -> Model {
    let mut m = Model::new();
    for (id, values) in docs {
        let doc = m.entry(*id).or_default();
        let mut at = 0u32;
        for v in values {
            for t in quarry::analysis::tokens(v) {
                doc.entry(t).or_default().push(at);
                at += 1;
            }
        }
    }
    m
}

/// What the index holds: per live document id, per body token, its
/// positions; and checks the field without positions has none.
fn read_back(dir: &Path, mode: ReadMode) -> Model {
    let snap = Snapshot::open_with(dir, mode).unwrap();
    let schema = snap.manifest().schema.clone();
    let (id, body, plain) = (
        schema.field("id").unwrap(),
        schema.field("body").unwrap(),
        schema.field("plain").unwrap(),
    );
    let mut out = Model::new();
    for seg in snap.segments() {
        let r = &seg.reader;
        let ids: Vec<i64> = (0..r.doc_count())
            .map(|d| {
                r.stored(d)
                    .unwrap()
                    .iter()
                    .find(|(f, _)| *f == id)
                    .and_then(|(_, v)| v.as_i64())
                    .unwrap()
            })
            .collect();
        for d in 0..r.doc_count() {
            if !seg.is_deleted(d) {
                out.entry(ids[d as usize]).or_default();
            }
        }
        let mut plain_terms = r.terms(plain);
        while let Some((_, info)) = plain_terms.advance().unwrap() {
            assert!(r.positions(&info).unwrap().is_none());
        }
        let mut terms = r.terms(body);
        let (mut docs, mut tfs) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        let mut got = Vec::new();
        while let Some((key, info)) = terms.advance().unwrap() {
            let key = String::from_utf8(key.to_vec()).unwrap();
            let list = r.postings(&info).unwrap();
            let positions = r.positions(&info).unwrap().expect("body has positions");
            let mut reader = quarry::format::positions::PositionsReader::default();
            // Blocks in reverse: no block's positions need an earlier one's.
            for b in (0..list.num_blocks()).rev() {
                let n = list.decode_docs(b, &mut docs, &mut tfs).unwrap();
                if list.is_packed(b) {
                    list.decode_tfs(b, &mut tfs).unwrap();
                }
                for i in (0..n).rev() {
                    positions
                        .read(&mut reader, b, i, &tfs[..n], &mut got)
                        .unwrap();
                    assert_eq!(got.len(), tfs[i] as usize);
                    if !seg.is_deleted(docs[i]) {
                        let doc = out.get_mut(&ids[docs[i] as usize]).unwrap();
                        assert!(doc.insert(key.clone(), got.clone()).is_none());
                    }
                }
            }
        }
    }
    out
}

fn docs_strategy() -> impl Strategy<Value = Vec<Vec<String>>> {
    let value = prop::collection::vec(prop::sample::select(WORDS), 0..40).prop_map(|w| w.join(" "));
    // Some documents long enough for a packed block of one term.
    let long = prop::collection::vec(value.clone(), 1..3);
    prop::collection::vec(long, 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn positions_read_back_exactly(values in docs_strategy(), seed in 0u64..1000) {
        let tmp = tempfile::tempdir().unwrap();
        let mut schema = Schema::new();
        let stored = FieldFlags { stored: true, indexed: true, sortable: false };
        let id = schema.add_field("id", FieldType::I64, stored).unwrap();
        let body = schema.add_field("body", FieldType::Text, FieldFlags::default()).unwrap();
        let plain = schema.add_field("plain", FieldType::Text, FieldFlags::default()).unwrap();
        schema.set_positions(plain, false).unwrap();
        let config = WriterConfig {
            max_docs_per_segment: Some(200),
            merge_factor: 0,
            ..Default::default()
        };
        let mut w = IndexWriter::create(tmp.path(), &schema, config).unwrap();
        // Every document holds "a" 130 times in one of its values, so the
        // list of "a" has packed blocks in the larger segments.
        let docs: Vec<(i64, Vec<String>)> = values
            .into_iter()
            .enumerate()
            .map(|(i, mut v)| {
                if i % 4 != 3 {
                    v.push("a ".repeat(130));
                }
                (i as i64, v)
            })
            .collect();
        for (n, vals) in &docs {
            let mut d = Document::new();
            d.add_i64(id, *n);
            for v in vals {
                d.add_str(body, v);
            }
            d.add_str(plain, &vals.concat());
            w.add_document(&d).unwrap();
        }
        w.commit().unwrap();
        let model = model_of(&docs);
        for mode in [ReadMode::Mmap, ReadMode::Heap] {
            prop_assert_eq!(&read_back(tmp.path(), mode), &model);
        }
        // Delete some documents, merge, and read the survivors back.
        let mut kept = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            if (i as u64 * 7 + seed).is_multiple_of(5) {
                w.delete_term(id, &Value::I64(doc.0)).unwrap();
            } else {
                kept.push(doc.clone());
            }
        }
        w.commit().unwrap();
        w.merge(1).unwrap();
        let model = model_of(&kept);
        for mode in [ReadMode::Mmap, ReadMode::Heap] {
            prop_assert_eq!(&read_back(tmp.path(), mode), &model);
        }
        let r = quarry::check::check_index(tmp.path()).unwrap();
        prop_assert!(r.is_clean(), "{:?}", r.problems);
        // (Every document may have been deleted and merged away.)
        let tokens_left = kept.iter().any(|(_, v)| v.iter().any(|s| !s.trim().is_empty()));
        prop_assert_eq!(r.structures.position_lists > 0, tokens_left);
    }
}
