//! Unit tests of the C surface that need no C compiler: the committed
//! header against the generated one, the frozen status table, the error
//! mapping, versions and the argument helpers. The C programs in
//! `ffi-tests/` (run by `tests/ffi.rs`) test the library from outside.

use std::ffi::CStr;

use super::status::*;
use super::*;

const GENERATED: &str = include_str!(concat!(env!("OUT_DIR"), "/quarry.h"));
const GENERATED_CDEF: &str = include_str!(concat!(env!("OUT_DIR"), "/quarry_cdef.h"));

fn committed_file(name: &str) -> String {
    let path = format!("{}/include/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

fn committed() -> String {
    committed_file("quarry.h")
}

#[test]
fn header_matches_committed() {
    for (name, generated) in [("quarry.h", GENERATED), ("quarry_cdef.h", GENERATED_CDEF)] {
        let committed = committed_file(name);
        if committed == generated {
            continue;
        }
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "include/{name} is out of date with src/capi (first difference at line {}):\n  committed: {:?}\n  generated: {:?}\n\
             Regenerate it with `QUARRY_UPDATE_HEADER=1 cargo build`, review the diff (an ABI change needs a \
             compatible addition or a SONAME bump) and commit it.",
            line + 1,
            committed.lines().nth(line).unwrap_or("<end of file>"),
            generated.lines().nth(line).unwrap_or("<end of file>"),
        );
    }
}

#[test]
fn the_cdef_header_needs_no_preprocessor() {
    // cffi's cdef accepts `#define NAME <integer>` and nothing else that
    // starts with '#'.
    for line in GENERATED_CDEF.lines().filter(|l| l.starts_with('#')) {
        let rest = line
            .strip_prefix("#define QUARRY_")
            .unwrap_or_else(|| panic!("{line}"));
        let value = rest.split_once(' ').map(|(_, v)| v.trim_end_matches("ull"));
        assert!(
            value.is_some_and(|v| v.parse::<u64>().is_ok()),
            "not an integer #define: {line}"
        );
    }
}

/// `#define NAME VALUE` lines of the committed header.
fn defines() -> Vec<(String, String)> {
    committed()
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
        .collect()
}

fn define(name: &str) -> String {
    defines()
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("the header has no #define {name}"))
}

#[test]
fn version_macros_match_the_package_version() {
    let major: u32 = env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap();
    let minor: u32 = env!("CARGO_PKG_VERSION_MINOR").parse().unwrap();
    let patch: u32 = env!("CARGO_PKG_VERSION_PATCH").parse().unwrap();
    assert_eq!(define("QUARRY_VERSION_MAJOR"), major.to_string());
    assert_eq!(define("QUARRY_VERSION_MINOR"), minor.to_string());
    assert_eq!(define("QUARRY_VERSION_PATCH"), patch.to_string());
    let number = major * 1_000_000 + minor * 1_000 + patch;
    assert_eq!(define("QUARRY_VERSION_NUMBER"), number.to_string());
    assert_eq!(
        define("QUARRY_VERSION_STRING"),
        format!("\"{}\"", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(version::quarry_version_number(), number);
    // SAFETY: quarry_version_string returns a static NUL-terminated string.
    let s = unsafe { CStr::from_ptr(version::quarry_version_string()) };
    assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    // Cargo.toml says 0.1.0 today; the SONAME (build.rs) is libquarry.so.0.
    assert_eq!(env!("CARGO_PKG_VERSION"), "0.1.0");
    assert_eq!(number, 1000);
}

/// The status codes are ABI: this table is frozen. Add new codes at the end;
/// never change a number here.
const FROZEN: [(&str, quarry_status); 16] = [
    ("QUARRY_OK", 0),
    ("QUARRY_NULL_ARGUMENT", 1),
    ("QUARRY_INVALID_ARGUMENT", 2),
    ("QUARRY_INVALID_UTF8", 3),
    ("QUARRY_SCHEMA", 4),
    ("QUARRY_IO", 5),
    ("QUARRY_CORRUPT", 6),
    ("QUARRY_UNSUPPORTED_VERSION", 7),
    ("QUARRY_LOCKED", 8),
    ("QUARRY_NO_INDEX", 9),
    ("QUARRY_INDEX_EXISTS", 10),
    ("QUARRY_UNSUPPORTED", 11),
    ("QUARRY_INTERNAL", 12),
    ("QUARRY_NO_VALUE", 13),
    ("QUARRY_QUERY_SYNTAX", 14),
    ("QUARRY_TOO_MANY_TERMS", 15),
];

#[test]
fn status_codes_are_frozen_and_in_the_header() {
    let rust = [
        QUARRY_OK,
        QUARRY_NULL_ARGUMENT,
        QUARRY_INVALID_ARGUMENT,
        QUARRY_INVALID_UTF8,
        QUARRY_SCHEMA,
        QUARRY_IO,
        QUARRY_CORRUPT,
        QUARRY_UNSUPPORTED_VERSION,
        QUARRY_LOCKED,
        QUARRY_NO_INDEX,
        QUARRY_INDEX_EXISTS,
        QUARRY_UNSUPPORTED,
        QUARRY_INTERNAL,
        QUARRY_NO_VALUE,
        QUARRY_QUERY_SYNTAX,
        QUARRY_TOO_MANY_TERMS,
    ];
    for ((name, code), value) in FROZEN.iter().zip(rust) {
        assert_eq!(*code, value, "{name} was renumbered");
        assert_eq!(define(name), code.to_string(), "{name} in the header");
    }
    let header_codes = defines()
        .into_iter()
        .filter(|(k, _)| {
            !k.starts_with("QUARRY_VERSION_")
                && !k.starts_with("QUARRY_FIELD_")
                && !k.starts_with("QUARRY_OPERATOR_")
                && !k.starts_with("QUARRY_OCCUR_")
                && !k.starts_with("QUARRY_BOUND_")
                && !k.starts_with("QUARRY_SORT_")
                && !k.starts_with("QUARRY_EXEC_")
                && !k.starts_with("QUARRY_SEARCH_")
                && !k.starts_with("QUARRY_OPEN_")
                && !k.starts_with("QUARRY_PATH_")
                && !k.starts_with("QUARRY_SWITCH_")
                && !k.starts_with("QUARRY_TOTAL_")
                && !k.starts_with("QUARRY_VALUE_")
                && !k.starts_with("QUARRY_HIGHLIGHT_")
                && !k.starts_with("QUARRY_INDEXER_")
                && k != "QUARRY_MAX_QUERY_DEPTH"
                && k != "QUARRY_MAX_INDEXING_THREADS"
                && k != "QUARRY_H"
        })
        .count();
    assert_eq!(
        header_codes,
        FROZEN.len(),
        "a status code in the header is missing from FROZEN"
    );
}

/// The fast paths, switches, highlight flags and counting constants are
/// ABI too, and the counting constants are the Rust API's thresholds, as
/// the depth limit is the Rust API's.
#[test]
fn path_switch_and_total_constants_are_frozen() {
    use super::hits::QUARRY_HIGHLIGHT_ESCAPE_HTML;
    use super::searcher::*;
    use crate::TotalMode;
    for (name, rust, value) in [
        (
            "QUARRY_HIGHLIGHT_ESCAPE_HTML",
            QUARRY_HIGHLIGHT_ESCAPE_HTML,
            1,
        ),
        ("QUARRY_PATH_TERM_TOPK", QUARRY_PATH_TERM_TOPK, 1),
        ("QUARRY_PATH_BLOCK_MAX_OR", QUARRY_PATH_BLOCK_MAX_OR, 2),
        ("QUARRY_PATH_BULK_AND", QUARRY_PATH_BULK_AND, 3),
        ("QUARRY_SWITCH_AUTO", QUARRY_SWITCH_AUTO, 1),
        ("QUARRY_SWITCH_OFF", QUARRY_SWITCH_OFF, 2),
    ] {
        assert_eq!(rust, value, "{name} was renumbered");
        assert_eq!(define(name), value.to_string(), "{name} in the header");
    }
    assert_eq!(define("QUARRY_TOTAL_EXACT"), format!("{}ull", u64::MAX));
    assert_eq!(define("QUARRY_TOTAL_LOWER_BOUND"), "0");
    assert_eq!(define("QUARRY_TOTAL_DEFAULT"), "1000");
    assert_eq!(
        define("QUARRY_MAX_QUERY_DEPTH"),
        crate::Query::MAX_DEPTH.to_string()
    );
    assert_eq!(
        TotalMode::from_threshold(QUARRY_TOTAL_EXACT),
        TotalMode::Exact
    );
    assert_eq!(
        TotalMode::from_threshold(QUARRY_TOTAL_LOWER_BOUND),
        TotalMode::LowerBound
    );
    assert_eq!(
        TotalMode::from_threshold(QUARRY_TOTAL_DEFAULT),
        TotalMode::default()
    );
}

#[test]
fn every_status_has_its_own_text_and_unknown_codes_a_generic_one() {
    let mut seen = std::collections::HashSet::new();
    for (name, code) in FROZEN {
        // SAFETY: quarry_status_str returns a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(quarry_status_str(code)) }
            .to_str()
            .unwrap();
        assert!(
            !text.is_empty() && text != "unknown status code",
            "{name}: {text:?}"
        );
        assert!(seen.insert(text), "{name} shares its text {text:?}");
    }
    for code in [16, 99, 7000, u32::MAX] {
        // SAFETY: as above.
        let text = unsafe { CStr::from_ptr(quarry_status_str(code)) };
        assert_eq!(text.to_str().unwrap(), "unknown status code");
    }
}

#[test]
fn every_engine_error_maps_to_its_code() {
    use crate::Error;
    let p = std::path::PathBuf::from("/x");
    let io = || std::io::Error::other("boom");
    let cases = [
        (
            Error::Io {
                path: p.clone(),
                source: io(),
            },
            QUARRY_IO,
        ),
        (
            Error::Corrupt {
                path: p.clone(),
                detail: "d".into(),
            },
            QUARRY_CORRUPT,
        ),
        (
            Error::UnsupportedVersion {
                path: p.clone(),
                found: 9,
                supported: 1,
            },
            QUARRY_UNSUPPORTED_VERSION,
        ),
        (Error::Locked(p.clone()), QUARRY_LOCKED),
        (Error::NoIndex(p.clone()), QUARRY_NO_INDEX),
        (Error::IndexExists(p.clone()), QUARRY_INDEX_EXISTS),
        (Error::Schema("s".into()), QUARRY_SCHEMA),
        (Error::InvalidArgument("a".into()), QUARRY_INVALID_ARGUMENT),
        (Error::Unsupported("u".into()), QUARRY_UNSUPPORTED),
        (
            Error::QuerySyntax {
                position: 3,
                message: "m".into(),
            },
            QUARRY_QUERY_SYNTAX,
        ),
        (
            Error::TooManyTerms {
                what: "w".into(),
                limit: 2,
            },
            QUARRY_TOO_MANY_TERMS,
        ),
    ];
    for (e, code) in cases {
        let text = e.to_string();
        let f = Failure::from(e);
        assert_eq!(f.status, code, "{text}");
        assert_eq!(f.message, text);
    }
}

fn last_error() -> String {
    // SAFETY: quarry_last_error_message never returns NULL and the text is
    // NUL-terminated; it is copied before any other quarry call.
    unsafe { CStr::from_ptr(quarry_last_error_message()) }
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn guard_records_and_clears_the_last_error() {
    assert_eq!(
        guard(|| Err(Failure::new(QUARRY_LOCKED, "held\0 by pid 7"))),
        QUARRY_LOCKED
    );
    assert_eq!(last_error(), "held by pid 7", "NUL bytes are dropped");
    assert_eq!(guard(|| Ok(())), QUARRY_OK);
    assert_eq!(last_error(), "");
    assert_eq!(guard_value(5u32, || Err(Failure::invalid("nope"))), 5);
    assert_eq!(last_error(), "nope");
    // Functions that return no status (getters, `_free`) keep the message
    // of the last failure when they succeed.
    assert_eq!(guard_value(6u32, || Ok(6)), 6);
    // SAFETY: NULL is a valid argument of every `_free`.
    unsafe { sort::quarry_sort_free(std::ptr::null_mut()) };
    assert_eq!(last_error(), "nope");
}

#[test]
fn a_panic_becomes_internal_with_its_message() {
    assert_eq!(debug::quarry_debug_panic(), QUARRY_INTERNAL);
    let msg = last_error();
    assert!(
        msg.contains("quarry_debug_panic") && msg.contains("src/capi/debug.rs"),
        "{msg}"
    );
    assert_eq!(guard_value(7, || panic!("in a value function")), 7);
    assert!(last_error().contains("in a value function"));
    // The boundary leaves the thread usable.
    assert_eq!(guard(|| Ok(())), QUARRY_OK);
}

#[test]
fn string_arguments_are_checked() {
    let ok = b"caf\xc3\xa9";
    // SAFETY: the pointers are valid for the lengths given (or NULL).
    unsafe {
        assert_eq!(str_arg(ok.as_ptr().cast(), ok.len(), "s").unwrap(), "café");
        assert_eq!(str_arg(ok.as_ptr().cast(), 0, "s").unwrap(), "");
        assert_eq!(
            str_arg(std::ptr::null(), 0, "s").unwrap_err().status,
            QUARRY_NULL_ARGUMENT
        );
        let bad = b"caf\xc3";
        let e = str_arg(bad.as_ptr().cast(), bad.len(), "name").unwrap_err();
        assert_eq!(e.status, QUARRY_INVALID_UTF8);
        assert!(
            e.message.contains("name") && e.message.contains("byte 3"),
            "{}",
            e.message
        );
        let e = bytes_arg(ok.as_ptr().cast(), usize::MAX, "s").unwrap_err();
        assert_eq!(e.status, QUARRY_INVALID_ARGUMENT);
    }
}

#[test]
fn an_indexer_that_panicked_refuses_further_work() {
    use crate::{FieldFlags, FieldType, IndexWriter, Schema, WriterConfig};
    let dir = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    schema
        .add_field("body", FieldType::Text, FieldFlags::default())
        .unwrap();
    let writer = IndexWriter::create(dir.path(), &schema, WriterConfig::default()).unwrap();
    let mut ix = indexer::Indexer::new(writer);
    assert_eq!(guard(|| ix.run(|w| Ok(w.commit().map(|_| ())?))), QUARRY_OK);
    assert_eq!(
        guard(|| ix.run(|_| -> CResult<()> { panic!("half-way through") })),
        QUARRY_INTERNAL
    );
    assert!(last_error().contains("half-way through"));
    assert_eq!(
        guard(|| ix.run(|w| Ok(w.commit().map(|_| ())?))),
        QUARRY_INTERNAL
    );
    assert!(last_error().contains("unusable"), "{}", last_error());
}
