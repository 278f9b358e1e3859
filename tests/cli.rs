//! End-to-end tests of the `quarry` binary on the bundled sample corpus
//! (data/sample.jsonl, data/schema.json, data/queries.tsv).

mod common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_quarry");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

/// The environment variables that choose execution paths.
const PATH_VARS: [&str; 4] = [
    "QUARRY_EXEC",
    "QUARRY_TERM_TOPK",
    "QUARRY_BLOCK_MAX_OR",
    "QUARRY_BULK_AND",
];

/// `quarry` with `args` and none of the [`PATH_VARS`] set.
fn quarry(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    for var in PATH_VARS {
        cmd.env_remove(var);
    }
    cmd
}

fn run(args: &[&str]) -> Output {
    quarry(args).output().expect("run quarry")
}

/// Runs quarry, asserts success, returns stdout.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "quarry {args:?} failed with {:?}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs quarry, asserts it fails with `code`, returns stderr.
fn fails(args: &[&str], code: i32) -> String {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "quarry {args:?}: expected exit {code}; stderr:\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "quarry {args:?} panicked:\n{stderr}"
    );
    assert!(!stderr.trim().is_empty(), "quarry {args:?} failed silently");
    stderr
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// The first `n` lines of the sample corpus in a file.
fn sample_lines(dir: &Path, name: &str, range: std::ops::Range<usize>) -> PathBuf {
    let all = std::fs::read_to_string(data("sample.jsonl")).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let path = dir.join(name);
    let mut text = lines[range.start..range.end.min(lines.len())].join("\n");
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    path
}

/// The arguments of `quarry index DIR --schema SCHEMA --input INPUT`, then `extra`.
fn index_args<'a>(
    dir: &'a Path,
    schema: &'a Path,
    input: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["index", s(dir), "--schema", s(schema), "--input", s(input)];
    args.extend_from_slice(extra);
    args
}

fn index_sample(dir: &Path, extra: &[&str]) -> String {
    let schema = data("schema.json");
    let input = data("sample.jsonl");
    ok(&index_args(dir, &schema, &input, extra))
}

/// Indexes the first `n` lines of the sample corpus, written to
/// `tmp/base.jsonl`, into `tmp/idx`; returns the index and the input.
fn index_sample_head(tmp: &Path, n: usize) -> (PathBuf, PathBuf) {
    let idx = tmp.join("idx");
    let base = sample_lines(tmp, "base.jsonl", 0..n);
    let schema = data("schema.json");
    ok(&index_args(&idx, &schema, &base, &[]));
    (idx, base)
}

/// The arguments of `quarry search --format tsv` over `queries`, then `extra`.
fn search_tsv_args<'a>(dir: &'a Path, queries: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "search",
        s(dir),
        "--queries",
        s(queries),
        "--format",
        "tsv",
        "--id-field",
        "id",
    ];
    args.extend_from_slice(extra);
    args
}

/// `quarry search --format tsv` over the bundled queries.
fn search_tsv(dir: &Path, extra: &[&str]) -> String {
    let queries = data("queries.tsv");
    ok(&search_tsv_args(dir, &queries, extra))
}

/// `quarry search DIR QUERY`, then `extra`, with `--format tsv --id-field id`: the rows.
fn search_rows(dir: &Path, query: &str, extra: &[&str]) -> Vec<Row> {
    let mut args = vec!["search", s(dir), query];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--format", "tsv", "--id-field", "id"]);
    rows(&ok(&args))
}

fn stats_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["stats", s(dir), "--format", "json"])).expect("stats json")
}

/// Names of the files in `dir`, with the length and a hash of the contents of
/// every file but LOCK (whose content is the last writer's pid).
fn dir_state(dir: &Path) -> BTreeMap<String, (usize, u64)> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let bytes = if name == "LOCK" {
            Vec::new()
        } else {
            std::fs::read(e.path()).unwrap()
        };
        // FNV-1a: enough to tell changed contents apart in a failure message.
        let hash = bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
        m.insert(name, (bytes.len(), hash));
    }
    m
}

struct Row {
    qno: usize,
    class: String,
    rank: usize,
    id: String,
    score: String,
    bits: String,
    total: u64,
    sort_values: Option<String>,
}

fn rows(tsv: &str) -> Vec<Row> {
    let mut lines = tsv.lines();
    let header = lines.next().expect("header");
    assert!(
        header.starts_with("qno\tclass\trank\tid\tscore\tscore_bits\ttotal_hits"),
        "{header}"
    );
    lines
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert!(c.len() == 7 || c.len() == 8, "bad row {l:?}");
            Row {
                qno: c[0].parse().unwrap(),
                class: c[1].into(),
                rank: c[2].parse().unwrap(),
                id: c[3].into(),
                score: c[4].into(),
                bits: c[5].into(),
                total: c[6].parse().unwrap(),
                sort_values: c.get(7).map(|v| v.to_string()),
            }
        })
        .collect()
}

/// Structural checks of a tsv result for `nq` queries with top-`k`.
fn check_rows(rows: &[Row], nq: usize, k: usize) {
    for qno in 1..=nq {
        let q: Vec<&Row> = rows.iter().filter(|r| r.qno == qno).collect();
        assert!(!q.is_empty(), "query {qno} vanished");
        let total = q[0].total;
        assert!(q.iter().all(|r| r.total == total));
        if total == 0 {
            assert_eq!(q.len(), 1);
            assert_eq!(
                (q[0].rank, q[0].id.as_str(), q[0].bits.as_str()),
                (0, "-", "00000000")
            );
            continue;
        }
        assert_eq!(q.len() as u64, total.min(k as u64), "query {qno}");
        let mut prev = f32::INFINITY;
        for (i, r) in q.iter().enumerate() {
            assert_eq!(r.rank, i + 1);
            let score: f32 = r.score.parse().unwrap();
            assert_eq!(
                format!("{:08x}", score.to_bits()),
                r.bits,
                "score text round-trips"
            );
            assert_eq!(score.to_string(), r.score, "shortest decimal");
            assert!(score > 0.0 && score <= prev, "query {qno}: scores descend");
            prev = score;
        }
    }
}

fn num_queries() -> usize {
    std::fs::read_to_string(data("queries.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

#[test]
fn index_then_search_and_or() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let summary = index_sample(&idx, &[]);
    assert!(summary.starts_with("indexed 5066 docs in "), "{summary}");
    assert!(
        summary.contains("docs/s") && summary.contains("1 segments"),
        "{summary}"
    );

    let nq = num_queries();
    let and = search_tsv(&idx, &["--op", "and"]);
    let or = search_tsv(&idx, &["--op", "or"]);
    let (and, or) = (rows(&and), rows(&or));
    check_rows(&and, nq, 10);
    check_rows(&or, nq, 10);
    for qno in 1..=nq {
        let a = and.iter().find(|r| r.qno == qno).unwrap();
        let o = or.iter().find(|r| r.qno == qno).unwrap();
        assert!(a.total <= o.total, "AND matches no more than OR");
        assert_eq!(a.class, o.class);
    }
    // One-term queries: AND and OR are the same query.
    let one: Vec<usize> = and
        .iter()
        .filter(|r| r.class == "one-term")
        .map(|r| r.qno)
        .collect();
    assert!(!one.is_empty());
    for qno in one {
        let a: Vec<_> = and
            .iter()
            .filter(|r| r.qno == qno)
            .map(|r| (&r.id, &r.bits))
            .collect();
        let o: Vec<_> = or
            .iter()
            .filter(|r| r.qno == qno)
            .map(|r| (&r.id, &r.bits))
            .collect();
        assert_eq!(a, o);
    }
    // The stored id is the line number; doc numbers start at 0.
    let by_doc = rows(&ok(&[
        "search",
        s(&idx),
        "marianne",
        "--format",
        "tsv",
        "--k",
        "3",
    ]));
    let by_id = rows(&ok(&[
        "search",
        s(&idx),
        "marianne",
        "--format",
        "tsv",
        "--k",
        "3",
        "--id-field",
        "id",
    ]));
    for (d, i) in by_doc.iter().zip(&by_id) {
        assert_eq!(
            d.id.parse::<u64>().unwrap() + 1,
            i.id.parse::<u64>().unwrap()
        );
        assert_eq!((d.qno, d.class.as_str()), (1, "-"));
    }

    // A query without hits still prints its line.
    let none = rows(&ok(&[
        "search",
        s(&idx),
        "zzzyxnotaword",
        "--format",
        "tsv",
    ]));
    assert_eq!(none.len(), 1);
    assert_eq!(
        (none[0].rank, none[0].id.as_str(), none[0].score.as_str()),
        (0, "-", "0")
    );
    assert_eq!(none[0].total, 0);

    // Paging: offset 5, k 5 is ranks 6..10 of the top 10.
    let top10 = rows(&ok(&[
        "search",
        s(&idx),
        "elinor",
        "--format",
        "tsv",
        "--k",
        "10",
    ]));
    let page = rows(&ok(&[
        "search",
        s(&idx),
        "elinor",
        "--format",
        "tsv",
        "--k",
        "5",
        "--offset",
        "5",
    ]));
    let want: Vec<_> = top10[5..]
        .iter()
        .map(|r| (r.rank, r.id.clone(), r.bits.clone()))
        .collect();
    let got: Vec<_> = page
        .iter()
        .map(|r| (r.rank, r.id.clone(), r.bits.clone()))
        .collect();
    assert_eq!(got, want);

    // json: one object per query; text: a heading per query with titles.
    let queries = data("queries.tsv");
    let json = ok(&[
        "search",
        s(&idx),
        "--queries",
        s(&queries),
        "--format",
        "json",
        "--id-field",
        "id",
        "--op",
        "and",
    ]);
    let objs: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objs.len(), nq);
    for (o, qno) in objs.iter().zip(1..) {
        assert_eq!(o["qno"], qno);
        let hits = o["hits"].as_array().unwrap();
        let tsv_hits: Vec<&Row> = and.iter().filter(|r| r.qno == qno && r.rank > 0).collect();
        assert_eq!(hits.len(), tsv_hits.len());
        for (h, r) in hits.iter().zip(tsv_hits) {
            assert_eq!(h["id"].to_string(), r.id);
            assert_eq!(h["score_bits"], r.bits.as_str());
            assert_eq!(
                h["score"].to_string(),
                r.score,
                "json score is the shortest decimal"
            );
            assert!(h["title"].is_string());
        }
    }
    let text = ok(&[
        "search",
        s(&idx),
        "elizabeth darcy",
        "--op",
        "and",
        "--k",
        "3",
    ]);
    assert!(text.starts_with("#1 [-] \"elizabeth darcy\": "), "{text}");
    assert!(text.contains("Pride and Prejudice"), "{text}");
}

#[test]
fn exec_paths_and_segment_layouts_are_bit_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    let many = tmp.path().join("many");
    index_sample(&one, &[]);
    let summary = index_sample(&many, &["--segment-docs", "200"]);
    assert!(summary.contains("26 segments"), "{summary}");
    assert_eq!(stats_json(&many)["segments"], 26);

    let sorts: [&[&str]; 3] = [
        &[],
        &["--sort", "year:desc,score"],
        &["--sort", "category,year:desc"],
    ];
    for op in ["and", "or"] {
        for sort in sorts {
            let mut args = vec!["--op", op];
            args.extend_from_slice(sort);
            let base = search_tsv(&one, &[&args[..], &["--exec", "exhaustive"]].concat());
            for dir in [&one, &many] {
                // (auto is daat today; sorted runs check auto only, to keep the test quick)
                let execs: &[&str] = if sort.is_empty() {
                    &["exhaustive", "auto", "daat"]
                } else {
                    &["exhaustive", "auto"]
                };
                for exec in execs {
                    let got = search_tsv(dir, &[&args[..], &["--exec", exec]].concat());
                    assert!(
                        got == base,
                        "{op} {sort:?} --exec {exec} on {} differs from exhaustive on one segment",
                        dir.display()
                    );
                }
            }
            // One search on several threads, a segment each at a time.
            let got = search_tsv(&many, &[&args[..], &["--search-threads", "3"]].concat());
            assert!(got == base, "{op} {sort:?} --search-threads 3 differs");
            // The environment switch selects the same paths.
            let queries = data("queries.tsv");
            let out = Command::new(BIN)
                .args(search_tsv_args(&many, &queries, &args))
                .env("QUARRY_EXEC", "exhaustive")
                .output()
                .unwrap();
            assert!(out.status.success());
            assert!(String::from_utf8(out.stdout).unwrap() == base);
        }
    }

    let err = fails(&["search", s(&many), "alpha", "--search-threads", "0"], 2);
    assert!(err.contains("--search-threads"), "{err}");

    let asc = search_tsv(&many, &["--sort", "score:asc,doc:desc", "--exec", "auto"]);
    assert!(
        asc == search_tsv(
            &one,
            &["--sort", "score:asc,doc:desc", "--exec", "exhaustive"]
        )
    );
    // score:asc puts the lowest scores first; doc:desc breaks ties by higher doc.
    let r = rows(&asc);
    let first: Vec<&Row> = r.iter().filter(|r| r.qno == 1).collect();
    for w in first.windows(2) {
        assert!(w[0].score.parse::<f32>().unwrap() <= w[1].score.parse::<f32>().unwrap());
    }

    // Merging the many segments changes nothing either.
    let merged = ok(&["merge", s(&many), "--max-segments", "5"]);
    assert!(merged.contains("26 segments -> 5"), "{merged}");
    assert_eq!(stats_json(&many)["segments"], 5);
    ok(&["merge", s(&many)]);
    let st = stats_json(&many);
    assert_eq!(st["segments"], 1);
    assert_eq!(st["documents"]["live"], 5066);
    for op in ["and", "or"] {
        assert!(search_tsv(&many, &["--op", op]) == search_tsv(&one, &["--op", op]));
    }
}

#[test]
fn sorted_search_orders_by_the_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    index_sample(&idx, &["--merge"]);
    let r = rows(&search_tsv(
        &idx,
        &["--op", "or", "--sort", "year:desc,score", "--k", "20"],
    ));
    let nq = num_queries();
    for qno in 1..=nq {
        let q: Vec<&Row> = r.iter().filter(|r| r.qno == qno && r.rank > 0).collect();
        let keys: Vec<(i64, f32)> = q
            .iter()
            .map(|r| {
                let sv = r.sort_values.as_deref().expect("sort_values column");
                let (y, sc) = sv.split_once('|').expect("two sort values");
                let sc: f32 = sc.parse().unwrap();
                assert_eq!(
                    sc.to_string(),
                    r.score,
                    "score sort value is the hit's score"
                );
                (y.parse().unwrap(), sc)
            })
            .collect();
        for w in keys.windows(2) {
            assert!(
                w[0].0 > w[1].0 || (w[0].0 == w[1].0 && w[0].1 >= w[1].1),
                "{keys:?}"
            );
        }
    }
    let r = rows(&search_tsv(
        &idx,
        &["--op", "or", "--sort", "category,year:desc"],
    ));
    for qno in 1..=nq {
        let keys: Vec<(String, i64)> = r
            .iter()
            .filter(|r| r.qno == qno && r.rank > 0)
            .map(|r| {
                let (c, y) = r.sort_values.as_deref().unwrap().split_once('|').unwrap();
                (c.to_owned(), y.parse().unwrap())
            })
            .collect();
        for w in keys.windows(2) {
            assert!(
                w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 >= w[1].1),
                "{keys:?}"
            );
        }
    }
}

/// `--total lower-bound` lets a sorted search skip blocks that cannot
/// compete: the same hits, and a total flagged as a lower bound.
#[test]
fn a_lower_bound_total_skips_blocks_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    // Years rise with the document number, so once the page holds the
    // first block's earliest years every later 4096-document block is
    // skipped by its smallest year.
    let n = 12_000;
    let docs = tmp.path().join("docs.jsonl");
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{{\"id\": {i}, \"title\": \"t\", \"body\": \"word\", \"year\": {}, \"category\": \"c\"}}\n",
                1900 + i / 100
            )
        })
        .collect();
    std::fs::write(&docs, text).unwrap();
    let idx = tmp.path().join("idx");
    ok(&index_args(&idx, &data("schema.json"), &docs, &[]));
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["search", s(&idx), "word", "--sort", "year", "--k", "5"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--format", "json", "--id-field", "id"]);
        serde_json::from_str(&ok(&args)).expect("json line")
    };
    let exact = json(&[]);
    let bound = json(&["--total", "lower-bound"]);
    assert_eq!(exact["total_hits"], n);
    assert_eq!(exact["total_is_exact"], true);
    assert_eq!(bound["total_is_exact"], false);
    let total = bound["total_hits"].as_u64().unwrap();
    assert!((5..n).contains(&total), "{total}");
    assert_eq!(exact["hits"], bound["hits"]);
    // tsv marks the lower bound with a '+'.
    let tsv = ok(&[
        "search",
        s(&idx),
        "word",
        "--sort",
        "year",
        "--k",
        "5",
        "--format",
        "tsv",
        "--total",
        "lower-bound",
    ]);
    for line in tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols[6], format!("{total}+"), "{line}");
    }
}

/// `--total N` counts exactly up to N matches and then flags a lower
/// bound; `--path NAME=off` turns one fast path off with identical hits.
#[test]
fn total_thresholds_and_path_switches() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    index_sample(&idx, &[]);
    let json_of =
        |out: &str| -> serde_json::Value { serde_json::from_str(out).expect("json line") };
    let json = |query: &str, extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "search",
            s(&idx),
            query,
            "--format",
            "json",
            "--id-field",
            "id",
        ];
        args.extend_from_slice(extra);
        json_of(&ok(&args))
    };
    let total = |v: &serde_json::Value| {
        (
            v["total_hits"].as_u64().unwrap(),
            v["total_is_exact"] == true,
        )
    };

    // "the" is in most documents: an exact count, then thresholds below it.
    let exact = json("the", &[]);
    let (n, is_exact) = total(&exact);
    assert!(n > 1000 && is_exact, "{n}");
    assert_eq!(exact["hits"].as_array().unwrap().len(), 10);
    for t in [5u64, 1000] {
        let got = json("the", &["--total", &t.to_string()]);
        assert_eq!(got["hits"], exact["hits"], "--total {t}");
        let (m, is_exact) = total(&got);
        assert!(!is_exact && (t..n).contains(&m), "--total {t}: {m} of {n}");
    }
    // A threshold at or above the matches counts them all.
    for t in [n, n + 1] {
        let got = json("the", &["--total", &t.to_string()]);
        assert_eq!(total(&got), (n, true), "--total {t}");
        assert_eq!(got["hits"], exact["hits"]);
    }

    // Every switch off, alone or together: the same output (exact totals).
    for op in ["or", "and"] {
        for sort in [&[][..], &["--sort", "year:desc,score"]] {
            let mut args = vec!["--op", op];
            args.extend_from_slice(sort);
            let base = search_tsv(&idx, &args);
            let all_off = [
                "--path",
                "term-topk=off",
                "--path",
                "block-max-or=off",
                "--path",
                "bulk-and=off",
            ];
            for extra in [&all_off[..2], &all_off[2..4], &all_off[4..], &all_off[..]] {
                let got = search_tsv(&idx, &[&args[..], extra].concat());
                assert!(got == base, "{args:?} {extra:?} changed the output");
            }
        }
    }

    // The switches act: with a lower-bound total, each shape skips on its
    // fast path and counts every match document-at-a-time once that path
    // is off, with the same hits; the other paths' switches change nothing.
    let shapes = [
        ("the", "or", "term-topk"),
        ("the of", "or", "block-max-or"),
        ("the of", "and", "bulk-and"),
    ];
    for (query, op, path) in shapes {
        let args = ["--op", op, "--total", "lower-bound"];
        let want = json(query, &["--op", op]);
        let fast = json(query, &args);
        assert_eq!(fast["hits"], want["hits"], "{query} {op}");
        assert!(!total(&fast).1, "{query} {op}: the fast path skipped");
        for (_, _, other) in shapes {
            let off = format!("{other}=off");
            let got = json(query, &[&args[..], &["--path", &off]].concat());
            assert_eq!(got["hits"], want["hits"], "{query} {op} --path {off}");
            if other == path {
                assert_eq!(total(&got), total(&want), "{query} {op} --path {off}");
            } else {
                assert_eq!(total(&got), total(&fast), "{query} {op} --path {off}");
            }
        }
        // The last setting of a path wins, and --path beats the environment.
        let off = format!("{path}=off");
        let on = format!("{path}=auto");
        let got = json(
            query,
            &[&args[..], &["--path", &off, "--path", &on]].concat(),
        );
        assert_eq!(total(&got), total(&fast), "{query} {op} off then auto");
        let var = format!("QUARRY_{}", path.replace('-', "_").to_uppercase());
        let mut search = vec!["search", s(&idx), query, "--format", "json"];
        search.extend_from_slice(&args);
        for (extra, want_total) in [
            (&[][..], total(&want)),
            (&["--path", &on][..], total(&fast)),
        ] {
            let out = quarry(&[&search[..], extra].concat())
                .env(&var, "off")
                .output()
                .unwrap();
            assert!(out.status.success(), "{var}=off {extra:?}");
            let got = json_of(std::str::from_utf8(&out.stdout).unwrap());
            assert_eq!(total(&got), want_total, "{var}=off {extra:?}");
        }
    }

    // Bad values: exit 2, saying what is wrong and what is accepted.
    let d = s(&idx);
    let err = fails(&["search", d, "x", "--path", "nosuchpath=off"], 2);
    assert!(
        err.contains("unknown path 'nosuchpath'")
            && err.contains("term-topk, block-max-or, bulk-and"),
        "{err}"
    );
    let err = fails(&["search", d, "x", "--path", "bulk-and=maybe"], 2);
    assert!(err.contains("expected 'auto' or 'off'"), "{err}");
    let err = fails(&["search", d, "x", "--path", "bulk-and"], 2);
    assert!(err.contains("expected NAME=auto|off"), "{err}");
    let err = fails(&["bench", d, "--queries", "q.tsv", "--total", "-5"], 2);
    assert!(err.contains("invalid value '-5' for --total"), "{err}");

    // bench takes both, and its check accepts flagged lower bounds.
    let queries = data("queries.tsv");
    let json_out = tmp.path().join("bench.json");
    for extra in [
        &["--total", "5", "--path", "bulk-and=off"][..],
        &["--total", "lower-bound", "--sort", "year:desc,score"],
        &[
            "--total",
            "lower-bound",
            "--op",
            "and",
            "--path",
            "term-topk=off",
        ],
    ] {
        let mut args = vec![
            "bench",
            d,
            "--queries",
            s(&queries),
            "--warmup-s",
            "0",
            "--measure-s",
            "0.02",
            "--json-out",
            s(&json_out),
        ];
        args.extend_from_slice(extra);
        assert!(ok(&args).starts_with("class"), "{extra:?}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
        assert_eq!(v["config"]["total"], extra[1], "{extra:?}");
        let off = extra
            .iter()
            .position(|&a| a == "--path")
            .map(|i| extra[i + 1]);
        for path in ["term-topk", "block-max-or", "bulk-and"] {
            let want = if off == Some(&format!("{path}=off")[..]) {
                "off"
            } else {
                "auto"
            };
            assert_eq!(v["config"]["paths"][path], want, "{extra:?}");
        }
    }
}

#[test]
fn append_matches_a_single_run_and_rejects_another_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let parts = tmp.path().join("parts");
    index_sample(&whole, &[]);
    let first = sample_lines(tmp.path(), "first.jsonl", 0..2500);
    let second = sample_lines(tmp.path(), "second.jsonl", 2500..usize::MAX);
    let schema = data("schema.json");
    let out = ok(&index_args(&parts, &schema, &first, &[]));
    assert!(out.starts_with("indexed 2500 docs"), "{out}");
    // Appending without --schema, and with the same schema, both work.
    let out = ok(&["index", s(&parts), "--input", s(&second)]);
    assert!(
        out.starts_with("indexed 2566 docs") && out.contains("5066 docs, 2 segments"),
        "{out}"
    );
    let st = stats_json(&parts);
    assert_eq!(st["documents"]["live"], 5066);
    assert_eq!(st["documents"]["total"], 5066);
    assert_eq!(st["documents"]["deleted"], 0);
    for op in ["and", "or"] {
        assert!(search_tsv(&parts, &["--op", op]) == search_tsv(&whole, &["--op", op]));
    }
    let empty = tmp.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = ok(&index_args(&parts, &schema, &empty, &[]));
    assert!(out.starts_with("indexed 0 docs"), "{out}");

    // A different schema is refused and changes nothing.
    let before = dir_state(&parts);
    let other = tmp.path().join("other.json");
    std::fs::write(&other, r#"{"fields":[{"name":"body","type":"text"}]}"#).unwrap();
    let err = fails(&index_args(&parts, &other, &second, &[]), 1);
    assert!(err.contains("schema"), "{err}");
    assert_eq!(dir_state(&parts), before);
}

#[test]
fn bad_input_aborts_and_leaves_the_index_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let (idx, base) = index_sample_head(tmp.path(), 300);
    let schema = data("schema.json");
    let state = dir_state(&idx);
    let results = search_tsv(&idx, &["--op", "or"]);

    let good =
        r#"{"id": 9000, "title": "t", "body": "congress marriage", "year": 2000, "category": "X"}"#;
    let cases: &[(&str, &[u8])] = &[
        ("malformed JSON", br#"{"id": 9001, "body": "x""#),
        ("unknown key", br#"{"id": 9001, "bogus": "x"}"#),
        ("string for i64", br#"{"id": "9001"}"#),
        ("float for i64", br#"{"id": 9001.5}"#),
        ("integral float for i64", br#"{"id": 9001.0}"#),
        ("i64 out of range", br#"{"id": 9223372036854775808}"#),
        ("number for text", br#"{"body": 12}"#),
        ("number for string", br#"{"category": 12}"#),
        ("bool for i64", br#"{"year": true}"#),
        ("object for text", br#"{"body": {"a": 1}}"#),
        ("not an object", br#"[1, 2]"#),
        ("invalid UTF-8", b"{\"body\": \"caf\xe9\"}"),
        ("huge number", br#"{"year": 1e999}"#),
    ];
    for (what, bad) in cases {
        // Four good lines, then the bad one at line 5, then more good lines;
        // with --segment-docs 1 segments are flushed before the bad line.
        let mut input = Vec::new();
        for _ in 0..4 {
            input.extend_from_slice(good.as_bytes());
            input.push(b'\n');
        }
        input.extend_from_slice(bad);
        input.push(b'\n');
        input.extend_from_slice(good.as_bytes());
        input.push(b'\n');
        let path = tmp.path().join("bad.jsonl");
        std::fs::write(&path, &input).unwrap();
        for extra in [&[][..], &["--segment-docs", "1"][..], &["--merge"][..]] {
            let mut args = vec!["index", s(&idx), "--input", s(&path)];
            args.extend_from_slice(extra);
            let err = fails(&args, 1);
            assert!(err.contains("line 5"), "{what}: {err}");
            assert_eq!(
                dir_state(&idx),
                state,
                "{what} {extra:?}: the index directory changed"
            );
            assert!(
                search_tsv(&idx, &["--op", "or"]) == results,
                "{what}: results changed"
            );
        }
        // The same input never creates a new index either.
        let fresh = tmp.path().join("fresh");
        let err = fails(
            &index_args(&fresh, &schema, &path, &["--segment-docs", "2"]),
            1,
        );
        assert!(err.contains("line 5"), "{what}: {err}");
        assert!(
            !fresh.exists(),
            "{what}: a failed run left a new index behind"
        );
    }

    // null is absent; an array of strings is a multi-valued text field.
    let path = tmp.path().join("ok.jsonl");
    std::fs::write(
        &path,
        "{\"id\": 9100, \"body\": [\"zebraword one\", \"two\"], \"year\": null, \"title\": null}\n\n",
    )
    .unwrap();
    ok(&["index", s(&idx), "--input", s(&path)]);
    let hit = search_rows(&idx, "zebraword", &[]);
    assert_eq!((hit[0].id.as_str(), hit[0].total), ("9100", 1));

    // A new index needs a schema: usage error, nothing created.
    let fresh = tmp.path().join("fresh2");
    let err = fails(&["index", s(&fresh), "--input", s(&base)], 2);
    assert!(err.contains("--schema"), "{err}");
    assert!(!fresh.exists());
    // An existing empty directory is left empty after a failed first run.
    let empty_dir = tmp.path().join("emptydir");
    std::fs::create_dir(&empty_dir).unwrap();
    std::fs::write(empty_dir.join("keep.txt"), "mine").unwrap();
    let bad = tmp.path().join("bad.jsonl");
    fails(&index_args(&empty_dir, &schema, &bad, &[]), 1);
    assert_eq!(
        dir_state(&empty_dir).keys().collect::<Vec<_>>(),
        vec!["keep.txt"]
    );
    // A bad flag is a usage error and changes nothing.
    let state = dir_state(&idx);
    let results = search_tsv(&idx, &["--op", "or"]);
    let err = fails(
        &[
            "index",
            s(&idx),
            "--input",
            s(&base),
            "--segment-docs",
            "lots",
        ],
        2,
    );
    assert!(err.contains("--segment-docs"), "{err}");
    let err = fails(&["index", s(&idx), "--input", s(&base), "--frobnicate"], 2);
    assert!(err.contains("--frobnicate"), "{err}");
    let err = fails(
        &["index", s(&idx), "--input", s(&base), "--segment-docs", "0"],
        2,
    );
    assert!(err.contains("--segment-docs"), "{err}");
    let err = fails(
        &[
            "index",
            s(&idx),
            "--input",
            s(&tmp.path().join("missing.jsonl")),
        ],
        1,
    );
    assert!(err.contains("missing.jsonl"), "{err}");
    let bad_schema = tmp.path().join("bad_schema.json");
    std::fs::write(
        &bad_schema,
        "{\"fields\": [{\"name\": \"x\", \"type\": \"blob\"}]}",
    )
    .unwrap();
    let err = fails(&index_args(&fresh, &bad_schema, &base, &[]), 1);
    assert!(err.contains("blob"), "{err}");
    assert!(!fresh.exists());
    assert_eq!(dir_state(&idx), state, "usage errors changed the index");
    assert!(search_tsv(&idx, &["--op", "or"]) == results);
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let (idx, _base) = index_sample_head(tmp.path(), 200);
    let d = s(&idx);
    let cases: &[&[&str]] = &[
        &[],
        &["frobnicate"],
        &["--frobnicate"],
        &["index"],
        &["index", d],
        &["search", d],
        &["search"],
        &["search", d, "x", "--k"],
        &["search", d, "x", "--k", "-1"],
        &["search", d, "x", "--k", "ten"],
        &["search", d, "x", "--op", "xor"],
        &["search", d, "x", "--exec", "fast"],
        &["search", d, "x", "--format", "xml"],
        &["search", d, "x", "--sort", "year:sideways"],
        &["search", d, "x", "--sort", "year", "--total", "roughly"],
        &["search", d, "x", "--total", "-5"],
        &["search", d, "x", "--path", "term-topk"],
        &["search", d, "x", "--path", "nosuchpath=off"],
        &["search", d, "x", "--path", "bulk-and=maybe"],
        &["search", d, "x", "--path"],
        &["search", d, "x", "--sort", "nosuchfield"],
        &["search", d, "x", "--sort", "body"],
        &["search", d, "x", "--sort", ""],
        &["search", d, "x", "--field", "nosuchfield"],
        &["search", d, "x", "--field", "year"],
        &["search", d, "x", "--id-field", "nosuchfield"],
        &["search", d, "x", "y"],
        &["search", d, "x", "--queries", "q.tsv"],
        &["search", d, "x", "--bogus"],
        &["bench", d],
        &["bench", d, "--queries", "q.tsv", "--threads", "0"],
        &["bench", d, "--queries", "q.tsv", "--measure-s", "-1"],
        &["bench", d, "--queries", "q.tsv", "--total", "roughly"],
        &["bench", d, "--queries", "q.tsv", "--path", "term-topk=on"],
        &["merge"],
        &["merge", d, "--max-segments", "0"],
        &["stats"],
        &["stats", d, "--format", "yaml"],
        &["stats", d, "extra"],
        &["help", "nosuchcommand"],
    ];
    for args in cases {
        let err = fails(args, 2);
        assert!(err.starts_with("quarry: "), "{args:?}: {err}");
        assert!(err.contains("--help"), "{args:?}: {err}");
    }
    // Engine errors: exit 1 with the error's message.
    let err = fails(&["search", s(&tmp.path().join("nothing")), "x"], 1);
    assert!(err.contains("no index"), "{err}");
    let err = fails(&["stats", s(&tmp.path().join("nothing"))], 1);
    assert!(err.contains("no index"), "{err}");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = fails(&["search", s(&empty), "x"], 1);
    assert!(err.contains("no index"), "{err}");
    let err = fails(&["merge", s(&empty)], 1);
    assert!(err.contains("no index"), "{err}");
    let queries = tmp.path().join("q.tsv");
    std::fs::write(&queries, "no tab here\n").unwrap();
    let err = fails(&["search", d, "--queries", s(&queries)], 1);
    assert!(err.contains("line 1"), "{err}");

    // Help: exit 0, on stdout.
    for args in [
        &["--help"][..],
        &["help"],
        &["help", "bench"],
        &["index", "--help"],
        &["search", "-h"],
        &["bench", "--help"],
        &["merge", "--help"],
        &["stats", "--help"],
    ] {
        let out = ok(args);
        assert!(out.contains("Usage: quarry"), "{args:?}: {out}");
    }
}

#[test]
fn stats_merge_and_bench() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    index_sample(&idx, &["--segment-docs", "1000"]);
    let st = stats_json(&idx);
    assert_eq!(st["segments"], 6);
    assert_eq!(st["generation"], 2);
    assert_eq!(st["documents"]["live"], 5066);
    let comps = st["bytes"]["components"].as_object().unwrap();
    for c in ["postings", "terms", "norms", "stored", "sort"] {
        assert!(comps[c].as_u64().unwrap() > 0, "{c}: {st}");
    }
    let sum: u64 = comps.values().map(|v| v.as_u64().unwrap()).sum();
    let seg_bytes = st["bytes"]["segment_files"].as_u64().unwrap();
    assert!(sum <= seg_bytes && seg_bytes <= st["bytes"]["on_disk"].as_u64().unwrap());
    // norms: one byte per document per text field (title, body).
    assert_eq!(comps["norms"], 2 * 5066);
    let text = ok(&["stats", s(&idx)]);
    assert!(
        text.contains("documents:   5066 live, 5066 total, 0 deleted"),
        "{text}"
    );
    assert!(text.contains("segments:    6"), "{text}");

    let out = ok(&["merge", s(&idx)]);
    assert!(out.contains("6 segments -> 1, generation "), "{out}");
    // Merging one segment without deletions changes nothing.
    let out = ok(&["merge", s(&idx)]);
    assert!(out.contains("1 segments -> 1"), "{out}");

    let queries = data("queries.tsv");
    let json_out = tmp.path().join("bench.json");
    for threads in ["1", "2"] {
        let out = ok(&[
            "bench",
            s(&idx),
            "--queries",
            s(&queries),
            "--op",
            "and",
            "--warmup-s",
            "0.05",
            "--measure-s",
            "0.1",
            "--threads",
            threads,
            "--json-out",
            s(&json_out),
        ]);
        assert!(out.starts_with("class"), "{out}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
        let classes = v["classes"].as_array().unwrap();
        let names: Vec<&str> = classes
            .iter()
            .map(|c| c["class"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "one-term",
                "two-terms",
                "three-terms",
                "common",
                "rare",
                "common-rare"
            ]
        );
        for c in classes {
            assert!(c["queries"].as_u64().unwrap() >= 4);
            assert!(c["completed"].as_u64().unwrap() >= 1);
            let cpu = c["cpu_ms_per_query"].as_f64().unwrap();
            let (p50, p99) = (c["p50_ms"].as_f64().unwrap(), c["p99_ms"].as_f64().unwrap());
            assert!(cpu >= 0.0 && p50 > 0.0 && p50 <= p99, "{c}");
        }
    }
    ok(&[
        "bench",
        s(&idx),
        "--queries",
        s(&queries),
        "--sort",
        "year:desc,score",
        "--warmup-s",
        "0",
        "--measure-s",
        "0.05",
        "--exec",
        "daat",
    ]);
}

/// Rust's view of every char of the corpus: is_alphanumeric and to_lowercase.
fn char_table(path: &Path) {
    let text = std::fs::read_to_string(data("sample.jsonl")).unwrap();
    let chars: std::collections::BTreeSet<char> = text.chars().collect();
    let mut out = String::new();
    for c in chars {
        let lower: Vec<String> = c
            .to_lowercase()
            .map(|l| format!("{:x}", l as u32))
            .collect();
        out.push_str(&format!(
            "{:x}\t{}\t{}\n",
            c as u32,
            u8::from(c.is_alphanumeric()),
            lower.join(",")
        ));
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn bm25_matches_an_independent_python_reference() {
    if !common::tool_available("python3", "the BM25 reference check") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    // Several segments: the statistics must still be corpus-wide.
    index_sample(&idx, &["--segment-docs", "700"]);
    let table = tmp.path().join("chars.tsv");
    char_table(&table);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bm25_check.py");
    let check = |extra: &[&str]| -> (bool, String) {
        let corpus = data("sample.jsonl");
        let queries = data("queries.tsv");
        let mut args = vec![
            s(&script),
            "--corpus",
            s(&corpus),
            "--queries",
            s(&queries),
            "--char-table",
            s(&table),
        ];
        args.extend_from_slice(extra);
        let out = Command::new("python3").args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let nq = num_queries();
    for op in ["and", "or"] {
        let (okay, text) = check(&["--op", op, "--k", "10", "--quarry", BIN, "--index", s(&idx)]);
        println!("{text}");
        assert!(okay, "bm25_check --op {op} failed:\n{text}");
        assert!(text.contains(&format!("{nq} passed, 0 failed")), "{text}");
        assert!(text.contains("0 differ"), "{text}");
    }
    // The reference is not vacuous: a wrong hit makes it fail.
    let tsv = search_tsv(&idx, &["--op", "or"]);
    let mut lines: Vec<String> = tsv.lines().map(String::from).collect();
    let mut cols: Vec<String> = lines[3].split('\t').map(String::from).collect();
    cols[3] = "1".into(); // a document that does not contain the query's term
    lines[3] = cols.join("\t");
    let bad = tmp.path().join("bad.tsv");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let (okay, text) = check(&["--op", "or", "--results", s(&bad)]);
    assert!(!okay && text.contains("1 failed"), "{text}");
}

const TYPED_SCHEMA: &str = r#"{"fields":[
    {"name":"id","type":"i64","stored":true,"indexed":true},
    {"name":"body","type":"text"},
    {"name":"n","type":"i64","sortable":true,"stored":true},
    {"name":"f","type":"f64","sortable":true,"stored":true},
    {"name":"c","type":"string","sortable":true,"stored":true,"indexed":true}]}"#;

const TYPED_DOCS: &str = r#"{"id": 1, "body": "x", "n": 9223372036854775807, "f": -0.0, "c": "b"}
{"id": 2, "body": "x", "n": -9223372036854775808, "f": 0, "c": "a"}
{"id": 3, "body": "x"}
{"id": 4, "body": "x", "n": 0, "f": -1e300, "c": ""}
{"id": 5, "body": "x y", "n": 5, "f": 1e-300, "c": "é"}
{"id": 6, "body": "x", "n": null, "f": 2.5, "c": null}
"#;

/// Indexes TYPED_DOCS into `tmp/idx`, with `extra` arguments to `quarry index`.
fn index_typed(tmp: &Path, extra: &[&str]) -> PathBuf {
    let schema = tmp.join("schema.json");
    std::fs::write(&schema, TYPED_SCHEMA).unwrap();
    let docs = tmp.join("docs.jsonl");
    std::fs::write(&docs, TYPED_DOCS).unwrap();
    let idx = tmp.join("idx");
    ok(&index_args(&idx, &schema, &docs, extra));
    idx
}

/// Sorting by every field type, missing values last in both directions,
/// the same on many segments and on one.
#[test]
fn sort_by_typed_fields_with_missing_values() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = index_typed(tmp.path(), &["--segment-docs", "2"]);
    let order = |spec: &str| -> Vec<(String, String)> {
        search_rows(&idx, "x", &["--sort", spec])
            .into_iter()
            .map(|r| (r.id, r.sort_values.unwrap()))
            .collect()
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let cases: [(&str, &[(&str, &str)]); 6] = [
        (
            "n",
            &[
                ("2", "-9223372036854775808"),
                ("4", "0"),
                ("5", "5"),
                ("1", "9223372036854775807"),
                ("3", ""),
                ("6", ""),
            ],
        ),
        (
            "n:desc",
            &[
                ("1", "9223372036854775807"),
                ("5", "5"),
                ("4", "0"),
                ("2", "-9223372036854775808"),
                ("3", ""),
                ("6", ""),
            ],
        ),
        (
            "f",
            &[
                ("4", "-1e300"),
                ("1", "-0"),
                ("2", "0"),
                ("5", "1e-300"),
                ("6", "2.5"),
                ("3", ""),
            ],
        ),
        (
            "f:desc",
            &[
                ("6", "2.5"),
                ("5", "1e-300"),
                ("2", "0"),
                ("1", "-0"),
                ("4", "-1e300"),
                ("3", ""),
            ],
        ),
        (
            "c",
            &[
                ("4", ""),
                ("2", "a"),
                ("1", "b"),
                ("5", "é"),
                ("3", ""),
                ("6", ""),
            ],
        ),
        (
            "c:desc",
            &[
                ("5", "é"),
                ("1", "b"),
                ("2", "a"),
                ("4", ""),
                ("3", ""),
                ("6", ""),
            ],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(order(spec), pairs(want), "--sort {spec}");
    }
    let before: Vec<_> = cases.iter().map(|(spec, _)| order(spec)).collect();
    ok(&["merge", s(&idx)]);
    let after: Vec<_> = cases.iter().map(|(spec, _)| order(spec)).collect();
    assert_eq!(before, after);
    // A string field that is indexed can be searched with a match query.
    let r = search_rows(&idx, "é", &["--field", "c"]);
    assert_eq!((r[0].id.as_str(), r[0].total), ("5", 1));
}

/// Engine bug reproducer: with a spec that starts `score,doc`, the searcher
/// takes the score-order fast path, which reports every field rule's sort
/// value as missing. Hits that carry their sort values are what lets results
/// from several searchers be merged (DESIGN.md section 5), so this is wrong.
#[test]

fn field_sort_values_after_score_and_doc_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = index_typed(tmp.path(), &[]);
    let r = search_rows(&idx, "y", &["--sort", "score,doc,n"]);
    assert_eq!(r[0].id, "5");
    let sv = r[0].sort_values.as_deref().unwrap();
    assert!(sv.ends_with("|4|5"), "sort values {sv:?}: n should be 5");
}

/// `--syntax parser` reads the query language (fields, ranges, prefixes,
/// operators) with --field and --op as its defaults, on every path alike;
/// a malformed query fails naming its byte position; the default
/// `--syntax terms` still reads any text as words.
#[test]
fn search_with_the_query_parser() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = index_typed(tmp.path(), &["--segment-docs", "2"]);
    let ids = |query: &str, extra: &[&str]| -> Vec<String> {
        let mut args = vec!["--syntax", "parser", "--k", "10"];
        args.extend_from_slice(extra);
        let mut v: Vec<String> = search_rows(&idx, query, &args)
            .into_iter()
            .filter(|r| r.total > 0)
            .map(|r| r.id)
            .collect();
        v.sort();
        v
    };
    let cases: [(&str, &[&str]); 7] = [
        ("x AND n:[0 TO *]", &["1", "4", "5"]),
        ("f:{* TO 0]", &["1", "2", "4"]),
        ("f:[0 TO 0]", &["2"]),
        ("c:[a TO b}", &["2"]),
        ("c:\\é OR c:b", &["1", "5"]),
        ("y* -n:5", &[]),
        ("x -n:{* TO 0]", &["1", "3", "5", "6"]),
    ];
    for (query, want) in cases {
        for exec in ["exhaustive", "daat", "auto"] {
            assert_eq!(ids(query, &["--exec", exec]), want, "{query} {exec}");
        }
    }
    // --op is the default operator of clauses side by side.
    assert_eq!(ids("x y", &["--op", "and"]), ["5"]);
    assert_eq!(ids("x y", &["--op", "or"]).len(), 6);
    // The same text as words: punctuation is not syntax.
    let words = search_rows(&idx, "x AND (y", &["--op", "and"]);
    assert_eq!(words.len(), 1);
    let d = s(&idx);
    let err = fails(&["search", d, "x AND (y", "--parse"], 1);
    assert!(
        err.contains("at byte 8") && err.contains("expected ')'"),
        "{err}"
    );
    let err = fails(&["search", d, "n:ten", "--syntax", "parser"], 1);
    assert!(
        err.contains("at byte 2") && err.contains("integer"),
        "{err}"
    );
    // A quoted phrase runs on every path: doc 5 is "x y".
    for exec in ["exhaustive", "daat", "auto"] {
        assert_eq!(ids("\"x y\"", &["--exec", exec]), ["5"], "{exec}");
        assert!(ids("\"y x\"~1", &["--exec", exec]).is_empty(), "{exec}");
        assert_eq!(ids("\"y x\"~2", &["--exec", exec]), ["5"], "{exec}");
    }
    let err = fails(&["search", d, "x", "--syntax", "lucene"], 2);
    assert!(err.contains("'terms' or 'parser'"), "{err}");
    assert!(ok(&["search", "--help"]).contains("--syntax terms|parser"));
    assert!(ok(&["search", "--help"]).contains("--parse "));
}

#[test]
fn phrases_from_op_phrase_and_from_the_parser_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let (idx, _) = index_sample_head(tmp.path(), 1500);
    let key = |r: &Row| (r.qno, r.rank, r.id.clone(), r.bits.clone(), r.total);
    let keys = |rows: &[Row]| rows.iter().map(key).collect::<Vec<_>>();
    for (text, slop) in [
        ("of the", 0),
        ("the family of", 0),
        ("Mrs. Dashwood", 0),
        ("dashwood mrs", 2),
        ("said he", 1),
    ] {
        let slop_arg = slop.to_string();
        let phrase = search_rows(
            &idx,
            text,
            &["--op", "phrase", "--slop", &slop_arg, "--k", "20"],
        );
        let quoted = if slop == 0 {
            format!("\"{text}\"")
        } else {
            format!("\"{text}\"~{slop}")
        };
        let parsed = search_rows(&idx, &quoted, &["--parse", "--k", "20"]);
        assert!(!phrase.is_empty(), "{text:?} matches");
        assert_eq!(keys(&phrase), keys(&parsed), "{text:?}~{slop}");
        // Every path gives the same rows.
        for exec in ["exhaustive", "daat"] {
            let other = search_rows(
                &idx,
                text,
                &[
                    "--op", "phrase", "--slop", &slop_arg, "--k", "20", "--exec", exec,
                ],
            );
            assert_eq!(keys(&other), keys(&phrase), "{text:?}~{slop} {exec}");
        }
        // A phrase matches a subset of the conjunction of its words.
        let and = search_rows(&idx, text, &["--op", "and", "--k", "20"]);
        assert!(phrase[0].total <= and[0].total, "{text:?}");
    }
    // Each line of a --queries file is one phrase.
    let queries = tmp.path().join("q.tsv");
    std::fs::write(&queries, "p\tthe family of\np\tof the\n").unwrap();
    let file = rows(&ok(&search_tsv_args(&idx, &queries, &["--op", "phrase"])));
    let one = search_rows(&idx, "of the", &["--op", "phrase"]);
    let second: Vec<_> = file
        .iter()
        .filter(|r| r.qno == 2)
        .map(|r| (r.rank, r.bits.clone()))
        .collect();
    let alone: Vec<_> = one.iter().map(|r| (r.rank, r.bits.clone())).collect();
    assert_eq!(second, alone);
    let usage = fails(&["search", s(&idx), "a b", "--slop", "2"], 2);
    assert!(usage.contains("--slop needs --op phrase"), "{usage}");
    let usage = fails(&["search", s(&idx), "a b", "--op", "phrase", "--parse"], 2);
    assert!(usage.contains("--syntax terms"), "{usage}");
}

/// The sample corpus split by document order into three shards (each
/// indexed in segments of 700 documents), and one index of the same
/// documents appended in the same three runs: `(single, shards)`.
fn index_sample_shards(tmp: &Path) -> (PathBuf, Vec<PathBuf>) {
    let schema = data("schema.json");
    let single = tmp.join("single");
    let mut shards = Vec::new();
    for (i, range) in [0..2000, 2000..3500, 3500..6000].into_iter().enumerate() {
        let part = sample_lines(tmp, &format!("part{i}.jsonl"), range);
        let dir = tmp.join(format!("shard{i}"));
        ok(&index_args(
            &dir,
            &schema,
            &part,
            &["--segment-docs", "700"],
        ));
        let mut args = vec!["index", s(&single), "--input", s(&part)];
        args.extend(["--segment-docs", "700"]);
        if i == 0 {
            args.extend(["--schema", s(&schema)]);
        }
        ok(&args);
        shards.push(dir);
    }
    (single, shards)
}

/// [`search_tsv_args`] over the directories `dirs`, then each of `extra`.
fn shards_tsv_args<'a>(dirs: &[&'a str], queries: &'a Path, extra: &[&[&'a str]]) -> Vec<&'a str> {
    let mut args = search_tsv_args(Path::new(dirs[0]), queries, &[]);
    args.splice(2..2, dirs[1..].iter().copied());
    args.extend(extra.iter().flat_map(|e| e.iter().copied()));
    args
}

/// A tsv row without the columns of shards (shard, shard_doc and
/// merge_key): the row one index prints.
fn unsharded(line: &str) -> String {
    let cols: Vec<&str> = line.split('\t').collect();
    let mut keep: Vec<&str> = cols[..3].to_vec();
    keep.extend(&cols[5..9]);
    keep.extend(&cols[10..]);
    keep.join("\t")
}

#[test]
fn several_directories_search_as_one_index() {
    let tmp = tempfile::tempdir().unwrap();
    let (single, shards) = index_sample_shards(tmp.path());
    let queries = data("queries.tsv");
    let dirs: Vec<&str> = shards.iter().map(|d| s(d)).collect();
    let docs: Vec<u64> = shards
        .iter()
        .map(|d| stats_json(d)["documents"]["total"].as_u64().unwrap())
        .collect();
    for extra in [
        &["--k", "10"][..],
        &["--k", "7", "--offset", "5", "--op", "and"],
        &[
            "--k",
            "12",
            "--sort",
            "year:desc,score",
            "--highlight",
            "body",
        ],
        &[
            "--k",
            "5",
            "--sort",
            "category,doc:desc",
            "--search-threads",
            "3",
        ],
        &["--k", "5", "--syntax", "parser", "--exec", "daat"],
    ] {
        let one = ok(&search_tsv_args(&single, &queries, extra));
        let many = ok(&shards_tsv_args(&dirs, &queries, &[extra]));
        let lines: Vec<&str> = many.lines().collect();
        assert!(lines[0].starts_with(
            "qno\tclass\trank\tshard\tshard_doc\tid\tscore\tscore_bits\ttotal_hits\tmerge_key"
        ));
        let stripped: Vec<String> = lines.iter().map(|l| unsharded(l)).collect();
        assert_eq!(stripped.join("\n") + "\n", one, "{extra:?}");
        // Each hit's shard and shard document are its id's (ids count
        // the sample's documents from 1).
        for l in &lines[1..] {
            let c: Vec<&str> = l.split('\t').collect();
            if c[2] == "0" {
                assert_eq!((c[3], c[4], c[9]), ("-", "-", "-"));
                continue;
            }
            let (shard, sdoc): (usize, u64) = (c[3].parse().unwrap(), c[4].parse().unwrap());
            let id: u64 = c[5].parse().unwrap();
            assert_eq!(docs[..shard].iter().sum::<u64>() + sdoc + 1, id, "{l}");
        }
    }
    // One directory prints one index's columns, with --query as with QUERY.
    let a = ok(&["search", s(&single), "elizabeth", "--format", "tsv"]);
    assert_eq!(
        ok(&[
            "search",
            s(&single),
            "--query",
            "elizabeth",
            "--format",
            "tsv"
        ]),
        a
    );
    assert!(a.starts_with("qno\tclass\trank\tid\tscore"));
    // json names shards too.
    let mut args = vec!["search"];
    args.extend(&dirs);
    args.extend(["--query", "elizabeth darcy", "--format", "json"]);
    let j: serde_json::Value = serde_json::from_str(ok(&args).trim()).unwrap();
    let hit = &j["hits"][0];
    assert!(hit["shard"].is_u64() && hit["shard_doc"].is_u64() && hit["merge_key"].is_string());
    // A shard of another schema is named.
    let other = tmp.path().join("other");
    let schema = tmp.path().join("other.json");
    std::fs::write(
        &schema,
        r#"{"fields": [{"name": "id", "type": "i64", "stored": true, "indexed": true},
                       {"name": "body", "type": "text", "stored": true}]}"#,
    )
    .unwrap();
    let part = sample_lines(tmp.path(), "few.jsonl", 0..3);
    let few = tmp.path().join("few-fields.jsonl");
    let text = std::fs::read_to_string(&part).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            serde_json::json!({"id": v["id"], "body": v["body"]}).to_string()
        })
        .collect();
    std::fs::write(&few, lines.join("\n") + "\n").unwrap();
    ok(&index_args(&other, &schema, &few, &[]));
    let err = fails(&["search", dirs[0], s(&other), "--query", "x"], 1);
    assert!(err.contains("shard 1") && err.contains("schema"), "{err}");
}

#[test]
fn shard_statistics_and_merged_pages_reproduce_the_multi_directory_output() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, shards) = index_sample_shards(tmp.path());
    let queries = data("queries.tsv");
    let dirs: Vec<&str> = shards.iter().map(|d| s(d)).collect();
    for opts in [&[][..], &["--op", "and"], &["--syntax", "parser"]] {
        let blobs: Vec<PathBuf> = (0..shards.len())
            .map(|i| tmp.path().join(format!("s{i}.qst")))
            .collect();
        for (dir, blob) in dirs.iter().zip(&blobs) {
            let mut args = vec!["stats", dir, "--queries", s(&queries), "--out", s(blob)];
            args.extend(opts);
            let said = ok(&args);
            assert!(
                said.starts_with("wrote ") && said.contains("1 shard"),
                "{said}"
            );
        }
        let all = tmp.path().join("all.qst");
        let mut args = vec!["stats-merge"];
        args.extend(blobs.iter().map(|b| s(b)));
        args.extend(["--out", s(&all)]);
        assert!(ok(&args).contains("3 shards"));
        for page in [
            &["--k", "10"][..],
            &["--k", "6", "--offset", "4", "--highlight", "body"],
            &["--k", "8", "--sort", "year:desc,score"],
            &["--k", "3", "--offset", "2", "--sort", "category,year"],
        ] {
            let (k, offset) = page_of(page);
            // The shards' pages, each from its first hit.
            let mut parts = Vec::new();
            for (i, dir) in dirs.iter().enumerate() {
                let want = (k + offset).to_string();
                let shard = i.to_string();
                let mut args = vec!["search", dir, "--stats", s(&all), "--shard-id", &shard];
                args.extend([
                    "--queries",
                    s(&queries),
                    "--format",
                    "tsv",
                    "--id-field",
                    "id",
                ]);
                args.extend(without_page(page));
                args.extend(opts);
                args.extend(["--k", &want]);
                let path = tmp.path().join(format!("part{i}.tsv"));
                std::fs::write(&path, ok(&args)).unwrap();
                parts.push(path);
            }
            let (k, offset) = (k.to_string(), offset.to_string());
            let mut args = vec!["search-merge"];
            args.extend(parts.iter().map(|p| s(p)));
            args.extend(["--k", &k, "--offset", &offset]);
            let merged = ok(&args);
            let multi = ok(&shards_tsv_args(&dirs, &queries, &[page, opts]));
            assert_eq!(merged, multi, "{opts:?} {page:?}");
            // A page past what the parts hold cannot be merged.
            let more = (k.parse::<usize>().unwrap() + 50).to_string();
            let mut args = vec!["search-merge"];
            args.extend(parts.iter().map(|p| s(p)));
            args.extend(["--k", &more]);
            let err = fails(&args, 1);
            assert!(err.contains("--k"), "{err}");
        }
    }
    // A shard searched from an offset cannot be merged; statistics of
    // other queries, another shard's number, a damaged blob.
    let all = s(&tmp.path().join("all.qst")).to_owned();
    let part = tmp.path().join("offset.tsv");
    let out = ok(&[
        "search",
        dirs[1],
        "--stats",
        &all,
        "--shard-id",
        "1",
        "--queries",
        s(&queries),
        "--format",
        "tsv",
        "--offset",
        "2",
    ]);
    std::fs::write(&part, out).unwrap();
    let err = fails(&["search-merge", s(&part)], 1);
    assert!(err.contains("--offset 0"), "{err}");
    // Shard `shard` of `dirs[0]` with the statistics `blob`, for `query`.
    let with_stats = |blob: &str, shard: &str, query: &str| {
        let args = [
            "search",
            dirs[0],
            "--stats",
            blob,
            "--shard-id",
            shard,
            "--query",
            query,
        ];
        fails(&args, 1)
    };
    let err = with_stats(&all, "0", "zebra");
    assert!(err.contains("lack") && err.contains("zebra"), "{err}");
    let err = with_stats(&all, "1", "x");
    assert!(err.contains("shard 1"), "{err}");
    let mut bytes = std::fs::read(&all).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    let bad = tmp.path().join("bad.qst");
    std::fs::write(&bad, &bytes).unwrap();
    let err = with_stats(s(&bad), "0", "x");
    assert!(err.contains("corrupt") && err.contains("bad.qst"), "{err}");
    let err = fails(
        &["stats-merge", s(&bad), "--out", s(&tmp.path().join("x"))],
        1,
    );
    assert!(err.contains("checksum"), "{err}");
}

/// `--k` and `--offset` of a page's options (10 and 0 when absent).
fn page_of(page: &[&str]) -> (usize, usize) {
    let get = |name: &str, default: usize| {
        page.iter()
            .position(|a| *a == name)
            .map_or(default, |i| page[i + 1].parse().unwrap())
    };
    (get("--k", 10), get("--offset", 0))
}

/// A page's options without `--k` and `--offset`.
fn without_page<'a>(page: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut it = page.iter();
    while let Some(a) = it.next() {
        if *a == "--k" || *a == "--offset" {
            it.next();
        } else {
            out.push(*a);
        }
    }
    out
}

#[test]
fn shard_usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let (idx, _base) = index_sample_head(tmp.path(), 50);
    let d = s(&idx);
    let cases: &[&[&str]] = &[
        &["search", d, d, d],
        &["search", d, "--query", "x", "--queries", "q.tsv"],
        &["search", d, "nodir", "--query", "x"],
        &["search", d, "--query", "x", "--stats", "b.qst"],
        &["search", d, "--query", "x", "--shard-id", "1"],
        &[
            "search",
            d,
            d,
            "--query",
            "x",
            "--stats",
            "b",
            "--shard-id",
            "0",
        ],
        &[
            "search",
            d,
            "--query",
            "x",
            "--stats",
            "b",
            "--shard-id",
            "-1",
        ],
        &["stats", d, "--out", "b.qst"],
        &["stats", d, "--query", "x"],
        &["stats", d, "--query", "x", "--out", "b", "--format", "json"],
        &["stats", d, "--query", "x", "--out", "b", "--op", "xor"],
        &["stats-merge"],
        &["stats-merge", "a.qst"],
        &["search-merge"],
        &["search-merge", "a.tsv", "--k", "x"],
    ];
    for args in cases {
        let err = fails(args, 2);
        assert!(err.starts_with("quarry: "), "{args:?}: {err}");
        assert!(err.contains("--help"), "{args:?}: {err}");
    }
    for args in [
        &["stats-merge", "--help"][..],
        &["search-merge", "-h"],
        &["help", "stats-merge"],
    ] {
        assert!(ok(args).contains("Usage: quarry"), "{args:?}");
    }
}

/// `--highlight` with `--highlight-escape` and `--highlight-ellipsis`, on
/// a text and a string field.
#[test]
fn highlight_escaping_and_ellipsis() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = tmp.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"fields":[{"name":"id","type":"i64","stored":true,"indexed":true},
            {"name":"body","type":"text","stored":true},
            {"name":"tag","type":"string","stored":true,"indexed":true}]}"#,
    )
    .unwrap();
    let docs = tmp.path().join("docs.jsonl");
    std::fs::write(
        &docs,
        r#"{"id":1,"body":"Tom & Jerry: \"<fox>\" isn't 'fox' > cat.","tag":"R&D <lab>"}"#,
    )
    .unwrap();
    let idx = tmp.path().join("idx");
    ok(&index_args(&idx, &schema, &docs, &[]));
    let d = s(&idx);
    // The excerpt column of the one hit.
    let excerpt = |extra: &[&str]| {
        let mut args = vec!["search", d, "--format", "tsv"];
        args.extend_from_slice(extra);
        let out = ok(&args);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].ends_with("\texcerpt"), "{out}");
        lines[1].rsplit('\t').next().unwrap().to_owned()
    };
    let raw = "Tom & Jerry: \"<<b>fox</b>>\" isn't '<b>fox</b>' > cat.";
    assert_eq!(excerpt(&["fox", "--highlight", "body"]), raw);
    assert_eq!(
        excerpt(&["fox", "--highlight", "body", "--highlight-escape", "none"]),
        raw
    );
    assert_eq!(
        excerpt(&["fox", "--highlight", "body", "--highlight-escape", "html"]),
        "Tom &amp; Jerry: &quot;&lt;<b>fox</b>&gt;&quot; isn&#39;t &#39;<b>fox</b>&#39; &gt; cat."
    );
    // The ellipsis and the markers as given; the limit in stored bytes.
    let cut = [
        "jerry",
        "--highlight",
        "body",
        "--highlight-len",
        "14",
        "--highlight-ellipsis",
        "<i>~</i>",
    ];
    assert_eq!(excerpt(&cut), "<i>~</i>& <b>Jerry</b>:<i>~</i>");
    let html = [
        &cut[..],
        &[
            "--highlight-escape",
            "html",
            "--pre",
            "<em class=\"q\">",
            "--post",
            "</em>",
        ],
    ]
    .concat();
    assert_eq!(
        excerpt(&html),
        "<i>~</i>&amp; <em class=\"q\">Jerry</em>:<i>~</i>"
    );
    // A string field: one token, the whole value marked.
    let tag = ["R&D <lab>", "--field", "tag", "--highlight", "tag"];
    assert_eq!(excerpt(&tag), "<b>R&D <lab></b>");
    let tag = [&tag[..], &["--highlight-escape", "html"]].concat();
    assert_eq!(excerpt(&tag), "<b>R&amp;D &lt;lab&gt;</b>");
    // Usage errors.
    let err = fails(
        &[
            "search",
            d,
            "fox",
            "--highlight",
            "body",
            "--highlight-escape",
            "xml",
        ],
        2,
    );
    assert!(
        err.contains("invalid value 'xml' for --highlight-escape: expected 'none' or 'html'"),
        "{err}"
    );
    fails(
        &[
            "search",
            d,
            "fox",
            "--highlight",
            "body",
            "--highlight-ellipsis",
        ],
        2,
    );
    let err = fails(&["search", d, "fox", "--highlight", "id"], 2);
    assert!(
        err.contains("--highlight: field 'id' is not a stored text or string field"),
        "{err}"
    );
}
