//! `quarry_searcher`: one committed snapshot of an index (or of each of
//! several shards), shared by any number of threads.

use super::hits::{new_hits, quarry_hits};
use super::query::quarry_query;
use super::sort::quarry_sort;
use super::status::quarry_status;
use super::{
    CResult, Failure, Handle, check_out, free_handle, guard, guard_value, handle_mut, handle_ref,
    into_handle, write_out,
};
use crate::{ExecMode, SearchOptions, SearchRequest, Searcher, Switch, TotalMode};
use std::ffi::c_char;

/// A searcher over one committed snapshot of an index, or of each of the
/// shards of a corpus (`quarry_searcher_open_many`). It never changes:
/// commits made after it was opened are seen only by a searcher from
/// `quarry_searcher_reopen` (or a new `quarry_searcher_open`), and an
/// indexer never has to wait for it.
///
/// Thread safety: any number of threads may call the `const` functions
/// (`quarry_searcher_search`, `_reopen`, `_doc_count`, ...) on one searcher
/// concurrently. `quarry_searcher_set_exec_mode`, `quarry_searcher_set_path`
/// and `quarry_searcher_free` need exclusive use: call them when no other
/// thread uses the searcher.
pub struct quarry_searcher {
    _private: [u8; 0],
}

impl Handle for quarry_searcher {
    type Inner = Searcher;
}

/// An execution path: one of the `QUARRY_EXEC_*` constants. Every path
/// returns bit-identical results; they differ only in speed. The switch
/// exists so that a fast path can be turned off without a rebuild, also
/// through the environment variable `QUARRY_EXEC=auto|exhaustive|daat`,
/// read when a searcher is opened.
pub type quarry_exec_mode = u32;
/// The fastest path that applies (the default).
pub const QUARRY_EXEC_AUTO: quarry_exec_mode = 1;
/// The exhaustive oracle: evaluate every matching document.
pub const QUARRY_EXEC_EXHAUSTIVE: quarry_exec_mode = 2;
/// Document-at-a-time iteration over posting blocks.
pub const QUARRY_EXEC_DAAT: quarry_exec_mode = 3;

/// Opens a searcher on the newest commit of the index in the directory
/// `path` (`path_len` bytes, need not be UTF-8 or NUL-terminated, no NUL).
/// The execution path comes from the environment variable `QUARRY_EXEC`
/// (default auto), the fast-path switches from `QUARRY_TERM_TOPK`,
/// `QUARRY_BLOCK_MAX_OR` and `QUARRY_BULK_AND` (default auto; see
/// `quarry_path`); `QUARRY_SIMD` (`auto` or `scalar`) is checked too. A
/// variable that is unset or empty means auto; any value the variable does
/// not accept is an error, not a silent auto.
///
/// On `QUARRY_OK`, `*out` is a new searcher owned by the caller (free it
/// with `quarry_searcher_free`).
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (empty path,
/// NUL in path, or one of the variables above set to a value it does not
/// accept: the message names the variable and its values), `QUARRY_NO_INDEX`, `QUARRY_IO`, `QUARRY_CORRUPT` (a file
/// fails its checks), `QUARRY_UNSUPPORTED_VERSION`, `QUARRY_UNSUPPORTED`.
///
/// # Safety
/// `path` is NULL or valid for reading `path_len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_open(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut quarry_searcher,
) -> quarry_status {
    // SAFETY: the same contract as this function's, with no flags.
    unsafe { super::open_options::quarry_searcher_open_with(path, path_len, 0, out) }
}

/// Opens a new searcher on the newest commit of the same index, sharing
/// the unchanged segments with `searcher` and keeping its execution mode
/// and fast-path switches.
/// `searcher` itself is unchanged and stays valid: free each separately.
///
/// On `QUARRY_OK`, `*out` is a new searcher owned by the caller.
/// Errors: as `quarry_searcher_open`.
/// Thread safety: may run concurrently with searches on `searcher`.
///
/// # Safety
/// `searcher` is NULL or a live searcher; `out` is NULL or valid for
/// writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_reopen(
    searcher: *const quarry_searcher,
    out: *mut *mut quarry_searcher,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        let searcher = unsafe { handle_ref(searcher, "searcher") }?;
        check_out(out, "out")?;
        let fresh = searcher.reopen()?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_searcher>(fresh)) };
        Ok(())
    })
}

/// The number of live (not deleted) documents in the searcher's snapshot
/// (every shard's); 0 when `searcher` is NULL.
///
/// # Safety
/// `searcher` is NULL or a live searcher.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_doc_count(searcher: *const quarry_searcher) -> u64 {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        Ok(unsafe { handle_ref(searcher, "searcher") }?.num_docs())
    })
}

/// How many indexes (shards) the searcher searches: the paths given to
/// `quarry_searcher_open_many`, 1 for `quarry_searcher_open`; 0 when
/// `searcher` is NULL.
///
/// # Safety
/// `searcher` is NULL or a live searcher.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_shard_count(searcher: *const quarry_searcher) -> usize {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        Ok(unsafe { handle_ref(searcher, "searcher") }?.shard_count())
    })
}

/// The commit generation the searcher reads (it grows with every commit;
/// with several shards, the first shard's); 0 when `searcher` is NULL.
///
/// # Safety
/// `searcher` is NULL or a live searcher.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_generation(searcher: *const quarry_searcher) -> u64 {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        Ok(unsafe { handle_ref(searcher, "searcher") }?.generation())
    })
}

/// Chooses the execution path of later searches on this handle (searchers
/// from `quarry_searcher_reopen` inherit it). `mode` is a `QUARRY_EXEC_*`
/// constant; this overrides the `QUARRY_EXEC` environment variable.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (unknown mode;
/// the searcher is then unchanged).
/// Thread safety: needs exclusive use of the searcher: set it before
/// sharing the searcher between threads.
///
/// # Safety
/// `searcher` is NULL or a live searcher that no other thread uses during
/// the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_set_exec_mode(
    searcher: *mut quarry_searcher,
    mode: quarry_exec_mode,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live searcher.
        let searcher = unsafe { handle_mut(searcher, "searcher") }?;
        let exec = match mode {
            QUARRY_EXEC_AUTO => ExecMode::Auto,
            QUARRY_EXEC_EXHAUSTIVE => ExecMode::Exhaustive,
            QUARRY_EXEC_DAAT => ExecMode::Daat,
            other => return Err(Failure::invalid(format!("unknown execution mode {other}"))),
        };
        let mut options: SearchOptions = searcher.options().clone();
        options.exec = exec;
        *searcher = searcher.clone().with_options(options);
        Ok(())
    })
}

/// Sets the most distinct terms a prefix query (or a range served from an
/// indexed field's terms) may expand to in later searches on this handle
/// (searchers from `quarry_searcher_reopen` inherit it); past it the
/// search fails with `QUARRY_TOO_MANY_TERMS`. The default is 1024.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (`limit` is 0).
/// Thread safety: needs exclusive use of the searcher.
///
/// # Safety
/// `searcher` is NULL or a live searcher that no other thread uses during
/// the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_set_max_expansions(
    searcher: *mut quarry_searcher,
    limit: usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live searcher.
        let searcher = unsafe { handle_mut(searcher, "searcher") }?;
        if limit == 0 {
            return Err(Failure::invalid("the expansion limit must be at least 1"));
        }
        let mut options: SearchOptions = searcher.options().clone();
        options.max_expansions = limit;
        *searcher = searcher.clone().with_options(options);
        Ok(())
    })
}

/// Sets how many threads one search on this handle may run its segments
/// on (searchers from `quarry_searcher_reopen` inherit it); the default is
/// 1, or `QUARRY_SEARCH_THREADS` when set. Each thread takes the next
/// segment in document order, and in score order they share the best k-th
/// score any has seen; the hits are those of one thread. A search uses
/// at most one thread per segment and spawns its threads for its length,
/// so this pays for indexes of several large segments, not short queries.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (`threads` is
/// 0).
/// Thread safety: needs exclusive use of the searcher.
///
/// # Safety
/// `searcher` is NULL or a live searcher that no other thread uses during
/// the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_set_threads(
    searcher: *mut quarry_searcher,
    threads: usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live searcher.
        let searcher = unsafe { handle_mut(searcher, "searcher") }?;
        if threads == 0 {
            return Err(Failure::invalid("a search needs at least 1 thread"));
        }
        let mut options: SearchOptions = searcher.options().clone();
        options.threads = threads;
        *searcher = searcher.clone().with_options(options);
        Ok(())
    })
}

/// The execution path of searches on this handle (a `QUARRY_EXEC_*`
/// constant); 0 when `searcher` is NULL.
///
/// # Safety
/// `searcher` is NULL or a live searcher.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_exec_mode(
    searcher: *const quarry_searcher,
) -> quarry_exec_mode {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        Ok(
            match unsafe { handle_ref(searcher, "searcher") }?.options().exec {
                ExecMode::Auto => QUARRY_EXEC_AUTO,
                ExecMode::Exhaustive => QUARRY_EXEC_EXHAUSTIVE,
                ExecMode::Daat => QUARRY_EXEC_DAAT,
            },
        )
    })
}

/// One fast path of `QUARRY_EXEC_AUTO`: one of the `QUARRY_PATH_*`
/// constants. Each has a kill switch (`quarry_switch`) per searcher
/// handle, also set by an environment variable read when a searcher is
/// opened (`auto` or `off`). A path switched off sends its queries
/// document-at-a-time instead, with bit-identical hits. Under
/// `QUARRY_EXEC_EXHAUSTIVE` and `QUARRY_EXEC_DAAT` no fast path runs,
/// whatever the switches say.
pub type quarry_path = u32;
/// A single term in score order, block by block, skipping blocks whose
/// best score cannot enter the page (`QUARRY_TERM_TOPK`); in sorted
/// search, a single term window at a time.
pub const QUARRY_PATH_TERM_TOPK: quarry_path = 1;
/// Disjunctions (booleans without a required clause) window at a time
/// with block-max MaxScore (`QUARRY_BLOCK_MAX_OR`).
pub const QUARRY_PATH_BLOCK_MAX_OR: quarry_path = 2;
/// Conjunctions (booleans with a required clause) window at a time,
/// intersected in bulk, skipping windows by their score bounds
/// (`QUARRY_BULK_AND`).
pub const QUARRY_PATH_BULK_AND: quarry_path = 3;

/// The setting of a fast path's kill switch: one of the `QUARRY_SWITCH_*`
/// constants.
pub type quarry_switch = u32;
/// Use the path wherever it applies (the default).
pub const QUARRY_SWITCH_AUTO: quarry_switch = 1;
/// Never use the path.
pub const QUARRY_SWITCH_OFF: quarry_switch = 2;

/// The switch of `path` within `options`, or `QUARRY_INVALID_ARGUMENT`.
fn path_switch(options: &mut SearchOptions, path: quarry_path) -> CResult<&mut Switch> {
    Ok(match path {
        QUARRY_PATH_TERM_TOPK => &mut options.term_topk,
        QUARRY_PATH_BLOCK_MAX_OR => &mut options.block_max_or,
        QUARRY_PATH_BULK_AND => &mut options.bulk_and,
        other => return Err(Failure::invalid(format!("unknown fast path {other}"))),
    })
}

/// Sets the kill switch of the fast path `path` (a `QUARRY_PATH_*`
/// constant) for later searches on this handle (searchers from
/// `quarry_searcher_reopen` inherit it) to `value` (a `QUARRY_SWITCH_*`
/// constant). This overrides the path's environment variable. Hits are
/// the same either way; only the speed, and a total that may be a lower
/// bound, can differ.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (unknown path
/// or value; the searcher is then unchanged).
/// Thread safety: needs exclusive use of the searcher: set it before
/// sharing the searcher between threads.
///
/// # Safety
/// `searcher` is NULL or a live searcher that no other thread uses during
/// the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_set_path(
    searcher: *mut quarry_searcher,
    path: quarry_path,
    value: quarry_switch,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live searcher.
        let searcher = unsafe { handle_mut(searcher, "searcher") }?;
        let value = match value {
            QUARRY_SWITCH_AUTO => Switch::Auto,
            QUARRY_SWITCH_OFF => Switch::Off,
            other => return Err(Failure::invalid(format!("unknown switch value {other}"))),
        };
        let mut options = searcher.options().clone();
        *path_switch(&mut options, path)? = value;
        *searcher = searcher.clone().with_options(options);
        Ok(())
    })
}

/// Writes the kill switch of the fast path `path` (a `QUARRY_PATH_*`
/// constant) on this handle to `*out` (a `QUARRY_SWITCH_*` constant).
///
/// Errors: `QUARRY_NULL_ARGUMENT` (`searcher`, `out`),
/// `QUARRY_INVALID_ARGUMENT` (unknown path).
/// Thread safety: any number of threads may call it at once.
///
/// # Safety
/// `searcher` is NULL or a live searcher; `out` is NULL or valid for
/// writing one `quarry_switch`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_path(
    searcher: *const quarry_searcher,
    path: quarry_path,
    out: *mut quarry_switch,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        let searcher = unsafe { handle_ref(searcher, "searcher") }?;
        check_out(out, "out")?;
        let mut options = searcher.options().clone();
        let value = match *path_switch(&mut options, path)? {
            Switch::Auto => QUARRY_SWITCH_AUTO,
            Switch::Off => QUARRY_SWITCH_OFF,
        };
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, value) };
        Ok(())
    })
}

/// Flags of `quarry_searcher_search_flags` (bits, OR-ed together).
pub type quarry_search_flags = u32;
/// The total may be a lower bound: a search may then skip documents that
/// cannot enter the page without counting them, and
/// `quarry_hits_total_is_exact` says whether it did. Sorted searches whose
/// first rule is a field use it to skip whole blocks of documents.
pub const QUARRY_SEARCH_TOTAL_LOWER_BOUND: quarry_search_flags = 1;

/// `total` of `quarry_searcher_search_total`: count every match (what
/// `quarry_searcher_search` does). `UINT64_MAX`.
pub const QUARRY_TOTAL_EXACT: u64 = 0xFFFF_FFFF_FFFF_FFFF;
/// `total` of `quarry_searcher_search_total`: count only what the search
/// visits (what `QUARRY_SEARCH_TOTAL_LOWER_BOUND` does).
pub const QUARRY_TOTAL_LOWER_BOUND: u64 = 0;
/// `total` of `quarry_searcher_search_total`: the library's recommended
/// setting, Lucene's default threshold: the exact number whenever fewer
/// than 1000 documents match, otherwise a lower bound of at least 1000.
pub const QUARRY_TOTAL_DEFAULT: u64 = 1000;

// The constants are the Rust API's thresholds (cbindgen needs literals).
const _: () =
    assert!(QUARRY_TOTAL_EXACT == u64::MAX && QUARRY_TOTAL_DEFAULT == TotalMode::DEFAULT_THRESHOLD);

/// Runs `query` and returns the page of hits `[offset, offset + limit)`
/// in the order of `sort`, or, when `sort` is NULL, by score descending
/// then document number ascending. Every match is counted
/// (`quarry_hits_total`). The same as `quarry_searcher_search_flags` with
/// no flags.
///
/// `sort` may be NULL; `query` and `sort` are only read (still owned by the
/// caller) and may be freed right after the call.
/// On `QUARRY_OK`, `*out` is a new hits object owned by the caller (free it
/// with `quarry_hits_free`); it keeps the searcher's snapshot alive, so the
/// searcher may be freed first.
/// Errors: `QUARRY_NULL_ARGUMENT` (`searcher`, `query`, `out`),
/// `QUARRY_SCHEMA` (a field the query or sort names is missing or of the
/// wrong kind: not indexed, not sortable, wrong type),
/// `QUARRY_INVALID_ARGUMENT` (boosts that would take a score beyond
/// `FLT_MAX`, see `quarry_query_boost`), `QUARRY_IO`, `QUARRY_CORRUPT`.
/// Thread safety: any number of threads may search one searcher at once.
///
/// # Safety
/// `searcher` is NULL or a live searcher; `query` and `sort` are NULL or
/// live handles not modified during the call; `out` is NULL or valid for
/// writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_search(
    searcher: *const quarry_searcher,
    query: *const quarry_query,
    sort: *const quarry_sort,
    offset: usize,
    limit: usize,
    out: *mut *mut quarry_hits,
) -> quarry_status {
    // SAFETY: the same contract, passed on unchanged.
    unsafe { quarry_searcher_search_flags(searcher, query, sort, offset, limit, 0, out) }
}

/// `quarry_searcher_search` with `flags`, a combination of the
/// `QUARRY_SEARCH_*` flags (0 for none). The hits are the same whatever the
/// flags; with `QUARRY_SEARCH_TOTAL_LOWER_BOUND` the total may be a lower
/// bound (see `quarry_hits_total_is_exact`).
///
/// Ownership, thread safety and errors as `quarry_searcher_search`, and
/// `QUARRY_INVALID_ARGUMENT` for an unknown flag bit.
///
/// # Safety
/// As `quarry_searcher_search`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_search_flags(
    searcher: *const quarry_searcher,
    query: *const quarry_query,
    sort: *const quarry_sort,
    offset: usize,
    limit: usize,
    flags: quarry_search_flags,
    out: *mut *mut quarry_hits,
) -> quarry_status {
    guard(|| {
        let total = if flags & !QUARRY_SEARCH_TOTAL_LOWER_BOUND != 0 {
            Err(Failure::invalid(format!("unknown search flags {flags:#x}")))
        } else if flags & QUARRY_SEARCH_TOTAL_LOWER_BOUND != 0 {
            Ok(TotalMode::LowerBound)
        } else {
            Ok(TotalMode::Exact)
        };
        // SAFETY: the same contract, passed on unchanged.
        unsafe { search(searcher, query, sort, offset, limit, total, out) }
    })
}

/// `quarry_searcher_search` counting exactly the first `total` matches
/// only: once that many are counted, the search may skip documents that
/// cannot enter the page without counting them, and the total is then a
/// lower bound of at least `total` (`quarry_hits_total_is_exact` says
/// which). `QUARRY_TOTAL_EXACT` (`UINT64_MAX`) counts every match, as
/// `quarry_searcher_search` does; `QUARRY_TOTAL_LOWER_BOUND` (0) counts
/// only what the search visits, as `QUARRY_SEARCH_TOTAL_LOWER_BOUND` does;
/// `QUARRY_TOTAL_DEFAULT` (1000) is the recommended setting for a host
/// that shows "N results" (see docs/C-API.md). The hits are the same
/// whatever `total` is; every value is valid.
///
/// Ownership, thread safety and errors as `quarry_searcher_search`.
///
/// # Safety
/// As `quarry_searcher_search`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_search_total(
    searcher: *const quarry_searcher,
    query: *const quarry_query,
    sort: *const quarry_sort,
    offset: usize,
    limit: usize,
    total: u64,
    out: *mut *mut quarry_hits,
) -> quarry_status {
    guard(|| {
        let total = Ok(TotalMode::from_threshold(total));
        // SAFETY: the same contract, passed on unchanged.
        unsafe { search(searcher, query, sort, offset, limit, total, out) }
    })
}

/// The body of every search export: checks the pointer arguments (in
/// argument order), then `total` (an invalid counting argument is reported
/// after them), runs the search and writes the new hits to `*out`.
///
/// # Safety
/// As `quarry_searcher_search`.
unsafe fn search(
    searcher: *const quarry_searcher,
    query: *const quarry_query,
    sort: *const quarry_sort,
    offset: usize,
    limit: usize,
    total: CResult<TotalMode>,
    out: *mut *mut quarry_hits,
) -> CResult<()> {
    // SAFETY: the caller guarantees a live searcher; only shared access is used.
    let searcher = unsafe { handle_ref(searcher, "searcher") }?;
    // SAFETY: the caller guarantees a live query, unmodified during the call.
    let query = unsafe { handle_ref(query, "query") }?;
    let sort = if sort.is_null() {
        None
    } else {
        // SAFETY: non-NULL, and the caller guarantees a live, unmodified spec.
        Some(unsafe { handle_ref(sort, "sort") }?)
    };
    check_out(out, "out")?;
    let total = total?;
    let schema = searcher.schema();
    let q = query.resolve(schema)?;
    let spec = sort.map(|s| s.resolve(schema)).transpose()?;
    let req = SearchRequest {
        offset,
        limit,
        sort: spec,
        total,
    };
    let hits = searcher.search(&q, &req)?;
    let handle = new_hits(searcher.clone(), hits, req.sort, offset);
    // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
    unsafe { write_out(out, handle) };
    Ok(())
}

/// Frees a searcher. NULL is a no-op. Hits obtained from it stay valid.
///
/// # Safety
/// `searcher` is NULL or a live searcher, not used afterwards, and not in
/// use by any other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_free(searcher: *mut quarry_searcher) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) searcher, used never again.
        unsafe { free_handle(searcher) };
        Ok(())
    });
}
