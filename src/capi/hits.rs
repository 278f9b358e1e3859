//! `quarry_hits`: one page of search results, with totals, stored fields
//! and sort values.

use std::ffi::c_char;
use std::sync::{Mutex, OnceLock};

use super::query::quarry_query;
use super::status::{QUARRY_INVALID_ARGUMENT, QUARRY_NO_VALUE, QUARRY_SCHEMA, quarry_status};
use super::{
    CResult, Failure, Handle, check_out, free_handle, guard, guard_value, handle_ref, handles_arg,
    into_handle, str_arg, write_bytes_out, write_out,
};
use crate::{
    Escape, FieldId, FieldType, HighlightOptions, Hit, Hits, Searcher, SortKey, SortSpec, Value,
    merge_hits,
};

/// The hits of one search: the requested page in order, the total number
/// of matches, and per hit its document number, score, sort values and
/// stored fields.
///
/// Stored fields are read from the index the first time a hit's stored
/// values are asked for, then kept in the hits object; strings returned by
/// the getters point into it and stay valid until `quarry_hits_free`.
///
/// Thread safety: the getters may be called from several threads at once;
/// `quarry_hits_free` needs exclusive use.
pub struct quarry_hits {
    _private: [u8; 0],
}

type StoredResult = Result<Vec<(FieldId, Value)>, (quarry_status, String)>;

pub(crate) struct HitsInner {
    /// The searchers the hits come from (several for merged hits): each
    /// keeps its snapshots mapped and resolves stored values and field
    /// names (their schemas are the same).
    searchers: Vec<Searcher>,
    /// Per hit, its searcher's index in `searchers`.
    from: Vec<usize>,
    hits: Hits,
    /// The sort spec the search used (`None`: score order).
    sort: Option<SortSpec>,
    /// The hits the search skipped before this page.
    offset: usize,
    /// Per hit, its stored values once read.
    stored: Vec<OnceLock<StoredResult>>,
    /// The excerpts handed out by `quarry_hits_highlight`, kept until the
    /// hits are freed (each box's bytes stay put as the list grows).
    excerpts: Mutex<Vec<Box<str>>>,
    /// Per hit, its merge key, made at the first `quarry_hits_merge_key`.
    keys: OnceLock<Vec<Vec<u8>>>,
}

impl Handle for quarry_hits {
    type Inner = HitsInner;
}

/// A hits handle of one search's page (`offset` hits skipped), in the
/// order of `sort`.
pub(crate) fn new_hits(
    searcher: Searcher,
    hits: Hits,
    sort: Option<SortSpec>,
    offset: usize,
) -> *mut quarry_hits {
    let from = vec![0; hits.hits.len()];
    into_handle::<quarry_hits>(HitsInner::new(vec![searcher], from, hits, sort, offset))
}

/// The type of a value: one of the `QUARRY_VALUE_*` constants.
pub type quarry_value_type = u32;
/// No value (the document has none for the sort field).
pub const QUARRY_VALUE_NONE: quarry_value_type = 0;
/// A UTF-8 string.
pub const QUARRY_VALUE_STR: quarry_value_type = 1;
/// A signed 64-bit integer.
pub const QUARRY_VALUE_I64: quarry_value_type = 2;
/// A 64-bit float.
pub const QUARRY_VALUE_F64: quarry_value_type = 3;

/// The C type of a value, as the getters' names spell it: `str`, `i64` or
/// `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Str,
    I64,
    F64,
}

impl Kind {
    fn of_field(ty: FieldType) -> Kind {
        match ty {
            FieldType::Text | FieldType::String => Kind::Str,
            FieldType::I64 => Kind::I64,
            FieldType::F64 => Kind::F64,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Kind::Str => "str",
            Kind::I64 => "i64",
            Kind::F64 => "f64",
        }
    }
}

impl HitsInner {
    fn new(
        searchers: Vec<Searcher>,
        from: Vec<usize>,
        hits: Hits,
        sort: Option<SortSpec>,
        offset: usize,
    ) -> HitsInner {
        HitsInner {
            stored: (0..hits.hits.len()).map(|_| OnceLock::new()).collect(),
            searchers,
            from,
            hits,
            sort,
            offset,
            excerpts: Mutex::new(Vec::new()),
            keys: OnceLock::new(),
        }
    }

    /// The searcher hit `index` (in range) comes from.
    fn searcher_of(&self, index: usize) -> &Searcher {
        &self.searchers[self.from[index]]
    }

    /// The keys of the sort spec's rules (empty without one).
    fn rules(&self) -> impl Iterator<Item = SortKey> + '_ {
        self.sort.iter().flat_map(|s| s.rules.iter().map(|r| r.key))
    }

    fn hit(&self, index: usize) -> CResult<&Hit> {
        self.hits.hits.get(index).ok_or_else(|| {
            Failure::new(
                QUARRY_INVALID_ARGUMENT,
                format!(
                    "hit index {index} out of range ({} hits)",
                    self.hits.hits.len()
                ),
            )
        })
    }

    /// The stored value of field `name` of hit `index`, asked for by the
    /// getter of `kind`. The field's type is checked against `kind` by the
    /// schema, before the document is looked at, so a getter of the wrong
    /// type is `QUARRY_SCHEMA` whether or not the document has a value.
    fn stored(&self, index: usize, name: &str, kind: Kind) -> CResult<&Value> {
        let doc = self.hit(index)?.doc;
        let schema = self.searcher_of(index).schema();
        let id = schema.field(name).ok_or_else(|| {
            Failure::new(QUARRY_SCHEMA, format!("the schema has no field {name:?}"))
        })?;
        let def = schema.def(id);
        if !def.flags.stored {
            return Err(Failure::new(
                QUARRY_SCHEMA,
                format!("field {name:?} is not stored"),
            ));
        }
        let field_kind = Kind::of_field(def.ty);
        if field_kind != kind {
            return Err(Failure::new(
                QUARRY_SCHEMA,
                format!(
                    "field {name:?} is a {} field; use quarry_hits_stored_{}",
                    def.ty.name(),
                    field_kind.suffix()
                ),
            ));
        }
        let values = self.stored[index]
            .get_or_init(|| {
                self.searcher_of(index)
                    .stored(doc)
                    .map_err(|e| (super::status::status_of(&e), e.to_string()))
            })
            .as_ref()
            .map_err(|(status, message)| Failure::new(*status, message.clone()))?;
        values
            .iter()
            .find(|(f, _)| *f == id)
            .map(|(_, v)| v)
            .ok_or_else(|| {
                Failure::new(
                    QUARRY_NO_VALUE,
                    format!("document {doc} has no value for field {name:?}"),
                )
            })
    }

    /// Hit `index`'s value for sort rule `rule` (`None`: the document has
    /// no value for the rule's field).
    fn sort_value(&self, index: usize, rule: usize) -> CResult<Option<&Value>> {
        let hit = self.hit(index)?;
        match hit.sort_values.get(rule) {
            Some(v) => Ok(v.as_ref()),
            None => Err(Failure::invalid(format!(
                "sort rule index {rule} out of range ({} rules)",
                self.rules().count()
            ))),
        }
    }

    /// Hit `index`'s value for sort rule `rule`, asked for by the getter of
    /// `kind`: the rule's type (from the sort spec and the schema) is
    /// checked first, so a getter of the wrong type is
    /// `QUARRY_INVALID_ARGUMENT` whether or not the document has a value.
    fn typed_sort_value(&self, index: usize, rule: usize, kind: Kind) -> CResult<&Value> {
        let value = self.sort_value(index, rule)?;
        let key = self
            .rules()
            .nth(rule)
            .ok_or_else(|| Failure::invalid(format!("sort rule index {rule} out of range")))?;
        let rule_kind = match key {
            SortKey::Score => Kind::F64,
            SortKey::Doc => Kind::I64,
            SortKey::Field(id) => Kind::of_field(self.searcher_of(index).schema().def(id).ty),
        };
        if rule_kind != kind {
            return Err(Failure::invalid(format!(
                "sort rule {rule} has {} values; use quarry_hits_sort_value_{}",
                rule_kind.suffix(),
                rule_kind.suffix()
            )));
        }
        value.ok_or_else(|| {
            Failure::new(
                QUARRY_NO_VALUE,
                format!("hit {index} has no value for sort rule {rule}"),
            )
        })
    }
}

/// A stored or sort value that is not of the type its field or rule says
/// (a damaged index; the type checks above make it unreachable otherwise).
fn unexpected(value: &Value) -> Failure {
    Failure::new(
        super::status::QUARRY_CORRUPT,
        format!("a value of an unexpected type: {value:?}"),
    )
}

/// The number of hits in this page (at most the search's `limit`); 0 when
/// `hits` is NULL.
///
/// # Safety
/// `hits` is NULL or a live hits object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_len(hits: *const quarry_hits) -> usize {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        Ok(unsafe { handle_ref(hits, "hits") }?.hits.hits.len())
    })
}

/// How many documents matched the query in all (not just this page): exact
/// when `quarry_hits_total_is_exact` is true, otherwise a lower bound. 0
/// when `hits` is NULL.
///
/// # Safety
/// `hits` is NULL or a live hits object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_total(hits: *const quarry_hits) -> u64 {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        Ok(unsafe { handle_ref(hits, "hits") }?.hits.total_hits)
    })
}

/// Whether `quarry_hits_total` is exact (true) or a lower bound (false);
/// false when `hits` is NULL.
///
/// # Safety
/// `hits` is NULL or a live hits object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_total_is_exact(hits: *const quarry_hits) -> bool {
    guard_value(false, || {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        Ok(unsafe { handle_ref(hits, "hits") }?.hits.total_is_exact)
    })
}

/// The document number of hit `index` (0-based, `< quarry_hits_len`).
/// Document numbers are positions in the searcher's snapshot: stable for
/// that snapshot only (commits and merges renumber). A searcher of several
/// shards numbers their documents one shard after the other (see
/// `quarry_hits_shard` and `quarry_hits_shard_doc`).
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index out of range).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_doc(
    hits: *const quarry_hits,
    index: usize,
    out: *mut u64,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `hit_field`'s.
    unsafe { hit_field(hits, index, out, |h| h.doc) }
}

/// The BM25 score of hit `index`: 0 for documents matched only by filter
/// clauses, and 0 for every hit of a sorted search whose sort spec has no
/// score rule, unless the spec asked for scores with
/// `quarry_sort_track_scores` (scores are then the same bits as in a
/// score-order search).
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index out of range).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// a `float`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_score(
    hits: *const quarry_hits,
    index: usize,
    out: *mut f32,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `hit_field`'s.
    unsafe { hit_field(hits, index, out, |h| h.score) }
}

/// The stored value of the text or string field `field` of hit `index`, as
/// a pointer to UTF-8 bytes (not NUL-terminated) and their length.
///
/// Ownership: the bytes belong to `hits` and stay valid until
/// `quarry_hits_free(hits)`. For a text field given several values, the
/// first.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8` (field name),
/// `QUARRY_INVALID_ARGUMENT` (index), `QUARRY_SCHEMA` (no such field, not
/// stored, or not a text/string field: decided by the schema, so also for a
/// document without a value), `QUARRY_NO_VALUE` (a field of the right type
/// for which this document has no value), `QUARRY_IO`/`QUARRY_CORRUPT`
/// (reading the stored values failed).
///
/// # Safety
/// `hits` is NULL or a live hits object; `field` is NULL or valid for
/// reading `field_len` bytes; `out_ptr`/`out_len` are NULL or valid for
/// writing a pointer / a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_stored_str(
    hits: *const quarry_hits,
    index: usize,
    field: *const c_char,
    field_len: usize,
    out_ptr: *mut *const c_char,
    out_len: *mut usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let name = unsafe { str_arg(field, field_len, "field") }?;
        check_out(out_ptr, "out_ptr")?;
        check_out(out_len, "out_len")?;
        let value = hits.stored(index, name, Kind::Str)?;
        let s = value.as_str().ok_or_else(|| unexpected(value))?;
        // SAFETY: both were checked non-NULL; the caller guarantees they are
        // writable. The bytes live in `hits` until it is freed.
        unsafe { write_bytes_out(out_ptr, out_len, s.as_bytes()) };
        Ok(())
    })
}

/// Flags of `quarry_hits_highlight_ex` (bits, OR-ed together).
pub type quarry_highlight_flags = u32;
/// HTML-escape the stored text in the excerpt: `&`, `<`, `>`, `"` and `'`
/// become `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;`. The markers and
/// the ellipsis are written as given.
pub const QUARRY_HIGHLIGHT_ESCAPE_HTML: quarry_highlight_flags = 1;

/// An excerpt of the stored text or string field `field` of hit `index`
/// around the region that best matches `query` (usually the query
/// searched, but any query may be given), each matched token between the
/// `pre` and `post` markers, `ellipsis` where it cuts the value, as a
/// pointer to UTF-8 bytes (not NUL-terminated) and their length.
///
/// The query's terms for the field are those its search uses (terms, match
/// terms, the terms of prefixes and ranges; none under a MUST_NOT clause).
/// A text is analysed again with the field's analyzer, so under `english`
/// "running" marks "Runs"; a string value is one token, marked whole when
/// it equals one of the terms (unanalysed, as it is indexed). The excerpt
/// holds at most `max_len` bytes of the stored value (markers, ellipses
/// and what escaping adds not counted): the window with the most distinct
/// matched terms, then the most matches, widened with context to the
/// limit, starting at a sentence or word and ending after a sentence or
/// before a space where it can, never inside a UTF-8 char (a match longer
/// than the limit is cut at it). Where it cuts the value it has
/// `ellipsis` at that end. A document the query does not match gets the
/// start of the value; a value within the limit is returned whole. With
/// `QUARRY_HIGHLIGHT_ESCAPE_HTML` in `flags` the stored text is
/// HTML-escaped; with 0 it is as stored.
///
/// Ownership: the bytes belong to `hits` and stay valid until
/// `quarry_hits_free(hits)`; each call adds a new excerpt to it.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8` (field name,
/// markers or ellipsis), `QUARRY_INVALID_ARGUMENT` (index out of range,
/// `max_len` 0, an unknown flag bit), `QUARRY_SCHEMA` (no such field, an
/// i64 or f64 field, not stored, or a query that does not fit the
/// schema), `QUARRY_NO_VALUE` (this document has no value for the field),
/// the query's search errors (`QUARRY_TOO_MANY_TERMS`,
/// `QUARRY_UNSUPPORTED`, ...), `QUARRY_IO`/`QUARRY_CORRUPT` (reading the
/// stored values failed).
///
/// Thread safety: as the other getters, callable from several threads at
/// once.
///
/// # Safety
/// `hits` is NULL or a live hits object; `query` is NULL or a live query
/// not modified during the call; `field`, `pre`, `post` and `ellipsis` are
/// NULL or valid for reading their lengths' bytes; `out_ptr`/`out_len` are
/// NULL or valid for writing a pointer / a `size_t`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn quarry_hits_highlight_ex(
    hits: *const quarry_hits,
    index: usize,
    query: *const quarry_query,
    field: *const c_char,
    field_len: usize,
    pre: *const c_char,
    pre_len: usize,
    post: *const c_char,
    post_len: usize,
    ellipsis: *const c_char,
    ellipsis_len: usize,
    max_len: usize,
    flags: quarry_highlight_flags,
    out_ptr: *mut *const c_char,
    out_len: *mut usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        // SAFETY: the caller guarantees a live query, unmodified during the call.
        let query = unsafe { handle_ref(query, "query") }?;
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let name = unsafe { str_arg(field, field_len, "field") }?;
        // SAFETY: the caller guarantees `pre` is readable for `pre_len` bytes.
        let pre = unsafe { str_arg(pre, pre_len, "pre") }?;
        // SAFETY: the caller guarantees `post` is readable for `post_len` bytes.
        let post = unsafe { str_arg(post, post_len, "post") }?;
        // SAFETY: the caller guarantees `ellipsis` is readable for `ellipsis_len` bytes.
        let ellipsis = unsafe { str_arg(ellipsis, ellipsis_len, "ellipsis") }?;
        let escape = escape_of(flags)?;
        check_out(out_ptr, "out_ptr")?;
        check_out(out_len, "out_len")?;
        let doc = hits.hit(index)?.doc;
        let searcher = hits.searcher_of(index);
        let schema = searcher.schema();
        let id = schema.field(name).ok_or_else(|| {
            Failure::new(QUARRY_SCHEMA, format!("the schema has no field {name:?}"))
        })?;
        let q = query.resolve(schema)?;
        let options = HighlightOptions {
            pre: pre.to_owned(),
            post: post.to_owned(),
            ellipsis: ellipsis.to_owned(),
            max_bytes: max_len,
            escape,
        };
        let excerpt = searcher
            .highlight(&q, doc, id, &options)?
            .ok_or_else(|| {
                Failure::new(
                    QUARRY_NO_VALUE,
                    format!("document {doc} has no value for field {name:?}"),
                )
            })?
            .into_boxed_str();
        let mut kept = hits.excerpts.lock().unwrap_or_else(|e| e.into_inner());
        kept.push(excerpt);
        let bytes = kept.last().expect("just pushed").as_bytes();
        // SAFETY: both were checked non-NULL; the caller guarantees they are
        // writable. The bytes are the boxed excerpt's, now kept in `hits`
        // (never dropped or moved before `quarry_hits_free`).
        unsafe { write_bytes_out(out_ptr, out_len, bytes) };
        Ok(())
    })
}

/// The escaping `flags` ask for; `QUARRY_INVALID_ARGUMENT` for an unknown
/// flag bit.
fn escape_of(flags: quarry_highlight_flags) -> CResult<Escape> {
    if flags & !QUARRY_HIGHLIGHT_ESCAPE_HTML != 0 {
        return Err(Failure::invalid(format!(
            "unknown highlight flags {flags:#x}"
        )));
    }
    Ok(if flags & QUARRY_HIGHLIGHT_ESCAPE_HTML != 0 {
        Escape::Html
    } else {
        Escape::None
    })
}

/// `quarry_hits_highlight_ex` with the ellipsis "…" (U+2026) and no flags
/// (the stored text not escaped): an excerpt of the stored text or string
/// field `field` of hit `index` around the region that best matches
/// `query`, each matched token between the `pre` and `post` markers, at
/// most `max_len` bytes of the stored value (markers and ellipses not
/// counted).
///
/// Ownership: the bytes belong to `hits` and stay valid until
/// `quarry_hits_free(hits)`; each call adds a new excerpt to it.
/// Errors: those of `quarry_hits_highlight_ex`.
///
/// Thread safety: as the other getters, callable from several threads at
/// once.
///
/// # Safety
/// `hits` is NULL or a live hits object; `query` is NULL or a live query
/// not modified during the call; `field`, `pre` and `post` are NULL or
/// valid for reading their lengths' bytes; `out_ptr`/`out_len` are NULL or
/// valid for writing a pointer / a `size_t`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn quarry_hits_highlight(
    hits: *const quarry_hits,
    index: usize,
    query: *const quarry_query,
    field: *const c_char,
    field_len: usize,
    pre: *const c_char,
    pre_len: usize,
    post: *const c_char,
    post_len: usize,
    max_len: usize,
    out_ptr: *mut *const c_char,
    out_len: *mut usize,
) -> quarry_status {
    let ellipsis = HighlightOptions::DEFAULT_ELLIPSIS;
    // SAFETY: the caller's guarantees are `quarry_hits_highlight_ex`'s for
    // every argument passed on; `ellipsis` is a static string, readable for
    // its length.
    unsafe {
        quarry_hits_highlight_ex(
            hits,
            index,
            query,
            field,
            field_len,
            pre,
            pre_len,
            post,
            post_len,
            ellipsis.as_ptr().cast(),
            ellipsis.len(),
            max_len,
            0,
            out_ptr,
            out_len,
        )
    }
}

/// The stored value of the i64 field `field` of hit `index`.
///
/// Errors: as `quarry_hits_stored_str`, with `QUARRY_SCHEMA` when the field
/// is not an i64 field (with or without a value in this document).
///
/// # Safety
/// `hits` is NULL or a live hits object; `field` is NULL or valid for
/// reading `field_len` bytes; `out` is NULL or valid for writing an `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_stored_i64(
    hits: *const quarry_hits,
    index: usize,
    field: *const c_char,
    field_len: usize,
    out: *mut i64,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `stored_as`'s.
    unsafe { stored_as(hits, index, field, field_len, out, Kind::I64, Value::as_i64) }
}

/// The stored value of the f64 field `field` of hit `index`.
///
/// Errors: as `quarry_hits_stored_str`, with `QUARRY_SCHEMA` when the field
/// is not an f64 field (with or without a value in this document).
///
/// # Safety
/// `hits` is NULL or a live hits object; `field` is NULL or valid for
/// reading `field_len` bytes; `out` is NULL or valid for writing a `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_stored_f64(
    hits: *const quarry_hits,
    index: usize,
    field: *const c_char,
    field_len: usize,
    out: *mut f64,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `stored_as`'s.
    unsafe { stored_as(hits, index, field, field_len, out, Kind::F64, Value::as_f64) }
}

/// The number of sort values each hit carries: the number of rules of the
/// sort spec the search used, 0 when it used none (or `hits` is NULL).
///
/// # Safety
/// `hits` is NULL or a live hits object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_sort_value_count(hits: *const quarry_hits) -> usize {
    guard_value(0, || {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        Ok(unsafe { handle_ref(hits, "hits") }?.rules().count())
    })
}

/// The type of hit `index`'s value for sort rule `rule` (0-based, `<
/// quarry_hits_sort_value_count`): `QUARRY_VALUE_F64` for a score rule,
/// `QUARRY_VALUE_I64` for a document-number rule, the field's type for a
/// field rule, or `QUARRY_VALUE_NONE` when the document has no value for
/// the field. Sort values let hits from several searchers be merged in
/// exactly the order one searcher would give.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index or rule
/// out of range).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// a `quarry_value_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_sort_value_type(
    hits: *const quarry_hits,
    index: usize,
    rule: usize,
    out: *mut quarry_value_type,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        check_out(out, "out")?;
        let ty = match hits.sort_value(index, rule)? {
            None => QUARRY_VALUE_NONE,
            Some(Value::Str(_)) => QUARRY_VALUE_STR,
            Some(Value::I64(_)) => QUARRY_VALUE_I64,
            Some(Value::F64(_)) => QUARRY_VALUE_F64,
        };
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, ty) };
        Ok(())
    })
}

/// Hit `index`'s i64 value for sort rule `rule`.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index or rule
/// out of range, or the rule's values are not i64: decided by
/// the sort spec and the schema, so also for a hit without a value),
/// `QUARRY_NO_VALUE` (a rule of the right type for which this hit has no
/// value).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// an `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_sort_value_i64(
    hits: *const quarry_hits,
    index: usize,
    rule: usize,
    out: *mut i64,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `sort_value_as`'s.
    unsafe { sort_value_as(hits, index, rule, out, Kind::I64, Value::as_i64) }
}

/// Hit `index`'s f64 value for sort rule `rule` (score rules give the f32
/// score widened to f64).
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index or rule
/// out of range, or the rule's values are not f64: decided by
/// the sort spec and the schema, so also for a hit without a value),
/// `QUARRY_NO_VALUE` (a rule of the right type for which this hit has no
/// value).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// a `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_sort_value_f64(
    hits: *const quarry_hits,
    index: usize,
    rule: usize,
    out: *mut f64,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `sort_value_as`'s.
    unsafe { sort_value_as(hits, index, rule, out, Kind::F64, Value::as_f64) }
}

/// Hit `index`'s string value for sort rule `rule`, as UTF-8 bytes (not
/// NUL-terminated) owned by `hits` and valid until `quarry_hits_free`.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index or rule
/// out of range, or the rule's values are not strings: decided by
/// the sort spec and the schema, so also for a hit without a value),
/// `QUARRY_NO_VALUE` (a rule of the right type for which this hit has no
/// value).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out_ptr`/`out_len` are NULL or
/// valid for writing a pointer / a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_sort_value_str(
    hits: *const quarry_hits,
    index: usize,
    rule: usize,
    out_ptr: *mut *const c_char,
    out_len: *mut usize,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `hit_bytes`'.
    unsafe {
        hit_bytes(hits, out_ptr, out_len, |hits| {
            let value = hits.typed_sort_value(index, rule, Kind::Str)?;
            Ok(value.as_str().ok_or_else(|| unexpected(value))?.as_bytes())
        })
    }
}

/// The body of the typed stored-value getters: a field of another type than
/// `kind` is a `QUARRY_SCHEMA` error naming the right getter, and `pick`
/// takes the value of type `kind` out.
///
/// # Safety
/// `hits` is NULL or a live hits object; `field` is NULL or valid for
/// reading `field_len` bytes; `out` is NULL or valid for writing a `T`.
unsafe fn stored_as<T>(
    hits: *const quarry_hits,
    index: usize,
    field: *const c_char,
    field_len: usize,
    out: *mut T,
    kind: Kind,
    pick: fn(&Value) -> Option<T>,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let name = unsafe { str_arg(field, field_len, "field") }?;
        check_out(out, "out")?;
        let value = hits.stored(index, name, kind)?;
        let v = pick(value).ok_or_else(|| unexpected(value))?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, v) };
        Ok(())
    })
}

/// The body of the typed sort-value getters (see [`stored_as`]).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for
/// writing a `T`.
unsafe fn sort_value_as<T>(
    hits: *const quarry_hits,
    index: usize,
    rule: usize,
    out: *mut T,
    kind: Kind,
    pick: fn(&Value) -> Option<T>,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        check_out(out, "out")?;
        let value = hits.typed_sort_value(index, rule, kind)?;
        let v = pick(value).ok_or_else(|| unexpected(value))?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, v) };
        Ok(())
    })
}

/// The shard of hit `index`: the position of its index among the paths
/// given to `quarry_searcher_open_many` (0 for a searcher of one index), or
/// the shard number given to `quarry_searcher_with_stats`.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index out of range).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_shard(
    hits: *const quarry_hits,
    index: usize,
    out: *mut u32,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `hit_field`'s.
    unsafe { hit_field(hits, index, out, |h| h.shard) }
}

/// The document number of hit `index` within its shard's index (what
/// `quarry_hits_doc` is in a searcher of that index alone). With several
/// shards `quarry_hits_doc` numbers the documents of all of them, one
/// shard after the other.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index out of range).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for writing
/// a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_shard_doc(
    hits: *const quarry_hits,
    index: usize,
    out: *mut u64,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `hit_field`'s.
    unsafe { hit_field(hits, index, out, |h| h.shard_doc) }
}

/// The merge key of hit `index`: bytes whose order is the order of hits of
/// the same request, whatever shard they come from (compare keys with
/// `memcmp` over the shorter length, the shorter key first when they
/// agree). A coordinator merges shards' pages by sorting their hits by key
/// (docs/SCALE-OUT.md); docs/C-API.md gives the encoding (score or sort
/// values, then shard and shard document).
///
/// Ownership: the bytes belong to `hits` and stay valid until
/// `quarry_hits_free(hits)`.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (index out of range).
///
/// # Safety
/// `hits` is NULL or a live hits object; `out_ptr`/`out_len` are NULL or
/// valid for writing a pointer / a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_merge_key(
    hits: *const quarry_hits,
    index: usize,
    out_ptr: *mut *const u8,
    out_len: *mut usize,
) -> quarry_status {
    // SAFETY: the caller's guarantees are `hit_bytes`'.
    unsafe {
        hit_bytes(hits, out_ptr, out_len, |hits| {
            hits.hit(index)?;
            let keys = hits.keys.get_or_init(|| {
                let sort = hits.sort.as_ref();
                hits.hits.hits.iter().map(|h| h.merge_key(sort)).collect()
            });
            Ok(&keys[index])
        })
    }
}

/// Merges the pages of several shards' searches into the page `[offset,
/// offset + limit)` of their union, in the order one search of all the
/// shards gives: the hits a searcher of every shard
/// (`quarry_searcher_open_many`) returns for the same request, when each
/// part is one shard's search with the same merged statistics
/// (`quarry_searcher_with_stats`), the same query and sort, offset 0 and a
/// limit of at least `offset + limit`. The total is the parts' sum, exact
/// when every part's is. The merged hits' stored values, excerpts and sort
/// values are read through the parts' searchers.
///
/// `parts` is an array of `count` hits objects, only read (each may be
/// freed after the call).
/// On `QUARRY_OK`, `*out` is a new hits object owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT` (`parts`, an element of it, `out`),
/// `QUARRY_INVALID_ARGUMENT` (`count` 0; a part searched with an offset,
/// or with another sort than the first part's; a document in two parts),
/// `QUARRY_SCHEMA` (parts of indexes of different schemas).
/// Thread safety: the parts may be in use by other threads' getters.
///
/// # Safety
/// `parts` is NULL or valid for reading `count` pointers, each NULL or a
/// live hits object; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_merge(
    parts: *const *const quarry_hits,
    count: usize,
    offset: usize,
    limit: usize,
    out: *mut *mut quarry_hits,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `count` readable pointers, each NULL
        // or a live hits object.
        let parts = unsafe { handles_arg::<quarry_hits>(parts, count, "parts") }?;
        check_out(out, "out")?;
        let Some(first) = parts.first() else {
            return Err(Failure::invalid("merging hits needs at least one part"));
        };
        for (i, p) in parts.iter().enumerate() {
            if p.offset != 0 {
                return Err(Failure::invalid(format!(
                    "part {i} was searched with offset {}: search each shard from its first \
                     hit (offset 0, limit offset + limit) and merge with the offset",
                    p.offset
                )));
            }
            if p.sort != first.sort {
                return Err(Failure::invalid(format!(
                    "part {i} was searched with another sort than part 0"
                )));
            }
            if p.searchers[0].schema() != first.searchers[0].schema() {
                return Err(Failure::new(
                    QUARRY_SCHEMA,
                    format!("part {i} comes from an index of another schema than part 0"),
                ));
            }
        }
        let pages: Vec<&Hits> = parts.iter().map(|p| &p.hits).collect();
        let merged = merge_hits(&pages, first.sort.as_ref(), offset, limit)?;
        // Each merged hit reads through the searcher of the part it came
        // from; (shard, shard document) names it in one part only.
        let mut searchers = Vec::new();
        let mut source = std::collections::HashMap::new();
        for p in &parts {
            for (h, &f) in p.hits.hits.iter().zip(&p.from) {
                source.insert((h.shard, h.shard_doc), searchers.len() + f);
            }
            searchers.extend(p.searchers.iter().cloned());
        }
        let from = merged
            .hits
            .iter()
            .map(|h| source[&(h.shard, h.shard_doc)])
            .collect();
        let inner = HitsInner::new(searchers, from, merged, first.sort.clone(), offset);
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_hits>(inner)) };
        Ok(())
    })
}

/// The body of the per-hit integer getters: `pick` takes the value out of
/// hit `index`.
///
/// # Safety
/// `hits` is NULL or a live hits object; `out` is NULL or valid for
/// writing a `T`.
unsafe fn hit_field<T>(
    hits: *const quarry_hits,
    index: usize,
    out: *mut T,
    pick: fn(&Hit) -> T,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        check_out(out, "out")?;
        let v = pick(hits.hit(index)?);
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, v) };
        Ok(())
    })
}

/// The body of the getters that lend bytes of `hits`: `get` finds them
/// (after `hits` and both out-pointers are checked), and they are written
/// out as a pointer and a length.
///
/// # Safety
/// `hits` is NULL or a live hits object; `out_ptr`/`out_len` are NULL or
/// valid for writing a pointer / a `size_t`.
unsafe fn hit_bytes<T>(
    hits: *const quarry_hits,
    out_ptr: *mut *const T,
    out_len: *mut usize,
    get: impl FnOnce(&HitsInner) -> CResult<&[u8]>,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live hits object; only shared access is used.
        let hits = unsafe { handle_ref(hits, "hits") }?;
        check_out(out_ptr, "out_ptr")?;
        check_out(out_len, "out_len")?;
        let bytes = get(hits)?;
        // SAFETY: both were checked non-NULL; the caller guarantees they are
        // writable. The bytes live in `hits` until it is freed.
        unsafe { write_bytes_out(out_ptr, out_len, bytes) };
        Ok(())
    })
}

/// Frees a hits object and every string borrowed from it. NULL is a no-op.
///
/// # Safety
/// `hits` is NULL or a live hits object, not used afterwards and not in use
/// by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_hits_free(hits: *mut quarry_hits) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) hits object, used never again.
        unsafe { free_handle(hits) };
        Ok(())
    });
}
