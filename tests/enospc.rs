//! A full disk during flush, commit and merge: the operation fails with
//! the error, the index stays the last commit, and the same writer
//! carries on once space returns, leaving no garbage after its next
//! commit. Injected at every file-system step in turn, and for real on a
//! small tmpfs where a mount namespace can be made.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use quarry::write::IoHooks;
use quarry::*;

mod common;

struct Fields {
    id: FieldId,
    body: FieldId,
}

fn schema() -> (Schema, Fields) {
    let mut s = Schema::new();
    let (id, body) = common::add_id_and_body(&mut s, true);
    (s, Fields { id, body })
}

fn doc(f: &Fields, i: i64) -> Document {
    let vocab = ["river", "stone", "quarry", "granite", "sand", "clay"];
    let text: Vec<&str> = (0..i % 5 + 1)
        .map(|j| vocab[((i + j * j) % 6) as usize])
        .collect();
    let mut d = Document::new();
    d.add_i64(f.id, i).add_str(f.body, &text.join(" "));
    d
}

/// Merges within the commit: the steps are then the same in every run,
/// so each can be made to fail in turn.
fn config(io: Arc<IoHooks>) -> WriterConfig {
    WriterConfig {
        max_docs_per_segment: Some(10),
        merge_factor: 3,
        background_merges: false,
        io,
        ..Default::default()
    }
}

/// An index of documents `0..20`, committed.
fn base_index(dir: &Path) -> Fields {
    let (schema, f) = schema();
    let mut w = IndexWriter::create(dir, &schema, config(Arc::new(IoHooks::new()))).unwrap();
    for i in 0..20 {
        w.add_document(&doc(&f, i)).unwrap();
    }
    w.commit().unwrap();
    f
}

/// The ids of the committed live documents, as a new searcher sees them.
fn on_disk(dir: &Path, f: &Fields) -> BTreeSet<i64> {
    let s = Searcher::open(dir).expect("the index opens");
    common::live_ids(&s, f.id).into_iter().collect()
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Add(i64),
    Delete(i64),
    Commit,
    Merge,
}

/// Adds (flushing every 10 documents), deletes, commits (with automatic
/// merges) and an explicit merge. Every step of writing a file is a point
/// of failure, one per term of a segment among them, hence a small corpus.
fn workload() -> Vec<Op> {
    let mut ops: Vec<Op> = (20..45).map(Op::Add).collect();
    ops.extend((0..45).step_by(7).map(Op::Delete));
    ops.push(Op::Commit);
    ops.extend((45..55).map(Op::Add));
    ops.extend((1..55).step_by(11).map(Op::Delete));
    ops.push(Op::Merge);
    ops.extend((55..60).map(Op::Add));
    ops.push(Op::Commit);
    ops
}

/// What a writer and the index hold: every acknowledged change, and the
/// changes of the last published commit.
#[derive(Default)]
struct Model {
    live: BTreeSet<i64>,
    committed: BTreeSet<i64>,
}

impl Model {
    /// Runs `op` on `w` and, when it succeeds, records it.
    fn run(&mut self, w: &mut IndexWriter, f: &Fields, op: Op) -> Result<()> {
        let generation = w.generation();
        let r = match op {
            Op::Add(i) => w.add_document(&doc(f, i)).map(|()| {
                self.live.insert(i);
            }),
            Op::Delete(i) => w.delete_term(f.id, &Value::I64(i)).map(|()| {
                self.live.remove(&i);
            }),
            Op::Commit => w.commit().map(drop),
            Op::Merge => w.merge(1).map(drop),
        };
        // A commit is published by its manifest's rename: an error after it
        // (a merge that follows, the directory fsync) still leaves it
        // visible, and the writer's generation says so.
        if w.generation() != generation {
            self.committed = self.live.clone();
        }
        r
    }
}

fn is_enospc(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC))
}

/// The two tests take turns: a child process forked by one holds copies
/// of the other's descriptors until it execs, the writer's lock among
/// them, and a writer opened in that instant would find the lock held.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_full_disk_at_any_step_fails_cleanly_and_the_same_writer_recovers() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Count the steps of the workload.
    let tmp = common::fast_tempdir();
    let f = base_index(tmp.path());
    let hooks = Arc::new(IoHooks::new());
    let mut w = IndexWriter::open(tmp.path(), config(hooks.clone())).unwrap();
    let mut model = Model {
        live: (0..20).collect(),
        ..Default::default()
    };
    for op in workload() {
        model.run(&mut w, &f, op).unwrap();
    }
    drop(w);
    let steps = hooks.steps();
    let expected = model.live.clone();
    assert_eq!(on_disk(tmp.path(), &f), expected);
    assert!(steps > 40, "{steps} steps");

    let mut failed_in = std::collections::BTreeMap::<&str, u32>::new();
    for n in 0..steps {
        let tmp = common::fast_tempdir();
        let f = base_index(tmp.path());
        let hooks = Arc::new(IoHooks::fail_at(n));
        let mut w = IndexWriter::open(tmp.path(), config(hooks.clone())).unwrap();
        let mut model = Model {
            live: (0..20).collect(),
            committed: (0..20).collect(),
        };
        let mut failed = false;
        for op in workload() {
            let Err(e) = model.run(&mut w, &f, op) else {
                continue;
            };
            assert!(
                !failed,
                "step {n}: {op:?} failed after the disk had space: {e}"
            );
            assert!(is_enospc(&e), "step {n}: {op:?}: {e:?}");
            failed = true;
            *failed_in
                .entry(match op {
                    Op::Add(_) => "flush",
                    Op::Delete(_) => "delete",
                    Op::Commit => "commit",
                    Op::Merge => "merge",
                })
                .or_default() += 1;
            // The index is the last commit, whatever the failed step left.
            assert_eq!(on_disk(tmp.path(), &f), model.committed, "step {n}: {op:?}");
            // Space returns; the same writer retries and goes on.
            hooks.lift();
            model
                .run(&mut w, &f, op)
                .unwrap_or_else(|e| panic!("step {n}: retrying {op:?}: {e}"));
        }
        assert!(failed || n >= steps - 8, "step {n} never failed");
        // One more commit with space: every acknowledged change is in it,
        // and nothing the failure left behind survives it.
        hooks.lift();
        model.run(&mut w, &f, Op::Commit).unwrap();
        assert_eq!(model.live, expected, "step {n}");
        assert_eq!(on_disk(tmp.path(), &f), expected, "step {n}");
        assert_eq!(
            common::unreferenced(tmp.path()),
            Vec::<String>::new(),
            "step {n}"
        );
    }
    for kind in ["flush", "commit", "merge"] {
        assert!(failed_in.get(kind).is_some_and(|&c| c > 3), "{failed_in:?}");
    }
}

/// A full disk while merges run on the merge thread: each step of a
/// commit that starts merges, of the merges and of publishing them fails
/// in turn, once (a transient full disk, on whichever thread reaches the
/// step). Whatever failed, the index stays the last commit with every
/// acknowledged document, no partial merged file survives, the failure is
/// reported by a later call (a commit, or waiting for the merges), and
/// once the writer reported it the merges go through; the next commit
/// leaves no garbage.
#[test]
fn a_full_disk_during_a_background_merge_loses_nothing_and_is_reported() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let background = |io| WriterConfig {
        background_merges: true,
        ..config(io)
    };
    // 20 documents in two segments, then 40 more: six segments, over the
    // budget (factor 3), so the commit starts a merge.
    let workload = |w: &mut IndexWriter, f: &Fields| -> Result<u64> {
        for i in 20..60 {
            w.add_document(&doc(f, i))?;
        }
        w.commit()?;
        w.wait_merges()
    };
    let tmp = common::fast_tempdir();
    let f = base_index(tmp.path());
    let hooks = Arc::new(IoHooks::new());
    let mut w = IndexWriter::open(tmp.path(), background(hooks.clone())).unwrap();
    workload(&mut w, &f).unwrap();
    let merged = Searcher::open(tmp.path())
        .unwrap()
        .snapshot()
        .segments()
        .len();
    assert!(merged < 6, "{merged} segments: the policy merged");
    drop(w);
    let steps = hooks.steps();
    let all: BTreeSet<i64> = (0..60).collect();

    let mut reported_late = 0;
    for n in 0..steps {
        let tmp = common::fast_tempdir();
        let f = base_index(tmp.path());
        let hooks = Arc::new(IoHooks::fail_once_at(n));
        let mut w = IndexWriter::open(tmp.path(), background(hooks.clone())).unwrap();
        let mut committed = false;
        let mut errors = 0;
        // Adding (flushes), committing, then waiting for the merges; an
        // add or commit that fails is retried (the disk has space again).
        for i in 20..60 {
            if let Err(e) = w.add_document(&doc(&f, i)) {
                assert!(is_enospc(&e), "step {n}: {e:?}");
                errors += 1;
                w.add_document(&doc(&f, i)).unwrap();
            }
        }
        let generation = w.generation();
        match w.commit() {
            Ok(_) => committed = true,
            Err(e) => {
                assert!(is_enospc(&e), "step {n}: {e:?}");
                errors += 1;
                committed |= w.generation() != generation;
            }
        }
        if !committed {
            w.commit().unwrap();
        }
        // Every acknowledged document is committed, merges or not.
        assert_eq!(on_disk(tmp.path(), &f), all, "step {n}");
        match w.wait_merges() {
            Ok(_) => {}
            Err(e) => {
                assert!(is_enospc(&e), "step {n}: {e:?}");
                errors += 1;
                reported_late += 1;
                assert_eq!(on_disk(tmp.path(), &f), all, "step {n}");
                // Reported once; the merge is chosen again and now works.
                w.wait_merges()
                    .unwrap_or_else(|e| panic!("step {n}: merging again: {e}"));
            }
        }
        assert!(errors <= 1, "step {n}: one failure, {errors} errors");
        assert_eq!(on_disk(tmp.path(), &f), all, "step {n}");
        let s = Searcher::open(tmp.path()).unwrap();
        assert_eq!(s.snapshot().segments().len(), merged, "step {n}");
        // What a failed removal left goes with the next commit.
        w.commit().unwrap();
        drop(w);
        assert_eq!(
            common::unreferenced(tmp.path()),
            Vec::<String>::new(),
            "step {n}"
        );
    }
    // Some failures hit the merge thread and came back by waiting.
    assert!(reported_late > 3, "{reported_late} merge failures");
}

const TMPFS_CHILD: &str = "QUARRY_TEST_TMPFS_CHILD";

/// Fills the file system holding `path` by writing it until the disk is
/// full.
fn fill(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5au8; 4096];
    loop {
        match f.write_all(&chunk).and_then(|()| f.sync_all()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => return,
            Err(e) => panic!("filling: {e}"),
        }
    }
}

/// The child: in its own user and mount namespace it mounts a small tmpfs
/// and runs out of space on it for real.
fn tmpfs_child() {
    let mnt = common::fast_tempdir();
    let st = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "quarry-enospc"])
        .arg(mnt.path())
        .status()
        .unwrap();
    assert!(st.success(), "mount tmpfs: {st:?}");
    let dir = mnt.path().join("index");
    let ballast = mnt.path().join("ballast");
    let f = base_index(&dir);
    let hooks = Arc::new(IoHooks::new());
    let mut w = IndexWriter::open(&dir, config(hooks)).unwrap();
    let mut model = Model {
        live: (0..20).collect(),
        committed: (0..20).collect(),
    };

    // Flush and commit on a full disk.
    fill(&ballast);
    let mut ops: Vec<Op> = (1000..1300).map(Op::Add).collect();
    ops.push(Op::Commit);
    let mut failures = 0;
    for op in ops {
        if let Err(e) = model.run(&mut w, &f, op) {
            assert!(is_enospc(&e), "{op:?}: {e:?}");
            failures += 1;
            assert_eq!(on_disk(&dir, &f), model.committed, "{op:?}");
            std::fs::remove_file(&ballast).unwrap();
            model.run(&mut w, &f, op).unwrap();
            fill(&ballast);
        }
    }
    assert!(failures > 0, "the full disk never made the writer fail");
    std::fs::remove_file(&ballast).unwrap();
    model.run(&mut w, &f, Op::Commit).unwrap();
    assert_eq!(on_disk(&dir, &f), model.live);
    assert_eq!(model.live.len(), 320);
    assert_eq!(common::unreferenced(&dir), Vec::<String>::new());

    // A merge on a full disk.
    let segments = Searcher::open(&dir).unwrap().snapshot().segments().len();
    assert!(segments > 1);
    fill(&ballast);
    let e = model.run(&mut w, &f, Op::Merge).unwrap_err();
    assert!(is_enospc(&e), "{e:?}");
    assert_eq!(on_disk(&dir, &f), model.live);
    std::fs::remove_file(&ballast).unwrap();
    model.run(&mut w, &f, Op::Merge).unwrap();
    let s = Searcher::open(&dir).unwrap();
    assert_eq!(s.snapshot().segments().len(), 1);
    assert_eq!(on_disk(&dir, &f), model.live);
    assert_eq!(common::unreferenced(&dir), Vec::<String>::new());
    drop((s, w));
    let st = std::process::Command::new("umount")
        .arg(mnt.path())
        .status()
        .unwrap();
    assert!(st.success());
    eprintln!("child: done after {failures} failures");
}

#[test]
fn a_real_full_tmpfs_fails_cleanly_and_the_writer_recovers_when_space_returns() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if std::env::var_os(TMPFS_CHILD).is_some() {
        tmpfs_child();
        return;
    }
    // A user and mount namespace lets an unprivileged process mount a
    // tmpfs of its own (where the kernel allows user namespaces).
    let usable = std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        common::skip_or_fail(
            "`unshare -rm` cannot make a mount namespace here",
            "the real disk-full test",
        );
        return;
    }
    let out = common::rerun_self(
        "a_real_full_tmpfs_fails_cleanly_and_the_writer_recovers_when_space_returns",
        &[(TMPFS_CHILD, "1")],
        &["unshare", "-rm"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stderr.contains("child: done"),
        "{:?}\n{stdout}\n{stderr}",
        out.status
    );
}
