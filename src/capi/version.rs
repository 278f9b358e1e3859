//! Version queries. The header's `QUARRY_VERSION_*` macros are written by
//! `build.rs` from the same Cargo package version these functions report,
//! so a host can compare the header it was compiled against with the
//! library it runs against:
//! `quarry_version_number() == QUARRY_VERSION_NUMBER`.

use std::ffi::{CStr, c_char};

const fn parse(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0u32;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "version component is not a number");
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

/// Major version of the library.
pub(crate) const MAJOR: u32 = parse(env!("CARGO_PKG_VERSION_MAJOR"));
/// Minor version.
pub(crate) const MINOR: u32 = parse(env!("CARGO_PKG_VERSION_MINOR"));
/// Patch version.
pub(crate) const PATCH: u32 = parse(env!("CARGO_PKG_VERSION_PATCH"));
/// `MAJOR * 1000000 + MINOR * 1000 + PATCH`, as `QUARRY_VERSION_NUMBER`.
pub(crate) const NUMBER: u32 = MAJOR * 1_000_000 + MINOR * 1_000 + PATCH;

const STRING: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("the package version contains a NUL byte"),
    };

/// The library's version as `MAJOR * 1000000 + MINOR * 1000 + PATCH`
/// (e.g. 1002 for 0.1.2), the same formula as the header's
/// `QUARRY_VERSION_NUMBER`.
///
/// Thread safety: any thread. Does not change the last-error message.
#[unsafe(no_mangle)]
pub extern "C" fn quarry_version_number() -> u32 {
    NUMBER
}

/// The library's version as a static NUL-terminated string "MAJOR.MINOR.PATCH",
/// equal to the header's `QUARRY_VERSION_STRING` when header and library match.
///
/// Ownership: static; never free it.
/// Thread safety: any thread. Does not change the last-error message.
#[unsafe(no_mangle)]
pub extern "C" fn quarry_version_string() -> *const c_char {
    STRING.as_ptr()
}
