//! The Python package in `python/`, as a user gets it: a fresh virtual
//! environment (`python3 -m venv`), `pip install ./python` with the
//! `libquarry.so` this cargo run built bundled into it, then the package's
//! tests (`python/tests`, unittest) against the installed copy, comparing
//! scores with the `quarry` binary of the same build.
//!
//! Everything lives in a temporary directory (the environment, pip's cache,
//! a copy of `python/` to build from, so no build files land in the
//! checkout); nothing is kept from one run to the next. Needs python3 with
//! the venv module and pip's access to the package index (pip fetches the
//! build backend, setuptools); without them the test prints why and skips,
//! or fails under `QUARRY_REQUIRE_TOOLS=1` (`scripts/setup.sh` installs
//! python3-venv).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{built_library_dir, root, skip_or_fail, tool_available};

const WHAT: &str = "the Python package tests";

/// The environment variables of quarry's switches and of the package's
/// library lookup: the run sets what it needs and nothing leaks in.
const CLEARED: [&str; 9] = [
    "QUARRY_LIBRARY",
    "QUARRY_EXEC",
    "QUARRY_TERM_TOPK",
    "QUARRY_BLOCK_MAX_OR",
    "QUARRY_BULK_AND",
    "QUARRY_SIMD",
    "QUARRY_READ",
    "QUARRY_SEARCH_THREADS",
    "QUARRY_CLI",
];

/// `program` with the variables above removed (set what a step needs
/// afterwards), no bytecode written into the checkout, and pip quiet about
/// its own version.
fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for var in CLEARED {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INPUT", "1");
    cmd
}

fn output(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn show(o: &Output) -> String {
    format!(
        "{}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether a step that depends on the machine, not on the package,
/// succeeded; if not, the skip (or, under `QUARRY_REQUIRE_TOOLS=1`, the
/// failure) says `why` with the step's output.
fn environment_works(o: &Output, why: &str) -> bool {
    o.status.success() || skip_or_fail(&format!("{why} ({})", show(o).trim()), WHAT)
}

/// Copies the package's sources (not what earlier builds left in them).
fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "build" || name == "__pycache__" || name.ends_with(".egg-info") {
            continue;
        }
        let dest = to.join(&*name);
        if entry.file_type().unwrap().is_dir() {
            copy_sources(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[test]
fn python_package_installed_by_pip_passes_its_tests() {
    if !tool_available("python3", WHAT) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let venv = scratch.path().join("venv");
    let o = output(command("python3").args(["-m", "venv"]).arg(&venv));
    if !environment_works(&o, "python3 -m venv cannot make an environment") {
        return;
    }
    let python: PathBuf = venv.join("bin/python");
    let pip_cache = scratch.path().join("pip-cache");
    let pip = |args: &[&str]| {
        let mut cmd = command(&python);
        cmd.args(["-m", "pip"])
            .args(args)
            .env("PIP_CACHE_DIR", &pip_cache);
        cmd
    };

    // pip and the package index are the environment's: if the build
    // backend cannot be fetched, say so rather than blame the package.
    let probe = scratch.path().join("probe");
    let o = output(
        pip(&["download", "--no-deps", "--dest"])
            .arg(&probe)
            .arg("setuptools>=70.1"),
    );
    if !environment_works(&o, "pip cannot fetch setuptools from the package index") {
        return;
    }

    // `pip install ./python`, bundling the library under test.
    let library = built_library_dir().join("libquarry.so");
    let sources = scratch.path().join("src/python");
    copy_sources(&root().join("python"), &sources);
    let o = output(
        pip(&["install"])
            .arg(&sources)
            .env("QUARRY_LIBRARY", &library)
            .current_dir(scratch.path()),
    );
    assert!(
        o.status.success(),
        "pip install ./python failed: {}",
        show(&o)
    );

    // The installed package loads its bundled copy, which is the library
    // this run built.
    let o = output(
        command(&python)
            .args(["-c", "import quarry; print(quarry.library_path())"])
            .current_dir(scratch.path()),
    );
    assert!(o.status.success(), "import quarry: {}", show(&o));
    let loaded = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    assert!(
        loaded.starts_with(venv.canonicalize().unwrap()) && loaded.ends_with("quarry/libquarry.so"),
        "the package loaded {loaded:?}, not its bundled copy"
    );
    assert!(
        std::fs::read(&loaded).unwrap() == std::fs::read(&library).unwrap(),
        "the bundled library {loaded:?} is not the one this run built, {library:?}"
    );

    // The tests, from the checkout, against the installed package (run
    // from the scratch directory, so nothing shadows it).
    let tests = root().join("python/tests");
    let o = output(
        command(&python)
            .args(["-m", "unittest", "discover", "-v", "-s"])
            .arg(&tests)
            .arg("-t")
            .arg(&tests)
            .env("QUARRY_CLI", env!("CARGO_BIN_EXE_quarry"))
            .env("QUARRY_EXPECT_BUNDLED", "1")
            .env("TMPDIR", scratch.path())
            .current_dir(scratch.path()),
    );
    let report = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "the Python tests failed: {}", show(&o));
    assert!(
        !report.contains("skipped"),
        "a Python test skipped: {}",
        show(&o)
    );
    // Every test module was found and run.
    for entry in std::fs::read_dir(&tests).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(module) = name
            .strip_prefix("test_")
            .and_then(|m| m.strip_suffix(".py"))
        {
            assert!(
                report.contains(&format!("(test_{module}.")),
                "no test of test_{module}.py ran: {}",
                show(&o)
            );
        }
    }
}
