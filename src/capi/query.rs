//! `quarry_query`: term, match and boolean queries, addressed by field name
//! and resolved against the searcher's schema when a search runs.

use super::status::{QUARRY_SCHEMA, quarry_status};
use super::{
    CResult, Failure, Handle, check_out, free_handle, guard, guard_value, handle_mut, handle_ref,
    into_handle, str_arg, write_out,
};
use crate::{FieldType, Occur, Operator, Query, Schema};
use std::ffi::c_char;

/// A query. It names fields rather than holding field ids, so one query can
/// be run against any searcher (and reopened searchers) of indexes whose
/// schema has those fields; names are checked when the search runs.
///
/// Thread safety: a query that is not being modified may be used by any
/// number of concurrent searches; modify it from one thread at a time.
pub struct quarry_query {
    _private: [u8; 0],
}

#[derive(Clone, Debug)]
pub(crate) enum CQuery {
    Term {
        field: String,
        term: String,
    },
    TermI64 {
        field: String,
        value: i64,
    },
    Match {
        field: String,
        text: String,
        op: Operator,
    },
    Boolean(Vec<(Occur, CQuery)>),
}

impl Handle for quarry_query {
    type Inner = CQuery;
}

/// How a match query combines its terms: one of the `QUARRY_OPERATOR_*`
/// constants.
pub type quarry_operator = u32;
/// Every term must occur.
pub const QUARRY_OPERATOR_AND: quarry_operator = 1;
/// At least one term must occur.
pub const QUARRY_OPERATOR_OR: quarry_operator = 2;

/// How a boolean clause takes part: one of the `QUARRY_OCCUR_*` constants.
pub type quarry_occur = u32;
/// The clause must match, and contributes to the score.
pub const QUARRY_OCCUR_MUST: quarry_occur = 1;
/// The clause may match, and contributes to the score when it does. A
/// boolean query without MUST or FILTER clauses needs one SHOULD clause to
/// match.
pub const QUARRY_OCCUR_SHOULD: quarry_occur = 2;
/// The clause must not match.
pub const QUARRY_OCCUR_MUST_NOT: quarry_occur = 3;
/// The clause must match, and does not contribute to the score.
pub const QUARRY_OCCUR_FILTER: quarry_occur = 4;

impl CQuery {
    /// The engine's query, with field names resolved in `schema`.
    pub(crate) fn resolve(&self, schema: &Schema) -> CResult<Query> {
        let field = |name: &str| {
            schema
                .field(name)
                .map(|id| (id, schema.def(id).ty))
                .ok_or_else(|| {
                    Failure::new(QUARRY_SCHEMA, format!("the schema has no field {name:?}"))
                })
        };
        Ok(match self {
            CQuery::Term { field: name, term } => {
                let (id, ty) = field(name)?;
                if ty == FieldType::I64 {
                    return Err(Failure::new(
                        QUARRY_SCHEMA,
                        format!("field {name:?} is an i64 field; use quarry_query_term_i64"),
                    ));
                }
                Query::term(id, term)
            }
            CQuery::TermI64 { field: name, value } => {
                let (id, ty) = field(name)?;
                if ty != FieldType::I64 {
                    return Err(Failure::new(
                        QUARRY_SCHEMA,
                        format!("field {name:?} is a {} field, not i64", ty.name()),
                    ));
                }
                Query::term_i64(id, *value)
            }
            CQuery::Match {
                field: name,
                text,
                op,
            } => Query::matching(field(name)?.0, text, *op),
            CQuery::Boolean(clauses) => Query::Boolean(
                clauses
                    .iter()
                    .map(|(occur, q)| Ok((*occur, q.resolve(schema)?)))
                    .collect::<CResult<_>>()?,
            ),
        })
    }
}

fn emit(out: *mut *mut quarry_query, q: CQuery) {
    // SAFETY: every caller checked `out` with `check_out` and its own caller
    // guarantees it is writable.
    unsafe { write_out(out, into_handle::<quarry_query>(q)) }
}

/// A query for documents whose field `field` contains exactly the term
/// `term`. The term is not analysed: for a text field give one token as the
/// analyser makes it (lowercase alphanumeric); for a string field the exact
/// value. For i64 fields use `quarry_query_term_i64`.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller (free it with
/// `quarry_query_free`). Errors: `QUARRY_NULL_ARGUMENT`,
/// `QUARRY_INVALID_UTF8`. Unknown fields are reported by the search.
///
/// # Safety
/// `field`/`term` are NULL or valid for reading `field_len`/`term_len`
/// bytes; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_term(
    field: *const c_char,
    field_len: usize,
    term: *const c_char,
    term_len: usize,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        // SAFETY: the caller guarantees `term` is readable for `term_len` bytes.
        let term = unsafe { str_arg(term, term_len, "term") }?;
        check_out(out, "out")?;
        emit(
            out,
            CQuery::Term {
                field: field.to_owned(),
                term: term.to_owned(),
            },
        );
        Ok(())
    })
}

/// A query for documents whose indexed i64 field `field` holds `value`.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`.
///
/// # Safety
/// `field` is NULL or valid for reading `field_len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_term_i64(
    field: *const c_char,
    field_len: usize,
    value: i64,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        check_out(out, "out")?;
        emit(
            out,
            CQuery::TermI64 {
                field: field.to_owned(),
                value,
            },
        );
        Ok(())
    })
}

/// A match query: `text` is analysed like the text field `field`, and its
/// distinct terms are combined with `op` (`QUARRY_OPERATOR_AND` or
/// `QUARRY_OPERATOR_OR`). Scores are BM25.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown operator).
///
/// # Safety
/// `field`/`text` are NULL or valid for reading `field_len`/`text_len`
/// bytes; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_match(
    field: *const c_char,
    field_len: usize,
    text: *const c_char,
    text_len: usize,
    op: quarry_operator,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        // SAFETY: the caller guarantees `text` is readable for `text_len` bytes.
        let text = unsafe { str_arg(text, text_len, "text") }?;
        let op = match op {
            QUARRY_OPERATOR_AND => Operator::And,
            QUARRY_OPERATOR_OR => Operator::Or,
            other => return Err(Failure::invalid(format!("unknown operator {other}"))),
        };
        check_out(out, "out")?;
        emit(
            out,
            CQuery::Match {
                field: field.to_owned(),
                text: text.to_owned(),
                op,
            },
        );
        Ok(())
    })
}

/// An empty boolean query; add clauses with `quarry_query_add_clause`. With
/// no MUST, FILTER or SHOULD clause it matches nothing.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_boolean(out: *mut *mut quarry_query) -> quarry_status {
    guard(|| {
        check_out(out, "out")?;
        emit(out, CQuery::Boolean(Vec::new()));
        Ok(())
    })
}

/// Appends a clause to the boolean query `boolean`, with `occur` one of the
/// `QUARRY_OCCUR_*` constants. The score of a document is the sum of its
/// matching scoring clauses' scores, in clause order.
///
/// Ownership: the clause is **copied**; the caller still owns `clause` and
/// must free it (it may be freed right away, modified, or added again; a
/// query may even be added to itself, which adds a copy of its current
/// state). Copying keeps the rule simple: every handle the caller created,
/// the caller frees, whatever the status.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (unknown occur
/// value, or `boolean` is not a boolean query).
///
/// # Safety
/// `boolean` is NULL or a live query used by no other thread during the
/// call; `clause` is NULL or a live query not modified by another thread
/// during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_add_clause(
    boolean: *mut quarry_query,
    occur: quarry_occur,
    clause: *const quarry_query,
) -> quarry_status {
    guard(|| {
        if boolean.is_null() {
            return Err(Failure::null("boolean"));
        }
        // Copy the clause before borrowing `boolean` mutably: the two may be
        // the same handle, and the shared borrow ends here.
        // SAFETY: the caller guarantees a non-NULL `clause` is a live query
        // not modified concurrently.
        let copy = unsafe { handle_ref(clause, "clause") }?.clone();
        let occur = match occur {
            QUARRY_OCCUR_MUST => Occur::Must,
            QUARRY_OCCUR_SHOULD => Occur::Should,
            QUARRY_OCCUR_MUST_NOT => Occur::MustNot,
            QUARRY_OCCUR_FILTER => Occur::Filter,
            other => return Err(Failure::invalid(format!("unknown occur value {other}"))),
        };
        // SAFETY: the caller guarantees exclusive use of a live query; no
        // other reference to it is alive (the clause borrow ended above).
        match unsafe { handle_mut(boolean, "boolean") }? {
            CQuery::Boolean(clauses) => {
                clauses.push((occur, copy));
                Ok(())
            }
            _ => Err(Failure::invalid(
                "clauses can only be added to a query made by quarry_query_boolean",
            )),
        }
    })
}

/// Frees a query. NULL is a no-op. Boolean queries that hold copies of it
/// are not affected.
///
/// # Safety
/// `query` is NULL or a live query, not used afterwards and not in use by
/// another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_free(query: *mut quarry_query) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) query, used never again.
        unsafe { free_handle(query) };
        Ok(())
    });
}
