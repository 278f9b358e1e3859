//! `quarry_query`: term, match, boolean, prefix, range, match-all/none,
//! boosted and parsed queries, addressed by field name and resolved
//! against the searcher's schema when a search runs.

use super::searcher::quarry_searcher;
use super::status::{QUARRY_SCHEMA, quarry_status};
use super::{
    CResult, Failure, Handle, check_out, free_handle, guard, guard_value, handle_mut, handle_ref,
    into_handle, str_arg, write_out,
};
use crate::{FieldType, Occur, Operator, ParserConfig, Query, Schema, Value};
use std::ffi::c_char;
use std::ops::Bound;

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
    Phrase {
        field: String,
        text: String,
        slop: u32,
    },
    Boolean(Vec<(Occur, CQuery)>),
    Prefix {
        field: String,
        prefix: String,
    },
    Range {
        field: String,
        lower: Bound<Value>,
        upper: Bound<Value>,
    },
    All,
    None,
    Boost(Box<CQuery>, f32),
    /// Parsed again against the schema of each search (it parsed against
    /// the searcher's when it was made, to a query `depth` levels deep).
    Parsed {
        text: String,
        default_field: Option<String>,
        op: Operator,
        depth: usize,
    },
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

/// The deepest a query may nest, as `quarry_query_add_clause` and
/// `quarry_query_boost` count it: a query without clauses (a term, match,
/// phrase, prefix, range, match-all or match-none query, an empty
/// boolean) is 1 level deep, a boolean 1 more than its deepest clause, a
/// boost 1 more than its query, a parsed query as deep as the query its
/// text parsed to. So at most 63 booleans and boosts nest around a term.
/// The query parser nests at most as many groups and `NOT`s.
pub const QUARRY_MAX_QUERY_DEPTH: u32 = 64;

const _: () = assert!(QUARRY_MAX_QUERY_DEPTH as usize == Query::MAX_DEPTH);

/// The error of a query `depth` levels deep, beyond the limit.
fn too_deep(what: &str, depth: usize) -> Failure {
    Failure::invalid(format!(
        "{what} would nest {depth} levels deep; queries nest at most \
         QUARRY_MAX_QUERY_DEPTH ({QUARRY_MAX_QUERY_DEPTH}) levels"
    ))
}

impl CQuery {
    /// How many levels it nests (see `QUARRY_MAX_QUERY_DEPTH`). Recurses:
    /// every query made through the C API is within the limit.
    fn depth(&self) -> usize {
        match self {
            CQuery::Boolean(clauses) => {
                1 + clauses.iter().map(|(_, q)| q.depth()).max().unwrap_or(0)
            }
            CQuery::Boost(q, _) => 1 + q.depth(),
            CQuery::Parsed { depth, .. } => *depth,
            _ => 1,
        }
    }

    /// The largest product of the boosts on a path from it to a query
    /// without clauses (1.0 without boosts; a parsed text's own boosts
    /// are left to the search), in f64 as a search multiplies them.
    fn boost_product(&self) -> f64 {
        match self {
            CQuery::Boolean(clauses) => clauses
                .iter()
                .map(|(_, q)| q.boost_product())
                .fold(1.0, f64::max),
            CQuery::Boost(q, b) => q.boost_product() * f64::from(*b),
            _ => 1.0,
        }
    }

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
            CQuery::Phrase {
                field: name,
                text,
                slop,
            } => Query::Phrase {
                field: field(name)?.0,
                text: text.clone(),
                slop: *slop,
            },
            CQuery::Boolean(clauses) => Query::Boolean(
                clauses
                    .iter()
                    .map(|(occur, q)| Ok((*occur, q.resolve(schema)?)))
                    .collect::<CResult<_>>()?,
            ),
            CQuery::Prefix {
                field: name,
                prefix,
            } => Query::prefix(field(name)?.0, prefix),
            CQuery::Range {
                field: name,
                lower,
                upper,
            } => Query::range(field(name)?.0, lower.clone(), upper.clone()),
            CQuery::All => Query::All,
            CQuery::None => Query::None,
            CQuery::Boost(q, b) => q.resolve(schema)?.boost(*b),
            CQuery::Parsed {
                text,
                default_field,
                op,
                ..
            } => {
                let default_fields = match default_field {
                    Some(name) => vec![field(name)?.0],
                    None => Vec::new(),
                };
                let config = ParserConfig {
                    default_fields,
                    default_op: *op,
                };
                Query::parse(text, schema, &config)?
            }
        })
    }
}

/// One end of a range query: one of the `QUARRY_BOUND_*` constants.
pub type quarry_bound = u32;
/// No limit on this side (the end's value is ignored).
pub const QUARRY_BOUND_UNBOUNDED: quarry_bound = 0;
/// The end's value is in the range.
pub const QUARRY_BOUND_INCLUSIVE: quarry_bound = 1;
/// The end's value is not in the range.
pub const QUARRY_BOUND_EXCLUSIVE: quarry_bound = 2;

/// A `quarry_bound` and its value as a Rust bound.
fn bound_arg(kind: quarry_bound, value: impl FnOnce() -> CResult<Value>) -> CResult<Bound<Value>> {
    Ok(match kind {
        QUARRY_BOUND_UNBOUNDED => Bound::Unbounded,
        QUARRY_BOUND_INCLUSIVE => Bound::Included(value()?),
        QUARRY_BOUND_EXCLUSIVE => Bound::Excluded(value()?),
        other => return Err(Failure::invalid(format!("unknown bound kind {other}"))),
    })
}

/// `op` as an operator.
fn operator_arg(op: quarry_operator) -> CResult<Operator> {
    match op {
        QUARRY_OPERATOR_AND => Ok(Operator::And),
        QUARRY_OPERATOR_OR => Ok(Operator::Or),
        other => Err(Failure::invalid(format!("unknown operator {other}"))),
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
        let op = operator_arg(op)?;
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

/// A phrase query: `text` is analysed like the text field `field`, and
/// its tokens must occur in that order at consecutive positions, or with
/// `slop` > 0 at most `slop` moves out of place in total (two swapped
/// tokens are 2 moves). Scored by BM25 as one term whose frequency is the
/// number of matches (each token position serving one match per token of
/// the phrase) and whose idf is the sum of the tokens' idfs. A text of one
/// token is that term's query; a text with no token matches nothing.
/// `docs/QUERY-SYNTAX.md` ("Phrases") gives the exact definition.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`. Searching it
/// fails with `QUARRY_SCHEMA` when `field` is not a text field of the
/// index, and with `QUARRY_UNSUPPORTED` when the field does not store
/// token positions.
///
/// # Safety
/// `field`/`text` are NULL or valid for reading `field_len`/`text_len`
/// bytes; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_phrase(
    field: *const c_char,
    field_len: usize,
    text: *const c_char,
    text_len: usize,
    slop: u32,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        // SAFETY: the caller guarantees `text` is readable for `text_len` bytes.
        let text = unsafe { str_arg(text, text_len, "text") }?;
        check_out(out, "out")?;
        emit(
            out,
            CQuery::Phrase {
                field: field.to_owned(),
                text: text.to_owned(),
                slop,
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
/// value, `boolean` is not a boolean query, or `clause` is already
/// `QUARRY_MAX_QUERY_DEPTH` levels deep, so the boolean would nest deeper;
/// the message names the limit). On an error `boolean` is unchanged.
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
        let clause = unsafe { handle_ref(clause, "clause") }?;
        let depth = 1 + clause.depth();
        if depth > Query::MAX_DEPTH {
            return Err(too_deep("the boolean with this clause", depth));
        }
        let copy = clause.clone();
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

/// A prefix query: documents whose text or indexed string field `field`
/// holds a term starting with the bytes `prefix` (not analysed: for a text
/// field give it lowercase, as the analyser makes tokens). Every match
/// scores 1.0 (times the boosts above it). A prefix expanding to more than
/// the searcher's limit of distinct terms (1024 by default, see
/// `quarry_searcher_set_max_expansions`) fails the search with
/// `QUARRY_TOO_MANY_TERMS`.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`. The field is
/// checked by the search (`QUARRY_SCHEMA`).
///
/// # Safety
/// `field`/`prefix` are NULL or valid for reading `field_len`/`prefix_len`
/// bytes; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_prefix(
    field: *const c_char,
    field_len: usize,
    prefix: *const c_char,
    prefix_len: usize,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `field` is readable for `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        // SAFETY: the caller guarantees `prefix` is readable for `prefix_len` bytes.
        let prefix = unsafe { str_arg(prefix, prefix_len, "prefix") }?;
        check_out(out, "out")?;
        emit(
            out,
            CQuery::Prefix {
                field: field.to_owned(),
                prefix: prefix.to_owned(),
            },
        );
        Ok(())
    })
}

/// Makes a range query on `field` from the two ends `ends` reads.
///
/// # Safety
/// `field` is NULL or valid for reading `field_len` bytes; `out` is NULL or
/// valid for writing one pointer.
unsafe fn range(
    field: *const c_char,
    field_len: usize,
    ends: impl FnOnce() -> CResult<(Bound<Value>, Bound<Value>)>,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: per this function's contract `field` is readable for
        // `field_len` bytes.
        let field = unsafe { str_arg(field, field_len, "field") }?;
        let (lower, upper) = ends()?;
        check_out(out, "out")?;
        emit(
            out,
            CQuery::Range {
                field: field.to_owned(),
                lower,
                upper,
            },
        );
        Ok(())
    })
}

/// A range query on the i64 field `field`: documents whose value lies
/// between `lower` and `upper`, each end `QUARRY_BOUND_INCLUSIVE`,
/// `QUARRY_BOUND_EXCLUSIVE` or `QUARRY_BOUND_UNBOUNDED` (its value then
/// ignored). Every match scores 1.0 (times the boosts above it). The field
/// must be sortable or indexed; an indexed field is searched through its
/// terms (past the searcher's expansion limit, through its sort column
/// when sortable, else `QUARRY_TOO_MANY_TERMS`).
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown bound kind). The field is checked by
/// the search (`QUARRY_SCHEMA`).
///
/// # Safety
/// `field` is NULL or valid for reading `field_len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_range_i64(
    field: *const c_char,
    field_len: usize,
    lower: i64,
    lower_kind: quarry_bound,
    upper: i64,
    upper_kind: quarry_bound,
    out: *mut *mut quarry_query,
) -> quarry_status {
    let ends = || {
        Ok((
            bound_arg(lower_kind, || Ok(Value::I64(lower)))?,
            bound_arg(upper_kind, || Ok(Value::I64(upper)))?,
        ))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { range(field, field_len, ends, out) }
}

/// A range query on the f64 field `field` (which must be sortable), as
/// `quarry_query_range_i64`. Values compare by IEEE total order (-0.0 sorts
/// before 0.0); infinite ends are allowed, NaN is not.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown bound kind, or a NaN end that is not
/// unbounded). The field is checked by the search (`QUARRY_SCHEMA`).
///
/// # Safety
/// `field` is NULL or valid for reading `field_len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_range_f64(
    field: *const c_char,
    field_len: usize,
    lower: f64,
    lower_kind: quarry_bound,
    upper: f64,
    upper_kind: quarry_bound,
    out: *mut *mut quarry_query,
) -> quarry_status {
    let value = |v: f64| {
        if v.is_nan() {
            Err(Failure::invalid("a range end is NaN"))
        } else {
            Ok(Value::F64(v))
        }
    };
    let ends = || {
        Ok((
            bound_arg(lower_kind, || value(lower))?,
            bound_arg(upper_kind, || value(upper))?,
        ))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { range(field, field_len, ends, out) }
}

/// A range query on the string field `field`, as `quarry_query_range_i64`;
/// values compare by their UTF-8 bytes. An unbounded end's pointer is not
/// read (it may be NULL).
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown bound kind). The field is checked by
/// the search (`QUARRY_SCHEMA`).
///
/// # Safety
/// `field` is NULL or valid for reading `field_len` bytes; `lower`/`upper`
/// are NULL or valid for reading `lower_len`/`upper_len` bytes; `out` is
/// NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn quarry_query_range_str(
    field: *const c_char,
    field_len: usize,
    lower: *const c_char,
    lower_len: usize,
    lower_kind: quarry_bound,
    upper: *const c_char,
    upper_len: usize,
    upper_kind: quarry_bound,
    out: *mut *mut quarry_query,
) -> quarry_status {
    let ends = || {
        Ok((
            bound_arg(lower_kind, || {
                // SAFETY: the caller guarantees `lower` is readable for `lower_len` bytes.
                Ok(Value::Str(
                    unsafe { str_arg(lower, lower_len, "lower") }?.to_owned(),
                ))
            })?,
            bound_arg(upper_kind, || {
                // SAFETY: the caller guarantees `upper` is readable for `upper_len` bytes.
                Ok(Value::Str(
                    unsafe { str_arg(upper, upper_len, "upper") }?.to_owned(),
                ))
            })?,
        ))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { range(field, field_len, ends, out) }
}

/// A query matching every document, each scoring 1.0 (times the boosts
/// above it). With a MUST_NOT clause it matches every other document.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_all(out: *mut *mut quarry_query) -> quarry_status {
    guard(|| {
        check_out(out, "out")?;
        emit(out, CQuery::All);
        Ok(())
    })
}

/// A query matching no document.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_none(out: *mut *mut quarry_query) -> quarry_status {
    guard(|| {
        check_out(out, "out")?;
        emit(out, CQuery::None);
        Ok(())
    })
}

/// A new query: a **copy** of `query` with its scores multiplied by
/// `boost` (finite, at least 0). The boost multiplies each BM25 term
/// weight and each constant score below it, never a sum, so a boost of 1.0
/// changes no score bit. The caller still owns `query`. Boosts on a path
/// multiply: a search whose boosts would take a weight, a constant score
/// or a boolean's sum of scores beyond the largest float (`FLT_MAX`) fails
/// with `QUARRY_INVALID_ARGUMENT` rather than give infinite or NaN scores.
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_ARGUMENT` (a boost that
/// is NaN, infinite or negative; `query` already
/// `QUARRY_MAX_QUERY_DEPTH` levels deep, the message naming the limit; or
/// a product of `boost` and the boosts inside `query` beyond `FLT_MAX`,
/// which no search could score).
///
/// # Safety
/// `query` is NULL or a live query not modified by another thread during
/// the call; `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_boost(
    query: *const quarry_query,
    boost: f32,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a non-NULL `query` is a live query
        // not modified concurrently.
        let query = unsafe { handle_ref(query, "query") }?;
        if !boost.is_finite() || boost < 0.0 {
            return Err(Failure::invalid(format!(
                "a boost must be finite and at least 0, not {boost}"
            )));
        }
        let depth = 1 + query.depth();
        if depth > Query::MAX_DEPTH {
            return Err(too_deep("the boosted query", depth));
        }
        let product = query.boost_product() * f64::from(boost);
        if !(product as f32).is_finite() {
            return Err(Failure::invalid(format!(
                "the boosts on a path of the boosted query multiply to {product:e}, beyond the \
                 largest float ({:e}), so no score could be finite",
                f32::MAX
            )));
        }
        check_out(out, "out")?;
        emit(out, CQuery::Boost(Box::new(query.clone()), boost));
        Ok(())
    })
}

/// Parses `text` in the query syntax (`docs/QUERY-SYNTAX.md`) against the
/// schema of `searcher`: clauses without `field:` search `default_field`
/// (`default_field_len` bytes; NULL for none, when every clause must name
/// its field), clauses side by side combine with `default_op`
/// (`QUARRY_OPERATOR_AND` or `QUARRY_OPERATOR_OR`). The query keeps the
/// text and is parsed again against the schema of each search (an index
/// without a field it names fails that search).
///
/// On `QUARRY_OK`, `*out` is a new query owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown operator), `QUARRY_SCHEMA` (no field
/// `default_field`), `QUARRY_QUERY_SYNTAX` (the last-error message reads
/// "query syntax error at byte N: ..." with the byte offset in `text` and
/// what was expected there; also for unknown fields, values that do not
/// fit their field, and nesting deeper than `QUARRY_MAX_QUERY_DEPTH`
/// groups, `NOT`s or levels of the parsed query).
///
/// # Safety
/// `searcher` is NULL or a live searcher; `text` is NULL or valid for
/// reading `text_len` bytes; `default_field` is NULL or valid for reading
/// `default_field_len` bytes; `out` is NULL or valid for writing one
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_query_parse(
    searcher: *const quarry_searcher,
    text: *const c_char,
    text_len: usize,
    default_field: *const c_char,
    default_field_len: usize,
    default_op: quarry_operator,
    out: *mut *mut quarry_query,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees a live searcher; only shared access is used.
        let searcher = unsafe { handle_ref(searcher, "searcher") }?;
        // SAFETY: the caller guarantees `text` is readable for `text_len` bytes.
        let text = unsafe { str_arg(text, text_len, "text") }?;
        let default_field = if default_field.is_null() {
            None
        } else {
            // SAFETY: non-NULL, and the caller guarantees it is readable
            // for `default_field_len` bytes.
            Some(unsafe { str_arg(default_field, default_field_len, "default_field") }?.to_owned())
        };
        let op = operator_arg(default_op)?;
        check_out(out, "out")?;
        let mut q = CQuery::Parsed {
            text: text.to_owned(),
            default_field,
            op,
            depth: 0,
        };
        let parsed = q.resolve(searcher.schema())?.depth();
        if let CQuery::Parsed { depth, .. } = &mut q {
            *depth = parsed;
        }
        emit(out, q);
        Ok(())
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
