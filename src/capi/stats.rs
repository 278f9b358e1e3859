//! `quarry_stats`: corpus statistics, exported by a shard for a set of
//! queries, merged over the shards of a corpus, and imported by a shard's
//! searcher so it scores in the whole corpus's space.

use super::query::quarry_query;
use super::searcher::quarry_searcher;
use super::status::quarry_status;
use super::{
    Handle, bytes_arg, check_out, free_handle, guard, guard_value, handle_ref, handles_arg,
    into_handle, write_bytes_out, write_out,
};
use crate::CorpusStats;
use std::ffi::c_char;
use std::sync::OnceLock;

/// Corpus statistics: per shard its documents, and the field token totals,
/// term document frequencies and expanded terms of the queries they were
/// exported for: exactly the integers BM25 takes from the corpus. A shard
/// searching with the merged statistics of every shard scores its
/// documents with the same bits as a searcher of all the shards. Their
/// bytes (`quarry_stats_bytes`) are a versioned, checksummed blob that may
/// travel between machines (docs/FORMAT.md, "Corpus statistics").
///
/// Thread safety: immutable; any number of threads may use one at once;
/// `quarry_stats_free` needs exclusive use.
pub struct quarry_stats {
    _private: [u8; 0],
}

pub(crate) struct StatsInner {
    stats: CorpusStats,
    /// The encoding, made at the first `quarry_stats_bytes`.
    bytes: OnceLock<Vec<u8>>,
}

impl Handle for quarry_stats {
    type Inner = StatsInner;
}

fn new_stats(stats: CorpusStats) -> *mut quarry_stats {
    into_handle::<quarry_stats>(StatsInner {
        stats,
        bytes: OnceLock::new(),
    })
}

/// Exports the corpus statistics the `count` queries of `queries` take from
/// the searcher's index: its documents, and the token totals, document
/// frequencies and expanded terms the queries look up (also those the
/// index does not hold). Export each shard's for the same queries, merge
/// them in shard order (`quarry_stats_merge`), and search each shard with
/// the merge (`quarry_searcher_with_stats`). A searcher of several shards
/// exports what the merge of its shards' statistics would be.
///
/// `queries` and its queries are only read. On `QUARRY_OK`, `*out` is new
/// statistics owned by the caller (free them with `quarry_stats_free`).
/// Errors: `QUARRY_NULL_ARGUMENT` (`searcher`, `queries`, an element of
/// it, `out`), `QUARRY_SCHEMA` (a query does not fit the schema),
/// `QUARRY_TOO_MANY_TERMS` (a prefix expands past the limit in this index
/// alone), `QUARRY_INVALID_ARGUMENT` (a searcher made by
/// `quarry_searcher_with_stats`, which exports none), `QUARRY_IO`,
/// `QUARRY_CORRUPT`.
/// Thread safety: any number of threads may use one searcher at once.
///
/// # Safety
/// `searcher` is NULL or a live searcher; `queries` is NULL or valid for
/// reading `count` pointers, each NULL or a live query not modified during
/// the call; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_export_stats(
    searcher: *const quarry_searcher,
    queries: *const *const quarry_query,
    count: usize,
    out: *mut *mut quarry_stats,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        let searcher = unsafe { handle_ref(searcher, "searcher") }?;
        // SAFETY: the caller guarantees `count` readable pointers, each NULL
        // or a live, unmodified query.
        let queries = unsafe { handles_arg::<quarry_query>(queries, count, "queries") }?;
        check_out(out, "out")?;
        let queries = queries
            .iter()
            .map(|q| q.resolve(searcher.schema()))
            .collect::<Result<Vec<_>, _>>()?;
        let stats = searcher.corpus_stats(&queries)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, new_stats(stats)) };
        Ok(())
    })
}

/// Reads statistics from their bytes (`len` bytes at `bytes`, as
/// `quarry_stats_bytes` gave them, possibly on another machine).
///
/// On `QUARRY_OK`, `*out` is new statistics owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_CORRUPT` (truncated, a checksum
/// mismatch, or a layout error: the message says which),
/// `QUARRY_UNSUPPORTED_VERSION` (an intact blob of a version this build
/// does not read).
///
/// # Safety
/// `bytes` is NULL or valid for reading `len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_stats_from_bytes(
    bytes: *const u8,
    len: usize,
    out: *mut *mut quarry_stats,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `bytes` is readable for `len` bytes.
        let bytes = unsafe { bytes_arg(bytes.cast::<c_char>(), len, "bytes") }?;
        check_out(out, "out")?;
        let stats = CorpusStats::decode(bytes)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, new_stats(stats)) };
        Ok(())
    })
}

/// The statistics' bytes: a blob to store or send and read back with
/// `quarry_stats_from_bytes` (layout: docs/FORMAT.md, "Corpus
/// statistics").
///
/// Ownership: the bytes belong to `stats` and stay valid until
/// `quarry_stats_free(stats)`.
/// Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `stats` is NULL or live statistics; `out_ptr`/`out_len` are NULL or
/// valid for writing a pointer / a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_stats_bytes(
    stats: *const quarry_stats,
    out_ptr: *mut *const u8,
    out_len: *mut usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees live statistics; only shared access is used.
        let stats = unsafe { handle_ref(stats, "stats") }?;
        check_out(out_ptr, "out_ptr")?;
        check_out(out_len, "out_len")?;
        let bytes = stats.bytes.get_or_init(|| stats.stats.encode());
        // SAFETY: both were checked non-NULL; the caller guarantees they are
        // writable. The bytes live in `stats` until it is freed.
        unsafe { write_bytes_out(out_ptr, out_len, bytes) };
        Ok(())
    })
}

/// Merges the statistics of the shards of one corpus, given in shard
/// order: the first part's shards are shards 0, 1, ..., the next part's
/// follow. Documents, token totals and document frequencies are summed,
/// expanded terms united.
///
/// On `QUARRY_OK`, `*out` is new statistics owned by the caller; the parts
/// are only read.
/// Errors: `QUARRY_NULL_ARGUMENT` (`parts`, an element of it, `out`),
/// `QUARRY_INVALID_ARGUMENT` (`count` 0; parts of different schemas or
/// expansion limits; parts exported for different queries; sums past
/// 2^64 - 1).
///
/// # Safety
/// `parts` is NULL or valid for reading `count` pointers, each NULL or
/// live statistics; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_stats_merge(
    parts: *const *const quarry_stats,
    count: usize,
    out: *mut *mut quarry_stats,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `count` readable pointers, each NULL
        // or live statistics.
        let parts = unsafe { handles_arg::<quarry_stats>(parts, count, "parts") }?;
        check_out(out, "out")?;
        let parts: Vec<CorpusStats> = parts.iter().map(|p| p.stats.clone()).collect();
        let merged = CorpusStats::merge(&parts)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, new_stats(merged)) };
        Ok(())
    })
}

/// The documents of the corpus the statistics describe (BM25's N: every
/// shard's, deleted ones included until merged away); 0 when `stats` is
/// NULL.
///
/// # Safety
/// `stats` is NULL or live statistics.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_stats_doc_count(stats: *const quarry_stats) -> u64 {
    guard_value(0, || {
        // SAFETY: the caller guarantees live statistics; only shared access is used.
        Ok(unsafe { handle_ref(stats, "stats") }?.stats.doc_count())
    })
}

/// The number of shards the statistics describe; 0 when `stats` is NULL.
///
/// # Safety
/// `stats` is NULL or live statistics.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_stats_shard_count(stats: *const quarry_stats) -> usize {
    guard_value(0, || {
        // SAFETY: the caller guarantees live statistics; only shared access is used.
        Ok(unsafe { handle_ref(stats, "stats") }?
            .stats
            .shard_docs()
            .len())
    })
}

/// A new searcher of the same index as `searcher` (sharing its snapshot
/// and options), searching it as shard `shard` of the corpus `stats`
/// describe: scores in the corpus's space (the bits a searcher of every
/// shard gives), documents numbered as in that corpus (this shard's first
/// is the documents of the shards before it), hits naming shard `shard`.
/// A search of a query whose statistics `stats` lack fails with
/// `QUARRY_INVALID_ARGUMENT`; so does one whose expansion limit
/// (`quarry_searcher_set_max_expansions`) is not the one `stats` were
/// exported under. `quarry_searcher_reopen` keeps the statistics.
///
/// On `QUARRY_OK`, `*out` is a new searcher owned by the caller;
/// `searcher` and `stats` are unchanged (the statistics are copied).
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_SCHEMA` (statistics of another
/// schema), `QUARRY_INVALID_ARGUMENT` (`searcher` searches several shards;
/// `stats` have no shard `shard`, or give it another number of documents
/// than the index holds: statistics of another commit or shard).
///
/// # Safety
/// `searcher` is NULL or a live searcher; `stats` is NULL or live
/// statistics; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_searcher_with_stats(
    searcher: *const quarry_searcher,
    stats: *const quarry_stats,
    shard: u32,
    out: *mut *mut quarry_searcher,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        let searcher = unsafe { handle_ref(searcher, "searcher") }?;
        // SAFETY: the caller guarantees live statistics; only shared access is used.
        let stats = unsafe { handle_ref(stats, "stats") }?;
        check_out(out, "out")?;
        let fresh = searcher.with_stats(stats.stats.clone(), shard)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_searcher>(fresh)) };
        Ok(())
    })
}

/// Frees statistics. NULL is a no-op. Searchers made with them keep their
/// own copy.
///
/// # Safety
/// `stats` is NULL or live statistics, not used afterwards and not in use
/// by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_stats_free(stats: *mut quarry_stats) {
    guard_value((), || {
        // SAFETY: the caller hands over live (or NULL) statistics, used never again.
        unsafe { free_handle(stats) };
        Ok(())
    });
}
