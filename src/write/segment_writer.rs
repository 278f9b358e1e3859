//! Writes one segment file. Both a flush of the in-memory buffer and a
//! merge of existing segments drive this one writer, so there is exactly one
//! place where a segment's sections are laid out.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::ords;
use crate::format::segment::{self, SegmentFileWriter};
use crate::format::terms::TermsEncoder;
use crate::format::{positions, postings};
use crate::schema::{FieldId, FieldType, Schema};
use crate::write::io::IoHooks;

/// A sortable field's values for one segment, before ords are assigned.
#[derive(Clone, Debug)]
pub(crate) enum SortValues {
    /// `i64` values, one per document.
    I64(Vec<Option<i64>>),
    /// `f64` values, one per document.
    F64(Vec<Option<f64>>),
    /// `string` values, one per document.
    Str(Vec<Option<String>>),
}

impl SortValues {
    pub(crate) fn new(ty: FieldType) -> SortValues {
        match ty {
            FieldType::I64 => SortValues::I64(Vec::new()),
            FieldType::F64 => SortValues::F64(Vec::new()),
            _ => SortValues::Str(Vec::new()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            SortValues::I64(v) => v.len(),
            SortValues::F64(v) => v.len(),
            SortValues::Str(v) => v.len(),
        }
    }
}

/// Distinct sorted values and per-document ords (missing = `u32::MAX` here;
/// remapped to the width's reserved ord when packed).
fn assign_ords<T: Ord + Clone>(values: &[Option<T>]) -> (Vec<T>, Vec<u32>) {
    let mut idx: Vec<usize> = (0..values.len()).filter(|&i| values[i].is_some()).collect();
    idx.sort_by(|&a, &b| values[a].cmp(&values[b]));
    let mut distinct: Vec<T> = Vec::new();
    let mut ords = vec![u32::MAX; values.len()];
    for i in idx {
        let v = values[i].as_ref().expect("present");
        if distinct.last() != Some(v) {
            distinct.push(v.clone());
        }
        ords[i] = (distinct.len() - 1) as u32;
    }
    (distinct, ords)
}

/// Ords and encoded values of a numeric column, from order-preserving keys.
fn numeric_column(keys: &[Option<u64>]) -> (usize, Vec<u8>, Vec<u32>) {
    let (distinct, ords) = assign_ords(keys);
    let mut bytes = Vec::new();
    ords::encode_keys(&distinct, &mut bytes);
    (distinct.len(), bytes, ords)
}

fn encode_sort_column(field: FieldId, values: &SortValues, doc_count: u32, out: &mut Vec<u8>) {
    let (ty, card, value_bytes, ords) = match values {
        SortValues::I64(v) => {
            let keys: Vec<Option<u64>> = v.iter().map(|x| x.map(ords::i64_to_key)).collect();
            let (card, bytes, o) = numeric_column(&keys);
            (FieldType::I64, card, bytes, o)
        }
        SortValues::F64(v) => {
            let keys: Vec<Option<u64>> = v.iter().map(|x| x.map(ords::f64_to_key)).collect();
            let (card, bytes, o) = numeric_column(&keys);
            (FieldType::F64, card, bytes, o)
        }
        SortValues::Str(v) => {
            let (d, o) = assign_ords(v);
            let mut bytes = Vec::new();
            let mut off = 0u32;
            for s in &d {
                bytes.extend_from_slice(&off.to_le_bytes());
                off += s.len() as u32;
            }
            bytes.extend_from_slice(&off.to_le_bytes());
            for s in &d {
                bytes.extend_from_slice(s.as_bytes());
            }
            (FieldType::String, d.len(), bytes, o)
        }
    };
    debug_assert_eq!(ords.len(), doc_count as usize);
    let width = ords::ord_width(card as u64);
    let missing = ords::missing_ord(width);
    let ords: Vec<u32> = ords
        .into_iter()
        .map(|o| if o == u32::MAX { missing } else { o })
        .collect();
    out.extend_from_slice(&field.0.to_le_bytes());
    out.push(ty.code());
    out.push(width);
    out.extend_from_slice(&(card as u32).to_le_bytes());
    out.extend_from_slice(&(value_bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(&value_bytes);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    ords::pack(&ords, width, out);
    for (lo, hi) in ords::block_bounds(&ords, width) {
        out.extend_from_slice(&lo.to_le_bytes());
        out.extend_from_slice(&hi.to_le_bytes());
    }
}

/// Everything about a segment but its postings, handed to [`SegmentWriter::finish`].
pub(crate) struct SegmentParts<'a> {
    pub doc_count: u32,
    /// Per schema field: total tokens (text fields), else 0.
    pub total_tokens: &'a [u64],
    /// Per text field (schema order): its norms, `doc_count` bytes.
    pub norms: &'a [(FieldId, &'a [u8])],
    /// Stored values: `doc_count + 1` offsets into `stored_blob`.
    pub stored_offsets: &'a [u64],
    pub stored_blob: &'a [u8],
    /// Sortable fields in schema order.
    pub sort: &'a [(FieldId, &'a SortValues)],
}

fn too_large() -> Error {
    Error::InvalidArgument("term dictionary exceeds 4 GiB".into())
}

/// Streams postings term by term, then writes the other sections.
pub(crate) struct SegmentWriter {
    path: PathBuf,
    file: SegmentFileWriter<BufWriter<File>>,
    terms: TermsEncoder,
    /// The positions section, built in memory (written after the postings).
    positions: Vec<u8>,
    scratch: Vec<u8>,
    doc_count: u32,
}

impl SegmentWriter {
    /// Creates the segment file at `path` (which must not exist).
    pub(crate) fn create(
        path: &Path,
        schema: &Schema,
        doc_count: u32,
        io: &IoHooks,
    ) -> Result<SegmentWriter> {
        if doc_count > segment::MAX_SEGMENT_DOCS {
            return Err(Error::InvalidArgument(format!(
                "segment of {doc_count} documents exceeds the limit"
            )));
        }
        let f = io.create_new(path)?;
        let mut file = SegmentFileWriter::new(BufWriter::with_capacity(1 << 20, f))
            .map_err(|e| Error::io(path, e))?;
        file.begin_section(segment::SECTION_POSTINGS)
            .map_err(|e| Error::io(path, e))?;
        Ok(SegmentWriter {
            path: path.to_owned(),
            file,
            terms: TermsEncoder::new(schema.fields().iter().map(|f| f.positions).collect()),
            positions: Vec::new(),
            scratch: Vec::new(),
            doc_count,
        })
    }

    /// Adds one term's postings. Terms arrive by ascending field id, then
    /// ascending key bytes. `norms` is the field's norms (None for a field
    /// without length norms); `positions` (for a field with positions)
    /// holds each posting's `tfs[i]` ascending positions, posting after
    /// posting.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_term(
        &mut self,
        field: FieldId,
        key: &[u8],
        docs: &[u32],
        tfs: &[u32],
        norms: Option<&[u8]>,
        positions: Option<&[u32]>,
        io: &IoHooks,
    ) -> Result<()> {
        debug_assert!(!docs.is_empty());
        self.scratch.clear();
        let norm_of = |d: u32| norms.map_or(0, |n| n[d as usize]);
        postings::encode(docs, tfs, norm_of, &mut self.scratch)
            .map_err(|_| Error::InvalidArgument("a term's posting list exceeds 4 GiB".into()))?;
        io.check_write(&self.path)?;
        self.file
            .write(&self.scratch)
            .map_err(|e| Error::io(&self.path, e))?;
        let pos_len = match positions {
            None => None,
            Some(p) => {
                let before = self.positions.len();
                positions::encode(tfs, p, &mut self.positions)
                    .map_err(|e| Error::InvalidArgument(e.0.into()))?;
                Some((self.positions.len() - before) as u64)
            }
        };
        self.terms
            .add(
                field.0 as usize,
                key,
                docs.len() as u32,
                self.scratch.len() as u64,
                pos_len,
            )
            .map_err(|_| too_large())
    }

    /// Writes the remaining sections, fsyncs, and returns the file length.
    pub(crate) fn finish(mut self, parts: &SegmentParts<'_>, io: &IoHooks) -> Result<u64> {
        debug_assert_eq!(parts.doc_count, self.doc_count);
        let path = self.path.clone();
        let ioe = |e| Error::io(&path, e);
        self.file.end_section();

        let mut terms = Vec::new();
        self.terms.finish(&mut terms).map_err(|_| too_large())?;
        io.check_write(&path)?;
        self.file
            .section(segment::SECTION_TERMS, &terms)
            .map_err(ioe)?;
        drop(terms);
        self.file
            .section(segment::SECTION_POSITIONS, &self.positions)
            .map_err(ioe)?;

        self.file
            .begin_section(segment::SECTION_NORMS)
            .map_err(ioe)?;
        self.file
            .write(&(parts.norms.len() as u16).to_le_bytes())
            .map_err(ioe)?;
        for (field, norms) in parts.norms {
            debug_assert_eq!(norms.len(), parts.doc_count as usize);
            self.file.write(&field.0.to_le_bytes()).map_err(ioe)?;
            self.file.write(norms).map_err(ioe)?;
        }
        self.file.end_section();

        io.check_write(&path)?;
        self.file
            .begin_section(segment::SECTION_STORED)
            .map_err(ioe)?;
        let mut stored = Vec::new();
        segment::encode_stored(parts.stored_offsets, parts.stored_blob, &mut stored);
        self.file.write(&stored).map_err(ioe)?;
        self.file.end_section();

        let mut sort = Vec::new();
        sort.extend_from_slice(&(parts.sort.len() as u16).to_le_bytes());
        for (field, values) in parts.sort {
            debug_assert_eq!(values.len(), parts.doc_count as usize);
            let mut col = Vec::new();
            encode_sort_column(*field, values, parts.doc_count, &mut col);
            sort.extend_from_slice(&(col.len() as u64).to_le_bytes());
            sort.extend_from_slice(&col);
        }
        self.file
            .section(segment::SECTION_SORT, &sort)
            .map_err(ioe)?;

        let mut meta = Vec::new();
        meta.extend_from_slice(&parts.doc_count.to_le_bytes());
        meta.extend_from_slice(&(parts.total_tokens.len() as u16).to_le_bytes());
        for t in parts.total_tokens {
            meta.extend_from_slice(&t.to_le_bytes());
        }
        self.file
            .section(segment::SECTION_META, &meta)
            .map_err(ioe)?;

        io.check_write(&path)?;
        let (buf, len) = self.file.finish().map_err(ioe)?;
        let file = buf
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        io.sync(&path, &file)?;
        Ok(len)
    }
}
