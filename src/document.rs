//! Documents: the values handed to the writer and returned for stored fields.

use crate::schema::FieldId;

/// One value of one field.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text for a `text` field (analysed) or a `string` field (exact).
    Str(String),
    /// A value for an `i64` field.
    I64(i64),
    /// A value for an `f64` field.
    F64(f64),
}

impl Value {
    /// The string, if this is a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is an `i64` value.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::I64(v) => Some(*v),
            _ => None,
        }
    }

    /// The float, if this is an `f64` value.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::F64(v) => Some(*v),
            _ => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Str(s) => f.write_str(s),
            Value::I64(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
        }
    }
}

/// A document to index: a list of field values.
///
/// A `text` field may be given several times (the values are analysed as if
/// concatenated with a separator); every other field at most once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    pub(crate) values: Vec<(FieldId, Value)>,
}

impl Document {
    /// An empty document.
    pub fn new() -> Document {
        Document::default()
    }

    /// Adds a value for `field` (checked against the schema when the document is added).
    pub fn add(&mut self, field: FieldId, value: Value) -> &mut Self {
        self.values.push((field, value));
        self
    }

    /// Adds a text or string value.
    pub fn add_str(&mut self, field: FieldId, value: &str) -> &mut Self {
        self.add(field, Value::Str(value.to_owned()))
    }

    /// Adds an `i64` value.
    pub fn add_i64(&mut self, field: FieldId, value: i64) -> &mut Self {
        self.add(field, Value::I64(value))
    }

    /// Adds an `f64` value.
    pub fn add_f64(&mut self, field: FieldId, value: f64) -> &mut Self {
        self.add(field, Value::F64(value))
    }

    /// The values in the order they were added.
    pub fn values(&self) -> &[(FieldId, Value)] {
        &self.values
    }

    /// The first value of `field`.
    pub fn get(&self, field: FieldId) -> Option<&Value> {
        self.values
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v)
    }

    /// Removes every value.
    pub fn clear(&mut self) {
        self.values.clear();
    }
}
