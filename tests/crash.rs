//! The real `quarry` binary killed with SIGKILL at random instants while it
//! flushes, commits, deletes and merges: after every kill the index opens,
//! holds exactly the documents of the last completed commit, and the next
//! writer succeeds. Runs without `--segment-docs` use the default merge
//! policy, whose merges run on the writer's merge thread beside the
//! commit and are finished when the writer closes, so a kill can also
//! land in a background merge or in its publication. Also the lock: a
//! live writer's lock refuses a second writer with a clear error, a
//! killed writer's lock blocks nobody.
//!
//! The kill instants come from a seeded generator, so every run makes the
//! same choices (batches, flags, delays); where in its work a process is at
//! a given delay still depends on the machine's load. Each round therefore
//! checks only invariants that hold at every instant, and the test prints
//! what the kills left behind (run with `--nocapture`). 80 rounds of about
//! 0.2 s each in a debug build; a kill instant is drawn from 0 to 1.5 times
//! a running estimate of how long that kind of run takes, so some runs
//! complete (their commit is acknowledged by the summary line and must be
//! there) and most are killed part-way.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::Rng;

use quarry::format::manifest;
use quarry::{Query, SearchRequest, Searcher, SortKey, SortSpec, TotalMode, Value};

const BIN: &str = env!("CARGO_BIN_EXE_quarry");

const SCHEMA: &str = r#"{"fields": [
  {"name": "id", "type": "i64", "stored": true, "indexed": true, "sortable": true},
  {"name": "body", "type": "text"},
  {"name": "grp", "type": "string", "indexed": true}
]}"#;

/// The model of the index: the live documents, id -> group.
type Model = BTreeMap<i64, String>;

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

fn quarry(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).env_remove("QUARRY_EXEC");
    c
}

fn run(args: &[&str]) -> Output {
    quarry(args).output().expect("run quarry")
}

/// Runs quarry and asserts it succeeds.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "quarry {args:?} failed with {:?}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes documents `ids` (each in group `grp`) as JSONL to `path`.
fn write_docs(path: &Path, ids: &[i64], grp: &str, rng: &mut Rng) {
    let mut text = String::new();
    for &id in ids {
        let words: Vec<String> = (0..rng.range(4, 24))
            .map(|_| format!("w{}", rng.range(0, 300)))
            .collect();
        text.push_str(&format!(
            "{{\"id\": {id}, \"body\": \"common {}\", \"grp\": \"{grp}\"}}\n",
            words.join(" ")
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// The ids of the live documents, read through the library: every
/// document's body holds "common", and the hits of a search sorted by id
/// carry their ids. Panics when the index does not open.
fn live_ids(dir: &Path) -> BTreeSet<i64> {
    let s = Searcher::open(dir).unwrap_or_else(|e| panic!("the index must open: {e}"));
    let id = s.schema().field("id").unwrap();
    let body = s.schema().field("body").unwrap();
    let mut spec = SortSpec::new();
    spec.push(SortKey::Field(id), false);
    let hits = s
        .search(
            &Query::term(body, "common"),
            &SearchRequest {
                sort: Some(spec),
                ..SearchRequest::top(s.max_doc() as usize + 1)
            },
        )
        .unwrap();
    let ids: BTreeSet<i64> = hits
        .hits
        .iter()
        .map(|h| match &h.sort_values[..] {
            [Some(Value::I64(v))] => *v,
            other => panic!("sort values {other:?}"),
        })
        .collect();
    assert_eq!(ids.len() as u64, s.num_docs(), "one hit per live document");
    assert_eq!(hits.hits.len(), ids.len(), "ids are unique");
    // Spot-check the stored values against the sort values.
    for h in hits.hits.iter().step_by(97) {
        let stored = s.stored(h.doc).unwrap();
        assert_eq!(Some(stored[0].1.clone()), h.sort_values[0]);
    }
    ids
}

fn ids_of(m: &Model) -> BTreeSet<i64> {
    m.keys().copied().collect()
}

/// Files in `dir` other than LOCK that the newest manifest does not
/// reference: what a killed writer left behind.
fn unreferenced(dir: &Path) -> Vec<String> {
    let (path, m) = quarry::read::latest_manifest(dir).unwrap().unwrap();
    let mut keep = BTreeSet::from(["LOCK".to_string()]);
    keep.insert(path.file_name().unwrap().to_str().unwrap().to_string());
    for seg in &m.segments {
        keep.insert(manifest::segment_name(seg.id));
        if seg.del_gen != 0 {
            keep.insert(manifest::tombstone_name(seg.id, seg.del_gen));
        }
    }
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !keep.contains(n))
        .collect();
    v.sort();
    v
}

/// What a run is asked to do.
enum Op {
    /// `quarry index` of new documents, with deletes and flags.
    Index {
        add: Vec<i64>,
        grp: String,
        delete_ids: Vec<i64>,
        delete_grp: Option<String>,
        segment_docs: Option<u64>,
        merge: bool,
    },
    /// `quarry merge --max-segments N`.
    Merge(u64),
}

impl Op {
    fn kind(&self) -> usize {
        match self {
            Op::Index { merge: false, .. } => 0,
            Op::Index { merge: true, .. } => 1,
            Op::Merge(_) => 2,
        }
    }

    /// The model after the run commits.
    fn apply(&self, before: &Model) -> Model {
        let mut m = before.clone();
        if let Op::Index {
            add,
            grp,
            delete_ids,
            delete_grp,
            ..
        } = self
        {
            for id in delete_ids {
                m.remove(id);
            }
            if let Some(g) = delete_grp {
                m.retain(|_, v| v != g);
            }
            for &id in add {
                m.insert(id, grp.clone());
            }
        }
        m
    }

    /// Writes the run's input files to `work` and returns its arguments.
    fn args(&self, dir: &Path, schema: &Path, work: &Path, rng: &mut Rng) -> Vec<String> {
        let dir = s(dir).to_string();
        match self {
            Op::Merge(n) => vec!["merge".into(), dir, "--max-segments".into(), n.to_string()],
            Op::Index {
                add,
                grp,
                delete_ids,
                delete_grp,
                segment_docs,
                merge,
            } => {
                let input = work.join("batch.jsonl");
                write_docs(&input, add, grp, rng);
                let mut args = vec![
                    "index".into(),
                    dir,
                    "--schema".into(),
                    s(schema).into(),
                    "--input".into(),
                    s(&input).into(),
                ];
                if !delete_ids.is_empty() || delete_grp.is_some() {
                    let path = work.join("deletes.jsonl");
                    let mut text: String = delete_ids
                        .iter()
                        .map(|id| format!("{{\"id\": {id}}}\n"))
                        .collect();
                    if let Some(g) = delete_grp {
                        text.push_str(&format!("{{\"grp\": \"{g}\"}}\n"));
                    }
                    std::fs::write(&path, text).unwrap();
                    args.extend(["--deletes".into(), s(&path).into()]);
                }
                if let Some(n) = segment_docs {
                    args.extend(["--segment-docs".into(), n.to_string()]);
                }
                if *merge {
                    args.push("--merge".into());
                }
                args
            }
        }
    }
}

/// Chooses round `round`'s operation on an index holding `model`.
fn choose(rng: &mut Rng, round: usize, model: &Model, next_id: &mut i64) -> Op {
    if rng.chance(15) {
        return Op::Merge(rng.range(1, 4));
    }
    let n = rng.range(50, 400) as i64;
    let add: Vec<i64> = (*next_id..*next_id + n).collect();
    *next_id += n;
    let live: Vec<i64> = model.keys().copied().collect();
    let mut delete_ids = Vec::new();
    if rng.chance(50) && !live.is_empty() {
        for _ in 0..rng.range(1, 30) {
            delete_ids.push(live[rng.range(0, live.len() as u64) as usize]);
        }
    }
    let groups: BTreeSet<&String> = model.values().collect();
    let delete_grp = (rng.chance(25) && !groups.is_empty()).then(|| {
        let g: Vec<&&String> = groups.iter().collect();
        (*g[rng.range(0, g.len() as u64) as usize]).clone()
    });
    Op::Index {
        add,
        grp: format!("r{round}"),
        delete_ids,
        delete_grp,
        // Many small segments most of the time (many flushes); otherwise
        // the default policy, which merges automatically after commits.
        segment_docs: rng.chance(75).then(|| rng.range(10, 120)),
        merge: rng.chance(25),
    }
}

/// Waits for `child` with SIGKILL sent after `delay`. Returns its output
/// and whether the kill (not the process) ended it.
fn kill_after(mut child: Child, delay: Duration) -> (Output, bool) {
    let start = Instant::now();
    // Poll so that a run that ends early is not waited for the whole delay.
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let elapsed = start.elapsed();
        if elapsed >= delay {
            let _ = child.kill();
            break;
        }
        std::thread::sleep((delay - elapsed).min(Duration::from_micros(500)));
    }
    let out = child.wait_with_output().unwrap();
    let killed = {
        use std::os::unix::process::ExitStatusExt;
        out.status.signal() == Some(libc::SIGKILL)
    };
    (out, killed)
}

#[derive(Default, Debug)]
struct Tally {
    rounds: usize,
    killed: usize,
    completed: usize,
    killed_before_commit: usize,
    killed_after_commit: usize,
    left_segments: usize,
    left_tombstones: usize,
    left_tmp_manifest: usize,
    left_old_manifest: usize,
    /// Seconds in the killed or completed runs, the recovering runs, and
    /// the checks.
    run_secs: f64,
    recover_secs: f64,
    check_secs: f64,
}

#[test]
fn sigkill_at_random_instants_never_loses_a_commit_or_blocks_the_next_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let schema = tmp.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut rng = Rng(0x5eed_c4a5_0001);

    // A first commit, not killed.
    let mut model = Model::new();
    let first: Vec<i64> = (0..300).collect();
    write_docs(&work.join("first.jsonl"), &first, "r0", &mut rng);
    let t = Instant::now();
    ok(&[
        "index",
        s(&dir),
        "--schema",
        s(&schema),
        "--input",
        s(&work.join("first.jsonl")),
        "--segment-docs",
        "50",
    ]);
    // How long a run takes, per kind of operation (indexing, indexing and
    // merging, merging): kill instants are drawn from 0 to a bit past it,
    // and each run that completes moves it halfway to its own time.
    let mut full = [t.elapsed() * 2, t.elapsed() * 3, t.elapsed()];
    for &id in &first {
        model.insert(id, "r0".into());
    }
    assert_eq!(live_ids(&dir), ids_of(&model));

    let mut next_id = 1000i64;
    let mut tally = Tally::default();
    // A reader opens the index over and over while writers are killed and
    // recover: every open finds a complete commit (a reader that loses a
    // file to a writer's clean-up retries on the newest manifest).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (dir, stop) = (dir.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut opens = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let s = Searcher::open(&dir).expect("a reader always finds a complete commit");
                let body = s.schema().field("body").unwrap();
                let hits = s
                    .search(
                        &Query::term(body, "common"),
                        &SearchRequest::top(1).with_total(TotalMode::Exact),
                    )
                    .unwrap();
                assert_eq!(hits.total_hits, s.num_docs());
                opens += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            opens
        })
    };
    let started = Instant::now();
    const ROUNDS: usize = 80;
    for round in 1..=ROUNDS {
        tally.rounds += 1;
        let op = choose(&mut rng, round, &model, &mut next_id);
        let after = op.apply(&model);
        let args = op.args(&dir, &schema, &work, &mut rng);
        let args: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
        let kind = op.kind();
        let limit = full[kind].as_micros() as u64 * 3 / 2 + 1;
        let delay = Duration::from_micros(rng.range(0, limit));
        let t = Instant::now();
        let child = quarry(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (out, killed) = kill_after(child, delay);
        let took = t.elapsed();
        tally.run_secs += took.as_secs_f64();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let t = Instant::now();
        let ids = live_ids(&dir);
        tally.check_secs += t.elapsed().as_secs_f64();
        if killed {
            tally.killed += 1;
            // Exactly the last completed commit: the one before the run, or
            // the run's own when it was killed after committing (during the
            // merge that follows, or while exiting). Never a mix.
            if ids == ids_of(&model) {
                tally.killed_before_commit += 1;
            } else {
                assert_eq!(
                    ids,
                    ids_of(&after),
                    "round {round}: killed after {delay:?}: neither the last commit nor the run's"
                );
                tally.killed_after_commit += 1;
                model = after;
            }
            let left = unreferenced(&dir);
            tally.left_segments += left.iter().any(|n| n.ends_with(".qsg")) as usize;
            tally.left_tombstones += left.iter().any(|n| n.ends_with(".qdl")) as usize;
            tally.left_tmp_manifest += left.iter().any(|n| n.ends_with(".tmp")) as usize;
            tally.left_old_manifest += left.iter().any(|n| n.ends_with(".qmf")) as usize;

            // The next writer succeeds on what the kill left: it flushes a
            // segment per document (so it needs the segment ids the killed
            // run may have used), deletes, and commits.
            let add = [next_id, next_id + 1, next_id + 2];
            next_id += 3;
            write_docs(&work.join("recover.jsonl"), &add, "rec", &mut rng);
            let victim = model.keys().next_back().copied();
            let del = victim.map_or(String::new(), |v| format!("{{\"id\": {v}}}\n"));
            std::fs::write(work.join("recover-del.jsonl"), del).unwrap();
            let t = Instant::now();
            ok(&[
                "index",
                s(&dir),
                "--input",
                s(&work.join("recover.jsonl")),
                "--deletes",
                s(&work.join("recover-del.jsonl")),
                "--segment-docs",
                "1",
            ]);
            tally.recover_secs += t.elapsed().as_secs_f64();
            if let Some(v) = victim {
                model.remove(&v);
            }
            for id in add {
                model.insert(id, "rec".into());
            }
        } else {
            // Not killed: the run must have succeeded (an error exit is the
            // bug this test is about) and its commit is acknowledged.
            assert!(
                out.status.success(),
                "round {round}: quarry {args:?} failed with {:?}:\n{stderr}",
                out.status
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            let ack = if kind == 2 { "merged " } else { "indexed " };
            assert!(stdout.starts_with(ack), "round {round}: {stdout}");
            tally.completed += 1;
            full[kind] = (full[kind] + took) / 2;
            assert_eq!(
                ids,
                ids_of(&after),
                "round {round}: the acknowledged commit"
            );
            model = after;
        }
        // After a completed writer the index is exactly the model, and the
        // directory holds nothing the newest manifest does not reference.
        let t = Instant::now();
        if killed {
            assert_eq!(live_ids(&dir), ids_of(&model), "round {round}");
        }
        assert_eq!(unreferenced(&dir), Vec::<String>::new(), "round {round}");
        tally.check_secs += t.elapsed().as_secs_f64();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let opens = reader.join().expect("the reader thread");
    eprintln!(
        "{ROUNDS} rounds in {:.1} s, {opens} reader opens: {tally:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(opens > 0);
    // Many rounds are killed part-way, some complete, and the kills must
    // have met the case of the bug report: segments flushed, never committed.
    assert!(tally.killed >= ROUNDS / 3, "{tally:?}");
    assert!(tally.completed >= ROUNDS / 10, "{tally:?}");
    assert!(tally.killed_before_commit >= ROUNDS / 5, "{tally:?}");
    assert!(tally.left_segments >= ROUNDS / 10, "{tally:?}");
}

#[test]
fn a_run_killed_while_creating_the_index_leaves_nothing_or_a_whole_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = tmp.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    let mut rng = Rng(0x5eed_c4a5_0002);
    let batch: Vec<i64> = (0..200).collect();
    let input = tmp.path().join("batch.jsonl");
    write_docs(&input, &batch, "a", &mut rng);
    let more = tmp.path().join("more.jsonl");
    write_docs(&more, &[1000, 1001], "b", &mut rng);
    let create = |dir: &Path, input: &Path| {
        quarry(&[
            "index",
            s(dir),
            "--schema",
            s(&schema),
            "--input",
            s(input),
            "--segment-docs",
            "20",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    };
    let t = Instant::now();
    let (out, _) = kill_after(create(&tmp.path().join("calibrate"), &input), Duration::MAX);
    assert!(out.status.success());
    let full = t.elapsed().as_micros() as u64;
    let (mut none, mut empty, mut whole) = (0, 0, 0);
    for round in 0..12 {
        let dir = tmp.path().join(format!("idx{round}"));
        let delay = Duration::from_micros(rng.range(0, full * 5 / 4));
        let (out, killed) = kill_after(create(&dir, &input), delay);
        assert!(
            killed || out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // No commit yet, the empty first commit, or the whole batch.
        let has_index = dir.is_dir() && quarry::read::latest_manifest(&dir).unwrap().is_some();
        let before: BTreeSet<i64> = if has_index {
            live_ids(&dir)
        } else {
            BTreeSet::new()
        };
        match (has_index, before.len()) {
            (false, _) => none += 1,
            (true, 0) => empty += 1,
            (true, 200) => whole += 1,
            (true, n) => panic!("round {round}: a partial batch of {n} documents"),
        }
        if !killed {
            assert_eq!(before.len(), 200, "round {round}: the run completed");
        }
        // The same command with more documents then succeeds.
        let (out, _) = kill_after(create(&dir, &more), Duration::MAX);
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut expected = before;
        expected.extend([1000, 1001]);
        assert_eq!(live_ids(&dir), expected, "round {round}");
        assert_eq!(unreferenced(&dir), Vec::<String>::new(), "round {round}");
    }
    eprintln!(
        "killed while creating: {none} before the first commit, {empty} after it, {whole} after the batch"
    );
}

/// Starts `quarry index DIR --input -` and feeds it one document; it holds
/// the index's lock while it waits for more input.
fn writer_waiting_on_stdin(dir: &Path, id: i64) -> Child {
    let mut child = quarry(&["index", s(dir), "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = format!("{{\"id\": {id}, \"body\": \"common held\", \"grp\": \"held\"}}\n");
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    child
}

/// Waits until `child` holds the lock of `dir` (a writer writes its pid
/// into LOCK once it holds the lock), then runs a second writer, which must
/// fail; returns its stderr.
fn second_writer_fails(dir: &Path, child: &mut Child, empty: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = format!("{}\n", child.id());
    while std::fs::read_to_string(dir.join("LOCK")).ok().as_deref() != Some(pid.as_str()) {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the writer exited with {status:?}: {err}");
        }
        assert!(Instant::now() < deadline, "the writer never took the lock");
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = run(&["index", s(dir), "--input", s(empty)]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn a_live_writer_refuses_a_second_one_and_a_killed_writer_blocks_nobody() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let schema = tmp.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    let mut rng = Rng(7);
    let first = tmp.path().join("first.jsonl");
    write_docs(&first, &[1, 2, 3], "a", &mut rng);
    ok(&[
        "index",
        s(&dir),
        "--schema",
        s(&schema),
        "--input",
        s(&first),
    ]);
    let empty = tmp.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();

    // A live writer: a second one fails with a clear error and leaves the
    // index (and the live writer's work) alone.
    let mut held = writer_waiting_on_stdin(&dir, 10);
    let err = second_writer_fails(&dir, &mut held, &empty);
    assert!(
        err.contains("locked by another writer") && err.contains(s(&dir)),
        "{err}"
    );
    assert!(
        err.contains(&format!("process {} holds", held.id())),
        "{err}"
    );
    let before = live_ids(&dir);
    assert_eq!(before, BTreeSet::from([1, 2, 3]));
    // A run with its own --schema against the held index is refused too.
    let err = String::from_utf8_lossy(
        &run(&[
            "index",
            s(&dir),
            "--schema",
            s(&schema),
            "--input",
            s(&first),
        ])
        .stderr,
    )
    .into_owned();
    assert!(err.contains("locked by another writer"), "{err}");
    drop(held.stdin.take());
    let out = held.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(live_ids(&dir), BTreeSet::from([1, 2, 3, 10]));

    // A killed writer leaves LOCK behind; the next writer takes it over at
    // once, and the killed writer's document was never committed.
    let mut held = writer_waiting_on_stdin(&dir, 11);
    second_writer_fails(&dir, &mut held, &empty);
    held.kill().unwrap();
    held.wait().unwrap();
    assert!(dir.join("LOCK").exists());
    let more = tmp.path().join("more.jsonl");
    write_docs(&more, &[20], "b", &mut rng);
    ok(&["index", s(&dir), "--input", s(&more), "--segment-docs", "1"]);
    assert_eq!(live_ids(&dir), BTreeSet::from([1, 2, 3, 10, 20]));
    assert_eq!(unreferenced(&dir), Vec::<String>::new());
}

/// Names and contents of every file in `dir` but LOCK.
fn dir_state(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "LOCK")
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn delete_terms_replace_documents_and_bad_ones_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let schema = tmp.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    let mut rng = Rng(11);
    let first = tmp.path().join("first.jsonl");
    write_docs(&first, &[1, 2, 3, 4], "a", &mut rng);
    let second = tmp.path().join("second.jsonl");
    write_docs(&second, &[5, 6], "b", &mut rng);
    ok(&[
        "index",
        s(&dir),
        "--schema",
        s(&schema),
        "--input",
        s(&first),
        "--segment-docs",
        "2",
    ]);
    ok(&["index", s(&dir), "--input", s(&second)]);

    // Replace document 2: delete it and add it again in one run. Deletes
    // apply before the run's documents, so the new version survives.
    let dels = tmp.path().join("dels.jsonl");
    std::fs::write(&dels, "{\"id\": 2}\n\n{\"grp\": \"b\"}\n").unwrap();
    let again = tmp.path().join("again.jsonl");
    write_docs(&again, &[2], "c", &mut rng);
    let out = ok(&[
        "index",
        s(&dir),
        "--input",
        s(&again),
        "--deletes",
        s(&dels),
    ]);
    assert!(out.contains("2 delete terms"), "{out}");
    assert_eq!(live_ids(&dir), BTreeSet::from([1, 2, 3, 4]));
    let s2 = Searcher::open(&dir).unwrap();
    let grp = s2.schema().field("grp").unwrap();
    let hits = s2
        .search(&Query::term(grp, "c"), &SearchRequest::top(10))
        .unwrap();
    assert_eq!(hits.total_hits, 1, "document 2 is the new version");

    let state = dir_state(&dir);
    let cases: &[(&str, &str)] = &[
        ("{\"id\": 1}\n{\"body\": \"x\"}\n", "line 2"),
        ("{\"nope\": 1}\n", "unknown field"),
        ("{\"id\": \"1\"}\n", "is i64"),
        ("{\"id\": 1.5}\n", "i64"),
        ("{\"grp\": 3}\n", "is string"),
        ("{\"id\": 1, \"grp\": \"a\"}\n", "exactly one field"),
        ("[1]\n", "JSON object"),
        ("{\"id\": 1\n", "malformed JSON"),
    ];
    for (text, what) in cases {
        std::fs::write(&dels, text).unwrap();
        for extra in [&[][..], &["--segment-docs", "1"][..]] {
            let mut args = vec![
                "index",
                s(&dir),
                "--input",
                s(&again),
                "--deletes",
                s(&dels),
            ];
            args.extend_from_slice(extra);
            let out = run(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{text:?}: {err}");
            assert!(err.contains("dels.jsonl") && err.contains(what), "{err}");
            assert_eq!(dir_state(&dir), state, "{text:?}: the index changed");
        }
    }
    let missing: PathBuf = tmp.path().join("missing.jsonl");
    let out = run(&[
        "index",
        s(&dir),
        "--input",
        s(&again),
        "--deletes",
        s(&missing),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.jsonl"));
    assert_eq!(dir_state(&dir), state);
}
