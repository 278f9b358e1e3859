//! `quarry_schema`: the named, typed fields of a new index.

use super::status::quarry_status;
use super::{
    Failure, Handle, check_out, free_handle, guard, guard_value, handle_mut, into_handle, str_arg,
    write_out,
};
use crate::{Analyzer, FieldFlags, FieldType, Schema};
use std::ffi::c_char;

/// A schema under construction: an ordered list of named, typed fields.
///
/// Create with `quarry_schema_new` or `quarry_schema_from_json`, free with
/// `quarry_schema_free`. A schema is only read by `quarry_indexer_open`
/// (which copies it), so it may be freed right after.
///
/// Thread safety: not synchronised; use one schema from one thread at a time.
pub struct quarry_schema {
    _private: [u8; 0],
}

impl Handle for quarry_schema {
    type Inner = Schema;
}

/// The type of a field: one of the `QUARRY_FIELD_*` type constants.
pub type quarry_field_type = u32;

/// Analysed text: split into tokens by the field's analyzer (lowercase
/// alphanumeric tokens unless `quarry_schema_set_analyzer` names another),
/// indexed with term frequencies and BM25 norms. Always indexed; cannot be
/// sortable.
pub const QUARRY_FIELD_TEXT: quarry_field_type = 1;
/// An exact string value: sortable, optionally indexed as one token.
pub const QUARRY_FIELD_STRING: quarry_field_type = 2;
/// A signed 64-bit integer: sortable, optionally indexed as one term.
pub const QUARRY_FIELD_I64: quarry_field_type = 3;
/// A 64-bit float: sortable; cannot be indexed.
pub const QUARRY_FIELD_F64: quarry_field_type = 4;

/// Field options: a bitwise OR of `QUARRY_FIELD_STORED`,
/// `QUARRY_FIELD_INDEXED`, `QUARRY_FIELD_SORTABLE` and
/// `QUARRY_FIELD_NO_POSITIONS` (0 for none).
pub type quarry_field_flags = u32;
/// Field option bit: the original value is kept and returned with hits.
pub const QUARRY_FIELD_STORED: quarry_field_flags = 1;
/// Field option bit: the value is searchable (and deletable) as a term.
/// Implied for text fields.
pub const QUARRY_FIELD_INDEXED: quarry_field_flags = 2;
/// Field option bit: the value can be sorted on.
pub const QUARRY_FIELD_SORTABLE: quarry_field_flags = 4;
/// Do not index the token positions of this text field (they are on by
/// default for text fields; other types have none).
pub const QUARRY_FIELD_NO_POSITIONS: quarry_field_flags = 8;

pub(crate) fn field_type_from_c(ty: quarry_field_type) -> Result<FieldType, Failure> {
    match ty {
        QUARRY_FIELD_TEXT => Ok(FieldType::Text),
        QUARRY_FIELD_STRING => Ok(FieldType::String),
        QUARRY_FIELD_I64 => Ok(FieldType::I64),
        QUARRY_FIELD_F64 => Ok(FieldType::F64),
        other => Err(Failure::invalid(format!("unknown field type {other}"))),
    }
}

/// Creates an empty schema.
///
/// On `QUARRY_OK`, `*out` is a new schema owned by the caller (free it with
/// `quarry_schema_free`).
/// Errors: `QUARRY_NULL_ARGUMENT` when `out` is NULL.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_schema_new(out: *mut *mut quarry_schema) -> quarry_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_schema>(Schema::new())) };
        Ok(())
    })
}

/// Parses a schema from its JSON form, e.g.
/// `{"fields":[{"name":"id","type":"i64","stored":true,"indexed":true}]}`
/// (keys `name`, `type` = text|string|i64|f64, optional booleans
/// `stored`, `indexed`, `sortable`, and for text fields `positions` and
/// `analyzer`, a name as `quarry_schema_set_analyzer` takes). Text fields
/// are always indexed:
/// `"indexed": false` on one is refused (`QUARRY_SCHEMA`); a value to
/// store without making it searchable is a `string` field with
/// `"stored": true`.
///
/// `json` is `json_len` bytes of UTF-8, not necessarily NUL-terminated.
/// On `QUARRY_OK`, `*out` is a new schema owned by the caller.
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`, `QUARRY_SCHEMA`
/// (malformed JSON, an invalid field or an unknown analyzer name).
///
/// # Safety
/// `json` is NULL or valid for reading `json_len` bytes; `out` is NULL or
/// valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_schema_from_json(
    json: *const c_char,
    json_len: usize,
    out: *mut *mut quarry_schema,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `json` is readable for `json_len` bytes.
        let text = unsafe { str_arg(json, json_len, "json") }?;
        check_out(out, "out")?;
        let schema = Schema::from_json(text)?;
        // SAFETY: `out` was checked non-NULL; the caller guarantees it is writable.
        unsafe { write_out(out, into_handle::<quarry_schema>(schema)) };
        Ok(())
    })
}

/// Appends a field.
///
/// `name` is `name_len` bytes of UTF-8 (1 to 255 bytes, unique in the
/// schema). `field_type` is a `QUARRY_FIELD_*` type; `flags` is a
/// bitwise OR of `QUARRY_FIELD_STORED`, `QUARRY_FIELD_INDEXED`,
/// `QUARRY_FIELD_SORTABLE`, `QUARRY_FIELD_NO_POSITIONS` (0 for none).
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`,
/// `QUARRY_INVALID_ARGUMENT` (unknown type or flag bit), `QUARRY_SCHEMA`
/// (empty, too long or duplicate name; a sortable text field; an indexed f64
/// field; `QUARRY_FIELD_NO_POSITIONS` on a field that is not text). On
/// error the schema is unchanged.
///
/// # Safety
/// `schema` is NULL or a live schema not used by another thread during the
/// call; `name` is NULL or valid for reading `name_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_schema_add_field(
    schema: *mut quarry_schema,
    name: *const c_char,
    name_len: usize,
    field_type: quarry_field_type,
    flags: quarry_field_flags,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `schema` is live and not shared during the call.
        let schema = unsafe { handle_mut(schema, "schema") }?;
        // SAFETY: the caller guarantees `name` is readable for `name_len` bytes.
        let name = unsafe { str_arg(name, name_len, "name") }?;
        let ty = field_type_from_c(field_type)?;
        let no_positions = flags & QUARRY_FIELD_NO_POSITIONS != 0;
        let flags = FieldFlags::from_bits(flags & !QUARRY_FIELD_NO_POSITIONS)
            .ok_or_else(|| Failure::invalid(format!("unknown field flag bits in {flags:#x}")))?;
        if no_positions && ty != FieldType::Text {
            return Err(crate::Error::Schema(format!(
                "field {name:?}: only text fields have positions"
            ))
            .into());
        }
        let id = schema.add_field(name, ty, flags)?;
        if no_positions {
            schema.set_positions(id, false)?;
        }
        Ok(())
    })
}

/// Sets the analyzer of a text field: how its text is split into tokens at
/// indexing and for queries. The names are `default` (split on
/// non-alphanumerics, lowercase; what a field has unless set), `english`
/// (default + the Snowball English stemmer), `english_stop` (english with
/// English stop words removed), `whitespace` (split on whitespace only,
/// case kept) and `keyword` (the whole value as one token, case kept);
/// `docs/C-API.md` says exactly what each does. The name is stored in the
/// index, so searches analyse queries the same way.
///
/// `field_name` is `field_name_len` bytes and `analyzer` is `analyzer_len`
/// bytes, both UTF-8, not necessarily NUL-terminated.
///
/// Errors: `QUARRY_NULL_ARGUMENT`, `QUARRY_INVALID_UTF8`, `QUARRY_SCHEMA`
/// (no field of that name, a field that is not text, or an unknown
/// analyzer name; the message lists the known names). On error the schema
/// is unchanged.
///
/// # Safety
/// `schema` is NULL or a live schema not used by another thread during the
/// call; `field_name` and `analyzer` are NULL or valid for reading their
/// lengths' bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_schema_set_analyzer(
    schema: *mut quarry_schema,
    field_name: *const c_char,
    field_name_len: usize,
    analyzer: *const c_char,
    analyzer_len: usize,
) -> quarry_status {
    guard(|| {
        // SAFETY: the caller guarantees `schema` is live and not shared during the call.
        let schema = unsafe { handle_mut(schema, "schema") }?;
        // SAFETY: the caller guarantees `field_name` is readable for `field_name_len` bytes.
        let name = unsafe { str_arg(field_name, field_name_len, "field_name") }?;
        // SAFETY: the caller guarantees `analyzer` is readable for `analyzer_len` bytes.
        let analyzer = unsafe { str_arg(analyzer, analyzer_len, "analyzer") }?;
        let id = schema
            .field(name)
            .ok_or_else(|| crate::Error::Schema(format!("no field named {name:?}")))?;
        schema.set_analyzer(id, Analyzer::by_name(analyzer)?)?;
        Ok(())
    })
}

/// Frees a schema. NULL is a no-op.
///
/// # Safety
/// `schema` is NULL or a live schema, not used afterwards and not in use by
/// another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn quarry_schema_free(schema: *mut quarry_schema) {
    guard_value((), || {
        // SAFETY: the caller hands over a live (or NULL) schema, used never again.
        unsafe { free_handle(schema) };
        Ok(())
    });
}
