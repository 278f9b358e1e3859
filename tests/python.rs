//! The Python package in `python/`, as a user gets it: a fresh virtual
//! environment (`python3 -m venv`), `pip install ./python` with the
//! `libquarry.so` this cargo run built bundled into it, then the package's
//! tests (`python/tests`, unittest) against the installed copy, comparing
//! scores with the `quarry` binary of the same build. A second environment
//! gets `pip install './python[distributed]'` (Dask): there the sample,
//! split into four shards by `quarry index`, is searched by
//! `python/examples/shards.py` on a LocalCluster of two worker processes,
//! whose stdout must be what `quarry search` over the four directories
//! prints, byte for byte, and `python/tests/test_distributed.py` runs.
//!
//! Everything lives in a temporary directory (the environment, pip's cache,
//! a copy of `python/` to build from, so no build files land in the
//! checkout; the indexes; Dask's scratch space); nothing is kept from one
//! run to the next. Needs python3 with the venv module and pip's access to
//! the package index (pip fetches the build backend, setuptools, and Dask);
//! without them a test prints why and skips, or fails under
//! `QUARRY_REQUIRE_TOOLS=1` (`scripts/setup.sh` installs python3-venv).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

mod common;
use common::{built_library_dir, root, skip_or_fail, tool_available};

/// The reason `python/tests/test_distributed.py` gives for its tests that
/// skip where Dask is not installed.
const NO_DASK: &str = "dask is not installed";

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
fn command(program: impl AsRef<OsStr>) -> Command {
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
/// succeeded; if not, the skip of `what` (or, under
/// `QUARRY_REQUIRE_TOOLS=1`, the failure) says `why` with the step's
/// output.
fn environment_works(o: &Output, why: &str, what: &str) -> bool {
    o.status.success() || skip_or_fail(&format!("{why} ({})", show(o).trim()), what)
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

/// A fresh virtual environment in a scratch directory with the package
/// installed by pip, bundling the library this run built.
struct Venv {
    scratch: TempDir,
    venv: PathBuf,
    python: PathBuf,
}

impl Venv {
    /// `pip install ./python{extra}` into a new environment, after
    /// checking that pip can fetch `fetch` (the build backend, the extra's
    /// packages) from the package index. `None` when the machine cannot
    /// (python3, venv or the index missing): the skip, or the failure
    /// under `QUARRY_REQUIRE_TOOLS=1`, names `what`.
    fn new(what: &str, fetch: &[&str], extra: &str) -> Option<Venv> {
        if !tool_available("python3", what) {
            return None;
        }
        let scratch = tempfile::tempdir().unwrap();
        let venv = scratch.path().join("venv");
        let o = output(command("python3").args(["-m", "venv"]).arg(&venv));
        if !environment_works(&o, "python3 -m venv cannot make an environment", what) {
            return None;
        }
        let env = Venv {
            python: venv.join("bin/python"),
            venv,
            scratch,
        };

        // pip and the package index are the environment's: if the build
        // backend (or the extra's packages) cannot be fetched, say so
        // rather than blame the package.
        let probe = env.scratch.path().join("probe");
        let o = output(
            env.pip(&["download", "--no-deps", "--dest"])
                .arg(&probe)
                .args(fetch),
        );
        let why = format!(
            "pip cannot fetch {} from the package index",
            fetch.join(" and ")
        );
        if !environment_works(&o, &why, what) {
            return None;
        }

        // `pip install ./python`, bundling the library under test.
        let library = built_library_dir().join("libquarry.so");
        let sources = env.scratch.path().join("src/python");
        copy_sources(&root().join("python"), &sources);
        let o = output(
            env.pip(&["install"])
                .arg(format!("{}{extra}", sources.display()))
                .env("QUARRY_LIBRARY", &library)
                .current_dir(env.scratch.path()),
        );
        assert!(
            o.status.success(),
            "pip install ./python{extra} failed: {}",
            show(&o)
        );
        Some(env)
    }

    /// `python -m pip ARGS`, with pip's cache in the scratch directory.
    fn pip(&self, args: &[&str]) -> Command {
        let mut cmd = command(&self.python);
        cmd.args(["-m", "pip"])
            .args(args)
            .env("PIP_CACHE_DIR", self.scratch.path().join("pip-cache"));
        cmd
    }

    /// The environment's python, run from the scratch directory (so
    /// nothing there shadows the installed package), with temporary files
    /// and Dask's scratch space in it too.
    fn python(&self) -> Command {
        let mut cmd = command(&self.python);
        cmd.env("TMPDIR", self.scratch.path())
            .env("DASK_CONFIG", self.scratch.path().join("dask-config"))
            .current_dir(self.scratch.path());
        cmd
    }

    /// `python -m unittest discover -v` of `python/tests` (the modules
    /// `pattern` matches) against the installed package; its report.
    fn unittest(&self, pattern: &str, env: &[(&str, &Path)]) -> String {
        let tests = root().join("python/tests");
        let mut cmd = self.python();
        cmd.args(["-m", "unittest", "discover", "-v", "-s"])
            .arg(&tests)
            .arg("-t")
            .arg(&tests)
            .args(["-p", pattern])
            .env("QUARRY_CLI", env!("CARGO_BIN_EXE_quarry"))
            .env("QUARRY_EXPECT_BUNDLED", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = output(&mut cmd);
        assert!(o.status.success(), "the Python tests failed: {}", show(&o));
        String::from_utf8_lossy(&o.stderr).into_owned()
    }
}

/// Every test that skipped in a unittest `-v` report, as its line.
fn skipped(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| l.contains(" ... skipped"))
        .collect()
}

#[test]
fn python_package_installed_by_pip_passes_its_tests() {
    let Some(env) = Venv::new("the Python package tests", &["setuptools>=70.1"], "") else {
        return;
    };

    // The installed package loads its bundled copy, which is the library
    // this run built.
    let library = built_library_dir().join("libquarry.so");
    let o = output(
        env.python()
            .args(["-c", "import quarry; print(quarry.library_path())"]),
    );
    assert!(o.status.success(), "import quarry: {}", show(&o));
    let loaded = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    assert!(
        loaded.starts_with(env.venv.canonicalize().unwrap())
            && loaded.ends_with("quarry/libquarry.so"),
        "the package loaded {loaded:?}, not its bundled copy"
    );
    assert!(
        std::fs::read(&loaded).unwrap() == std::fs::read(&library).unwrap(),
        "the bundled library {loaded:?} is not the one this run built, {library:?}"
    );

    // The tests, from the checkout, against the installed package. Only
    // the Dask cluster's tests may skip: this environment has no Dask
    // (the test below has).
    let report = env.unittest("test*.py", &[]);
    for line in skipped(&report) {
        assert!(
            line.contains("(test_distributed.") && line.contains(NO_DASK),
            "a Python test skipped: {line}\n{report}"
        );
    }
    // Every test module was found and run.
    let tests = root().join("python/tests");
    for entry in std::fs::read_dir(&tests).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(module) = name
            .strip_prefix("test_")
            .and_then(|m| m.strip_suffix(".py"))
        {
            assert!(
                report.contains(&format!("(test_{module}.")),
                "no test of test_{module}.py ran: {report}"
            );
        }
    }
}

/// Runs `quarry ARGS` and returns its stdout.
fn quarry<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Vec<u8> {
    let mut cmd = command(env!("CARGO_BIN_EXE_quarry"));
    cmd.args(args);
    let o = output(&mut cmd);
    assert!(o.status.success(), "{cmd:?}: {}", show(&o));
    o.stdout
}

/// Indexes the JSONL `lines` at `dir` with `quarry index`.
fn index(dir: &Path, schema: &Path, lines: &[&str]) {
    let input = dir.with_extension("jsonl");
    std::fs::write(&input, lines.concat()).unwrap();
    let args: [&OsStr; 6] = [
        "index".as_ref(),
        dir.as_ref(),
        "--input".as_ref(),
        input.as_ref(),
        "--schema".as_ref(),
        schema.as_ref(),
    ];
    quarry(args);
}

/// `lines` split by document order into `n` shards `base/shard0` ..
/// (`n` slices as even as can be), each indexed by `quarry index`.
fn shards(base: &Path, schema: &Path, lines: &[&str], n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let dir = base.join(format!("shard{i}"));
            index(
                &dir,
                schema,
                &lines[i * lines.len() / n..(i + 1) * lines.len() / n],
            );
            dir
        })
        .collect()
}

/// The first line where `got` and `want` differ, for the failure message.
fn first_difference(got: &[u8], want: &[u8]) -> String {
    let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    let at = g.lines().zip(w.lines()).position(|(a, b)| a != b);
    match at {
        Some(i) => format!(
            "line {}:\n  shards.py:     {:?}\n  quarry search: {:?}",
            i + 1,
            g.lines().nth(i).unwrap(),
            w.lines().nth(i).unwrap()
        ),
        None => format!("{} lines against {}", g.lines().count(), w.lines().count()),
    }
}

/// The corpus of f64 and string sort values whose printing is the hardest
/// to match (exponent forms, the edges of the plain form, a negative zero,
/// escapes), as JSONL lines: id, body, price, tag.
fn value_corpus() -> Vec<String> {
    let prices = [
        "1e-300",
        "-2.5e20",
        "0.1",
        "1e16",
        "9999999999999998.0",
        "1.5e-5",
        "1e-5",
        "9.99e-6",
        "123456.789",
        "-0.0",
        "null",
        "3.0",
        "5e-324",
        "1.7976931348623157e308",
        "-1e-7",
        "100.0",
    ];
    let tags = [
        "a|b",
        "back\\\\slash",
        "tab\\there",
        "",
        "\u{e9}t\u{e9}",
        "line\\nbreak",
        "z",
        "null",
    ];
    prices
        .iter()
        .enumerate()
        .map(|(i, price)| {
            let tag = tags[i % tags.len()];
            let tag = if tag == "null" {
                tag.to_owned()
            } else {
                format!("\"{tag}\"")
            };
            let body = ["alpha beta", "alpha", "alpha alpha gamma"][i % 3];
            format!("{{\"id\": {i}, \"body\": \"{body}\", \"price\": {price}, \"tag\": {tag}}}\n")
        })
        .collect()
}

/// Floats as `quarry search` prints them, one `f32|f64 BITS TEXT` line
/// each: scores as f32 (`{}`), f64 values in the plain form between 1e-5
/// and 1e16, else in exponent form. Pseudo-random bit patterns, and values
/// that lie exactly between two shortest decimals (there Rust takes the
/// upper one, Python's own formatting the even one).
fn printed_floats() -> String {
    let mut out = String::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..20_000u64 {
        let r = next();
        let f = f32::from_bits(r as u32 & 0x7fff_ffff);
        let f = if i % 2 == 0 {
            f
        } else {
            (r % 10_000_000) as f32 / 4.0 + 1e6
        };
        if f.is_finite() {
            out.push_str(&format!("f32 {:08x} {f}\n", f.to_bits()));
        }
        let g = match i % 3 {
            0 => f64::from_bits(r),
            1 => (r % 100_000) as f64 / 8.0 + (r % 7) as f64 * 1e15,
            _ => -((r >> 11) as f64),
        };
        if g.is_finite() {
            let a = g.abs();
            let text = if a == 0.0 || (1e-5..1e16).contains(&a) {
                format!("{g}")
            } else {
                format!("{g:e}")
            };
            out.push_str(&format!("f64 {:016x} {text}\n", g.to_bits()));
        }
    }
    out
}

/// Checks the float printing of `shards.py` against [`printed_floats`].
const CHECK_FLOATS: &str = r#"
import struct, sys
sys.path.insert(0, sys.argv[1])
import shards
wrong = []
lines = open(sys.argv[2]).read().splitlines()
for line in lines:
    kind, bits, want = line.split(" ")
    if kind == "f32":
        got = shards.f32_text(int(bits, 16))
    else:
        got = shards.f64_text(struct.unpack(">d", bytes.fromhex(bits))[0])
    if got != want:
        wrong.append(f"{line}: shards.py prints {got}")
print(len(lines), "checked")
print("\n".join(wrong[:20]))
sys.exit(1 if wrong else 0)
"#;

#[test]
fn dask_runner_prints_what_quarry_search_prints() {
    let what = "the Dask runner's tests (python/examples/shards.py, test_distributed.py)";
    let Some(env) = Venv::new(what, &["setuptools>=70.1", "distributed"], "[distributed]") else {
        return;
    };
    let work = env.scratch.path();

    // The sample in four shards by document order, and as one index.
    let sample = std::fs::read_to_string(root().join("data/sample.jsonl")).unwrap();
    let lines: Vec<&str> = sample.split_inclusive('\n').collect();
    let schema = root().join("data/schema.json");
    let base = work.join("sample");
    std::fs::create_dir(&base).unwrap();
    let sample_shards = shards(&base, &schema, &lines, 4);
    index(&base.join("whole"), &schema, &lines);

    // The value corpus in two shards.
    let values = work.join("values");
    std::fs::create_dir(&values).unwrap();
    let value_schema = work.join("values-schema.json");
    std::fs::write(
        &value_schema,
        r#"{"fields": [
            {"name": "id", "type": "i64", "stored": true, "indexed": true},
            {"name": "body", "type": "text", "stored": true},
            {"name": "price", "type": "f64", "stored": true, "sortable": true},
            {"name": "tag", "type": "string", "stored": true, "indexed": true, "sortable": true}
        ]}"#,
    )
    .unwrap();
    let docs = value_corpus();
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let value_shards = shards(&values, &value_schema, &docs, 2);

    // The bundled queries, and lines that test the reading of the file
    // and the no-hit line: a comment, a blank line, a class to escape and
    // a CRLF ending, a query without hits.
    let queries = work.join("queries.tsv");
    let mut text = std::fs::read_to_string(root().join("data/queries.tsv")).unwrap();
    text.push_str("# a comment\n\nesc|ape\\d\tdear sister\r\nnone\tzzzqqq xylophonium\n");
    std::fs::write(&queries, text).unwrap();
    let value_queries = work.join("value-queries.tsv");
    std::fs::write(
        &value_queries,
        "c|l\\ass\talpha\nnone\tzzzqqq\ntwo\tgamma beta\n",
    )
    .unwrap();

    // Scores and f64 values printed as the command prints them, beyond
    // those the searches below meet.
    let floats = work.join("floats.txt");
    std::fs::write(&floats, printed_floats()).unwrap();
    let o = output(
        env.python()
            .args(["-c", CHECK_FLOATS])
            .arg(root().join("python/examples"))
            .arg(&floats),
    );
    assert!(
        o.status.success(),
        "shards.py prints floats otherwise: {}",
        show(&o)
    );

    let shards_py = root().join("python/examples/shards.py");
    let runs: [(&[PathBuf], &Path, &[&str]); 6] = [
        (&sample_shards, &queries, &["--op", "and"]),
        (&sample_shards, &queries, &["--op", "or"]),
        (&sample_shards, &queries, &["--sort", "year:desc,score"]),
        (
            &sample_shards,
            &queries,
            &[
                "--op",
                "and",
                "--sort",
                "category,score:asc",
                "--id-field",
                "id",
                "--k",
                "7",
                "--offset",
                "3",
            ],
        ),
        (
            &value_shards,
            &value_queries,
            &["--sort", "price:desc,tag", "--id-field", "tag", "--k", "20"],
        ),
        (
            &value_shards,
            &value_queries,
            &[
                "--sort",
                "tag,price",
                "--k",
                "5",
                "--offset",
                "2",
                "--id-field",
                "price",
            ],
        ),
    ];
    for (dirs, queries, options) in runs {
        let mut args: Vec<&OsStr> = vec!["search".as_ref()];
        args.extend(dirs.iter().map(|d| d.as_os_str()));
        args.extend::<[&OsStr; 2]>(["--queries".as_ref(), queries.as_ref()]);
        args.extend(options.iter().map(OsStr::new));
        args.extend::<[&OsStr; 2]>(["--format".as_ref(), "tsv".as_ref()]);
        let want = quarry(args);
        let o = output(
            env.python()
                .arg(&shards_py)
                .arg("--shards")
                .args(dirs)
                .arg("--queries")
                .arg(queries)
                .args(options)
                .args(["--workers", "2", "--format", "tsv"]),
        );
        assert!(o.status.success(), "shards.py {options:?}: {}", show(&o));
        assert!(
            o.stdout == want,
            "shards.py {options:?} printed otherwise than quarry search: {}",
            first_difference(&o.stdout, &want)
        );
        let printed = String::from_utf8_lossy(&want);
        assert!(
            printed.lines().any(|l| l.split('\t').nth(2) == Some("0")),
            "no query without hits in {options:?}"
        );
        assert!(printed.lines().count() > 5, "too few hits: {printed}");
    }

    // The Python API against one index of the whole sample, on the
    // indexes built above.
    let report = env.unittest("test_distributed.py", &[("QUARRY_SAMPLE_INDEXES", &base)]);
    assert!(
        skipped(&report).is_empty() && report.contains("(test_distributed.OnALocalCluster."),
        "the cluster tests did not run: {report}"
    );
}
