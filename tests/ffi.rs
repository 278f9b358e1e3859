//! Tests the C library from outside, as a C host would: the C programs in
//! `ffi-tests/` are compiled against the committed `include/quarry.h` and
//! the `libquarry.so` that cargo built for this test run, then run (also
//! under valgrind and AddressSanitizer when those are available); the
//! Python ctypes smoke test dlopens the same library. Also checks the
//! exported symbol list, the SONAME, and that the header compiles as C99,
//! C11, C++11 and C++17.
//!
//! Also runs a Python cffi (ABI mode) cycle declared by
//! `include/quarry_cdef.h`, and compares the library's ABI with the
//! baseline `abi/libquarry.abi` by `abidiff`.
//!
//! Needs gcc/g++ and binutils (nm, readelf); python3 (with cffi), valgrind,
//! clang and abigail-tools are used when present and skipped with a printed
//! note otherwise, or fail the test under `QUARRY_REQUIRE_TOOLS=1`
//! (`common::tool_available`; `scripts/setup.sh` installs them all).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod common;
use common::{REQUIRE_TOOLS, profile_dir, root, skip_or_fail, succeeds, tool_available};

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
        .arg(source(name))
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

/// `ffi-tests/<name>.cpp` for a C++ program, else `ffi-tests/<name>.c`.
fn source(name: &str) -> PathBuf {
    let cpp = root().join("ffi-tests").join(format!("{name}.cpp"));
    if cpp.exists() {
        cpp
    } else {
        root().join("ffi-tests").join(format!("{name}.c"))
    }
}

fn build_c99(name: &str) -> PathBuf {
    build(name, "gcc", &["-std=c99"], "")
}

/// The environment variables that choose execution paths (and kernels):
/// removed for every test program unless given.
const SWITCH_VARS: [&str; 6] = [
    "QUARRY_EXEC",
    "QUARRY_TERM_TOPK",
    "QUARRY_BLOCK_MAX_OR",
    "QUARRY_BULK_AND",
    "QUARRY_SIMD",
    "QUARRY_SEARCH_THREADS",
];

/// Runs a test program with a fresh scratch directory, the [`SWITCH_VARS`]
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
    for var in SWITCH_VARS {
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
    if tool_available("clang", "the header check with clang") {
        variants.push(("clang", &["-std=c99"], "-clang-c99"));
        variants.push(("clang", &["-std=c11"], "-clang-c11"));
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
fn c_query_language() {
    run_program(&[], &build_c99("query_lang"), &[], &[]);
}

#[test]
fn c_analyzers() {
    run_program(&[], &build_c99("analyzers"), &[], &[]);
}

#[test]
fn c_highlight() {
    run_program(&[], &build_c99("highlight"), &[], &[]);
}

#[test]
fn c_phrases() {
    run_program(&[], &build_c99("phrase"), &[], &[]);
}

#[test]
fn c_shards() {
    run_program(&[], &build_c99("shards"), &[], &[]);
}

#[test]
fn c_indexing_threads() {
    run_program(&[], &build_c99("indexing_threads"), &[], &[]);
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
fn c_query_limits() {
    run_program(&[], &build_c99("limits"), &[], &[]);
}

#[test]
fn c_threads() {
    run_program(&[], &build_c99("threads"), &["40", "10"], &[]);
}

#[test]
fn python_ctypes_smoke() {
    if !tool_available("python3", "the ctypes smoke test") {
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

/// valgrind as the C tests run under it: an error, or a definite leak,
/// exits 9.
const VALGRIND: [&str; 5] = [
    "valgrind",
    "-q",
    "--error-exitcode=9",
    "--leak-check=full",
    "--errors-for-leak-kinds=definite",
];

#[test]
fn c_tests_under_valgrind() {
    if !tool_available("valgrind", "the valgrind run") {
        return;
    }
    let vg = VALGRIND;
    run_program(&vg, &build_c99("lifecycle"), &[], &[]);
    run_program(&vg, &build_c99("errors"), &[], &[]);
    run_program(&vg, &build_c99("query_lang"), &[], &[]);
    run_program(&vg, &build_c99("analyzers"), &[], &[]);
    run_program(&vg, &build_c99("highlight"), &[], &[]);
    run_program(&vg, &build_c99("phrase"), &[], &[]);
    run_program(&vg, &build_c99("shards"), &[], &[]);
    run_program(&vg, &build_c99("limits"), &[], &[]);
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

/// A new user's first C++ program (RAII handles, exceptions, a ranked
/// and a sorted search), from the README and the header alone, built as
/// C++17 with every warning an error, run plain and under valgrind.
#[test]
fn a_first_cxx_program_runs_clean_and_valgrind_clean() {
    if !tool_available("g++", "the C++ program") {
        return;
    }
    let bin = build("cxx_first", "g++", &["-std=c++17"], "-cxx17");
    let o = run_program(&[], &bin, &[], &[]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Address 1862\nAddress 1801\n"
    );
    if !tool_available("valgrind", "the C++ program under valgrind") {
        return;
    }
    let vg = VALGRIND;
    run_program(&vg, &bin, &[], &[]);
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
        skip_or_fail(
            &format!(
                "gcc cannot build with -fsanitize=address,undefined here:\n{}",
                String::from_utf8_lossy(&probe.stderr)
            ),
            "the sanitizer runs",
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
    for name in [
        "lifecycle",
        "errors",
        "query_lang",
        "analyzers",
        "phrase",
        "shards",
        "limits",
        "panic",
        "threads",
    ] {
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

#[test]
fn unknown_values_of_the_environment_switches_are_rejected() {
    let bin = build_c99("env_switches");
    for var in SWITCH_VARS {
        let o = run_program(&[], &bin, &[var], &[(var, "bogus")]);
        let message = String::from_utf8_lossy(&o.stdout);
        assert!(
            message.contains(var) && message.contains("\"bogus\""),
            "{var}: {message}"
        );
    }
    // Every accepted value (and an empty one, which means unset) opens.
    run_program(
        &[],
        &bin,
        &[],
        &[
            ("QUARRY_EXEC", "daat"),
            ("QUARRY_TERM_TOPK", "off"),
            ("QUARRY_BLOCK_MAX_OR", "auto"),
            ("QUARRY_BULK_AND", ""),
            ("QUARRY_SIMD", "scalar"),
            ("QUARRY_SEARCH_THREADS", "2"),
        ],
    );
}

#[test]
fn python_cffi_abi_mode_from_the_cdef_header() {
    if !tool_available("python3", "the cffi test")
        || (!succeeds(Command::new("python3").args(["-c", "import cffi"]))
            && !skip_or_fail("the Python module cffi is not installed", "the cffi test"))
    {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let o = run(Command::new("python3")
        .arg(root().join("ffi-tests/cffi_smoke.py"))
        .arg(root().join("include/quarry_cdef.h"))
        .arg(lib_dir().join("libquarry.so.0"))
        .arg(scratch.path())
        .env_remove("QUARRY_EXEC"));
    assert!(o.status.success(), "cffi_smoke.py failed:\n{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("all checks passed"));
}

/// `abidw` with the options that keep its output free of build paths, and
/// `abi/quarry.suppr`, which keeps only the `quarry_*` exports (and the
/// types they reach): the same command makes the baseline (docs/C-API.md).
fn abidw(lib: &Path, out: &Path) {
    let o = run(Command::new("abidw")
        .args([
            "--no-corpus-path",
            "--no-comp-dir-path",
            "--no-show-locs",
            "--no-elf-needed",
            "--type-id-style",
            "hash",
            "--suppressions",
        ])
        .arg(root().join("abi/quarry.suppr"))
        .arg("--out-file")
        .arg(out)
        .arg(lib));
    assert!(o.status.success(), "abidw failed:\n{}", show(&o));
}

/// `abidiff --no-added-syms OLD NEW`: exit status 0 when NEW offers all
/// of OLD unchanged (additions are allowed); otherwise the abidiff status
/// bits (4: an ABI change, 8: an incompatible one such as a removal).
fn abidiff(old: &Path, new: &Path) -> (i32, String) {
    let o = run(Command::new("abidiff")
        .arg("--no-added-syms")
        .arg(old)
        .arg(new));
    (o.status.code().unwrap_or(-1), show(&o))
}

/// The text of the element `<{tag} name='{name}' ...>` ... `</{tag}>` in
/// abidw XML.
fn element<'a>(xml: &'a str, tag: &str, name: &str) -> &'a str {
    let start = xml
        .find(&format!("<{tag} name='{name}'"))
        .unwrap_or_else(|| panic!("no {tag} {name} in the ABI XML"));
    let close = format!("</{tag}>");
    let end = start + xml[start..].find(&close).unwrap() + close.len();
    &xml[start..end]
}

#[test]
fn the_abi_is_compatible_with_the_baseline() {
    if !tool_available("abidw", "the ABI check") || !tool_available("abidiff", "the ABI check") {
        return;
    }
    let baseline = root().join("abi/libquarry.abi");
    let current = work_dir().join("current.abi");
    abidw(&cdylib(), &current);
    let (status, report) = abidiff(&baseline, &current);
    assert_eq!(
        status, 0,
        "the library's ABI is not compatible with abi/libquarry.abi:\n{report}\n\
         Functions may only be added. After a reviewed, compatible addition, \
         regenerate the baseline as docs/C-API.md says (abidw of the release build)."
    );

    // The check itself: a removed function and a changed parameter type
    // fail it, an added function passes.
    let xml = std::fs::read_to_string(&baseline).unwrap();
    let write = |name: &str, text: &str| {
        let p = work_dir().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let symbol_start = xml.find("<elf-symbol name='quarry_hits_len'").unwrap();
    let symbol = &xml[symbol_start..symbol_start + xml[symbol_start..].find("/>").unwrap() + 2];
    let without = write(
        "without-hits-len.abi",
        &xml.replacen(symbol, "", 1).replacen(
            element(&xml, "function-decl", "quarry_hits_len"),
            "",
            1,
        ),
    );
    let (status, report) = abidiff(&baseline, &without);
    assert!(status & 8 != 0, "a removal must be incompatible:\n{report}");
    let (status, report) = abidiff(&without, &baseline);
    assert_eq!(status, 0, "an addition must pass:\n{report}");
    let f = element(&xml, "function-decl", "quarry_hits_stored_f64");
    let type_of = |param: &str| {
        let at = f.find(&format!("' name='{param}'/>")).unwrap();
        let start = f[..at].rfind("type-id='").unwrap() + "type-id='".len();
        &f[start..at]
    };
    let changed = f.replacen(
        &format!("type-id='{}' name='out'", type_of("out")),
        &format!("type-id='{}' name='out'", type_of("index")),
        1,
    );
    assert_ne!(changed, f);
    let changed = write("changed-stored-f64.abi", &xml.replacen(f, &changed, 1));
    let (status, report) = abidiff(&baseline, &changed);
    assert!(
        status != 0 && report.contains("quarry_hits_stored_f64"),
        "a changed parameter type must fail:\n{report}"
    );
}

/// Run by [`a_missing_tool_fails_under_quarry_require_tools`] only.
#[test]
#[ignore = "run by a_missing_tool_fails_under_quarry_require_tools"]
fn probe_a_missing_tool() {
    assert!(!tool_available("quarry-no-such-tool", "the probe"));
}

#[test]
fn a_missing_tool_fails_under_quarry_require_tools() {
    let probe = |require: Option<&str>| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "probe_a_missing_tool",
            "--ignored",
            "--nocapture",
        ]);
        match require {
            Some(v) => cmd.env(REQUIRE_TOOLS, v),
            None => cmd.env_remove(REQUIRE_TOOLS),
        };
        run(&mut cmd)
    };
    let skipped = probe(None);
    assert!(skipped.status.success(), "{}", show(&skipped));
    assert!(
        String::from_utf8_lossy(&skipped.stdout)
            .contains("note: quarry-no-such-tool is not installed; skipping the probe"),
        "{}",
        show(&skipped)
    );
    let failed = probe(Some("1"));
    assert!(!failed.status.success(), "{}", show(&failed));
    assert!(
        show(&failed).contains("QUARRY_REQUIRE_TOOLS=1 forbids skipping"),
        "{}",
        show(&failed)
    );
}
