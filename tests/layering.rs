//! The dependency rule of DESIGN.md §1, checked on the source text:
//! `read` never uses `write`; `kernels` use nothing else in the crate;
//! `format` uses neither `read` nor `write`; `capi` uses only the public API.

use std::path::Path;

fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    out
}

/// Every `crate::x` module path referenced by a source file (imports and
/// inline paths), ignoring comments.
fn crate_refs(text: &str) -> Vec<String> {
    let mut refs = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + 7..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                .collect();
            if let Some(stripped) = name.strip_prefix('{') {
                // `crate::{a, b::c}`: take each item up to the closing brace.
                let inner = &after[1..after.find('}').unwrap_or(after.len())];
                for item in inner.split(',') {
                    let head: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !head.is_empty() {
                        refs.push(head);
                    }
                }
                let _ = stripped;
            } else {
                refs.push(name);
            }
            rest = after;
        }
    }
    refs
}

fn check(dir: &str, forbidden: impl Fn(&str) -> bool) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let files = sources(&root);
    assert!(!files.is_empty(), "no sources in src/{dir}");
    for (path, text) in files {
        for r in crate_refs(&text) {
            assert!(
                !forbidden(&r),
                "{path} uses crate::{r}, which src/{dir} must not depend on"
            );
        }
    }
}

#[test]
fn read_never_depends_on_write() {
    check("read", |m| m == "write");
}

#[test]
fn format_depends_on_neither_read_nor_write() {
    check("format", |m| {
        m == "write" || m == "read" || m == "query" || m == "capi"
    });
}

#[test]
fn kernels_depend_on_nothing_in_the_crate() {
    check("kernels", |m| m != "kernels");
}

#[test]
fn capi_uses_only_the_public_api() {
    // The root re-exports and the public modules a library user also sees.
    let public = [
        "Document",
        "Value",
        "Error",
        "Result",
        "Occur",
        "Operator",
        "Query",
        "ParserConfig",
        "FieldDef",
        "FieldFlags",
        "FieldId",
        "FieldType",
        "Schema",
        "ExecMode",
        "Hit",
        "Hits",
        "SearchOptions",
        "SearchRequest",
        "Searcher",
        "Switch",
        "TotalMode",
        "ReadMode",
        "Analyzer",
        "Token",
        "HighlightOptions",
        "Escape",
        "SortKey",
        "SortRule",
        "SortSpec",
        "IndexWriter",
        "WriterConfig",
        "compare_values",
        "CorpusStats",
        "merge_hits",
        "check",
        "capi",
    ];
    check("capi", |m| !public.contains(&m));
}

#[test]
fn the_checker_sees_paths() {
    assert_eq!(
        crate_refs("use crate::write::io; let x = crate::read::Snapshot::open(p);"),
        ["write", "read"]
    );
    assert_eq!(
        crate_refs("use crate::{Schema, format::x}; // crate::nope"),
        ["Schema", "format"]
    );
}
