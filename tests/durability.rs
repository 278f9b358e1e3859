//! Crashes, full disks and damaged files: the index stays readable as the
//! previous commit or the new one, and damage is reported, never a panic.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quarry::write::IoHooks;
use quarry::*;

mod common;

use common::{file_names, unreferenced};

use common::IdBodyYear as Fields;

fn schema() -> (Schema, Fields) {
    common::id_body_year()
}

fn doc(f: &Fields, i: i64) -> Document {
    let mut d = Document::new();
    let words = ["river", "stone", "quarry", "granite", "sand", "clay"];
    let text: Vec<&str> = (0..(i % 9 + 1))
        .map(|j| words[((i + j * j) % 6) as usize])
        .collect();
    d.add_i64(f.id, i)
        .add_str(f.body, &text.join(" "))
        .add_i64(f.year, 1900 + i % 50);
    d
}

/// The observable state: every query's (doc, score bits) and the stored ids.
fn state(dir: &Path, f: &Fields) -> Vec<Vec<(u64, u32)>> {
    let s = Searcher::open(dir).expect("index must open");
    let mut out = Vec::new();
    for q in ["river", "stone quarry", "granite sand clay"] {
        let hits = s
            .search(
                &Query::matching(f.body, q, Operator::Or),
                &SearchRequest::top(1000),
            )
            .unwrap();
        out.push(
            hits.hits
                .iter()
                .map(|h| (h.doc, h.score.to_bits()))
                .collect(),
        );
    }
    out.push(
        (0..s.max_doc())
            .map(|d| (s.stored(d).unwrap()[0].1.as_i64().unwrap() as u64, 0))
            .collect(),
    );
    out
}

fn base_index(dir: &Path) -> Fields {
    let (schema, f) = schema();
    let config = WriterConfig {
        max_docs_per_segment: Some(25),
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).unwrap();
    for i in 0..60 {
        w.add_document(&doc(&f, i)).unwrap();
    }
    w.commit().unwrap();
    f
}

fn config(io: IoHooks) -> WriterConfig {
    WriterConfig {
        max_docs_per_segment: Some(25),
        merge_factor: 0,
        io: Arc::new(io),
        ..Default::default()
    }
}

/// A writer on `dir` with `config`'s settings, and the hooks that count its I/O steps.
fn counting_writer(dir: &Path) -> (IndexWriter, Arc<IoHooks>) {
    let hooks = Arc::new(IoHooks::new());
    let w = IndexWriter::open(
        dir,
        WriterConfig {
            io: hooks.clone(),
            ..config(IoHooks::new())
        },
    )
    .unwrap();
    (w, hooks)
}

/// The second commit's work: more documents and some deletes.
fn second_commit(w: &mut IndexWriter, f: &Fields) -> Result<u64> {
    for i in 60..130 {
        w.add_document(&doc(f, i))?;
    }
    for i in (0..130).step_by(7) {
        w.delete_term(f.id, &Value::I64(i))?;
    }
    w.commit()
}

/// What a writer does after a crash: more documents, flushed as several
/// segments (so it needs the segment ids a dead writer may have used), and
/// a delete, committed.
fn recovery_commit(w: &mut IndexWriter, f: &Fields) -> Result<u64> {
    for i in 500..560 {
        w.add_document(&doc(f, i))?;
    }
    w.delete_term(f.id, &Value::I64(3))?;
    w.commit()
}

/// The state after `recovery_commit` on an index built by `build`.
fn state_after_recovery(build: impl Fn(&Path) -> Fields) -> Vec<Vec<(u64, u32)>> {
    let tmp = tempfile::tempdir().unwrap();
    let f = build(tmp.path());
    let mut w = IndexWriter::open(tmp.path(), config(IoHooks::new())).unwrap();
    recovery_commit(&mut w, &f).unwrap();
    drop(w);
    state(tmp.path(), &f)
}

#[test]
fn a_crash_at_any_step_of_a_commit_leaves_old_or_new() {
    // Learn the states before and after, and how many steps a commit takes.
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let old = state(tmp.path(), &f);
    let (mut w, hooks) = counting_writer(tmp.path());
    second_commit(&mut w, &f).unwrap();
    drop(w);
    let new = state(tmp.path(), &f);
    assert_ne!(old, new);
    let steps = hooks.steps();
    assert!(steps > 10, "a commit takes several steps, got {steps}");
    let old_recovered = state_after_recovery(base_index);
    let new_recovered = state_after_recovery(|dir| {
        let f = base_index(dir);
        let mut w = IndexWriter::open(dir, config(IoHooks::new())).unwrap();
        second_commit(&mut w, &f).unwrap();
        f
    });
    let mut saw_leftovers = 0;

    let mut saw_old = 0;
    let mut saw_new = 0;
    for n in 0..steps + 2 {
        let tmp = tempfile::tempdir().unwrap();
        let f = base_index(tmp.path());
        let result = IndexWriter::open(tmp.path(), config(IoHooks::fail_at(n)))
            .and_then(|mut w| second_commit(&mut w, &f));
        // The writer is gone as after a crash; whatever is on disk must open.
        let got = state(tmp.path(), &f);
        if got == old {
            saw_old += 1;
            assert!(
                result.is_err(),
                "step {n}: commit reported success but the old state is visible"
            );
        } else {
            assert_eq!(got, new, "step {n}: neither the old nor the new commit");
            saw_new += 1;
        }
        // The failing hooks also stopped the writer's own clean-up, as a
        // crash would: what it left is garbage for the next writer.
        if !unreferenced(tmp.path()).is_empty() {
            saw_leftovers += 1;
        }
        // A new writer recovers: opening removes the leftovers, and it
        // flushes, deletes and commits without colliding with them.
        let mut w = IndexWriter::open(tmp.path(), config(IoHooks::new())).unwrap();
        assert_eq!(unreferenced(tmp.path()), Vec::<String>::new(), "step {n}");
        recovery_commit(&mut w, &f).unwrap_or_else(|e| panic!("step {n}: {e}"));
        drop(w);
        let expected = if got == old {
            &old_recovered
        } else {
            &new_recovered
        };
        assert_eq!(&state(tmp.path(), &f), expected, "step {n}");
        assert_eq!(unreferenced(tmp.path()), Vec::<String>::new(), "step {n}");
    }
    assert!(saw_old > 5 && saw_new >= 1, "old {saw_old} new {saw_new}");
    assert!(
        saw_leftovers > 5,
        "crashes left garbage {saw_leftovers} times"
    );
}

#[test]
fn a_crash_during_merge_leaves_old_or_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let before = state(tmp.path(), &f);
    let (mut w, hooks) = counting_writer(tmp.path());
    w.merge(1).unwrap();
    drop(w);
    let steps = hooks.steps();
    assert_eq!(
        Searcher::open(tmp.path())
            .unwrap()
            .snapshot()
            .segments()
            .len(),
        1
    );
    for n in 0..steps + 1 {
        let tmp = tempfile::tempdir().unwrap();
        let f = base_index(tmp.path());
        let _ =
            IndexWriter::open(tmp.path(), config(IoHooks::fail_at(n))).and_then(|mut w| w.merge(1));
        // No deletes: merging keeps doc numbers and scores unchanged.
        assert_eq!(state(tmp.path(), &f), before, "step {n}");
        // The next writer removes a half-written merge and merges again.
        let mut w = IndexWriter::open(tmp.path(), config(IoHooks::new())).unwrap();
        assert_eq!(unreferenced(tmp.path()), Vec::<String>::new(), "step {n}");
        w.merge(1).unwrap_or_else(|e| panic!("step {n}: {e}"));
        drop(w);
        assert_eq!(state(tmp.path(), &f), before, "step {n}");
        let s = Searcher::open(tmp.path()).unwrap();
        assert_eq!(s.snapshot().segments().len(), 1, "step {n}");
    }
}

/// A writer whose file system stops at any step (every step from it on
/// fails, as if the machine stopped there) while merges run on its merge
/// thread: the steps of the commits that start them, of the merges, of
/// publishing them and of closing the writer, on either thread. The index
/// holds the documents of the last commit published, not one lost, and the
/// next writer opens it, leaves nothing unreferenced, appends and merges.
#[test]
fn a_crash_during_background_merges_loses_no_commit_and_the_next_writer_appends() {
    use std::collections::BTreeSet;
    let background = |io: IoHooks| WriterConfig {
        merge_factor: 3,
        background_merges: true,
        ..config(io)
    };
    // Adds 60..200, commits, deletes every seventh, commits, waits for
    // the merges; returns the ids of the last commit published (a commit
    // is published when the writer's generation moves).
    let workload = |w: &mut IndexWriter, f: &Fields| -> BTreeSet<i64> {
        let added: BTreeSet<i64> = (0..200).collect();
        let kept: BTreeSet<i64> = (0..200).filter(|i| i % 7 != 0).collect();
        let mut committed: BTreeSet<i64> = (0..60).collect();
        let mut commit = |w: &mut IndexWriter, ids: &BTreeSet<i64>| {
            let g = w.generation();
            let r = w.commit();
            if w.generation() != g {
                committed = ids.clone();
            }
            r.is_ok()
        };
        let _ = (60..200)
            .try_for_each(|i| w.add_document(&doc(f, i)))
            .map(|()| commit(w, &added))
            .and_then(|ok| {
                (0..200)
                    .step_by(7)
                    .try_for_each(|i| w.delete_term(f.id, &Value::I64(i)))
                    .map(|()| ok && commit(w, &kept) && w.wait_merges().is_ok())
            });
        committed
    };
    let tmp = common::fast_tempdir();
    let f = base_index(tmp.path());
    let hooks = Arc::new(IoHooks::new());
    let mut w = IndexWriter::open(
        tmp.path(),
        WriterConfig {
            io: hooks.clone(),
            ..background(IoHooks::new())
        },
    )
    .unwrap();
    let all = workload(&mut w, &f);
    assert_eq!(all.len(), 200 - 29);
    drop(w);
    let steps = hooks.steps();
    assert!(
        Searcher::open(tmp.path())
            .unwrap()
            .snapshot()
            .segments()
            .len()
            < 8
    );

    for n in 0..steps {
        let tmp = common::fast_tempdir();
        let f = base_index(tmp.path());
        let mut w = IndexWriter::open(tmp.path(), background(IoHooks::fail_at(n))).unwrap();
        let committed = workload(&mut w, &f);
        drop(w);
        let s = Searcher::open(tmp.path()).unwrap();
        let on_disk: BTreeSet<i64> = common::live_ids(&s, f.id).into_iter().collect();
        assert_eq!(on_disk, committed, "step {n}");
        // The next writer cleans up, appends and merges.
        let mut w = IndexWriter::open(tmp.path(), background(IoHooks::new())).unwrap();
        assert_eq!(unreferenced(tmp.path()), Vec::<String>::new(), "step {n}");
        for i in 500..560 {
            w.add_document(&doc(&f, i)).unwrap();
        }
        w.commit().unwrap();
        w.wait_merges()
            .unwrap_or_else(|e| panic!("step {n}: the next writer merges: {e}"));
        drop(w);
        let s = Searcher::open(tmp.path()).unwrap();
        let mut want = on_disk.clone();
        want.extend(500..560);
        let got: BTreeSet<i64> = common::live_ids(&s, f.id).into_iter().collect();
        assert_eq!(got, want, "step {n}");
        assert_eq!(unreferenced(tmp.path()), Vec::<String>::new(), "step {n}");
    }
}

/// An index with the most a crash can leave behind: a writer that stopped
/// at the rename of its manifest left flushed segments, tombstones and the
/// `.tmp` manifest. Returns the index, its fields and its state.
fn crashed_index() -> (tempfile::TempDir, Fields, Vec<Vec<(u64, u32)>>) {
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let (mut w, hooks) = counting_writer(tmp.path());
    second_commit(&mut w, &f).unwrap();
    drop(w);
    let steps = hooks.steps();
    for n in (0..steps).rev() {
        let tmp = tempfile::tempdir().unwrap();
        let f = base_index(tmp.path());
        let old = state(tmp.path(), &f);
        let mut w = IndexWriter::open(tmp.path(), config(IoHooks::fail_at(n))).unwrap();
        // The last steps (removing superseded files) fail after the commit.
        let failed = second_commit(&mut w, &f).is_err();
        drop(w);
        let left = unreferenced(tmp.path());
        if failed
            && state(tmp.path(), &f) == old
            && left.iter().any(|n| n.ends_with(".tmp"))
            && left.iter().any(|n| n.ends_with(".qdl"))
            && left.iter().any(|n| n.ends_with(".qsg"))
        {
            return (tmp, f, old);
        }
    }
    panic!("no step leaves segments, tombstones and a .tmp manifest behind");
}

#[test]
fn a_crash_while_recovering_leaves_the_commit_and_the_next_writer_finishes() {
    let (crashed, f, old) = crashed_index();
    let left = unreferenced(crashed.path());
    // Recovery takes one step per file it removes.
    let copy = tempfile::tempdir().unwrap();
    copy_dir(crashed.path(), copy.path());
    let (w, hooks) = counting_writer(copy.path());
    assert_eq!(hooks.steps(), left.len() as u64, "{left:?}");
    drop(w);
    let recovered = state_after_recovery(base_index);
    for n in 0..hooks.steps() + 1 {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(crashed.path(), copy.path());
        // Failing from step n on: recovery stops part-way, the writer opens
        // (recovery is best effort) but can do nothing, as after a crash.
        let w = IndexWriter::open(copy.path(), config(IoHooks::fail_at(n))).unwrap();
        drop(w);
        assert_eq!(state(copy.path(), &f), old, "step {n}");
        assert_eq!(unreferenced(copy.path()).len() as u64, hooks.steps() - n);
        let mut w = IndexWriter::open(copy.path(), config(IoHooks::new())).unwrap();
        recovery_commit(&mut w, &f).unwrap_or_else(|e| panic!("step {n}: {e}"));
        drop(w);
        assert_eq!(state(copy.path(), &f), recovered, "step {n}");
        assert_eq!(unreferenced(copy.path()), Vec::<String>::new(), "step {n}");
    }
}

#[test]
fn a_leftover_that_cannot_be_removed_keeps_its_segment_id_out_of_use() {
    let (crashed, f, _) = crashed_index();
    let left = unreferenced(crashed.path());
    let recovered = state_after_recovery(base_index);
    for n in 0..left.len() as u64 {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(crashed.path(), copy.path());
        // Removing the n-th leftover fails once; the same writer goes on
        // to flush new segments, which must not collide with it.
        let mut w = IndexWriter::open(copy.path(), config(IoHooks::fail_once_at(n))).unwrap();
        assert_eq!(unreferenced(copy.path()).len(), 1, "step {n}");
        recovery_commit(&mut w, &f).unwrap_or_else(|e| panic!("step {n}: {e}"));
        drop(w);
        assert_eq!(state(copy.path(), &f), recovered, "step {n}");
        // That commit's clean-up removed the leftover after all.
        assert_eq!(unreferenced(copy.path()), Vec::<String>::new(), "step {n}");
    }
}

#[test]
fn a_writer_never_removes_a_segment_file_it_did_not_create() {
    // Someone else's file where the writer's next segment goes (only a
    // process writing behind the lock's back can do this): the flush fails
    // with a clear error and leaves the file alone.
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let mut w = IndexWriter::open(tmp.path(), config(IoHooks::new())).unwrap();
    let (_, m) = quarry::read::latest_manifest(tmp.path()).unwrap().unwrap();
    let foreign = tmp
        .path()
        .join(format::manifest::segment_name(m.next_segment_id));
    std::fs::write(&foreign, b"not quarry's").unwrap();
    let err = (60..90)
        .map(|i| w.add_document(&doc(&f, i)))
        .find_map(|r| r.err())
        .expect("the flush collides");
    match &err {
        Error::Io { path, source } => {
            assert_eq!(path, &foreign);
            assert_eq!(source.kind(), std::io::ErrorKind::AlreadyExists);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), b"not quarry's");
}

#[test]
fn a_transient_failure_loses_nothing_and_the_commit_can_be_retried() {
    for n in [0u64, 3, 8, 15, 25] {
        let tmp = tempfile::tempdir().unwrap();
        let f = base_index(tmp.path());
        let mut w = IndexWriter::open(tmp.path(), config(IoHooks::fail_once_at(n))).unwrap();
        let mut failures = 0;
        for i in 60..130 {
            if w.add_document(&doc(&f, i)).is_err() {
                failures += 1;
                w.add_document(&doc(&f, i))
                    .expect("retry after the transient failure");
            }
        }
        for i in (0..130).step_by(7) {
            w.delete_term(f.id, &Value::I64(i)).unwrap();
        }
        if w.commit().is_err() {
            failures += 1;
            w.commit().expect("retry after the transient failure");
        }
        assert_eq!(failures, 1, "step {n} fails exactly once");
        drop(w);
        let got = state(tmp.path(), &f);
        let ids = &got[3];
        // 60 + 70 documents, every 7th deleted (19 of them).
        let s = Searcher::open(tmp.path()).unwrap();
        assert_eq!(s.num_docs(), 130 - 19, "failure at step {n}");
        assert!(ids.len() >= 111);
    }
}

#[test]
fn a_second_writer_is_refused_and_a_dead_writers_lock_is_taken_over() {
    let tmp = tempfile::tempdir().unwrap();
    let _f = base_index(tmp.path());
    let w = IndexWriter::open(tmp.path(), WriterConfig::default()).unwrap();
    assert!(matches!(
        IndexWriter::open(tmp.path(), WriterConfig::default()),
        Err(Error::Locked(_))
    ));
    drop(w);
    // A lock file left behind (as by a killed process) does not block.
    assert!(tmp.path().join("LOCK").exists());
    IndexWriter::open(tmp.path(), WriterConfig::default()).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Opens and reads everything; Ok only when every step succeeded.
fn read_all(dir: &Path, f: &Fields) -> Result<()> {
    let s = Searcher::open(dir)?;
    for q in ["river", "stone quarry sand"] {
        s.search(
            &Query::matching(f.body, q, Operator::Or),
            &SearchRequest::top(10),
        )?;
        s.search(
            &Query::matching(f.body, q, Operator::And),
            &SearchRequest::top(10),
        )?;
    }
    let mut spec = SortSpec::new();
    spec.push(SortKey::Field(f.year), true);
    s.search(
        &Query::term(f.body, "clay"),
        &SearchRequest {
            offset: 0,
            limit: 5,
            sort: Some(spec),
            total: quarry::TotalMode::Exact,
        },
    )?;
    for d in 0..s.max_doc() {
        s.stored(d)?;
    }
    Ok(())
}

enum Damage {
    Cut(usize),
    Flip(usize),
}

fn damaged_index() -> (tempfile::TempDir, Fields) {
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let mut w = IndexWriter::open(tmp.path(), config(IoHooks::new())).unwrap();
    second_commit(&mut w, &f).unwrap();
    drop(w);
    (tmp, f)
}

#[test]
fn every_kind_of_file_reports_truncation_and_flipped_bytes() {
    let (tmp, f) = damaged_index();
    read_all(tmp.path(), &f).unwrap();
    let names: Vec<String> = file_names(tmp.path())
        .into_iter()
        .filter(|n| n != "LOCK")
        .collect();
    // The newest manifest, segments and tombstones (older manifests are
    // not read once a newer one exists).
    let newest = names
        .iter()
        .filter(|n| n.starts_with("manifest-"))
        .max()
        .unwrap()
        .clone();
    let targets: Vec<&String> = names
        .iter()
        .filter(|n| !n.starts_with("manifest-") || **n == newest)
        .collect();
    assert!(targets.iter().any(|n| n.ends_with(".qsg")));
    assert!(targets.iter().any(|n| n.ends_with(".qdl")));
    let mut cases = 0;
    for name in targets {
        let len = std::fs::metadata(tmp.path().join(name)).unwrap().len() as usize;
        let mut damages = Vec::new();
        for cut in [0, 1, 7, 8, 12, len / 3, len / 2, len - 5, len - 1] {
            damages.push(Damage::Cut(cut));
        }
        for i in 0..24 {
            damages.push(Damage::Flip(((i * len) / 24 + i % 3).min(len - 1)));
        }
        for damage in damages {
            let copy = tempfile::tempdir().unwrap();
            copy_dir(tmp.path(), copy.path());
            let path: PathBuf = copy.path().join(name);
            let mut bytes = std::fs::read(&path).unwrap();
            match damage {
                Damage::Cut(n) => bytes.truncate(n),
                Damage::Flip(at) => bytes[at] ^= 0x5a,
            }
            std::fs::write(&path, &bytes).unwrap();
            match read_all(copy.path(), &f) {
                Err(Error::Corrupt { path: p, .. })
                | Err(Error::UnsupportedVersion { path: p, .. }) => {
                    assert_eq!(p.file_name().unwrap().to_str().unwrap(), name);
                }
                other => panic!("{name}: damage not reported: {other:?}"),
            }
            cases += 1;
        }
    }
    assert!(cases > 100);
}

#[test]
fn a_newer_format_version_is_reported_as_such() {
    let (tmp, f) = damaged_index();
    for name in file_names(tmp.path()) {
        if name == "LOCK" {
            continue;
        }
        let copy = tempfile::tempdir().unwrap();
        copy_dir(tmp.path(), copy.path());
        let path = copy.path().join(&name);
        let mut bytes = std::fs::read(&path).unwrap();
        let newer = quarry::format::FORMAT_VERSION + 1;
        bytes[4..8].copy_from_slice(&newer.to_le_bytes());
        let n = bytes.len();
        let crc = crc32(&bytes[..n - 4]);
        bytes[n - 4..].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let newest = file_names(copy.path())
            .into_iter()
            .filter(|n| n.starts_with("manifest-"))
            .max()
            .unwrap();
        if name.starts_with("manifest-") && name != newest {
            continue;
        }
        match read_all(copy.path(), &f) {
            Err(Error::UnsupportedVersion {
                found, supported, ..
            }) if found == newer && supported == quarry::format::FORMAT_VERSION => {}
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// CRC-32 (IEEE), bitwise; independent of the engine's implementation.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn dropping_a_writer_discards_its_flushed_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let before = file_names(tmp.path());
    let state_before = state(tmp.path(), &f);
    let mut w = IndexWriter::open(tmp.path(), config(IoHooks::new())).unwrap();
    for i in 100..200 {
        w.add_document(&doc(&f, i)).unwrap();
    }
    assert!(
        file_names(tmp.path()).len() > before.len(),
        "segments were flushed"
    );
    drop(w);
    assert_eq!(file_names(tmp.path()), before);
    assert_eq!(state(tmp.path(), &f), state_before);
}

#[test]
fn readers_open_while_a_writer_commits_and_merges() {
    let tmp = tempfile::tempdir().unwrap();
    let f = base_index(tmp.path());
    let dir = tmp.path().to_owned();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (dir, stop) = (dir.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut opened = 0;
                let mut s = Searcher::open(&dir).unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    s = if opened % 2 == 0 {
                        Searcher::open(&dir)
                    } else {
                        s.reopen()
                    }
                    .expect("a reader always finds a complete commit");
                    assert!(s.num_docs() >= 60);
                    opened += 1;
                }
                opened
            })
        })
        .collect();
    let mut w = IndexWriter::open(
        &dir,
        WriterConfig {
            merge_factor: 3,
            ..config(IoHooks::new())
        },
    )
    .unwrap();
    for round in 0..30 {
        for i in 0..10 {
            w.add_document(&doc(&f, 1000 + round * 10 + i)).unwrap();
        }
        w.commit().unwrap();
        if round % 7 == 6 {
            w.merge(1).unwrap();
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
}
