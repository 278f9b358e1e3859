//! Installing and consuming the C library the way a downstream project
//! does: `scripts/install.sh PREFIX` (from the libraries this cargo run
//! built), then the examples in `c-examples/` compiled with nothing but
//! `pkg-config --cflags --libs quarry`, dynamically and statically, and run
//! on a small corpus that exercises the example's JSON string decoding;
//! and the README's commands for linking straight from the build tree, run
//! as written.

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{root, tool_available};

fn run(cmd: &mut Command) -> Output {
    let o = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?} failed: {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let o = run(Command::new("pkg-config")
        .args(args)
        .arg("quarry")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .env_remove("PKG_CONFIG_LIBDIR"));
    text(&o.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The first `n` lines of the bundled corpus, then documents that need the
/// example's escape handling, then two malformed lines it must skip.
/// (The Python example gets only the first `n` lines.)
fn write_corpus(path: &Path, n: usize) {
    let sample = std::fs::read_to_string(root().join("data/sample.jsonl")).unwrap();
    let mut out: String = sample.lines().take(n).map(|l| format!("{l}\n")).collect();
    out.push_str(concat!(
        r#"{"id": 90001, "title": "Caf\u00e9 \ud83d\ude00 \"quoted\" back\\slash\/", "#,
        r#""body": "dear sister\ndear sister\tagain", "year": 2024, "category": "Test"}"#,
        "\n",
        r#"{"id": 90004, "title": "Congress", "body": "congress at war", "year": 1999, "category": "Test"}"#,
        "\n",
        r#"{"id": 90002, "title": "unterminated}"#,
        "\n",
        r#"{"id": 90003, "title": "\udc00 lone low surrogate", "body": "x"}"#,
        "\n",
    ));
    std::fs::write(path, out).unwrap();
}

#[test]
fn install_then_build_the_examples_with_pkg_config() {
    if !tool_available("pkg-config", "the install test") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    let o = run(Command::new("sh")
        .arg(root().join("scripts/install.sh"))
        .arg(&prefix)
        .env("QUARRY_LIB_DIR", common::built_library_dir())
        .env_remove("DESTDIR")
        .env_remove("LIBDIR"));
    assert!(text(&o.stdout).contains("installed quarry 0.1.0"));

    // The files and the SONAME links.
    let lib = prefix.join("lib");
    assert!(lib.join("libquarry.so.0.1.0").is_file());
    assert_eq!(
        std::fs::read_link(lib.join("libquarry.so.0")).unwrap(),
        Path::new("libquarry.so.0.1.0")
    );
    assert_eq!(
        std::fs::read_link(lib.join("libquarry.so")).unwrap(),
        Path::new("libquarry.so.0")
    );
    assert!(lib.join("libquarry.a").is_file());
    assert_eq!(
        std::fs::read(prefix.join("include/quarry.h")).unwrap(),
        std::fs::read(root().join("include/quarry.h")).unwrap()
    );
    let pc = std::fs::read_to_string(lib.join("pkgconfig/quarry.pc")).unwrap();
    assert!(pc.contains("Version: 0.1.0"), "{pc}");
    assert!(pc.contains(&format!("prefix={}", prefix.display())), "{pc}");
    assert_eq!(pkg_config(&prefix, &["--modversion"]), ["0.1.0"]);

    // index_and_search, built with only the flags pkg-config gives.
    let cflags_libs = pkg_config(&prefix, &["--cflags", "--libs"]);
    assert!(
        cflags_libs.contains(&"-lquarry".to_owned()),
        "{cflags_libs:?}"
    );
    let strict = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"];
    let exe = tmp.path().join("index_and_search");
    run(Command::new("gcc")
        .args(strict)
        .arg(root().join("c-examples/index_and_search.c"))
        .args(&cflags_libs)
        .arg("-o")
        .arg(&exe));
    let dynamic = run(Command::new("readelf").arg("-d").arg(&exe));
    assert!(
        text(&dynamic.stdout).contains("Shared library: [libquarry.so.0]"),
        "the example must depend on the SONAME"
    );

    let corpus = tmp.path().join("corpus.jsonl");
    write_corpus(&corpus, 300);
    let index = tmp.path().join("index");
    for pass in 0..2 {
        // The second pass updates every document in place (delete + add).
        let o = run(Command::new(&exe)
            .arg(&corpus)
            .arg(&index)
            .env("LD_LIBRARY_PATH", &lib));
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert!(
            out.contains("indexed 302 documents") && out.contains("(2 lines skipped)"),
            "pass {pass}:\n{out}\n{err}"
        );
        assert!(
            out.contains("searching 302 documents"),
            "pass {pass}:\n{out}"
        );
        assert!(err.contains("unterminated string"), "{err}");
        assert!(err.contains("unpaired low surrogate"), "{err}");
        // Decoded escapes, surrogate pair included, and stored intact.
        assert!(
            out.contains("[id 90001]")
                && out.contains("Caf\u{e9} \u{1F600} \"quoted\" back\\slash/ (2024)"),
            "pass {pass}:\n{out}"
        );
        assert!(out.contains("body:(dear AND sister)"), "{out}");
    }

    // sorted_search over the same index, also built from pkg-config alone.
    let sorted = tmp.path().join("sorted_search");
    run(Command::new("gcc")
        .args(strict)
        .arg(root().join("c-examples/sorted_search.c"))
        .args(&cflags_libs)
        .arg("-o")
        .arg(&sorted));
    let o = run(Command::new(&sorted)
        .arg(&index)
        .env("LD_LIBRARY_PATH", &lib));
    let out = text(&o.stdout);
    assert!(
        out.contains("by year desc, score desc") && out.contains("sort values ("),
        "{out}"
    );

    // Static linking: libquarry.a plus the Libs.private of quarry.pc.
    let static_flags = pkg_config(&prefix, &["--static", "--cflags", "--libs"]);
    let exe_static = tmp.path().join("index_and_search_static");
    let mut args: Vec<String> = Vec::new();
    for f in &static_flags {
        if f == "-lquarry" {
            args.extend(["-Wl,-Bstatic", "-lquarry", "-Wl,-Bdynamic"].map(String::from));
        } else {
            args.push(f.clone());
        }
    }
    run(Command::new("gcc")
        .args(strict)
        .arg(root().join("c-examples/index_and_search.c"))
        .args(&args)
        .arg("-o")
        .arg(&exe_static));
    let dynamic = run(Command::new("readelf").arg("-d").arg(&exe_static));
    assert!(
        !text(&dynamic.stdout).contains("libquarry"),
        "linked statically"
    );
    let o = run(Command::new(&exe_static)
        .arg(&corpus)
        .arg(tmp.path().join("index-static"))
        .env_remove("LD_LIBRARY_PATH"));
    assert!(text(&o.stdout).contains("indexed 302 documents"));

    // The Python example loads the installed library by its SONAME.
    if tool_available("python3", "python_example.py") {
        let clean = tmp.path().join("clean.jsonl");
        write_corpus(&clean, 200);
        let lines: Vec<String> = std::fs::read_to_string(&clean)
            .unwrap()
            .lines()
            .take(200)
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&clean, lines.concat()).unwrap();
        let o = run(Command::new("python3")
            .arg(root().join("c-examples/python_example.py"))
            .arg(lib.join("libquarry.so.0"))
            .arg(&clean)
            .arg(tmp.path().join("index-py")));
        let out = text(&o.stdout);
        assert!(
            out.contains("indexed 200 documents") && out.contains("newest first"),
            "{out}"
        );
    }
}

/// The README's "straight from the build tree" block, run line by line as
/// written, from a directory laid out like the repository after
/// `cargo build --release`: `include/`, `target/release/libquarry.so` (the
/// library this test run built) and, as `app.c`, the first program of
/// docs/C-API.md. `cargo` is a stub there, since the library is built.
#[test]
fn the_readme_links_straight_from_the_build_tree() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = &readme[readme
        .find("Straight from the build tree")
        .expect("README.md: the build-tree linking paragraph")..];
    let start = section.find("```sh\n").unwrap() + 6;
    let block = &section[start..start + section[start..].find("```").unwrap()];
    assert!(block.contains("cargo build --release"), "{block}");

    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let release = repo.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::create_dir_all(repo.join("include")).unwrap();
    std::fs::copy(
        root().join("include/quarry.h"),
        repo.join("include/quarry.h"),
    )
    .unwrap();
    std::fs::copy(
        common::built_library_dir().join("libquarry.so"),
        release.join("libquarry.so"),
    )
    .unwrap();
    let doc = std::fs::read_to_string(root().join("docs/C-API.md")).unwrap();
    let c = doc.find("```c\n").unwrap() + 5;
    std::fs::write(
        repo.join("app.c"),
        &doc[c..c + doc[c..].find("```").unwrap()],
    )
    .unwrap();
    let stub = tmp.path().join("bin");
    std::fs::create_dir_all(&stub).unwrap();
    std::fs::write(stub.join("cargo"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        stub.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        stub.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = run(Command::new("sh")
        .args(["-eu", "-c", block])
        .current_dir(&repo)
        .env("PATH", &path)
        .env_remove("LD_LIBRARY_PATH"));
    assert_eq!(text(&o.stdout), "the quick brown fox\n");

    // What the link is for: without it the program cannot start.
    std::fs::remove_file(release.join("libquarry.so.0")).unwrap();
    let o = Command::new(repo.join("app"))
        .arg(tmp.path().join("second"))
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(
        !o.status.success()
            && text(&o.stderr).contains("libquarry.so.0: cannot open shared object file"),
        "{}",
        text(&o.stderr)
    );
}
