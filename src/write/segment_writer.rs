//! Writes one segment file. Both a flush of the in-memory buffer and a
//! merge of existing segments drive this one writer, so there is exactly one
//! place where a segment's sections are laid out.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::ords;
use crate::format::segment::{self, SegmentFileWriter, StoredBlockEncoder};
use crate::format::terms::TermsEncoder;
use crate::format::{norms, positions, postings};
use crate::query::bm25;
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

/// One sortable field's column as [`SegmentWriter::finish`] writes it:
/// its sorted distinct values, encoded, and each document's ord.
pub(crate) struct SortColumnParts<'a> {
    pub field: FieldId,
    pub ty: FieldType,
    /// Distinct values.
    pub cardinality: usize,
    /// The sorted distinct values as the format lays them out
    /// ([`numeric_values`], [`string_values`]).
    pub values: Vec<u8>,
    /// Each document's ord in document order (`u32::MAX`: no value),
    /// remapped to the width's reserved ord as it is packed.
    pub ords: Box<dyn Iterator<Item = u32> + 'a>,
}

/// A sort column made when [`SegmentWriter::finish`] comes to write it,
/// so that only one column's ords and values are held at a time.
pub(crate) type SortColumnFn<'a> = Box<dyn FnOnce() -> Result<SortColumnParts<'a>> + 'a>;

/// The encoded values of a numeric column: its sorted distinct
/// order-preserving keys.
pub(crate) fn numeric_values(keys: &[u64]) -> Vec<u8> {
    let mut bytes = Vec::new();
    ords::encode_keys(keys, &mut bytes);
    bytes
}

/// The encoded values of a string column: its sorted distinct values'
/// offsets, then their bytes.
pub(crate) fn string_values<'v>(count: usize, values: impl Iterator<Item = &'v [u8]>) -> Vec<u8> {
    let mut bytes = Vec::with_capacity((count + 1) * 4);
    let mut text = Vec::new();
    for v in values {
        bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
        text.extend_from_slice(v);
    }
    bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&text);
    bytes
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

impl SortValues {
    pub(crate) fn new(ty: FieldType) -> SortValues {
        match ty {
            FieldType::I64 => SortValues::I64(Vec::new()),
            FieldType::F64 => SortValues::F64(Vec::new()),
            _ => SortValues::Str(Vec::new()),
        }
    }

    /// The column of the buffered values of `field`.
    pub(crate) fn column(&self, field: FieldId) -> SortColumnParts<'static> {
        let numeric = |ty, keys: Vec<Option<u64>>| {
            let (distinct, ords) = assign_ords(&keys);
            (ty, distinct.len(), numeric_values(&distinct), ords)
        };
        let (ty, cardinality, values, ords) = match self {
            SortValues::I64(v) => numeric(
                FieldType::I64,
                v.iter().map(|x| x.map(ords::i64_to_key)).collect(),
            ),
            SortValues::F64(v) => numeric(
                FieldType::F64,
                v.iter().map(|x| x.map(ords::f64_to_key)).collect(),
            ),
            SortValues::Str(v) => {
                let (d, o) = assign_ords(v);
                let values = string_values(d.len(), d.iter().map(|s| s.as_bytes()));
                (FieldType::String, d.len(), values, o)
            }
        };
        SortColumnParts {
            field,
            ty,
            cardinality,
            values,
            ords: Box::new(ords.into_iter()),
        }
    }
}

/// Bytes of a column's fixed header (field, type, width, cardinality,
/// values length).
const COLUMN_HEADER: usize = 16;

/// Writes one column of the sort section (its length first), packing its
/// ords [`ords::ORD_BLOCK`] at a time, so that neither the column nor its
/// ords are held whole.
fn write_sort_column<W: std::io::Write>(
    file: &mut SegmentFileWriter<W>,
    col: SortColumnParts<'_>,
    doc_count: u32,
) -> std::io::Result<()> {
    let width = ords::ord_width(col.cardinality as u64);
    let missing = ords::missing_ord(width);
    let n = doc_count as usize;
    let head = (COLUMN_HEADER + col.values.len()).next_multiple_of(4);
    let len = head + ords::packed_len(n, width) + n.div_ceil(ords::ORD_BLOCK) * 8;
    let mut out = Vec::with_capacity(8 + head);
    out.extend_from_slice(&(len as u64).to_le_bytes());
    out.extend_from_slice(&col.field.0.to_le_bytes());
    out.push(col.ty.code());
    out.push(width);
    out.extend_from_slice(&(col.cardinality as u32).to_le_bytes());
    out.extend_from_slice(&(col.values.len() as u64).to_le_bytes());
    file.write(&out)?;
    file.write(&col.values)?;
    file.write(&[0; 4][..head - COLUMN_HEADER - col.values.len()])?;
    // Blocks of ORD_BLOCK ords pack to whole multiples of 4 bytes, so
    // packing block by block lays out exactly what packing all would.
    let (mut block, mut bounds) = (Vec::with_capacity(ords::ORD_BLOCK), Vec::new());
    let mut ords_iter = col.ords;
    let mut count = 0;
    loop {
        block.clear();
        block.extend(
            ords_iter
                .by_ref()
                .take(ords::ORD_BLOCK)
                .map(|o| if o == u32::MAX { missing } else { o }),
        );
        if block.is_empty() {
            break;
        }
        count += block.len();
        out.clear();
        ords::pack(&block, width, &mut out);
        file.write(&out)?;
        bounds.extend(ords::block_bounds(&block, width));
    }
    debug_assert_eq!(count, n);
    out.clear();
    for (lo, hi) in bounds {
        out.extend_from_slice(&lo.to_le_bytes());
        out.extend_from_slice(&hi.to_le_bytes());
    }
    file.write(&out)
}

/// A segment's stored documents: called with a sink, hands it each
/// document's stored bytes in document order. [`SegmentWriter::finish`]
/// walks them twice, the sizes of the compressed blocks coming before the
/// blocks, so that the section is never held whole.
pub(crate) type StoredDocs<'a> = &'a dyn Fn(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>;

/// Everything about a segment but its postings, handed to [`SegmentWriter::finish`].
pub(crate) struct SegmentParts<'a> {
    pub doc_count: u32,
    /// Per schema field: total tokens (text fields), else 0.
    pub total_tokens: &'a [u64],
    /// Per text field (schema order): its norms, `doc_count` bytes.
    pub norms: &'a [(FieldId, &'a [u8])],
    /// Stored values: each document's stored bytes, in document order.
    pub stored: StoredDocs<'a>,
    /// Sortable fields' columns in schema order.
    pub sort: Vec<SortColumnFn<'a>>,
}

fn too_large() -> Error {
    Error::InvalidArgument("term dictionary exceeds 4 GiB".into())
}

/// Bytes of encoded positions buffered before they go to the scratch file
/// (as the file's own buffer: larger writes gain nothing, and a larger
/// buffer is memory a flush holds besides the buffered documents).
const SPILL_BYTES: usize = 1 << 20;

/// The positions section, which the file holds after the postings and the
/// terms: its regions are encoded into a buffer that goes to an unlinked
/// scratch file next to the segment whenever it holds `limit` bytes, and
/// are copied into the segment at the end, so the section is never held
/// whole.
struct PositionsSpill {
    buf: Vec<u8>,
    /// The scratch file, once the buffer first filled.
    file: Option<File>,
    /// Its name (gone once it is created).
    path: PathBuf,
    limit: usize,
}

impl PositionsSpill {
    fn new(segment: &Path, limit: usize) -> PositionsSpill {
        let mut name = segment.as_os_str().to_owned();
        name.push(".positions.tmp");
        PositionsSpill {
            buf: Vec::new(),
            file: None,
            path: name.into(),
            limit,
        }
    }

    /// Encodes one term's positions; returns the region's length.
    fn add(&mut self, tfs: &[u32], positions: &[u32], io: &IoHooks) -> Result<u64> {
        let before = self.buf.len();
        positions::encode(tfs, positions, &mut self.buf)
            .map_err(|e| Error::InvalidArgument(e.0.into()))?;
        let len = (self.buf.len() - before) as u64;
        if self.buf.len() >= self.limit {
            let file = match &mut self.file {
                Some(f) => f,
                None => self.file.insert(io.scratch_file(&self.path)?),
            };
            io.check_write(&self.path)?;
            file.write_all(&self.buf)
                .map_err(|e| Error::io(&self.path, e))?;
            self.buf.clear();
        }
        Ok(len)
    }

    /// Appends the section's bytes (the scratch file's, then the buffer's)
    /// to the open section of `out`.
    fn copy_to(
        mut self,
        out: &mut SegmentFileWriter<BufWriter<File>>,
        segment: &Path,
    ) -> Result<()> {
        if let Some(mut f) = self.file.take() {
            let ioe = |e| Error::io(&self.path, e);
            f.seek(SeekFrom::Start(0)).map_err(ioe)?;
            let mut chunk = vec![0u8; 1 << 20];
            loop {
                let n = f.read(&mut chunk).map_err(ioe)?;
                if n == 0 {
                    break;
                }
                out.write(&chunk[..n]).map_err(|e| Error::io(segment, e))?;
            }
        }
        out.write(&self.buf).map_err(|e| Error::io(segment, e))
    }
}

/// Streams postings term by term, then writes the other sections.
pub(crate) struct SegmentWriter {
    path: PathBuf,
    file: SegmentFileWriter<BufWriter<File>>,
    terms: TermsEncoder,
    /// The positions section (written after the postings and the terms).
    positions: PositionsSpill,
    scratch: Vec<u8>,
    doc_count: u32,
    /// Per field, once its first term comes: the BM25 key factors of its
    /// average length (estimated from its norms), which the capped impacts
    /// keep exact ([`postings::pareto_frontier`]).
    key_factors: Vec<Option<Box<[f32; 256]>>>,
}

impl SegmentWriter {
    /// Creates the segment file at `path` (which must not exist).
    pub(crate) fn create(
        path: &Path,
        schema: &Schema,
        doc_count: u32,
        io: &IoHooks,
    ) -> Result<SegmentWriter> {
        Self::with_spill(path, schema, doc_count, io, SPILL_BYTES)
    }

    /// [`Self::create`], spilling positions every `spill` bytes.
    fn with_spill(
        path: &Path,
        schema: &Schema,
        doc_count: u32,
        io: &IoHooks,
        spill: usize,
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
            positions: PositionsSpill::new(path, spill),
            scratch: Vec::new(),
            doc_count,
            key_factors: vec![None; schema.fields().len()],
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
        let doc_count = self.doc_count;
        let factors = self.key_factors[field.0 as usize].get_or_insert_with(|| {
            // The average length the norm bytes give: what a query of
            // this segment alone uses, up to the bytes' rounding.
            let table = norms::length_table();
            let tokens = norms.map_or(0, |n| {
                n.iter().map(|&b| u64::from(table[usize::from(b)])).sum()
            });
            Box::new(bm25::length_factors(
                u64::from(doc_count),
                tokens,
                norms.is_some(),
            ))
        });
        postings::encode(docs, tfs, doc_count, norm_of, factors, &mut self.scratch)
            .map_err(|_| Error::InvalidArgument("a term's posting list exceeds 4 GiB".into()))?;
        io.check_write(&self.path)?;
        self.file
            .write(&self.scratch)
            .map_err(|e| Error::io(&self.path, e))?;
        let pos_len = match positions {
            None => None,
            Some(p) => Some(self.positions.add(tfs, p, io)?),
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
    pub(crate) fn finish(mut self, parts: SegmentParts<'_>, io: &IoHooks) -> Result<u64> {
        debug_assert_eq!(parts.doc_count, self.doc_count);
        let path = self.path.clone();
        let ioe = |e| Error::io(&path, e);
        self.file.end_section();

        let (head, blocks) = self.terms.finish_parts().map_err(|_| too_large())?;
        io.check_write(&path)?;
        self.file
            .begin_section(segment::SECTION_TERMS)
            .map_err(ioe)?;
        self.file.write(&head).map_err(ioe)?;
        self.file.write(&blocks).map_err(ioe)?;
        self.file.end_section();
        drop(blocks);
        io.check_write(&path)?;
        self.file
            .begin_section(segment::SECTION_POSITIONS)
            .map_err(ioe)?;
        self.positions.copy_to(&mut self.file, &path)?;
        self.file.end_section();

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
        let mut enc = StoredBlockEncoder::default();
        let (mut index, mut data_len) = (Vec::new(), 0u64);
        let mut size = |block: Option<(u32, Vec<u8>)>| {
            if let Some((first, bytes)) = block {
                index.push((first, data_len));
                data_len += bytes.len() as u64;
            }
        };
        (parts.stored)(&mut |doc| {
            size(enc.push(doc));
            Ok(())
        })?;
        size(enc.finish());
        let mut head = Vec::new();
        segment::put_stored_index(&index, &mut head);
        self.file.write(&head).map_err(ioe)?;
        let start = self.file.section_len();
        let file = &mut self.file;
        let mut write = |block: Option<(u32, Vec<u8>)>| match block {
            Some((_, bytes)) => file.write(&bytes).map_err(ioe),
            None => Ok(()),
        };
        (parts.stored)(&mut |doc| write(enc.push(doc)))?;
        write(enc.finish())?;
        if self.file.section_len() - start != data_len {
            return Err(Error::InvalidArgument(
                "stored documents changed between the two passes over them".into(),
            ));
        }
        self.file.end_section();

        self.file
            .begin_section(segment::SECTION_SORT)
            .map_err(ioe)?;
        self.file
            .write(&(parts.sort.len() as u16).to_le_bytes())
            .map_err(ioe)?;
        for make in parts.sort {
            write_sort_column(&mut self.file, make()?, parts.doc_count).map_err(ioe)?;
        }
        self.file.end_section();

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::FieldFlags;

    /// Writes a segment of one text field with positions, its positions
    /// spilled every `spill` bytes, to `dir/seg`; returns the file's bytes.
    fn write(dir: &Path, spill: usize, io: &IoHooks) -> Result<Vec<u8>> {
        let mut schema = Schema::new();
        let flags = FieldFlags {
            stored: true,
            indexed: true,
            sortable: false,
        };
        let body = schema.add_field("body", FieldType::Text, flags)?;
        schema.set_positions(body, true)?;
        let docs = 300u32;
        let path = dir.join("seg");
        let mut w = SegmentWriter::with_spill(&path, &schema, docs, io, spill)?;
        for t in 0..40u32 {
            let ds: Vec<u32> = (0..docs).filter(|d| d % (t + 1) == 0).collect();
            let tfs: Vec<u32> = ds.iter().map(|d| 1 + (d + t) % 5).collect();
            let pos: Vec<u32> = tfs.iter().flat_map(|&tf| (0..tf).map(|i| i * 3)).collect();
            let key = format!("t{t:03}");
            w.add_term(body, key.as_bytes(), &ds, &tfs, None, Some(&pos), io)?;
        }
        let norms = vec![5u8; docs as usize];
        let stored = |sink: &mut dyn FnMut(&[u8]) -> Result<()>| -> Result<()> {
            for d in 0..docs {
                sink(format!("doc {d}").as_bytes())?;
            }
            Ok(())
        };
        w.finish(
            SegmentParts {
                doc_count: docs,
                total_tokens: &[0],
                norms: &[(body, &norms)],
                stored: &stored,
                sort: Vec::new(),
            },
            io,
        )?;
        std::fs::read(&path).map_err(|e| Error::io(&path, e))
    }

    #[test]
    fn spilled_positions_give_the_same_bytes() {
        let whole = tempfile::tempdir().unwrap();
        let expected = write(whole.path(), usize::MAX, &IoHooks::new()).unwrap();
        let spilled = tempfile::tempdir().unwrap();
        assert_eq!(
            write(spilled.path(), 64, &IoHooks::new()).unwrap(),
            expected
        );
        // The scratch file is unlinked as soon as it is made.
        let names: Vec<_> = std::fs::read_dir(spilled.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failure_at_any_step_leaves_no_scratch_file() {
        let steps = {
            let dir = tempfile::tempdir().unwrap();
            let io = IoHooks::new();
            write(dir.path(), 64, &io).unwrap();
            io.steps()
        };
        for n in 0..steps {
            let dir = tempfile::tempdir().unwrap();
            assert!(
                write(dir.path(), 64, &IoHooks::fail_at(n)).is_err(),
                "step {n}"
            );
            for e in std::fs::read_dir(dir.path()).unwrap() {
                let name = e.unwrap().file_name();
                assert_eq!(name, "seg", "step {n} left {name:?}");
            }
        }
    }
}
