//! The integrity check of an index directory.

use std::ffi::c_char;

use super::indexer::path_arg;
use super::status::{QUARRY_CORRUPT, QUARRY_UNSUPPORTED_VERSION, quarry_status};
use super::{Failure, guard};
use crate::check::{ProblemKind, check_index};

/// Checks the newest commit of the index in the directory `path`
/// (`path_len` bytes, need not be UTF-8 or NUL-terminated, no NUL): every
/// file's checksum, the manifest's references, and each segment's
/// structure, as `quarry check` does. It only reads: nothing is changed
/// and no lock is taken, so it may run beside a live indexer.
///
/// Returns `QUARRY_OK` when the index is clean. When problems are found,
/// `quarry_last_error_message()` lists every one of them, one per line, as
/// `FILE: WHAT`.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (empty path,
/// NUL in path), `QUARRY_NO_INDEX` (no directory or no manifest),
/// `QUARRY_IO` (the directory cannot be listed), `QUARRY_CORRUPT` (at least
/// one problem), `QUARRY_UNSUPPORTED_VERSION` (every problem is a file of a
/// newer format version).
///
/// Thread safety: any thread, any number at once.
///
/// # Safety
/// `path` must be readable for `path_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_index_check(path: *const c_char, path_len: usize) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `path` is readable for `path_len` bytes.
        let dir = unsafe { path_arg(path, path_len, "path") }?;
        let report = check_index(dir)?;
        if report.is_clean() {
            return Ok(());
        }
        let status = if report
            .problems
            .iter()
            .all(|p| p.kind == ProblemKind::UnsupportedVersion)
        {
            QUARRY_UNSUPPORTED_VERSION
        } else {
            QUARRY_CORRUPT
        };
        let lines: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
        Err(Failure::new(status, lines.join("\n")))
    })
}
