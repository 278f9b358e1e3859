//! Schema: the named, typed fields of an index.

use crate::analysis::Analyzer;
use crate::error::{Error, Result};

/// The type of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// Analysed text, indexed with term frequencies and BM25 length norms.
    Text,
    /// An exact string value: sortable, and optionally indexed as one token.
    String,
    /// A signed 64-bit integer: sortable, and optionally indexed as one term.
    I64,
    /// A 64-bit float: sortable.
    F64,
}

impl FieldType {
    /// The lowercase name used in schema JSON (`text`, `string`, `i64`, `f64`).
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Text => "text",
            FieldType::String => "string",
            FieldType::I64 => "i64",
            FieldType::F64 => "f64",
        }
    }

    /// Parses a name as [`FieldType::name`] writes it.
    pub fn from_name(name: &str) -> Option<FieldType> {
        Some(match name {
            "text" => FieldType::Text,
            "string" => FieldType::String,
            "i64" => FieldType::I64,
            "f64" => FieldType::F64,
            _ => return None,
        })
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            FieldType::Text => 1,
            FieldType::String => 2,
            FieldType::I64 => 3,
            FieldType::F64 => 4,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<FieldType> {
        Some(match code {
            1 => FieldType::Text,
            2 => FieldType::String,
            3 => FieldType::I64,
            4 => FieldType::F64,
            _ => return None,
        })
    }
}

/// Options of a field. `text` fields are always indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldFlags {
    /// The original value is kept and returned with hits.
    pub stored: bool,
    /// The value is searchable (and deletable) as a term. Implied for `text`.
    pub indexed: bool,
    /// The value is kept as an ord array for sorting and range filters.
    pub sortable: bool,
}

impl FieldFlags {
    /// Bit for [`FieldFlags::stored`] in the packed form used by the C API and the format.
    pub const STORED: u32 = 1;
    /// Bit for [`FieldFlags::indexed`].
    pub const INDEXED: u32 = 2;
    /// Bit for [`FieldFlags::sortable`].
    pub const SORTABLE: u32 = 4;

    /// Packs the flags into bits.
    pub fn bits(self) -> u32 {
        ((self.stored as u32) * Self::STORED)
            | ((self.indexed as u32) * Self::INDEXED)
            | ((self.sortable as u32) * Self::SORTABLE)
    }

    /// Unpacks bits; `None` when an unknown bit is set.
    pub fn from_bits(bits: u32) -> Option<FieldFlags> {
        if bits & !(Self::STORED | Self::INDEXED | Self::SORTABLE) != 0 {
            return None;
        }
        Some(FieldFlags {
            stored: bits & Self::STORED != 0,
            indexed: bits & Self::INDEXED != 0,
            sortable: bits & Self::SORTABLE != 0,
        })
    }
}

/// A field's position in its schema. Stable for the life of an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldId(pub u16);

/// One field of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// The field's name (1 to 255 bytes of UTF-8).
    pub name: String,
    /// Its type.
    pub ty: FieldType,
    /// Its options.
    pub flags: FieldFlags,
    /// Whether the field's token positions are indexed (text fields only:
    /// on by default, off with [`Schema::set_positions`] or `"positions":
    /// false` in JSON). Positions are stored apart from doc ids and
    /// frequencies, so queries without phrases never read them.
    pub positions: bool,
    /// How the field's text is split into tokens, at indexing and for
    /// queries (text fields only; [`Analyzer::Default`] otherwise). Set
    /// with [`Schema::set_analyzer`] or `"analyzer": "english"` in JSON, and
    /// persisted in the index.
    pub analyzer: Analyzer,
}

impl FieldDef {
    /// Whether the field has a term dictionary.
    pub fn is_indexed(&self) -> bool {
        self.ty == FieldType::Text || self.flags.indexed
    }
}

/// The fields of an index, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schema {
    fields: Vec<FieldDef>,
}

/// The most fields a schema may have.
pub const MAX_FIELDS: usize = 1024;

impl Schema {
    /// An empty schema.
    pub fn new() -> Schema {
        Schema::default()
    }

    /// Adds a field and returns its id.
    ///
    /// Errors with [`Error::Schema`] on an empty, over-long or duplicate name,
    /// or options the type does not allow (`f64` cannot be indexed; `text`
    /// cannot be sortable).
    pub fn add_field(&mut self, name: &str, ty: FieldType, flags: FieldFlags) -> Result<FieldId> {
        if name.is_empty() || name.len() > 255 {
            return Err(Error::Schema(format!(
                "field name must be 1 to 255 bytes, got {} bytes",
                name.len()
            )));
        }
        if self.field(name).is_some() {
            return Err(Error::Schema(format!("duplicate field name {name:?}")));
        }
        if self.fields.len() >= MAX_FIELDS {
            return Err(Error::Schema(format!("more than {MAX_FIELDS} fields")));
        }
        match ty {
            FieldType::Text if flags.sortable => {
                return Err(Error::Schema(format!(
                    "text field {name:?} cannot be sortable (use a string field)"
                )));
            }
            FieldType::F64 if flags.indexed => {
                return Err(Error::Schema(format!(
                    "f64 field {name:?} cannot be indexed"
                )));
            }
            _ => {}
        }
        let id = FieldId(self.fields.len() as u16);
        self.fields.push(FieldDef {
            name: name.to_owned(),
            ty,
            flags,
            positions: ty == FieldType::Text,
            analyzer: Analyzer::Default,
        });
        Ok(id)
    }

    /// Turns a text field's positions on (the default) or off.
    ///
    /// Errors with [`Error::Schema`] for a field of another type (only
    /// text has positions) and [`Error::InvalidArgument`] for an id not
    /// from this schema.
    pub fn set_positions(&mut self, id: FieldId, on: bool) -> Result<()> {
        let f = self.text_field_mut(id, "positions")?;
        f.positions = on;
        Ok(())
    }

    /// Sets a text field's analyzer ([`Analyzer::Default`] unless set).
    ///
    /// Errors with [`Error::Schema`] for a field of another type (string
    /// values are indexed whole, i64 ones as keys: only text is analysed)
    /// and [`Error::InvalidArgument`] for an id not from this schema.
    pub fn set_analyzer(&mut self, id: FieldId, analyzer: Analyzer) -> Result<()> {
        let f = self.text_field_mut(id, "an analyzer")?;
        f.analyzer = analyzer;
        Ok(())
    }

    /// A text field to change, or the error of [`Self::set_positions`] and
    /// [`Self::set_analyzer`] (`what` is the option, for the message).
    fn text_field_mut(&mut self, id: FieldId, what: &str) -> Result<&mut FieldDef> {
        let f = self
            .fields
            .get_mut(id.0 as usize)
            .ok_or_else(|| Error::InvalidArgument(format!("no field {}", id.0)))?;
        if f.ty != FieldType::Text {
            return Err(Error::Schema(format!(
                "field {:?} is {}: only text fields have {what}",
                f.name,
                f.ty.name()
            )));
        }
        Ok(f)
    }

    /// The id of the field called `name`.
    pub fn field(&self, name: &str) -> Option<FieldId> {
        self.fields
            .iter()
            .position(|f| f.name == name)
            .map(|i| FieldId(i as u16))
    }

    /// The definition of a field.
    ///
    /// # Panics
    /// When `id` is not from this schema.
    pub fn def(&self, id: FieldId) -> &FieldDef {
        &self.fields[id.0 as usize]
    }

    /// The definition of a field, or `None` when `id` is out of range.
    pub fn get(&self, id: FieldId) -> Option<&FieldDef> {
        self.fields.get(id.0 as usize)
    }

    /// All fields in id order.
    pub fn fields(&self) -> &[FieldDef] {
        &self.fields
    }

    /// Iterates `(id, def)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (FieldId, &FieldDef)> {
        self.fields
            .iter()
            .enumerate()
            .map(|(i, f)| (FieldId(i as u16), f))
    }

    /// Parses the JSON form
    /// `{"fields":[{"name":"id","type":"i64","stored":true,"indexed":true}, ...]}`
    /// (a text field may add `"positions": false` and `"analyzer": NAME`,
    /// a name of [`Analyzer::name`]; an unknown name is an error).
    ///
    /// A `text` field is always indexed: `"indexed": false` on one is an
    /// error (a value that is stored but not searchable is a `string` field
    /// with `"stored": true`), not a flag that would be silently ignored.
    pub fn from_json(text: &str) -> Result<Schema> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::Schema(format!("schema is not valid JSON: {e}")))?;
        let fields = v
            .get("fields")
            .and_then(|f| f.as_array())
            .ok_or_else(|| Error::Schema("schema needs a \"fields\" array".into()))?;
        let mut schema = Schema::new();
        for (i, f) in fields.iter().enumerate() {
            let obj = f
                .as_object()
                .ok_or_else(|| Error::Schema(format!("field #{i} is not an object")))?;
            for key in obj.keys() {
                if !matches!(
                    key.as_str(),
                    "name" | "type" | "stored" | "indexed" | "sortable" | "positions" | "analyzer"
                ) {
                    return Err(Error::Schema(format!("field #{i}: unknown key {key:?}")));
                }
            }
            let name = obj
                .get("name")
                .and_then(|n| n.as_str())
                .ok_or_else(|| Error::Schema(format!("field #{i} needs a string \"name\"")))?;
            let ty_name = obj
                .get("type")
                .and_then(|n| n.as_str())
                .ok_or_else(|| Error::Schema(format!("field {name:?} needs a string \"type\"")))?;
            let ty = FieldType::from_name(ty_name).ok_or_else(|| {
                Error::Schema(format!(
                    "field {name:?}: unknown type {ty_name:?} (text, string, i64 or f64)"
                ))
            })?;
            let flag = |key: &str| -> Result<bool> {
                match obj.get(key) {
                    None => Ok(false),
                    Some(serde_json::Value::Bool(b)) => Ok(*b),
                    Some(_) => Err(Error::Schema(format!(
                        "field {name:?}: \"{key}\" must be true or false"
                    ))),
                }
            };
            let flags = FieldFlags {
                stored: flag("stored")?,
                indexed: flag("indexed")?,
                sortable: flag("sortable")?,
            };
            if ty == FieldType::Text && obj.get("indexed") == Some(&serde_json::Value::Bool(false))
            {
                return Err(Error::Schema(format!(
                    "field {name:?}: text fields are always indexed, so \"indexed\": false \
                     cannot be honoured; for a value that is stored but not searchable use \
                     a \"string\" field with \"stored\": true"
                )));
            }
            let id = schema.add_field(name, ty, flags)?;
            match obj.get("positions") {
                None => {}
                Some(serde_json::Value::Bool(on)) => schema.set_positions(id, *on)?,
                Some(_) => {
                    return Err(Error::Schema(format!(
                        "field {name:?}: \"positions\" must be true or false"
                    )));
                }
            }
            match obj.get("analyzer") {
                None => {}
                Some(serde_json::Value::String(a)) => {
                    let analyzer = Analyzer::by_name(a)
                        .map_err(|e| Error::Schema(format!("field {name:?}: {e}")))?;
                    schema.set_analyzer(id, analyzer)?;
                }
                Some(_) => {
                    return Err(Error::Schema(format!(
                        "field {name:?}: \"analyzer\" must be a string"
                    )));
                }
            }
        }
        Ok(schema)
    }

    /// The JSON form read by [`Schema::from_json`] (which reads it back
    /// equal). A text field's `"indexed"` is written only when set, since
    /// `false` is refused there; its `"positions"` only when off and its
    /// `"analyzer"` only when not `default`.
    pub fn to_json(&self) -> String {
        let fields: Vec<serde_json::Value> = self
            .fields
            .iter()
            .map(|f| {
                let mut v = serde_json::json!({
                    "name": f.name,
                    "type": f.ty.name(),
                    "stored": f.flags.stored,
                    "indexed": f.flags.indexed,
                    "sortable": f.flags.sortable,
                });
                if f.ty == FieldType::Text && !f.flags.indexed {
                    v.as_object_mut().map(|o| o.remove("indexed"));
                }
                if f.ty == FieldType::Text && !f.positions {
                    v.as_object_mut()
                        .map(|o| o.insert("positions".into(), false.into()));
                }
                if f.analyzer != Analyzer::Default {
                    v.as_object_mut()
                        .map(|o| o.insert("analyzer".into(), f.analyzer.name().into()));
                }
                v
            })
            .collect();
        serde_json::json!({ "fields": fields }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_field_that_is_not_indexed_is_refused_not_ignored() {
        let e = Schema::from_json(r#"{"fields":[{"name":"t","type":"text","indexed":false}]}"#)
            .unwrap_err();
        assert!(
            matches!(&e, Error::Schema(m) if m.contains("always indexed") && m.contains("\"t\"")),
            "{e}"
        );
        // Absent or true is the (only) text field there is.
        for json in [
            r#"{"fields":[{"name":"t","type":"text"}]}"#,
            r#"{"fields":[{"name":"t","type":"text","indexed":true}]}"#,
        ] {
            let s = Schema::from_json(json).unwrap();
            assert!(s.def(FieldId(0)).is_indexed());
        }
        // A string field may be stored only.
        let s = Schema::from_json(r#"{"fields":[{"name":"t","type":"string","stored":true}]}"#)
            .unwrap();
        assert!(!s.def(FieldId(0)).is_indexed());
    }

    #[test]
    fn to_json_reads_back_equal() {
        let mut s = Schema::new();
        for (name, ty, bits) in [
            ("body", FieldType::Text, 0),
            (
                "title",
                FieldType::Text,
                FieldFlags::STORED | FieldFlags::INDEXED,
            ),
            (
                "id",
                FieldType::I64,
                FieldFlags::STORED | FieldFlags::INDEXED,
            ),
            ("cat", FieldType::String, FieldFlags::SORTABLE),
            ("price", FieldType::F64, FieldFlags::STORED),
        ] {
            s.add_field(name, ty, FieldFlags::from_bits(bits).unwrap())
                .unwrap();
        }
        s.set_positions(FieldId(1), false).unwrap();
        assert!(s.set_positions(FieldId(2), false).is_err());
        s.set_analyzer(FieldId(1), Analyzer::EnglishStop).unwrap();
        assert!(s.to_json().contains("\"analyzer\":\"english_stop\""));
        assert!(!s.to_json().contains("\"default\""));
        assert!(s.def(FieldId(0)).positions && !s.def(FieldId(1)).positions);
        assert!(s.to_json().contains("\"positions\":false"));
        assert_eq!(Schema::from_json(&s.to_json()).unwrap(), s);
        assert!(
            Schema::from_json(r#"{"fields":[{"name":"i","type":"i64","positions":false}]}"#)
                .is_err()
        );
    }

    #[test]
    fn analyzers_are_named_in_json_and_only_text_fields_have_one() {
        let s = Schema::from_json(
            r#"{"fields":[{"name":"t","type":"text","analyzer":"keyword"},{"name":"u","type":"text"}]}"#,
        )
        .unwrap();
        assert_eq!(s.def(FieldId(0)).analyzer, Analyzer::Keyword);
        assert_eq!(s.def(FieldId(1)).analyzer, Analyzer::Default);
        for (json, needle) in [
            (
                r#"{"fields":[{"name":"t","type":"text","analyzer":"klingon"}]}"#,
                "unknown analyzer \"klingon\"",
            ),
            (
                r#"{"fields":[{"name":"t","type":"text","analyzer":3}]}"#,
                "must be a string",
            ),
            (
                r#"{"fields":[{"name":"s","type":"string","analyzer":"english"}]}"#,
                "only text fields have an analyzer",
            ),
        ] {
            let e = Schema::from_json(json).unwrap_err();
            assert!(matches!(&e, Error::Schema(m) if m.contains(needle)), "{e}");
        }
        let mut s = Schema::new();
        let id = s
            .add_field("n", FieldType::I64, FieldFlags::default())
            .unwrap();
        assert!(matches!(
            s.set_analyzer(id, Analyzer::English),
            Err(Error::Schema(_))
        ));
        assert!(matches!(
            s.set_analyzer(FieldId(9), Analyzer::English),
            Err(Error::InvalidArgument(_))
        ));
    }
}
