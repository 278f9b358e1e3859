//! `quarry_indexer` (the one writer of an index) and `quarry_doc` (a
//! document builder).

use std::ffi::OsStr;
use std::ffi::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::schema::quarry_schema;
use super::status::{QUARRY_INTERNAL, QUARRY_INVALID_ARGUMENT, QUARRY_SCHEMA, quarry_status};
use super::{
    CResult, Failure, Handle, bytes_arg, check_out, free_handle, guard, guard_value, handle_mut,
    handle_ref, into_handle, str_arg, write_out,
};
use crate::{Document, FieldId, FieldType, IndexWriter, Value, WriterConfig};

/// The one writer of an index. It holds the index's lock (an advisory
/// lock on the file `LOCK` in the index directory) from open until
/// `quarry_indexer_free`, so a second indexer on the same directory, in this
/// process or another, gets `QUARRY_LOCKED`. Searchers never need the lock.
///
/// Added documents and deletions become visible to searchers opened (or
/// reopened) after `quarry_indexer_commit`; freeing the indexer discards
/// whatever was not committed.
///
/// Thread safety: use from one thread at a time (it may move between
/// threads). After a call returns `QUARRY_INTERNAL` the indexer refuses
/// further work with `QUARRY_INTERNAL`; free it.
pub struct quarry_indexer {
    _private: [u8; 0],
}

pub(crate) struct Indexer {
    writer: IndexWriter,
    /// Set while an operation runs; still set on entry means the previous
    /// operation panicked half-way and the writer's state is not trusted.
    busy: bool,
}

impl Handle for quarry_indexer {
    type Inner = Indexer;
}

impl Indexer {
    pub(crate) fn new(writer: IndexWriter) -> Indexer {
        Indexer {
            writer,
            busy: false,
        }
    }

    /// Runs `f` on the writer unless an earlier call panicked inside it.
    pub(crate) fn run<T>(&mut self, f: impl FnOnce(&mut IndexWriter) -> CResult<T>) -> CResult<T> {
        if self.busy {
            return Err(Failure::new(
                QUARRY_INTERNAL,
                "the indexer is unusable after an internal error in an earlier call; free it",
            ));
        }
        self.busy = true;
        let r = f(&mut self.writer);
        self.busy = false;
        r
    }
}

/// A document under construction: a list of (field name, value) pairs,
/// checked against the index's schema when the document is added.
///
/// A text field may be given several values (analysed as if joined by a
/// separator); other fields at most one. Reuse a document for the next one
/// with `quarry_doc_clear`.
///
/// Thread safety: use from one thread at a time.
pub struct quarry_doc {
    _private: [u8; 0],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    String,
    I64,
    F64,
}

impl Kind {
    fn field_type(self) -> FieldType {
        match self {
            Kind::Text => FieldType::Text,
            Kind::String => FieldType::String,
            Kind::I64 => FieldType::I64,
            Kind::F64 => FieldType::F64,
        }
    }

    fn adder(self) -> &'static str {
        match self {
            Kind::Text => "quarry_doc_add_text",
            Kind::String => "quarry_doc_add_string",
            Kind::I64 => "quarry_doc_add_i64",
            Kind::F64 => "quarry_doc_add_f64",
        }
    }
}

#[derive(Default)]
pub(crate) struct DocBuilder {
    values: Vec<(String, Kind, Value)>,
}

impl Handle for quarry_doc {
    type Inner = DocBuilder;
}

impl DocBuilder {
    /// The document with field names resolved against `writer`'s schema.
    fn build(&self, writer: &IndexWriter) -> CResult<Document> {
        let schema = writer.schema();
        let mut doc = Document::new();
        for (name, kind, value) in &self.values {
            let id = schema.field(name).ok_or_else(|| {
                Failure::new(QUARRY_SCHEMA, format!("the schema has no field {name:?}"))
            })?;
            let ty = schema.def(id).ty;
            if ty != kind.field_type() {
                let right = [Kind::Text, Kind::String, Kind::I64, Kind::F64]
                    .into_iter()
                    .find(|k| k.field_type() == ty)
                    .map_or("", |k| k.adder());
                return Err(Failure::new(
                    QUARRY_SCHEMA,
                    format!(
                        "field {name:?} is a {} field, but the value was added with {}; use {right}",
                        ty.name(),
                        kind.adder()
                    ),
                ));
            }
            doc.add(id, value.clone());
        }
        Ok(doc)
    }
}

/// A directory path given as bytes (need not be UTF-8, must not contain NUL).
///
/// # Safety
/// `ptr` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn path_arg<'a>(ptr: *const c_char, len: usize, what: &str) -> CResult<&'a Path> {
    // SAFETY: forwarded from this function's contract.
    let bytes = unsafe { bytes_arg(ptr, len, what) }?;
    if bytes.is_empty() {
        return Err(Failure::invalid(format!("{what} is empty")));
    }
    if bytes.contains(&0) {
        return Err(Failure::invalid(format!("{what} contains a NUL byte")));
    }
    Ok(Path::new(OsStr::from_bytes(bytes)))
}

/// A string value given as UTF-8 bytes, copied (for text and string fields).
///
/// # Safety
/// `value` is NULL or valid for reading `value_len` bytes.
unsafe fn str_value(value: *const c_char, value_len: usize) -> CResult<Value> {
    // SAFETY: forwarded from this function's contract.
    let value = unsafe { str_arg(value, value_len, "value") }?;
    Ok(Value::Str(value.to_owned()))
}

fn field_of(writer: &IndexWriter, name: &str) -> CResult<FieldId> {
    writer
        .schema()
        .field(name)
        .ok_or_else(|| Failure::new(QUARRY_SCHEMA, format!("the schema has no field {name:?}")))
}

/// What `quarry_indexer_open` and `quarry_indexer_create` share: checks
/// `path`, then the schema argument (`schema` resolves it), then `out`;
/// opens the writer with `open` and hands it out in `*out` as a new indexer.
///
/// # Safety
/// `path` is NULL or valid for reading `path_len` bytes; `out` is NULL or
/// valid for writing one pointer; `schema` only borrows what the caller of
/// the export guarantees is live.
unsafe fn open_indexer<S>(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut quarry_indexer,
    schema: impl FnOnce() -> CResult<S>,
    open: impl FnOnce(&Path, S) -> crate::Result<IndexWriter>,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `path` is readable for `path_len` bytes.
        let dir = unsafe { path_arg(path, path_len, "path") }?;
        let schema = schema()?;
        check_out(out, "out")?;
        let writer = open(dir, schema)?;
        let handle = into_handle::<quarry_indexer>(Indexer::new(writer));
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, handle) };
        Ok(())
    })
}

/// Opens the index in the directory `path` for writing, creating it when
/// there is none.
///
/// `path` is `path_len` bytes naming a directory (need not be UTF-8 or
/// NUL-terminated; must not contain NUL). `schema` may be NULL: then the
/// index must exist. A non-NULL `schema` is copied (the caller still owns
/// it); it creates the index if absent and must equal the existing index's
/// schema otherwise.
///
/// On `QUARRY_OK`, `*out` is a new indexer owned by the caller (free it with
/// `quarry_indexer_free`), holding the index's lock.
/// Errors: `QUARRY_NULL_ARGUMENT` (`path` or `out`), `QUARRY_INVALID_ARGUMENT`
/// (empty path, NUL in path), `QUARRY_NO_INDEX` (no index and no schema),
/// `QUARRY_SCHEMA` (schema differs, or has no fields), `QUARRY_LOCKED`,
/// `QUARRY_IO`, `QUARRY_CORRUPT`, `QUARRY_UNSUPPORTED_VERSION`.
///
/// # Safety
/// `path` is NULL or valid for reading `path_len` bytes; `schema` is NULL or
/// a live schema not being modified by another thread; `out` is NULL or valid
/// for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_open(
    path: *const c_char,
    path_len: usize,
    schema: *const quarry_schema,
    out: *mut *mut quarry_indexer,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { quarry_indexer_open_with(path, path_len, schema, 0, 0, 0, out) }
}

/// The most indexing threads `quarry_indexer_open_with` takes.
pub const QUARRY_MAX_INDEXING_THREADS: u32 = 256;

/// Flags of `quarry_indexer_open_with` (bits, OR-ed together).
pub type quarry_indexer_flags = u32;
/// Create a new index, as `quarry_indexer_create` does: `QUARRY_INDEX_EXISTS`
/// when the directory holds one, and `schema` is required.
pub const QUARRY_INDEXER_CREATE: quarry_indexer_flags = 1;

/// `quarry_indexer_open` (or, with `QUARRY_INDEXER_CREATE` in `flags`,
/// `quarry_indexer_create`) with the writer's memory budget and indexing
/// threads.
///
/// `memory_budget` is the bytes the buffered documents may take before
/// they are written out as a segment (0: the default, 256 MiB); with
/// several threads each buffers under an equal share of it. `threads` is
/// the number of threads that analyse and invert documents beside the
/// caller's (0: none, `quarry_indexer_add_doc` does it on the caller's thread,
/// as with `quarry_indexer_open`). With 1, `quarry_indexer_add_doc` only checks
/// and queues the document, so the host's own work (parsing the next one)
/// runs beside the indexing, and the segments are those of a build on the
/// caller's thread; with more, documents go to them in contiguous runs of
/// the order they were added in. Either way searches return the same
/// documents, score bits and totals as after a build on the caller's
/// thread, and an error writing a full buffer is returned by the next
/// `quarry_indexer_commit` (which keeps the buffer and can be retried).
///
/// On `QUARRY_OK`, `*out` is a new indexer owned by the caller (free it with
/// `quarry_indexer_free`), holding the index's lock.
/// Errors: as `quarry_indexer_open` (with `QUARRY_INDEXER_CREATE`, as
/// `quarry_indexer_create`), and `QUARRY_INVALID_ARGUMENT` for `threads`
/// above `QUARRY_MAX_INDEXING_THREADS` or an unknown flag bit.
///
/// # Safety
/// As for `quarry_indexer_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_open_with(
    path: *const c_char,
    path_len: usize,
    schema: *const quarry_schema,
    memory_budget: usize,
    threads: u32,
    flags: quarry_indexer_flags,
    out: *mut *mut quarry_indexer,
) -> quarry_status {
    let defaults = WriterConfig::default();
    let config = WriterConfig {
        memory_budget: match memory_budget {
            0 => defaults.memory_budget,
            n => n,
        },
        indexing_threads: threads as usize,
        ..defaults
    };
    let create = flags & QUARRY_INDEXER_CREATE != 0;
    // SAFETY: forwarded from this function's contract; the schema closure
    // borrows `schema` only when it is non-NULL, which the caller guarantees
    // is then a live schema.
    unsafe {
        open_indexer(
            path,
            path_len,
            out,
            || {
                if flags & !QUARRY_INDEXER_CREATE != 0 {
                    return Err(Failure::new(
                        QUARRY_INVALID_ARGUMENT,
                        format!(
                            "unknown indexer flag bits {:#x}",
                            flags & !QUARRY_INDEXER_CREATE
                        ),
                    ));
                }
                if threads > QUARRY_MAX_INDEXING_THREADS {
                    return Err(Failure::new(
                        QUARRY_INVALID_ARGUMENT,
                        format!(
                            "{threads} indexing threads: at most {QUARRY_MAX_INDEXING_THREADS}"
                        ),
                    ));
                }
                if schema.is_null() && !create {
                    Ok(None)
                } else {
                    handle_ref(schema, "schema").map(Some)
                }
            },
            |dir, schema| match (create, schema) {
                (true, Some(schema)) => IndexWriter::create(dir, schema, config),
                (_, schema) => IndexWriter::open_or_create(dir, schema, config),
            },
        )
    }
}

/// Creates a new, empty index in the directory `path` (created if missing)
/// and opens it for writing. Unlike `quarry_indexer_open`, fails with
/// `QUARRY_INDEX_EXISTS` when the directory already holds an index, also
/// while another indexer holds it (`QUARRY_LOCKED` only for a locked
/// directory that holds no index yet).
///
/// `schema` is required and copied. On `QUARRY_OK`, `*out` is a new indexer
/// owned by the caller. Errors: as `quarry_indexer_open`, plus
/// `QUARRY_INDEX_EXISTS`; `QUARRY_NULL_ARGUMENT` when `schema` is NULL.
///
/// # Safety
/// As for `quarry_indexer_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_create(
    path: *const c_char,
    path_len: usize,
    schema: *const quarry_schema,
    out: *mut *mut quarry_indexer,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { quarry_indexer_open_with(path, path_len, schema, 0, 0, QUARRY_INDEXER_CREATE, out) }
}

/// Adds a document; it becomes searchable at the next commit. The document
/// is read, not consumed: the caller still owns it and may clear and reuse it.
///
/// Errors: `QUARRY_NULL_ARGUMENT`; `QUARRY_SCHEMA` when a field name is not
/// in the index's schema, a value was added with the adder of another type,
/// or a non-text field has two values (the document is then not added);
/// `QUARRY_IO` when flushing a full buffer fails (buffered documents are
/// kept, so a later commit can retry).
///
/// # Safety
/// `indexer` is NULL or a live indexer used by no other thread during the
/// call; `doc` is NULL or a live document not modified during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_add_doc(
    indexer: *mut quarry_indexer,
    doc: *const quarry_doc,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live indexer.
        let indexer = unsafe { handle_mut(indexer, "indexer") }?;
        // SAFETY: the caller guarantees a live, unmodified document.
        let doc = unsafe { handle_ref(doc, "doc") }?;
        indexer.run(|w| {
            let d = doc.build(w)?;
            w.add_document(&d)?;
            Ok(())
        })
    })
}

/// Deletes the documents whose field `field` holds the value `value` gives
/// (what the `quarry_indexer_delete_term_*` functions share). Checks
/// `indexer`, then `field`, then the value.
///
/// # Safety
/// `indexer` is NULL or a live indexer used by no other thread during the
/// call; `field` is NULL or valid for reading `field_len` bytes.
unsafe fn delete_term(
    indexer: *mut quarry_indexer,
    field: *const c_char,
    field_len: usize,
    value: impl FnOnce() -> CResult<Value>,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live indexer.
        let indexer = unsafe { handle_mut(indexer, "indexer") }?;
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        let value = value()?;
        indexer.run(|w| {
            let id = field_of(w, field)?;
            w.delete_term(id, &value)?;
            Ok(())
        })
    })
}

/// Deletes every document whose string field `field` holds exactly `value`
/// (committed documents and those added before this call). `field` must be
/// an indexed string field. Takes effect at the next commit.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`, `QUARRY_SCHEMA`
/// (unknown field, not an indexed string field).
///
/// # Safety
/// `indexer` as for `quarry_indexer_add_doc`; `field` and `value` are NULL or
/// valid for reading `field_len` and `value_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_delete_term_string(
    indexer: *mut quarry_indexer,
    field: *const c_char,
    field_len: usize,
    value: *const c_char,
    value_len: usize,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract; the closure reads
    // `value` under the same contract.
    unsafe { delete_term(indexer, field, field_len, || str_value(value, value_len)) }
}

/// Deletes every document whose i64 field `field` holds `value`. `field`
/// must be an indexed i64 field. Takes effect at the next commit.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`, `QUARRY_SCHEMA`.
///
/// # Safety
/// As for `quarry_indexer_delete_term_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_delete_term_i64(
    indexer: *mut quarry_indexer,
    field: *const c_char,
    field_len: usize,
    value: i64,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { delete_term(indexer, field, field_len, || Ok(Value::I64(value))) }
}

/// Makes every document added and deleted so far durable and visible to
/// searchers opened or reopened afterwards (a crash leaves either the
/// previous commit or this one, never a mix).
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_IO` (the previous commit stays
/// the index and the uncommitted work is kept, so the commit can be retried).
///
/// # Safety
/// `indexer` is NULL or a live indexer used by no other thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_commit(indexer: *mut quarry_indexer) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live indexer.
        let indexer = unsafe { handle_mut(indexer, "indexer") }?;
        indexer.run(|w| {
            w.commit()?;
            Ok(())
        })
    })
}

/// Commits, then merges segments until at most `max_segments` remain (a
/// lone segment with deletions is rewritten without them). The merge is
/// itself committed.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` when
/// `max_segments` is 0, `QUARRY_IO`, `QUARRY_CORRUPT`.
///
/// # Safety
/// `indexer` is NULL or a live indexer used by no other thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_merge(
    indexer: *mut quarry_indexer,
    max_segments: usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live indexer.
        let indexer = unsafe { handle_mut(indexer, "indexer") }?;
        if max_segments == 0 {
            return Err(Failure::invalid("max_segments must be at least 1"));
        }
        indexer.run(|w| {
            w.merge(max_segments)?;
            Ok(())
        })
    })
}

/// Frees an indexer: discards uncommitted work, waits for the automatic
/// merges of committed segments that its commits started (they run in the
/// background; each finished one is published, so this can take as long
/// as those merges, and a failed one leaves the index as committed), and
/// releases the index's lock. NULL is a no-op.
///
/// # Safety
/// `indexer` is NULL or a live indexer, not used afterwards and not in use
/// by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_indexer_free(indexer: *mut quarry_indexer) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) indexer, used never again.
        unsafe { free_handle(indexer) };
        Ok(())
    });
}

/// Creates an empty document.
///
/// On `QUARRY_OK`, `*out` is a new document owned by the caller (free it
/// with `quarry_doc_free`). Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_new(out: *mut *mut quarry_doc) -> quarry_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_doc>(DocBuilder::default())) };
        Ok(())
    })
}

/// Adds a value to the document (copied). The field name is checked
/// against the schema when the document is added to an indexer.
///
/// # Safety
/// `doc` is NULL or a live document used by no other thread during the
/// call; `field` is NULL or valid for reading `field_len` bytes.
unsafe fn add_value(
    doc: *mut quarry_doc,
    field: *const c_char,
    field_len: usize,
    kind: Kind,
    value: impl FnOnce() -> CResult<Value>,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live document.
        let doc = unsafe { handle_mut(doc, "doc") }?;
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        let value = value()?;
        doc.values.push((field.to_owned(), kind, value));
        Ok(())
    })
}

/// Adds a value for a text field (analysed at indexing time). The value is
/// copied. A text field may be given several values.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8` (field or value).
///
/// # Safety
/// `doc` is NULL or a live document used by no other thread during the
/// call; `field`/`value` are NULL or valid for reading `field_len`/`value_len`
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_add_text(
    doc: *mut quarry_doc,
    field: *const c_char,
    field_len: usize,
    value: *const c_char,
    value_len: usize,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract; the closure reads
    // `value` under the same contract.
    unsafe {
        add_value(doc, field, field_len, Kind::Text, || {
            str_value(value, value_len)
        })
    }
}

/// Adds a value for a string field (kept exactly as given). The value is
/// copied.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8` (field or value).
///
/// # Safety
/// As for `quarry_doc_add_text`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_add_string(
    doc: *mut quarry_doc,
    field: *const c_char,
    field_len: usize,
    value: *const c_char,
    value_len: usize,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract; the closure reads
    // `value` under the same contract.
    unsafe {
        add_value(doc, field, field_len, Kind::String, || {
            str_value(value, value_len)
        })
    }
}

/// Adds a value for an i64 field.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8` (field).
///
/// # Safety
/// `doc` is NULL or a live document used by no other thread during the
/// call; `field` is NULL or valid for reading `field_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_add_i64(
    doc: *mut quarry_doc,
    field: *const c_char,
    field_len: usize,
    value: i64,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { add_value(doc, field, field_len, Kind::I64, || Ok(Value::I64(value))) }
}

/// Adds a value for an f64 field.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8` (field).
///
/// # Safety
/// As for `quarry_doc_add_i64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_add_f64(
    doc: *mut quarry_doc,
    field: *const c_char,
    field_len: usize,
    value: f64,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { add_value(doc, field, field_len, Kind::F64, || Ok(Value::F64(value))) }
}

/// Removes every value, so the document can be reused.
///
/// Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `doc` is NULL or a live document used by no other thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_clear(doc: *mut quarry_doc) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live document.
        let doc = unsafe { handle_mut(doc, "doc") }?;
        doc.values.clear();
        Ok(())
    })
}

/// Frees a document. NULL is a no-op.
///
/// # Safety
/// `doc` is NULL or a live document, not used afterwards and not in use by
/// another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_doc_free(doc: *mut quarry_doc) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) document, used never again.
        unsafe { free_handle(doc) };
        Ok(())
    });
}
