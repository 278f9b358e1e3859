//! Status codes, their static texts, and the thread-local last-error message.

use std::cell::RefCell;
use std::ffi::c_char;

/// The result of every fallible quarry function: `QUARRY_OK` (0) or one of
/// the `QUARRY_*` error codes below.
///
/// The values are part of the ABI: a code is never renumbered and never
/// reused for another meaning; new codes are only ever added. Treat a code
/// you do not know as a generic failure (`quarry_status_str` describes it as
/// "unknown status code").
pub type quarry_status = u32;

/// Success.
pub const QUARRY_OK: quarry_status = 0;
/// A pointer argument that must not be NULL was NULL.
pub const QUARRY_NULL_ARGUMENT: quarry_status = 1;
/// An argument is out of range: an unknown enum or flag value, a hit or
/// rule index past the end, a length too large, a NUL byte in a path, or an
/// operation that does not apply to this handle (e.g. adding a clause to a
/// query that is not a boolean query).
pub const QUARRY_INVALID_ARGUMENT: quarry_status = 2;
/// A string argument is not valid UTF-8.
pub const QUARRY_INVALID_UTF8: quarry_status = 3;
/// The schema is invalid, or a document, query, sort rule or value getter
/// does not fit the index's schema (unknown field, wrong type, field not
/// stored / indexed / sortable).
pub const QUARRY_SCHEMA: quarry_status = 4;
/// An operating-system I/O error.
pub const QUARRY_IO: quarry_status = 5;
/// An index file is damaged (bad magic, checksum, or structure).
pub const QUARRY_CORRUPT: quarry_status = 6;
/// An index file was written by a format version this build cannot read.
pub const QUARRY_UNSUPPORTED_VERSION: quarry_status = 7;
/// Another indexer (in this or another process) holds the index's lock.
pub const QUARRY_LOCKED: quarry_status = 8;
/// There is no index at the path (and no schema was given to create one).
pub const QUARRY_NO_INDEX: quarry_status = 9;
/// An index already exists where a new one was to be created.
pub const QUARRY_INDEX_EXISTS: quarry_status = 10;
/// The request needs a feature this build does not have yet.
pub const QUARRY_UNSUPPORTED: quarry_status = 11;
/// A bug inside quarry (a caught panic, or a handle left unusable by an
/// earlier one). The handle involved should only be freed afterwards.
pub const QUARRY_INTERNAL: quarry_status = 12;
/// The requested value is absent: the document has no stored value for the
/// field, or the hit has no value for the sort rule.
pub const QUARRY_NO_VALUE: quarry_status = 13;
/// A query string is not in the query syntax; the last-error message names
/// the byte position and what was expected there.
pub const QUARRY_QUERY_SYNTAX: quarry_status = 14;
/// A prefix query (or a range served from the term dictionary) expands to
/// more distinct terms than the searcher allows (1024 by default).
pub const QUARRY_TOO_MANY_TERMS: quarry_status = 15;

/// Static text for a status code: a NUL-terminated, UTF-8, English phrase
/// such as "locked". Unknown codes give "unknown status code".
///
/// Ownership: the string is static; never free it.
/// Thread safety: any thread, any time. Does not change the last-error message.
#[unsafe(no_mangle)]
pub extern "C" fn quarry_status_str(code: quarry_status) -> *const c_char {
    status_text(code).as_ptr()
}

pub(crate) fn status_text(code: quarry_status) -> &'static std::ffi::CStr {
    match code {
        QUARRY_OK => c"ok",
        QUARRY_NULL_ARGUMENT => c"null argument",
        QUARRY_INVALID_ARGUMENT => c"invalid argument",
        QUARRY_INVALID_UTF8 => c"invalid UTF-8",
        QUARRY_SCHEMA => c"schema error",
        QUARRY_IO => c"I/O error",
        QUARRY_CORRUPT => c"corrupt index",
        QUARRY_UNSUPPORTED_VERSION => c"unsupported format version",
        QUARRY_LOCKED => c"index locked by another writer",
        QUARRY_NO_INDEX => c"no index",
        QUARRY_INDEX_EXISTS => c"index already exists",
        QUARRY_UNSUPPORTED => c"not supported",
        QUARRY_INTERNAL => c"internal error",
        QUARRY_NO_VALUE => c"no value",
        QUARRY_QUERY_SYNTAX => c"query syntax error",
        QUARRY_TOO_MANY_TERMS => c"too many terms",
        _ => c"unknown status code",
    }
}

/// The status code of an engine error. Every variant is listed, so a new
/// variant fails to compile here until it is given a code.
pub(crate) fn status_of(e: &crate::Error) -> quarry_status {
    use crate::Error;
    match e {
        Error::Io { .. } => QUARRY_IO,
        Error::Corrupt { .. } => QUARRY_CORRUPT,
        Error::UnsupportedVersion { .. } => QUARRY_UNSUPPORTED_VERSION,
        Error::Locked(_) => QUARRY_LOCKED,
        Error::NoIndex(_) => QUARRY_NO_INDEX,
        Error::IndexExists(_) => QUARRY_INDEX_EXISTS,
        Error::Schema(_) => QUARRY_SCHEMA,
        Error::InvalidArgument(_) => QUARRY_INVALID_ARGUMENT,
        Error::Unsupported(_) => QUARRY_UNSUPPORTED,
        Error::QuerySyntax { .. } => QUARRY_QUERY_SYNTAX,
        Error::TooManyTerms { .. } => QUARRY_TOO_MANY_TERMS,
    }
}

thread_local! {
    /// The message of the last failed call on this thread, NUL-terminated;
    /// just the NUL after a successful call that returns a status. Kept as
    /// one buffer that is cleared, not reallocated, so successful calls do
    /// not allocate.
    static LAST_ERROR: RefCell<Vec<u8>> = RefCell::new(vec![0]);
}

/// Records `message` as this thread's last error (NUL bytes are dropped so
/// the C string is not cut short).
pub(crate) fn set_last_error(message: &str) {
    let _ = LAST_ERROR.try_with(|b| {
        if let Ok(mut b) = b.try_borrow_mut() {
            b.clear();
            b.extend(message.bytes().filter(|&c| c != 0));
            b.push(0);
        }
    });
}

/// Marks the last call on this thread as successful (empty message).
pub(crate) fn clear_last_error() {
    let _ = LAST_ERROR.try_with(|b| {
        if let Ok(mut b) = b.try_borrow_mut()
            && b.len() != 1
        {
            b.clear();
            b.push(0);
        }
    });
}

/// A description of why the last failed quarry call on this thread failed:
/// NUL-terminated UTF-8, the empty string when the last call that returns a
/// `quarry_status` succeeded. Never NULL.
///
/// Which calls replace it: every function that returns a `quarry_status`
/// (with the empty string on success). Functions that return no status
/// (the `_free` functions, and the getters that return their value
/// directly, such as `quarry_hits_len`) replace it only when they fail (a
/// NULL handle, an internal error) and otherwise leave it as it was, so a
/// failure can be reported after freeing handles. `quarry_last_error_message`,
/// `quarry_status_str` and the `quarry_version_*` functions never touch it.
///
/// Lifetime: the text stays valid until the next call on this thread that
/// replaces it; copy it to keep it.
///
/// Ownership: owned by the library; never free it.
/// Thread safety: the message is per thread; read it on the thread whose
/// call failed.
#[unsafe(no_mangle)]
pub extern "C" fn quarry_last_error_message() -> *const c_char {
    static EMPTY: &std::ffi::CStr = c"";
    LAST_ERROR
        .try_with(|b| match b.try_borrow() {
            // The buffer's heap block only moves when a later call resizes
            // it, which the documented lifetime excludes.
            Ok(b) => b.as_ptr().cast::<c_char>(),
            Err(_) => EMPTY.as_ptr(),
        })
        .unwrap_or(EMPTY.as_ptr())
}
