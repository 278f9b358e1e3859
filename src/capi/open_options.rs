//! `quarry_searcher_open_with`: opening a searcher with flags, such as
//! reading the segments into memory instead of mapping them; and
//! `quarry_searcher_open_many`, one searcher over several shards.

use super::indexer::path_arg;
use super::searcher::quarry_searcher;
use super::status::quarry_status;
use super::{CResult, Failure, check_out, guard, into_handle, write_out};
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
        let searcher = Searcher::open_with(dir, read_mode(flags)?)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_searcher>(searcher)) };
        Ok(())
    })
}

/// Opens one searcher over the newest commits of `count` indexes, shards of
/// one corpus split by document order: `paths[i]` (`path_lens[i]` bytes,
/// as the path of `quarry_searcher_open`) is shard `i`. It searches them as
/// one index holding their documents in that order would: the corpus's
/// statistics summed over the shards, one shared k-th best score, the same
/// hits with the same score bits and totals, ties broken by shard then
/// document. `quarry_hits_doc` numbers the documents one shard after the
/// other; `quarry_hits_shard` and `quarry_hits_shard_doc` name a hit's
/// shard and its document there. Stored values, excerpts, threads and the
/// execution switches work as with one index; `quarry_searcher_reopen`
/// reopens every shard. `flags` as for `quarry_searcher_open_with`.
///
/// On `QUARRY_OK`, `*out` is a new searcher owned by the caller (free it
/// with `quarry_searcher_free`).
/// Errors: those of `quarry_searcher_open_with` for each path,
/// `QUARRY_NULL_ARGUMENT` (`paths`, `path_lens`, an element of `paths`,
/// `out`), `QUARRY_INVALID_ARGUMENT` (`count` 0), `QUARRY_SCHEMA` (a shard's
/// schema differs from shard 0's: the message names the shard and the
/// field), `QUARRY_UNSUPPORTED` (more than 2^32 - 2 documents in all).
///
/// # Safety
/// `paths` is NULL or valid for reading `count` pointers, each NULL or
/// valid for reading its length in `path_lens`; `path_lens` is NULL or
/// valid for reading `count` `size_t`s; `out` is NULL or valid for
/// writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_open_many(
    paths: *const *const c_char,
    path_lens: *const usize,
    count: usize,
    flags: quarry_open_flags,
    out: *mut *mut quarry_searcher,
) -> quarry_status {
    guard(|| {
        if paths.is_null() {
            return Err(Failure::null("paths"));
        }
        if path_lens.is_null() {
            return Err(Failure::null("path_lens"));
        }
        check_out(out, "out")?;
        if count == 0 {
            return Err(Failure::invalid("a searcher needs one path at least"));
        }
        if count > isize::MAX as usize / std::mem::size_of::<usize>() {
            return Err(Failure::invalid(format!("count {count} is too large")));
        }
        // SAFETY: both are non-NULL and, per the contract, valid for
        // `count` elements; the size was checked above.
        let (ptrs, lens) = unsafe {
            (
                std::slice::from_raw_parts(paths, count),
                std::slice::from_raw_parts(path_lens, count),
            )
        };
        let dirs = ptrs
            .iter()
            .zip(lens)
            .enumerate()
            // SAFETY: per the contract each path is NULL or readable for its length.
            .map(|(i, (&p, &n))| unsafe { path_arg(p, n, &format!("paths[{i}]")) })
            .collect::<Result<Vec<_>, _>>()?;
        let searcher = Searcher::open_many_with(&dirs, read_mode(flags)?)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_searcher>(searcher)) };
        Ok(())
    })
}

/// The read mode `flags` ask for, or `QUARRY_INVALID_ARGUMENT` for an
/// unknown flag bit.
fn read_mode(flags: quarry_open_flags) -> CResult<ReadMode> {
    if flags & !QUARRY_OPEN_NO_MMAP != 0 {
        return Err(Failure::invalid(format!("unknown open flags {flags:#x}")));
    }
    Ok(if flags & QUARRY_OPEN_NO_MMAP != 0 {
        ReadMode::Heap
    } else {
        ReadMode::from_env()
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
