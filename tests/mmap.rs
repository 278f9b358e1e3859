//! Segment files changed under an open searcher, and the two read modes:
//! a truncated file is reported as `Corrupt` (naming it) at open and at
//! reopen; a mapped one raises SIGBUS when touched, which is why the heap
//! mode exists; the heap mode answers from memory whatever happens to the
//! files; both modes answer identically.

use std::path::Path;

use proptest::prelude::*;
use quarry::*;

mod common;

const WORDS: [&str; 8] = [
    "river", "stone", "quarry", "granite", "sand", "clay", "chalk", "slate",
];

use common::IdBodyYear as Fields;

fn schema() -> (Schema, Fields) {
    common::id_body_year()
}

/// An index of `docs` (each a list of word indexes), flushed every
/// `per_segment` documents, with the ids in `deletes` deleted by a
/// second commit.
fn build(dir: &Path, docs: &[Vec<usize>], per_segment: u32, deletes: &[i64]) -> Fields {
    let (schema, f) = schema();
    let config = WriterConfig {
        max_docs_per_segment: Some(per_segment),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    for (i, words) in docs.iter().enumerate() {
        let text: Vec<&str> = words.iter().map(|&w| WORDS[w % WORDS.len()]).collect();
        let mut d = Document::new();
        d.add_i64(f.id, i as i64)
            .add_str(f.body, &text.join(" "))
            .add_i64(f.year, 1900 + (i as i64 * 37) % 61);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    for &id in deletes {
        w.delete_term(f.id, &Value::I64(id)).unwrap();
    }
    w.commit().unwrap();
    f
}

/// A fixed corpus of 300 documents in several segments, some deleted.
fn fixed_index(dir: &Path) -> Fields {
    let docs: Vec<Vec<usize>> = (0..300usize)
        .map(|i| (0..i % 11 + 1).map(|j| (i * 7 + j * j) % 8).collect())
        .collect();
    let deletes: Vec<i64> = (0..300).step_by(13).collect();
    build(dir, &docs, 70, &deletes)
}

/// One search's observable answer: (doc, score bits, sort values) of every
/// hit, then the total and whether it is exact.
type Answer = (Vec<(u64, u32, String)>, u64, bool);

fn answer(s: &Searcher, q: &Query, sort: Option<SortSpec>) -> Answer {
    let req = SearchRequest {
        offset: 0,
        limit: 40,
        sort,
        total: TotalMode::Exact,
    };
    let hits = s.search(q, &req).unwrap();
    let rows = hits
        .hits
        .iter()
        .map(|h| (h.doc, h.score.to_bits(), format!("{:?}", h.sort_values)))
        .collect();
    (rows, hits.total_hits, hits.total_is_exact)
}

/// Every word, every pair of words under AND and OR, a sorted search, and
/// every live document's stored values.
fn answers(s: &Searcher, f: &Fields) -> (Vec<Answer>, Vec<i64>) {
    let mut out = Vec::new();
    for (i, a) in WORDS.iter().enumerate() {
        out.push(answer(s, &Query::term(f.body, a), None));
        for b in &WORDS[i + 1..] {
            for op in [Operator::And, Operator::Or] {
                out.push(answer(
                    s,
                    &Query::matching(f.body, &format!("{a} {b}"), op),
                    None,
                ));
            }
        }
    }
    let mut spec = SortSpec::new();
    spec.push(SortKey::Field(f.year), true);
    out.push(answer(
        s,
        &Query::matching(f.body, "river clay", Operator::Or),
        Some(spec),
    ));
    (out, common::live_ids(s, f.id))
}

fn segment_files(dir: &Path) -> Vec<std::path::PathBuf> {
    common::file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".qsg"))
        .map(|n| dir.join(n))
        .collect()
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// `r` is `Corrupt` naming `path`.
fn assert_corrupt_naming<T: std::fmt::Debug>(r: Result<T>, path: &Path) {
    match r {
        Err(Error::Corrupt { path: p, detail }) => {
            assert_eq!(p, path, "{detail}");
            assert!(detail.contains("manifest records"), "{detail}");
        }
        other => panic!("expected Corrupt naming {}: {other:?}", path.display()),
    }
}

#[test]
fn heap_mode_answers_after_its_files_are_truncated_and_reopen_reports_them() {
    let tmp = tempfile::tempdir().unwrap();
    let f = fixed_index(tmp.path());
    let mapped = Searcher::open_with(tmp.path(), ReadMode::Mmap).unwrap();
    let heap = Searcher::open_with(tmp.path(), ReadMode::Heap).unwrap();
    assert_eq!(heap.snapshot().read_mode(), ReadMode::Heap);
    let before = answers(&mapped, &f);
    assert!(before.1.len() > 250, "{} live documents", before.1.len());
    assert_eq!(answers(&heap, &f), before);
    drop(mapped);

    // Cut every segment file to nothing under the open heap searcher.
    let files = segment_files(tmp.path());
    assert!(files.len() >= 4, "{files:?}");
    for p in &files {
        truncate(p, 0);
    }
    assert_eq!(answers(&heap, &f), before, "heap mode reads only memory");

    // A reopen checks the files it reuses; a fresh open checks each file's
    // length before it maps or reads a byte. Both name the first segment.
    assert_corrupt_naming(heap.reopen(), &files[0]);
    for mode in [ReadMode::Heap, ReadMode::Mmap] {
        assert_corrupt_naming(Searcher::open_with(tmp.path(), mode), &files[0]);
    }
}

#[test]
fn mmap_mode_reopen_and_open_report_a_truncated_file_without_touching_it() {
    let tmp = tempfile::tempdir().unwrap();
    let f = fixed_index(tmp.path());
    let s = Searcher::open_with(tmp.path(), ReadMode::Mmap).unwrap();
    let before = answers(&s, &f);
    let files = segment_files(tmp.path());
    let victim = &files[files.len() / 2];
    let bytes = std::fs::read(victim).unwrap();
    let len = bytes.len() as u64;
    // Cut off the last page or so; a reopen must not read the mapping
    // (touching the lost pages would kill this process with SIGBUS).
    truncate(victim, len.saturating_sub(4096).max(len / 2));
    assert_corrupt_naming(s.reopen(), victim);
    assert_corrupt_naming(Searcher::open_with(tmp.path(), ReadMode::Mmap), victim);
    // A file that grew is reported too.
    truncate(victim, len + 1);
    assert_corrupt_naming(Searcher::open(tmp.path()), victim);
    // With its bytes back, the index opens and answers as before.
    std::fs::write(victim, &bytes).unwrap();
    assert_eq!(answers(&s.reopen().unwrap(), &f), before);
    assert_eq!(answers(&Searcher::open(tmp.path()).unwrap(), &f), before);
}

const CHILD_DIR: &str = "QUARRY_TEST_TRUNCATE_CHILD_DIR";

#[test]
fn a_mapped_file_truncated_under_a_search_raises_sigbus_and_heap_mode_survives() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        // The child: a searcher opened as the environment says
        // (QUARRY_READ), its files cut under it, then searched.
        let dir = Path::new(&dir);
        let (_, f) = schema();
        let s = Searcher::open(dir).unwrap();
        let before = answers(&s, &f);
        for p in segment_files(dir) {
            truncate(&p, 0);
        }
        eprintln!("child: truncated, mode {:?}", s.snapshot().read_mode());
        let after = answers(&s, &f);
        assert_eq!(after, before);
        eprintln!("child: survived");
        return;
    }
    let name = "a_mapped_file_truncated_under_a_search_raises_sigbus_and_heap_mode_survives";
    for mode in ["mmap", "heap"] {
        let tmp = tempfile::tempdir().unwrap();
        fixed_index(tmp.path());
        let dir = tmp.path().to_str().unwrap();
        let out = common::rerun_self(name, &[(CHILD_DIR, dir), ("QUARRY_READ", mode)], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("child: truncated, mode {}", capitalise(mode))),
            "{mode}: the child did not get to the search: {stderr}"
        );
        if mode == "mmap" {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                out.status.signal(),
                Some(libc::SIGBUS),
                "the mapped searcher must die by SIGBUS: {:?} {stderr}",
                out.status
            );
            assert!(!stderr.contains("child: survived"));
        } else {
            assert!(out.status.success(), "heap mode: {:?} {stderr}", out.status);
            assert!(stderr.contains("child: survived"), "{stderr}");
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|h| h.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[test]
fn the_c_open_with_no_mmap_flag_reads_into_memory_and_checks_its_flags() {
    use quarry::capi::open_options::{QUARRY_OPEN_NO_MMAP, quarry_searcher_open_with};
    use quarry::capi::searcher::{
        quarry_searcher, quarry_searcher_doc_count, quarry_searcher_free,
    };
    use quarry::capi::status::{QUARRY_CORRUPT, QUARRY_INVALID_ARGUMENT, QUARRY_OK};
    let tmp = tempfile::tempdir().unwrap();
    fixed_index(tmp.path());
    let dir = tmp.path().to_str().unwrap();
    let open = |flags| {
        let mut out: *mut quarry_searcher = std::ptr::null_mut();
        // SAFETY: `dir` is valid for its length and `out` for one pointer.
        let st =
            unsafe { quarry_searcher_open_with(dir.as_ptr().cast(), dir.len(), flags, &mut out) };
        (st, out)
    };
    let (st, bad) = open(2);
    assert_eq!((st, bad.is_null()), (QUARRY_INVALID_ARGUMENT, true));
    let (st, s) = open(QUARRY_OPEN_NO_MMAP);
    assert_eq!(st, QUARRY_OK);
    // SAFETY: `s` is a live searcher from quarry_searcher_open_with.
    let docs = unsafe { quarry_searcher_doc_count(s) };
    for p in segment_files(tmp.path()) {
        truncate(&p, 0);
    }
    // SAFETY: as above; the heap searcher never touches its files again.
    assert_eq!(unsafe { quarry_searcher_doc_count(s) }, docs);
    // SAFETY: `s` is live and freed once.
    unsafe { quarry_searcher_free(s) };
    assert_eq!(open(QUARRY_OPEN_NO_MMAP).0, QUARRY_CORRUPT);
    assert_eq!(open(0).0, QUARRY_CORRUPT);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn both_modes_answer_identically_on_a_random_corpus(
        docs in proptest::collection::vec(proptest::collection::vec(0usize..8, 0..30), 1..400),
        per_segment in 20u32..150,
        deletes in proptest::collection::vec(0i64..400, 0..40),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let f = build(tmp.path(), &docs, per_segment, &deletes);
        let mapped = Searcher::open_with(tmp.path(), ReadMode::Mmap).unwrap();
        let heap = Searcher::open_with(tmp.path(), ReadMode::Heap).unwrap();
        prop_assert_eq!(answers(&heap, &f), answers(&mapped, &f));
    }
}
