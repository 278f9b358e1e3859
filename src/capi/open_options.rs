//! `quarry_searcher_open_with`: opening a searcher with flags, such as
//! reading the segments into memory instead of mapping them.

use super::indexer::path_arg;
use super::searcher::quarry_searcher;
use super::status::quarry_status;
use super::{Failure, check_out, guard, into_handle, write_out};
use crate::{ReadMode, Searcher};
use std::ffi::c_char;

/// Flags of `quarry_searcher_open_with` (bits, OR-ed together).
pub type quarry_open_flags = u32;
/// Read every segment file into memory when the searcher opens it (and
/// check its CRC once) instead of mapping it. The searcher then never
/// touches its files again: a file truncated or rewritten behind quarry's
/// back cannot raise `SIGBUS` in the host or change its answers (a reopen
/// reports such a file as `QUARRY_CORRUPT`). Costs the segments' size in
/// memory. Results are identical to the mapped mode's.
pub const QUARRY_OPEN_NO_MMAP: quarry_open_flags = 1;

/// `quarry_searcher_open` with `flags`, a combination of the
/// `QUARRY_OPEN_*` flags (0 for none). Without `QUARRY_OPEN_NO_MMAP` the
/// environment variable `QUARRY_READ=mmap|heap` chooses how segments are
/// read (default mmap), as for `quarry_searcher_open`. Searchers from
/// `quarry_searcher_reopen` keep the mode.
///
/// On `QUARRY_OK`, `*out` is a new searcher owned by the caller (free it
/// with `quarry_searcher_free`).
/// Errors: as `quarry_searcher_open`, and `QUARRY_INVALID_ARGUMENT` for an
/// unknown flag bit.
///
/// # Safety
/// `path` is NULL or valid for reading `path_len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_open_with(
    path: *const c_char,
    path_len: usize,
    flags: quarry_open_flags,
    out: *mut *mut quarry_searcher,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `path` is readable for `path_len` bytes.
        let dir = unsafe { path_arg(path, path_len, "path") }?;
        check_out(out, "out")?;
        if flags & !QUARRY_OPEN_NO_MMAP != 0 {
            return Err(Failure::invalid(format!("unknown open flags {flags:#x}")));
        }
        let mode = if flags & QUARRY_OPEN_NO_MMAP != 0 {
            ReadMode::Heap
        } else {
            ReadMode::from_env()
        };
        let searcher = Searcher::open_with(dir, mode)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_searcher>(searcher)) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::QUARRY_OPEN_NO_MMAP;

    /// The flag's value is ABI: never renumbered, and in the committed header.
    #[test]
    fn the_open_flags_are_frozen_and_in_the_header() {
        assert_eq!(QUARRY_OPEN_NO_MMAP, 1);
        let header = include_str!("../../include/quarry.h");
        assert!(header.contains("#define QUARRY_OPEN_NO_MMAP 1\n"));
        assert!(header.contains("quarry_status quarry_searcher_open_with(const char *path,"));
    }
}
