//! Tests the C library from outside, as a C host would: the C programs in
//! `ffi-tests/` are compiled against the committed `include/quarry.h` and
//! the `libquarry.so` that cargo built for this test run, then run (also
//! under valgrind and AddressSanitizer when those are available); the
//! Python ctypes smoke test dlopens the same library. Also checks the
//! exported symbol list, the SONAME, and that the header compiles as C99,
//! C11, C++11 and C++17.
//!
//! Needs gcc/g++ and binutils (nm, readelf); python3, valgrind and clang
//! are used when present and skipped with a printed note otherwise.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod common;
use common::{have, profile_dir, root};

fn cdylib() -> PathBuf {
    common::built_library_dir().join("libquarry.so")
}

/// `target/<profile>/ffi-tests/run-<pid>`: compiled C programs, and `lib/`
/// holding `libquarry.so` and the `libquarry.so.0` link that the SONAME
/// asks for (cargo creates neither). One directory per test process, so
/// runners that start a process per test (nextest) do not race on the
/// same files; directories of processes that are gone are removed.
fn work_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let parent = profile_dir().join("ffi-tests");
        if let Ok(entries) = std::fs::read_dir(&parent) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name.strip_prefix("run-")
                    && !Path::new("/proc").join(pid).exists()
                {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = parent.join(format!("run-{}", std::process::id()));
        let lib = dir.join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        for name in ["libquarry.so", "libquarry.so.0"] {
            let link = lib.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(cdylib(), &link).unwrap();
        }
        dir
    })
}

fn lib_dir() -> PathBuf {
    work_dir().join("lib")
}

/// Runs a command to completion (killing it after `limit`), returning its output.
fn run_with_limit(cmd: &mut Command, limit: Duration) -> Output {
    let described = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {described}: {e}"));
    // Drain the pipes on threads so a chatty child cannot block.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{described} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

fn run(cmd: &mut Command) -> Output {
    run_with_limit(cmd, Duration::from_secs(120))
}

fn show(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const STRICT: &[&str] = &["-Wall", "-Wextra", "-pedantic", "-Werror"];

/// Compiles `ffi-tests/<name>.c` (once per output name) with `compiler`
/// and `flags`, against the committed header, linked to the cdylib.
fn build(name: &str, compiler: &str, flags: &[&str], suffix: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let key = format!("{name}{suffix}");
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap();
    if let Some(p) = built.get(&key) {
        return p.clone();
    }
    let out = work_dir().join(&key);
    let lib = lib_dir();
    let o = run(Command::new(compiler)
        .args(flags)
        .args(STRICT)
        .arg("-g")
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("ffi-tests").join(format!("{name}.c")))
        .arg("-o")
        .arg(&out)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lquarry", "-lpthread"]));
    assert!(o.status.success(), "compiling {key} failed:\n{}", show(&o));
    built.insert(key, out.clone());
    out
}

fn build_c99(name: &str) -> PathBuf {
    build(name, "gcc", &["-std=c99"], "")
}

/// The environment variables that choose execution paths: removed for
/// every test program unless given.
const PATH_VARS: [&str; 4] = [
    "QUARRY_EXEC",
    "QUARRY_TERM_TOPK",
    "QUARRY_BLOCK_MAX_OR",
    "QUARRY_BULK_AND",
];

/// Runs a test program with a fresh scratch directory, the [`PATH_VARS`]
/// removed unless given in `env`, and asserts it passed.
fn run_program(prefix: &[&str], bin: &Path, extra_args: &[&str], env: &[(&str, &str)]) -> Output {
    let scratch = tempfile::tempdir().unwrap();
    let mut cmd = if prefix.is_empty() {
        Command::new(bin)
    } else {
        let mut c = Command::new(prefix[0]);
        c.args(&prefix[1..]).arg(bin);
        c
    };
    cmd.arg(scratch.path()).args(extra_args);
    for var in PATH_VARS {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_passing(&mut cmd, bin)
}

/// Runs `cmd`, which runs the program `bin`, and asserts it passed.
fn run_passing(cmd: &mut Command, bin: &Path) -> Output {
    let o = run(cmd);
    assert!(
        o.status.success(),
        "{} failed:\n{}",
        bin.display(),
        show(&o)
    );
    o
}

#[test]
fn exported_symbols_match_abi_list() {
    let o = run(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(cdylib()));
    assert!(o.status.success(), "nm failed:\n{}", show(&o));
    let exported: BTreeSet<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_owned)
        .collect();
    let listed: BTreeSet<String> = std::fs::read_to_string(root().join("abi/symbols.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let stray: Vec<_> = exported
        .iter()
        .filter(|s| !s.starts_with("quarry_"))
        .collect();
    assert!(
        stray.is_empty(),
        "symbols without the quarry_ prefix are exported: {stray:?}"
    );
    let added: Vec<_> = exported.difference(&listed).collect();
    let removed: Vec<_> = listed.difference(&exported).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the exported symbols differ from abi/symbols.txt\n  exported but not listed: {added:?}\n  \
         listed but not exported (an ABI break!): {removed:?}\nAfter an intended, compatible addition run:\n  \
         nm -D --defined-only target/debug/libquarry.so | awk '{{print $3}}' | sort > abi/symbols.txt"
    );
    // Every exported function is declared in the header, and vice versa.
    let header = std::fs::read_to_string(root().join("include/quarry.h")).unwrap();
    let declared: BTreeSet<String> = header
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with('/'))
        .filter_map(|l| {
            let before = &l[..l.find('(')?];
            let name = before.rsplit([' ', '*']).next()?;
            name.starts_with("quarry_").then(|| name.to_owned())
        })
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    assert_eq!(
        declared, exported,
        "header declarations vs exported symbols"
    );
}

#[test]
fn soname_and_nodelete() {
    let o = run(Command::new("readelf").arg("-d").arg(cdylib()));
    assert!(o.status.success(), "readelf failed:\n{}", show(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("Library soname: [libquarry.so.0]"),
        "SONAME:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("FLAGS_1") && l.contains("NODELETE")),
        "-z nodelete:\n{text}"
    );
}

#[test]
fn header_compiles_as_c_and_cxx() {
    let mut variants: Vec<(&str, &[&str], &str)> = vec![
        ("gcc", &["-std=c99"], "-gcc-c99"),
        ("gcc", &["-std=c11"], "-gcc-c11"),
        ("g++", &["-x", "c++", "-std=c++11"], "-gxx-cxx11"),
        ("g++", &["-x", "c++", "-std=c++17"], "-gxx-cxx17"),
    ];
    if have("clang") {
        variants.push(("clang", &["-std=c99"], "-clang-c99"));
        variants.push(("clang", &["-std=c11"], "-clang-c11"));
    } else {
        println!("note: clang is not installed; the header was checked with gcc and g++ only");
    }
    for (compiler, flags, suffix) in variants {
        let bin = build("header_check", compiler, flags, suffix);
        run_passing(&mut Command::new(&bin), &bin);
    }
}

#[test]
fn c_lifecycle() {
    run_program(&[], &build_c99("lifecycle"), &[], &[]);
}

#[test]
fn c_lifecycle_with_quarry_exec_from_the_environment() {
    run_program(
        &[],
        &build_c99("lifecycle"),
        &[],
        &[("QUARRY_EXEC", "exhaustive")],
    );
    run_program(
        &[],
        &build_c99("lifecycle"),
        &[],
        &[("QUARRY_EXEC", "daat")],
    );
}

#[test]
fn c_lifecycle_with_path_switches_from_the_environment() {
    run_program(
        &[],
        &build_c99("lifecycle"),
        &[],
        &[
            ("QUARRY_TERM_TOPK", "off"),
            ("QUARRY_BLOCK_MAX_OR", "off"),
            ("QUARRY_BULK_AND", "off"),
        ],
    );
    run_program(
        &[],
        &build_c99("lifecycle"),
        &[],
        &[("QUARRY_BULK_AND", "off"), ("QUARRY_TERM_TOPK", "auto")],
    );
}

#[test]
fn c_error_paths() {
    run_program(&[], &build_c99("errors"), &[], &[]);
}

#[test]
fn c_panic_is_quiet() {
    // RUST_BACKTRACE=1 makes the default hook print a backtrace too: the
    // boundary must suppress both.
    let o = run_program(&[], &build_c99("panic"), &[], &[("RUST_BACKTRACE", "1")]);
    assert!(
        o.stderr.is_empty(),
        "a caught panic printed to the host's stderr:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("all checks passed"));
}

#[test]
fn c_threads() {
    run_program(&[], &build_c99("threads"), &["40", "10"], &[]);
}

#[test]
fn python_ctypes_smoke() {
    if !have("python3") {
        println!("note: python3 is not installed; skipping the ctypes smoke test");
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let o = run(Command::new("python3")
        .arg(root().join("ffi-tests/ctypes_smoke.py"))
        .arg(lib_dir().join("libquarry.so.0"))
        .arg(scratch.path())
        .env("RUST_BACKTRACE", "1")
        .env_remove("QUARRY_EXEC"));
    assert!(o.status.success(), "ctypes_smoke.py failed:\n{}", show(&o));
    assert!(o.stderr.is_empty(), "stderr:\n{}", show(&o));
}

#[test]
fn c_tests_under_valgrind() {
    if !have("valgrind") {
        println!("note: valgrind is not on PATH; skipping the valgrind run");
        return;
    }
    let vg = [
        "valgrind",
        "-q",
        "--error-exitcode=9",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite",
    ];
    run_program(&vg, &build_c99("lifecycle"), &[], &[]);
    run_program(&vg, &build_c99("errors"), &[], &[]);
    run_program(&vg, &build_c99("panic"), &[], &[]);
    run_program(&vg, &build_c99("threads"), &["6", "4"], &[]);
    // valgrind must see the library's allocations: a double free of a
    // handle is reported.
    let bin = build_c99("double_free");
    let o = run(Command::new("valgrind").args(&vg[1..]).arg(&bin));
    assert_eq!(
        o.status.code(),
        Some(9),
        "valgrind missed a double free:\n{}",
        show(&o)
    );
}

#[test]
fn c_tests_under_address_and_undefined_sanitizers() {
    // The C side is instrumented; the Rust cdylib is not (that needs a
    // nightly -Zsanitizer build of the whole std). ASan still intercepts
    // malloc/free, which the Rust side uses, so leaks, double frees and
    // frees of foreign pointers across the boundary are caught; accesses
    // inside Rust code are covered by the valgrind run instead.
    let flags = [
        "-std=c99",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
        "-fno-omit-frame-pointer",
    ];
    let probe_src = work_dir().join("asan-probe.c");
    std::fs::write(&probe_src, "int main(void) { return 0; }\n").unwrap();
    let probe = run(Command::new("gcc")
        .args(flags)
        .arg(&probe_src)
        .arg("-o")
        .arg(work_dir().join("asan-probe")));
    if !probe.status.success() {
        println!(
            "note: gcc cannot build with -fsanitize=address,undefined here; skipping:\n{}",
            String::from_utf8_lossy(&probe.stderr)
        );
        return;
    }
    let env = [
        (
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:exitcode=23",
        ),
        ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
    ];
    for name in ["lifecycle", "errors", "panic", "threads"] {
        let bin = build(name, "gcc", &flags, "-asan");
        let nm = run(Command::new("nm").arg(&bin));
        assert!(
            String::from_utf8_lossy(&nm.stdout).contains("__asan_init"),
            "{} is not linked with ASan",
            bin.display()
        );
        run_program(&[], &bin, &[], &env);
    }
    let bin = build("double_free", "gcc", &flags, "-asan");
    let mut cmd = Command::new(&bin);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = run(&mut cmd);
    // The second free first reads the freed box (in uninstrumented Rust
    // code, which ASan cannot check), so ASan reports either the double
    // free or the wild free that follows from the stale contents; both go
    // through its malloc interceptor, which is what this proves.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(23)
            && stderr.contains("ERROR: AddressSanitizer")
            && stderr.contains("quarry_schema_free"),
        "ASan missed a double free:\n{}",
        show(&o)
    );
}

#[test]
fn the_docs_example_compiles_and_runs() {
    let doc = std::fs::read_to_string(root().join("docs/C-API.md")).unwrap();
    let start = doc.find("```c\n").expect("docs/C-API.md has a C example") + 5;
    let code = &doc[start..start + doc[start..].find("```").unwrap()];
    let src = work_dir().join("docs_example.c");
    std::fs::write(&src, code).unwrap();
    let exe = work_dir().join("docs_example");
    let lib = lib_dir();
    let o = run(Command::new("gcc")
        .arg("-std=c99")
        .args(STRICT)
        .arg("-I")
        .arg(root().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lquarry"));
    assert!(
        o.status.success(),
        "the docs example does not compile:\n{}",
        show(&o)
    );
    let o = run_program(&[], &exe, &[], &[]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "the quick brown fox\n");
}
