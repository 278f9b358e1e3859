//! Helpers shared by the integration tests: the schema fields most of them
//! start with, and, for the tests that use the C library from outside, where
//! the built library is and which tools are installed.
//!
//! Each test crate uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use quarry::{FieldFlags, FieldId, FieldType, IndexWriter, Schema, WriterConfig};

/// Adds the two fields most tests start with: `id`, an i64 that is stored
/// and indexed (so documents can be deleted by id), then `body`, a text
/// field that is stored when `store_body` is set.
pub fn add_id_and_body(schema: &mut Schema, store_body: bool) -> (FieldId, FieldId) {
    let id = schema
        .add_field(
            "id",
            FieldType::I64,
            FieldFlags {
                stored: true,
                indexed: true,
                sortable: false,
            },
        )
        .unwrap();
    let body = schema
        .add_field(
            "body",
            FieldType::Text,
            FieldFlags {
                stored: store_body,
                ..Default::default()
            },
        )
        .unwrap();
    (id, body)
}

/// The fields of [`id_body_year`].
pub struct IdBodyYear {
    /// A stored, indexed `i64`.
    pub id: FieldId,
    /// A stored text field.
    pub body: FieldId,
    /// A sortable `i64`.
    pub year: FieldId,
}

/// A writer of a new index at `dir` with [`add_id_and_body`]'s fields
/// (body not stored), cutting segments at `segment_docs` documents.
pub fn id_body_writer(dir: &Path, segment_docs: Option<u32>) -> (IndexWriter, FieldId, FieldId) {
    let mut schema = Schema::new();
    let (id, body) = add_id_and_body(&mut schema, false);
    let config = WriterConfig {
        max_docs_per_segment: segment_docs,
        ..Default::default()
    };
    (IndexWriter::create(dir, &schema, config).unwrap(), id, body)
}

/// A schema of `id` and `body` (see [`add_id_and_body`], with the body
/// stored) and `year`, a sortable `i64`.
pub fn id_body_year() -> (Schema, IdBodyYear) {
    let mut s = Schema::new();
    let (id, body) = add_id_and_body(&mut s, true);
    let year = s
        .add_field(
            "year",
            FieldType::I64,
            FieldFlags {
                sortable: true,
                ..Default::default()
            },
        )
        .unwrap();
    (s, IdBodyYear { id, body, year })
}

/// A document of [`id_body_year`]'s fields: `id`, a body of 1 to
/// `max_words` words of `words` chosen with a skew towards the first ones
/// (so scores and frequencies vary), and a year in 2000..2005.
pub fn skewed_doc(
    f: &IdBodyYear,
    id: i64,
    words: &[&str],
    max_words: usize,
    rng: &mut Rng,
) -> quarry::Document {
    let n = 1 + rng.below(max_words);
    let text: Vec<&str> = (0..n)
        .map(|_| {
            let top = 1 + rng.below(words.len());
            words[rng.below(top)]
        })
        .collect();
    let mut d = quarry::Document::new();
    d.add_i64(f.id, id)
        .add_str(f.body, &text.join(" "))
        .add_i64(f.year, 2000 + rng.below(5) as i64);
    d
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `tool --version` runs and succeeds.
pub fn have(tool: &str) -> bool {
    succeeds(Command::new(tool).arg("--version"))
}

/// Whether `cmd` runs and exits 0 (its output discarded).
pub fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The environment variable that turns every skip for a missing tool into
/// a failure; `.ci/run` sets it, so CI cannot pass by skipping.
pub const REQUIRE_TOOLS: &str = "QUARRY_REQUIRE_TOOLS";

/// The one decision of every test that needs a tool the Rust toolchain
/// does not bring: `true` when `tool` is installed (`tool --version`
/// succeeds); otherwise a printed note and `false` (the test skips what
/// needs it), or, with `QUARRY_REQUIRE_TOOLS=1`, a test failure.
pub fn tool_available(tool: &str, what: &str) -> bool {
    have(tool) || skip_or_fail(&format!("{tool} is not installed"), what)
}

/// For a missing capability that is not a plain tool (a Python module, a
/// compiler feature): prints `note: {reason}; skipping {what}` and returns
/// `false`, or panics when `QUARRY_REQUIRE_TOOLS=1` is set.
pub fn skip_or_fail(reason: &str, what: &str) -> bool {
    if std::env::var_os(REQUIRE_TOOLS).is_some_and(|v| v == "1") {
        panic!(
            "{reason}, so {what} cannot run, and {REQUIRE_TOOLS}=1 forbids skipping it \
             (scripts/setup.sh installs what the tests need)"
        );
    }
    println!("note: {reason}; skipping {what} (set {REQUIRE_TOOLS}=1 to make this a failure)");
    false
}

/// `target/<profile>`: the test binary lives in `target/<profile>/deps`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/<profile>/deps")
        .to_owned()
}

/// The directory holding this build's `libquarry.so` and `libquarry.a`.
///
/// `cargo test` compiles the library for the test binaries but does not
/// link the cdylib and staticlib into `target/<profile>`, so the first call
/// runs `cargo build --lib` for the same profile and target directory
/// (cargo rebuilds only what is stale, so the libraries always match the
/// sources under test).
pub fn built_library_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile = profile_dir();
            let target = profile.parent().expect("target/<profile>").to_owned();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--lib", "--quiet"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env("CARGO_TARGET_DIR", &target);
            if profile.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let o = cmd.output().expect("run cargo build --lib");
            assert!(
                o.status.success(),
                "cargo build --lib failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            for lib in ["libquarry.so", "libquarry.a"] {
                assert!(
                    profile.join(lib).exists(),
                    "{lib} is missing: the [lib] crate-type must include cdylib and staticlib"
                );
            }
            profile
        })
        .clone()
}

/// Rewrites the CRC-32 footer of an index file after its body was edited,
/// so the damage is structural, not a checksum mismatch.
pub fn fix_crc(bytes: &mut [u8]) {
    let n = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
}

/// Byte range `(offset, len)` of section `kind` in a segment file, from
/// its directory.
pub fn section(bytes: &[u8], kind: u32) -> (usize, usize) {
    let le64 = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let end = bytes.len() - 4;
    let dir = le64(end - 8);
    let count = u32::from_le_bytes(bytes[dir..dir + 4].try_into().unwrap()) as usize;
    (0..count)
        .map(|i| dir + 4 + i * 20)
        .find(|&e| u32::from_le_bytes(bytes[e..e + 4].try_into().unwrap()) == kind)
        .map(|e| (le64(e + 4), le64(e + 12)))
        .expect("section present")
}

/// Every file name in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// Files in `dir` other than LOCK that the newest manifest does not reference.
pub fn unreferenced(dir: &Path) -> Vec<String> {
    let (path, m) = quarry::read::latest_manifest(dir).unwrap().unwrap();
    let mut keep = vec!["LOCK".to_string()];
    keep.push(path.file_name().unwrap().to_str().unwrap().to_string());
    for s in &m.segments {
        keep.push(quarry::format::manifest::segment_name(s.id));
        if s.del_gen != 0 {
            keep.push(quarry::format::manifest::tombstone_name(s.id, s.del_gen));
        }
    }
    file_names(dir)
        .into_iter()
        .filter(|n| !keep.contains(n))
        .collect()
}

/// The stored `i64` value of field `id` of every live document of the
/// searcher's snapshot, in doc-number order.
pub fn live_ids(s: &quarry::Searcher, id: FieldId) -> Vec<i64> {
    let mut out = Vec::new();
    for seg in s.snapshot().segments() {
        for d in 0..seg.entry.doc_count {
            if seg.is_deleted(d) {
                continue;
            }
            let v = seg.reader.stored(d).unwrap();
            let (_, v) = v.iter().find(|(f, _)| *f == id).expect("id is stored");
            out.push(v.as_i64().unwrap());
        }
    }
    out
}

/// Runs the test `name` of this test binary again in a child process with
/// `envs` set (the child recognises its role by them), through `wrapper`
/// (a command and its arguments to run the binary under, or none).
pub fn rerun_self(name: &str, envs: &[(&str, &str)], wrapper: &[&str]) -> std::process::Output {
    let exe = std::env::current_exe().expect("current_exe");
    let mut cmd = match wrapper.split_first() {
        Some((w, args)) => {
            let mut c = Command::new(w);
            c.args(args).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .envs(envs.iter().copied())
        .output()
        .expect("run the test binary again")
}

/// A temporary directory on a memory file system when there is one
/// (`/dev/shm`), where fsync costs nothing: for tests that commit hundreds
/// of times and check what is on disk, not what survives a power cut.
pub fn fast_tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory")
}

/// splitmix64: a small seeded generator, so every randomised trial is
/// reproducible from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The phrase frequency of `phrase` (its tokens in order) with `slop` in
/// a document of tokens `doc`, by its definition (`docs/QUERY-SYNTAX.md`,
/// "Phrases"), written out independently of the engine: every token of
/// the phrase steps through its term's relative positions (position minus
/// the token's offset); distinct positions spanning at most `slop` are a
/// match, and every token steps on; otherwise the first token with the
/// least relative position does.
pub fn phrase_freq<S: AsRef<str>>(doc: &[S], phrase: &[&str], slop: u32) -> u32 {
    let lists: Vec<Vec<i64>> = phrase
        .iter()
        .enumerate()
        .map(|(off, t)| {
            doc.iter()
                .enumerate()
                .filter(|(_, w)| w.as_ref() == *t)
                .map(|(p, _)| p as i64 - off as i64)
                .collect()
        })
        .collect();
    let mut at = vec![0usize; phrase.len()];
    let mut freq = 0;
    loop {
        if (0..at.len()).any(|s| at[s] >= lists[s].len()) {
            return freq;
        }
        let rel: Vec<i64> = (0..at.len()).map(|s| lists[s][at[s]]).collect();
        let least = *rel.iter().min().unwrap();
        let span = rel.iter().max().unwrap() - least;
        // Positions, not relative ones, tell whether two tokens share one.
        let pos: Vec<i64> = rel.iter().enumerate().map(|(s, r)| r + s as i64).collect();
        let shared = (0..pos.len()).any(|s| (0..s).any(|r| pos[r] == pos[s]));
        if span <= i64::from(slop) && !shared {
            freq += 1;
            at.iter_mut().for_each(|a| *a += 1);
        } else {
            let s = rel.iter().position(|&r| r == least).unwrap();
            at[s] += 1;
        }
    }
}

/// Per word of `words`: the word's term query, then its AND and its OR
/// with the word `step` places on (cyclically), in field `body`.
pub fn word_pair_queries(body: FieldId, words: &[&str], step: usize) -> Vec<quarry::Query> {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        out.push(quarry::Query::term(body, w));
        let next = words[(i + step) % words.len()];
        for op in [quarry::Operator::And, quarry::Operator::Or] {
            out.push(quarry::Query::Match {
                field: body,
                text: format!("{w} {next}"),
                op,
            });
        }
    }
    out
}
