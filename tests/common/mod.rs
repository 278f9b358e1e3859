//! Helpers shared by the integration tests: the schema fields most of them
//! start with, and, for the tests that use the C library from outside, where
//! the built library is and which tools are installed.
//!
//! Each test crate uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use quarry::{FieldFlags, FieldId, FieldType, Schema};

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
