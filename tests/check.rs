//! The integrity checker: a clean index checks clean; each deliberately
//! broken file (bytes rewritten with a valid checksum, so only the
//! structural checks can see it) is named with its problem; random damage
//! is always reported and never panics; the CLI and the C export agree.

use std::path::{Path, PathBuf};

use quarry::check::{ProblemKind, Report, check_index};
use quarry::format::FORMAT_VERSION;
use quarry::format::segment::{
    SECTION_NORMS, SECTION_POSITIONS, SECTION_POSTINGS, SECTION_SORT, SECTION_TERMS,
};
use quarry::format::terms::TermDict;
use quarry::*;

mod common;
use common::{Rng, fix_crc, section};

/// An index of three segments (300, 300 and 120 documents) with deletes in
/// two of them and every field kind: an indexed, stored i64 id, a stored
/// text body, an indexed, sortable, stored string, a sortable i64 and a
/// sortable, stored f64. Every document holds "common", so its list has
/// packed blocks, skip data and impacts.
fn build(dir: &Path, docs: usize) {
    let mut schema = Schema::new();
    let (id, body) = common::add_id_and_body(&mut schema, true);
    let flags = |stored, indexed, sortable| FieldFlags {
        stored,
        indexed,
        sortable,
    };
    let cat = schema
        .add_field("category", FieldType::String, flags(true, true, true))
        .unwrap();
    let year = schema
        .add_field("year", FieldType::I64, flags(false, false, true))
        .unwrap();
    let price = schema
        .add_field("price", FieldType::F64, flags(true, false, true))
        .unwrap();
    let config = WriterConfig {
        max_docs_per_segment: Some(300),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
    for n in 0..docs {
        let mut text = String::from("common");
        for k in 0..(n % 5) + 1 {
            text.push(' ');
            text.push_str(words[(n * 7 + k * 3) % words.len()]);
        }
        let mut d = Document::new();
        d.add_i64(id, n as i64)
            .add_str(body, &text)
            .add_i64(year, 1900 + (n % 7) as i64)
            .add_f64(price, n as f64 * 0.5);
        if n % 3 != 0 {
            d.add_str(cat, ["x", "novel", "letters"][n % 3]);
        }
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    for n in (0..docs).step_by(11) {
        w.delete_term(id, &Value::I64(n as i64)).unwrap();
    }
    w.commit().unwrap();
}

fn index() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    build(t.path(), 720);
    t
}

fn first_segment(dir: &Path) -> PathBuf {
    let mut segs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "qsg"))
        .collect();
    segs.sort();
    segs.remove(0)
}

/// Edits a file in place with `f`, then fixes its checksum.
fn rewrite(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    fix_crc(&mut b);
    std::fs::write(path, b).unwrap();
}

/// Asserts that the report names `file` with a problem containing `what`.
fn assert_names(r: &Report, file: &Path, what: &str) {
    assert!(
        r.problems
            .iter()
            .any(|p| p.file == file && p.detail.contains(what)),
        "no problem {what:?} for {}; got:\n{}",
        file.display(),
        r.problems
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn le32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// Start of the postings region of field `f`'s term `key`, as an offset
/// in the file.
fn region(b: &[u8], f: usize, key: &[u8]) -> usize {
    let (t0, tlen) = section(b, SECTION_TERMS);
    let (p0, plen) = section(b, SECTION_POSTINGS);
    let nf = u16::from_le_bytes([b[t0], b[t0 + 1]]) as usize;
    let terms = &b[t0..t0 + tlen];
    let (_, poslen) = section(b, SECTION_POSITIONS);
    let dict = TermDict::parse(FORMAT_VERSION, terms, nf, plen, poslen).unwrap();
    p0 + dict.lookup(terms, f, key).unwrap().unwrap().post_off
}

/// Offset in the file of the only occurrence of `bytes` in the terms section.
fn in_terms(b: &[u8], bytes: &[u8]) -> usize {
    let (t0, tlen) = section(b, SECTION_TERMS);
    let hits: Vec<usize> = (t0..t0 + tlen - bytes.len())
        .filter(|&i| &b[i..i + bytes.len()] == bytes)
        .collect();
    assert_eq!(hits.len(), 1, "{bytes:?}");
    hits[0]
}

#[test]
fn a_clean_index_checks_clean_and_counts_what_it_checked() {
    let t = index();
    let r = check_index(t.path()).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.segments, 3);
    assert_eq!(r.documents, 720);
    assert_eq!(r.deleted, 720usize.div_ceil(11) as u64);
    assert_eq!(r.files, 1 + 3 + 3);
    assert!(r.structures.packed_blocks >= 6 && r.structures.skip_lists >= 3);
    assert!(r.terms > 720 && r.postings > 3 * 720);
    assert_eq!(r.structures.ord_widths, [2, 4, 8, 16]);
}

#[test]
fn unsorted_terms_are_named() {
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        // "alpha" and "gamma" are both five bytes sharing none with the
        // key before them in their block: swap them.
        let (ka, kg) = (in_terms(b, b"alpha"), in_terms(b, b"gamma"));
        let tmp: Vec<u8> = b[ka..ka + 5].to_vec();
        b.copy_within(kg..kg + 5, ka);
        b[kg..kg + 5].copy_from_slice(&tmp);
    });
    let r = check_index(t.path()).unwrap();
    assert_names(&r, &seg, "terms not sorted and unique");
}

#[test]
fn a_dictionary_block_whose_postings_do_not_follow_is_named() {
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        // The second block of the id field: its postings base, a one-byte
        // varint at its start, moved on by one.
        let (t0, _) = section(b, SECTION_TERMS);
        let nf = u16::from_le_bytes([b[t0], b[t0 + 1]]) as usize;
        // Per field a u32 term count and a u8 of flags.
        let index = t0 + 2 + 5 * nf + 4;
        let blocks = index + 4 * le32(b, t0 + 2 + 5 * nf) + 4;
        let at = blocks + le32(b, index + 4);
        assert!(b[at] < 0x7f);
        b[at] += 1;
    });
    let r = check_index(t.path()).unwrap();
    assert_names(
        &r,
        &seg,
        "field \"id\": term 16: term block 1 puts its regions at",
    );
}

#[test]
fn a_doc_id_out_of_range_is_named() {
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        // id 200 is document 200: a two-byte varint, made 16383.
        let at = region(b, 0, &quarry::format::segment::i64_key(200));
        assert!(b[at] & 0x80 != 0);
        b[at] = 0xff;
        b[at + 1] = 0x7f;
    });
    let r = check_index(t.path()).unwrap();
    assert_names(&r, &seg, "field \"id\" term 200: block 0: tail doc");
    assert_names(&r, &seg, "out of range");
}

#[test]
fn an_impact_that_does_not_bound_its_block_is_named() {
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        let at = region(b, 1, b"common");
        let nblocks = 300usize.div_ceil(128);
        let impacts = at + 8 + nblocks * 8 + 16;
        // Block 0's first pair: its tf is a one-byte varint; claim the
        // longest norm, which bounds no shorter document.
        assert!(b[impacts] < 0x80);
        b[impacts + 1] = 255;
    });
    let r = check_index(t.path()).unwrap();
    assert_names(&r, &seg, "term \"common\": block 0: impacts");
    assert_names(&r, &seg, "do not bound document");
}

#[test]
fn a_presence_bitmap_that_disagrees_with_its_list_is_named() {
    // "common" is in each of the segment's 300 documents: its list ends
    // with a presence bitmap of five words.
    let bitmap = |b: &[u8]| {
        let at = region(b, 1, b"common");
        let (impacts, blocks) = (le32(b, at), le32(b, at + 4));
        at + 8 + 300usize.div_ceil(128) * 8 + 16 + impacts + blocks
    };
    // A document of the list missing from it, and a bit past the
    // segment's documents set.
    for (damage, what) in [
        (
            (17usize, false),
            "block 0: document 17 is missing from the presence bitmap",
        ),
        (
            (301, true),
            "the presence bitmap holds 301 documents, the list 300",
        ),
    ] {
        let t = index();
        let seg = first_segment(t.path());
        rewrite(&seg, |b| {
            let at = bitmap(b) + damage.0 / 8;
            let bit = 1u8 << (damage.0 % 8);
            assert_eq!(b[at] & bit != 0, !damage.1, "the bit is as built");
            b[at] ^= bit;
        });
        let r = check_index(t.path()).unwrap();
        assert_names(&r, &seg, &format!("term \"common\": {what}"));
        // The damage changes what bit tests answer, never a panic.
        let s = Searcher::open(t.path()).unwrap();
        let body = s.schema().field("body").unwrap();
        let q = Query::boolean()
            .add(Occur::Must, Query::term(body, "alpha"))
            .add(Occur::Must, Query::term(body, "common"));
        s.search(&q, &SearchRequest::top(5)).unwrap();
    }
}

#[test]
fn a_skip_entry_that_disagrees_with_its_tail_block_is_named() {
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        let at = region(b, 1, b"common");
        // The third skip entry describes the 44-document tail.
        let last = at + 8 + 2 * 8;
        let v = le32(b, last) as u32 - 1;
        b[last..last + 4].copy_from_slice(&v.to_le_bytes());
    });
    let r = check_index(t.path()).unwrap();
    assert_names(&r, &seg, "block 2: skip entry's last doc");
}

#[test]
fn ords_out_of_range_and_wrong_block_bounds_are_named() {
    // Column 1 of the sort section is "year": 7 values, 4-bit ords.
    let year_ords = |b: &[u8]| {
        let (s0, _) = section(b, SECTION_SORT);
        let mut at = s0 + 2;
        let len0 = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
        at += 8 + len0;
        let col = at + 8;
        assert_eq!(b[col + 3], 4, "year's ord width");
        let values_len = u64::from_le_bytes(b[col + 8..col + 16].try_into().unwrap()) as usize;
        let ords = col + (16 + values_len).div_ceil(4) * 4;
        (ords, ords + 300usize.div_ceil(8) * 4)
    };
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        let (ords, _) = year_ords(b);
        b[ords] = 0xaa;
    });
    let r = check_index(t.path()).unwrap();
    assert_names(&r, &seg, "ord 10 of document 0 out of range");

    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        let (_, blocks) = year_ords(b);
        b[blocks + 4..blocks + 8].copy_from_slice(&2u32.to_le_bytes());
    });
    let r = check_index(t.path()).unwrap();
    assert_names(
        &r,
        &seg,
        "field \"year\": ord block 0 records bounds (0, 2)",
    );
}

#[test]
fn a_norm_that_disagrees_with_the_frequencies_is_named() {
    let t = index();
    let seg = first_segment(t.path());
    rewrite(&seg, |b| {
        let (n0, _) = section(b, SECTION_NORMS);
        // One entry (body); document 3's byte.
        assert_eq!(u16::from_le_bytes([b[n0 + 2], b[n0 + 3]]), 1);
        b[n0 + 4 + 3] = 100;
    });
    let r = check_index(t.path()).unwrap();
    assert_names(&r, &seg, "field \"body\": document 3 has norm 100");
}

#[test]
fn tombstones_past_the_segment_and_missing_or_resized_files_are_named() {
    let t = index();
    let tomb = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "qdl"))
        .min()
        .unwrap();
    rewrite(&tomb, |b| {
        // 300 documents: the fifth word's bit 63 is document 319.
        let last = b.len() - 4 - 8;
        b[last + 7] |= 0x80;
        let del = le32(b, 12) as u32 + 1;
        b[12..16].copy_from_slice(&del.to_le_bytes());
    });
    let seg = first_segment(t.path());
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes.push(0);
    std::fs::write(&seg, &bytes).unwrap();
    let last_seg = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "qsg"))
        .max()
        .unwrap();
    std::fs::remove_file(&last_seg).unwrap();
    let r = check_index(t.path()).unwrap();
    assert_names(
        &r,
        &tomb,
        "deletes documents past the segment's 300 documents",
    );
    assert_names(&r, &tomb, "the manifest records");
    assert_names(&r, &seg, "the manifest records");
    assert_names(&r, &seg, "checksum mismatch");
    assert!(
        r.problems
            .iter()
            .any(|p| p.file == last_seg && p.kind == ProblemKind::Missing)
    );
}

#[test]
fn a_newer_version_is_unsupported_and_the_cli_and_c_api_report_it() {
    let t = index();
    let seg = first_segment(t.path());
    let exe = env!("CARGO_BIN_EXE_quarry");
    let clean = std::process::Command::new(exe)
        .arg("check")
        .arg(t.path())
        .output()
        .unwrap();
    assert!(clean.status.success());
    let out = String::from_utf8(clean.stdout).unwrap();
    assert!(
        out.starts_with("ok: generation 3, 3 segments, 720 documents (66 deleted)"),
        "{out}"
    );
    let path = t.path().as_os_str().as_encoded_bytes();
    // SAFETY: `path` is a live byte slice of `path.len()` bytes.
    let status = unsafe { capi::check::quarry_index_check(path.as_ptr().cast(), path.len()) };
    assert_eq!(status, capi::status::QUARRY_OK);

    rewrite(&seg, |b| {
        b[4..8].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes())
    });
    let r = check_index(t.path()).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].kind, ProblemKind::UnsupportedVersion);
    assert_eq!(r.problems[0].file, seg);
    // SAFETY: as above.
    let status = unsafe { capi::check::quarry_index_check(path.as_ptr().cast(), path.len()) };
    assert_eq!(status, capi::status::QUARRY_UNSUPPORTED_VERSION);

    // A second, structural problem elsewhere: every one is listed.
    let norms_seg = first_segment(t.path()).with_file_name("seg-0000000000000002.qsg");
    rewrite(&norms_seg, |b| {
        let (n0, _) = section(b, SECTION_NORMS);
        b[n0 + 4] = 99;
    });
    // SAFETY: as above.
    let status = unsafe { capi::check::quarry_index_check(path.as_ptr().cast(), path.len()) };
    assert_eq!(status, capi::status::QUARRY_CORRUPT);
    // SAFETY: the message is a NUL-terminated string valid until this
    // thread's next quarry call.
    let msg = unsafe { std::ffi::CStr::from_ptr(capi::status::quarry_last_error_message()) }
        .to_string_lossy()
        .into_owned();
    assert_eq!(msg.lines().count(), 2, "{msg}");
    assert!(
        msg.contains(&format!(
            "unsupported format version {}",
            FORMAT_VERSION + 1
        )) && msg.contains("has norm 99")
    );
    let broken = std::process::Command::new(exe)
        .arg("check")
        .arg(t.path())
        .output()
        .unwrap();
    assert_eq!(broken.status.code(), Some(1));
    let out = String::from_utf8(broken.stdout).unwrap();
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains(&format!("{}: ", norms_seg.display())));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("2 problem(s) found"));

    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(check_index(empty.path()), Err(Error::NoIndex(_))));
}

#[test]
fn random_damage_is_always_reported_and_never_panics() {
    let t = tempfile::tempdir().unwrap();
    build(t.path(), 400);
    let files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    assert!(check_index(t.path()).unwrap().is_clean());
    let mut rng = Rng(0x5eed_c0de);
    let (mut reported, mut harmless) = (0, 0);
    for trial in 0..300 {
        let (path, orig) = &files[rng.below(files.len())];
        let mut b = orig.clone();
        let what = if rng.below(4) == 0 {
            let cut = rng.below(b.len());
            b.truncate(cut);
            format!("truncated to {cut}")
        } else {
            let n = 1 + rng.below(8);
            for _ in 0..n {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            format!("{n} bytes overwritten")
        };
        std::fs::write(path, &b).unwrap();
        let r = check_index(t.path()).unwrap();
        if b == *orig {
            // The new bytes happened to equal the old: nothing to find.
            assert!(r.is_clean(), "trial {trial}: {:?}", r.problems);
            harmless += 1;
        } else {
            assert!(
                !r.is_clean(),
                "trial {trial}: {} of {} went unnoticed",
                what,
                path.display()
            );
            assert!(
                r.problems.iter().all(|p| p.file == *path),
                "trial {trial}: {:?}",
                r.problems
            );
            reported += 1;
        }
        std::fs::write(path, orig).unwrap();
    }
    assert_eq!(reported + harmless, 300);
    assert!(reported > 280);
}

/// A term index past a field's terms is an error naming the range, never a
/// panic; the last term is still found.
#[test]
fn a_term_index_past_the_field_is_an_error() {
    let t = index();
    let snap = quarry::read::Snapshot::open(t.path()).unwrap();
    let body = snap.manifest().schema.field("body").unwrap();
    let r = &snap.segments()[0].reader;
    let n = r.num_terms(body);
    assert!(n > 0);
    let (last, _) = r.term_at(body, n - 1).unwrap();
    let found = r.term(body, &last).unwrap().map(|i| i.df);
    assert_eq!(found, r.term_at(body, n - 1).ok().map(|(_, i)| i.df));
    match r.term_at(body, n) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("out of range"), "{m}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}
