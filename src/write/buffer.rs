//! The in-memory segment: documents added since the last flush, inverted.

use std::path::Path;

use rustc_hash::FxHashMap;

use crate::analysis::Scratch;
use crate::document::{Document, Value};
use crate::error::{Error, Result};
use crate::format::norms::length_to_norm;
use crate::format::segment::{MAX_SEGMENT_DOCS, i64_key, put_stored_value};
use crate::schema::{FieldId, FieldType, Schema};
use crate::write::io::IoHooks;
use crate::write::segment_writer::{SegmentParts, SegmentWriter, SortValues};

#[derive(Default)]
struct TermPostings {
    docs: Vec<u32>,
    tfs: Vec<u32>,
    /// Each posting's positions, posting after posting (fields with positions).
    positions: Vec<u32>,
}

#[derive(Default)]
struct TermTable {
    ids: FxHashMap<Box<[u8]>, u32>,
    postings: Vec<TermPostings>,
}

impl TermTable {
    /// Records one occurrence of `key` in `doc` (at token `position` of
    /// the field, for a field with positions); returns bytes newly used.
    #[inline]
    fn add(&mut self, key: &[u8], doc: u32, position: Option<u32>) -> usize {
        let (p, used) = if let Some(&id) = self.ids.get(key) {
            let p = &mut self.postings[id as usize];
            if p.docs.last() == Some(&doc) {
                *p.tfs.last_mut().expect("tfs parallel to docs") += 1;
                (p, 0)
            } else {
                p.docs.push(doc);
                p.tfs.push(1);
                (p, 8)
            }
        } else {
            let id = self.postings.len() as u32;
            self.ids.insert(key.into(), id);
            self.postings.push(TermPostings {
                docs: vec![doc],
                tfs: vec![1],
                positions: Vec::new(),
            });
            (
                self.postings.last_mut().expect("just pushed"),
                key.len() + 120,
            )
        };
        match position {
            Some(x) => {
                p.positions.push(x);
                used + 4
            }
            None => used,
        }
    }
}

struct FieldBuf {
    terms: Option<TermTable>,
    norms: Option<Vec<u8>>,
    total_tokens: u64,
    sort: Option<SortValues>,
}

/// Documents buffered for the next segment.
pub(crate) struct SegmentBuffer {
    doc_count: u32,
    fields: Vec<FieldBuf>,
    stored_offsets: Vec<u64>,
    stored_blob: Vec<u8>,
    approx_bytes: usize,
    scratch: Scratch,
    seen: Vec<bool>,
}

impl SegmentBuffer {
    pub(crate) fn new(schema: &Schema) -> SegmentBuffer {
        let fields = schema
            .fields()
            .iter()
            .map(|f| FieldBuf {
                terms: f.is_indexed().then(TermTable::default),
                norms: (f.ty == FieldType::Text).then(Vec::new),
                total_tokens: 0,
                sort: f.flags.sortable.then(|| SortValues::new(f.ty)),
            })
            .collect();
        SegmentBuffer {
            doc_count: 0,
            fields,
            stored_offsets: vec![0],
            stored_blob: Vec::new(),
            approx_bytes: 0,
            scratch: Scratch::default(),
            seen: vec![false; schema.fields().len()],
        }
    }

    pub(crate) fn doc_count(&self) -> u32 {
        self.doc_count
    }

    /// Approximate heap bytes held.
    pub(crate) fn approx_bytes(&self) -> usize {
        self.approx_bytes
    }

    /// Checks `doc` against the schema without changing anything.
    pub(crate) fn validate(&mut self, schema: &Schema, doc: &Document) -> Result<()> {
        if self.doc_count >= MAX_SEGMENT_DOCS {
            return Err(Error::InvalidArgument("segment is full".into()));
        }
        self.seen.iter_mut().for_each(|s| *s = false);
        for (field, value) in doc.values() {
            let def = schema.get(*field).ok_or_else(|| {
                Error::Schema(format!("field id {} is not in the schema", field.0))
            })?;
            let ok = matches!(
                (def.ty, value),
                (FieldType::Text | FieldType::String, Value::Str(_))
                    | (FieldType::I64, Value::I64(_))
                    | (FieldType::F64, Value::F64(_))
            );
            if !ok {
                return Err(Error::Schema(format!(
                    "field {:?} is {}, got a {} value",
                    def.name,
                    def.ty.name(),
                    match value {
                        Value::Str(_) => "string",
                        Value::I64(_) => "i64",
                        Value::F64(_) => "f64",
                    }
                )));
            }
            let seen = &mut self.seen[field.0 as usize];
            if *seen && def.ty != FieldType::Text {
                return Err(Error::Schema(format!(
                    "field {:?} given more than once (only text fields may repeat)",
                    def.name
                )));
            }
            *seen = true;
        }
        Ok(())
    }

    /// Adds a document that [`Self::validate`] accepted.
    pub(crate) fn add(&mut self, schema: &Schema, doc: &Document) {
        let d = self.doc_count;
        let stored_before = self.stored_blob.len();
        let mut used = 0usize;
        // Per text field token count for this document.
        for (fid, f) in self.fields.iter_mut().enumerate() {
            let def = &schema.fields()[fid];
            let mut len: u64 = 0;
            let mut next_position: u32 = 0;
            for (field, value) in doc.values() {
                if field.0 as usize != fid {
                    continue;
                }
                match (def.ty, value) {
                    (FieldType::Text, Value::Str(text)) => {
                        // Positions run on across the field's values: a
                        // value starts where the one before it ended.
                        let table = f.terms.as_mut().expect("text fields are indexed");
                        let positions = def.positions;
                        let base = next_position;
                        let used_positions =
                            def.analyzer.tokenize(text, &mut self.scratch, |tok| {
                                let at = positions.then(|| base.saturating_add(tok.position));
                                used += table.add(tok.text.as_bytes(), d, at);
                                len += 1;
                            });
                        next_position = base.saturating_add(used_positions);
                    }
                    (FieldType::String, Value::Str(s)) => {
                        if let Some(t) = f.terms.as_mut() {
                            used += t.add(s.as_bytes(), d, None);
                        }
                    }
                    (FieldType::I64, Value::I64(v)) => {
                        if let Some(t) = f.terms.as_mut() {
                            used += t.add(&i64_key(*v), d, None);
                        }
                    }
                    _ => {}
                }
                if def.flags.stored {
                    put_stored_value(&mut self.stored_blob, fid as u16, value);
                }
            }
            if let Some(norms) = f.norms.as_mut() {
                norms.push(length_to_norm(len.min(u64::from(u32::MAX)) as u32));
                f.total_tokens += len;
                used += 1;
            }
            if let Some(sort) = f.sort.as_mut() {
                let v = doc
                    .values()
                    .iter()
                    .find(|(field, _)| field.0 as usize == fid)
                    .map(|(_, v)| v);
                match (sort, v) {
                    (SortValues::I64(col), v) => col.push(v.and_then(Value::as_i64)),
                    (SortValues::F64(col), v) => col.push(v.and_then(Value::as_f64)),
                    (SortValues::Str(col), v) => {
                        col.push(v.and_then(Value::as_str).map(str::to_owned))
                    }
                }
                used += 24;
            }
        }
        self.stored_offsets.push(self.stored_blob.len() as u64);
        self.approx_bytes += used + 8 + (self.stored_blob.len() - stored_before);
        self.doc_count += 1;
    }

    /// Writes the buffered documents as a segment file at `path`; returns its length.
    pub(crate) fn write_segment(&self, schema: &Schema, path: &Path, io: &IoHooks) -> Result<u64> {
        let mut w = SegmentWriter::create(path, schema, self.doc_count, io)?;
        for (fid, f) in self.fields.iter().enumerate() {
            let Some(table) = &f.terms else { continue };
            let has_positions = schema.fields()[fid].positions;
            let mut order: Vec<(&[u8], u32)> =
                table.ids.iter().map(|(k, &id)| (&k[..], id)).collect();
            order.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (key, id) in order {
                let p = &table.postings[id as usize];
                w.add_term(
                    FieldId(fid as u16),
                    key,
                    &p.docs,
                    &p.tfs,
                    f.norms.as_deref(),
                    has_positions.then_some(&p.positions[..]),
                    io,
                )?;
            }
        }
        let total_tokens: Vec<u64> = self.fields.iter().map(|f| f.total_tokens).collect();
        let norms: Vec<(FieldId, &[u8])> = self
            .fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.norms.as_deref().map(|n| (FieldId(i as u16), n)))
            .collect();
        let sort: Vec<(FieldId, &SortValues)> = self
            .fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.sort.as_ref().map(|s| (FieldId(i as u16), s)))
            .collect();
        w.finish(
            &SegmentParts {
                doc_count: self.doc_count,
                total_tokens: &total_tokens,
                norms: &norms,
                stored_offsets: &self.stored_offsets,
                stored_blob: &self.stored_blob,
                sort: &sort,
            },
            io,
        )
    }
}
