//! `quarry_sort`: a sort specification, a list of rules (score, document
//! number, or a sortable field), each ascending or descending.

use super::status::{QUARRY_SCHEMA, quarry_status};
use super::{
    CResult, Failure, Handle, check_out, free_handle, guard, guard_value, handle_mut, into_handle,
    str_arg, write_out,
};
use crate::{Schema, SortKey, SortSpec};
use std::ffi::c_char;

/// A sort specification: rules, most significant first; documents equal
/// under every rule are ordered by ascending document number. Fields are
/// named and checked against the searcher's schema when a search runs.
///
/// Thread safety: a spec that is not being modified may be used by any
/// number of concurrent searches; modify it from one thread at a time.
pub struct quarry_sort {
    _private: [u8; 0],
}

#[derive(Clone, Debug)]
pub(crate) enum CSortKey {
    Score,
    Doc,
    Field(String),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct CSort {
    pub(crate) rules: Vec<(CSortKey, bool)>,
    /// `quarry_sort_track_scores`.
    pub(crate) track_scores: bool,
}

impl Handle for quarry_sort {
    type Inner = CSort;
}

/// The direction of a sort rule: `QUARRY_SORT_ASC` or `QUARRY_SORT_DESC`.
pub type quarry_sort_order = u32;
/// Smaller values first.
pub const QUARRY_SORT_ASC: quarry_sort_order = 1;
/// Larger values first.
pub const QUARRY_SORT_DESC: quarry_sort_order = 2;

impl CSort {
    /// The engine's spec, with field names resolved in `schema`.
    pub(crate) fn resolve(&self, schema: &Schema) -> CResult<SortSpec> {
        let mut spec = SortSpec::new();
        for (key, descending) in &self.rules {
            let key = match key {
                CSortKey::Score => SortKey::Score,
                CSortKey::Doc => SortKey::Doc,
                CSortKey::Field(name) => SortKey::Field(schema.field(name).ok_or_else(|| {
                    Failure::new(QUARRY_SCHEMA, format!("the schema has no field {name:?}"))
                })?),
            };
            spec.push(key, *descending);
        }
        Ok(spec.with_scores(self.track_scores))
    }
}

fn descending(order: quarry_sort_order) -> CResult<bool> {
    match order {
        QUARRY_SORT_ASC => Ok(false),
        QUARRY_SORT_DESC => Ok(true),
        other => Err(Failure::invalid(format!("unknown sort order {other}"))),
    }
}

/// Creates an empty sort spec (which sorts like NULL: by score descending,
/// then document number ascending).
///
/// On `QUARRY_OK`, `*out` is a new spec owned by the caller (free it with
/// `quarry_sort_free`). Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_sort_new(out: *mut *mut quarry_sort) -> quarry_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_sort>(CSort::default())) };
        Ok(())
    })
}

/// # Safety
/// `sort` is NULL or a live spec used by no other thread during the call.
unsafe fn push(
    sort: *mut quarry_sort,
    key: impl FnOnce() -> CResult<CSortKey>,
    order: quarry_sort_order,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live spec.
        let sort = unsafe { handle_mut(sort, "sort") }?;
        let key = key()?;
        let desc = descending(order)?;
        sort.rules.push((key, desc));
        Ok(())
    })
}

/// Appends a rule on the BM25 score. `order` is `QUARRY_SORT_ASC` or
/// `QUARRY_SORT_DESC`. The hit's sort value for this rule is an f64.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (unknown order).
///
/// # Safety
/// `sort` is NULL or a live spec used by no other thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_sort_add_score(
    sort: *mut quarry_sort,
    order: quarry_sort_order,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { push(sort, || Ok(CSortKey::Score), order) }
}

/// Appends a rule on the document number. `order` is `QUARRY_SORT_ASC` or
/// `QUARRY_SORT_DESC`. The hit's sort value for this rule is an i64.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (unknown order).
///
/// # Safety
/// `sort` is NULL or a live spec used by no other thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_sort_add_doc(
    sort: *mut quarry_sort,
    order: quarry_sort_order,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract.
    unsafe { push(sort, || Ok(CSortKey::Doc), order) }
}

/// Appends a rule on the sortable field `field` (a string, i64 or f64 field
/// created with `QUARRY_FIELD_SORTABLE`). Documents without a value sort
/// after all documents with one, in both directions. Strings compare by
/// their UTF-8 bytes. The hit's sort value has the field's type (or none).
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown order). An unknown or unsortable
/// field is reported by the search (`QUARRY_SCHEMA`).
///
/// # Safety
/// `sort` is NULL or a live spec used by no other thread during the call;
/// `field` is NULL or valid for reading `field_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_sort_add_field(
    sort: *mut quarry_sort,
    field: *const c_char,
    field_len: usize,
    order: quarry_sort_order,
) -> quarry_status {
    // SAFETY: forwarded from this function's contract; the closure reads
    // `field` under the same contract.
    unsafe {
        push(
            sort,
            || {
                Ok(CSortKey::Field(
                    str_arg(field, field_len, "field")?.to_owned(),
                ))
            },
            order,
        )
    }
}

/// Whether searches with this spec compute each hit's BM25 score when no
/// rule is a score rule. By default they do not: a sort by fields (or
/// document number) alone does no BM25 work, and `quarry_hits_score` gives
/// 0 for every hit. With `track` true every hit gets its score, the same
/// bits a score-order search gives for that document (the order of the hits
/// is unchanged; only computing the scores costs time). A spec with a score
/// rule, and the default order, always have scores.
///
/// Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `sort` is NULL or a live spec used by no other thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_sort_track_scores(
    sort: *mut quarry_sort,
    track: bool,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees exclusive use of a live spec.
        unsafe { handle_mut(sort, "sort") }?.track_scores = track;
        Ok(())
    })
}

/// Frees a sort spec. NULL is a no-op.
///
/// # Safety
/// `sort` is NULL or a live spec, not used afterwards and not in use by
/// another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_sort_free(sort: *mut quarry_sort) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) spec, used never again.
        unsafe { free_handle(sort) };
        Ok(())
    });
}
