//! The segment file: one immutable file per segment, made of sections.
//!
//! ```text
//! header: magic "QSEG", version u32
//! sections, each 8-byte aligned
//! directory: count u32, count x { kind u32, offset u64, len u64 }
//! directory offset u64
//! footer: CRC-32 of everything before
//! ```
//!
//! Section kinds and their layouts are listed in `docs/FORMAT.md`; this
//! module holds the shared constants and the small encoders and decoders
//! that both sides use (term entries, stored values).

use std::io::Write;

use crate::document::Value;

/// Magic of a segment file.
pub const MAGIC: &[u8; 4] = b"QSEG";

/// Section: document count and per-field statistics.
pub const SECTION_META: u32 = 1;
/// Section: the term dictionary.
pub const SECTION_TERMS: u32 = 2;
/// Section: postings regions, one per term, in term order.
pub const SECTION_POSTINGS: u32 = 3;
/// Section: norms, one byte per document per text field.
pub const SECTION_NORMS: u32 = 4;
/// Section: stored field values.
pub const SECTION_STORED: u32 = 5;
/// Section: ord arrays of sortable fields.
pub const SECTION_SORT: u32 = 6;
/// Section: token positions, one region per term of a field with
/// positions, in term order (version 2 on).
pub const SECTION_POSITIONS: u32 = 7;

/// Human-readable name of a section kind (for `quarry stats`).
pub fn section_name(kind: u32) -> &'static str {
    match kind {
        SECTION_META => "meta",
        SECTION_TERMS => "terms",
        SECTION_POSTINGS => "postings",
        SECTION_NORMS => "norms",
        SECTION_STORED => "stored",
        SECTION_SORT => "sort",
        SECTION_POSITIONS => "positions",
        _ => "unknown",
    }
}

/// Bytes of one term-dictionary entry: key offset u32, df u32, postings offset u64.
pub const TERM_ENTRY: usize = 16;

/// Most documents one segment may hold (doc ids stay below 2^31).
pub const MAX_SEGMENT_DOCS: u32 = (1 << 31) - 1;

/// Writes a segment file section by section, computing the checksum as it goes.
pub struct SegmentFileWriter<W: Write> {
    out: W,
    hasher: crc32fast::Hasher,
    offset: u64,
    sections: Vec<(u32, u64, u64)>,
    open: Option<(u32, u64)>,
}

impl<W: Write> SegmentFileWriter<W> {
    /// Starts a file with the segment header.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut w = SegmentFileWriter {
            out,
            hasher: crc32fast::Hasher::new(),
            offset: 0,
            sections: Vec::new(),
            open: None,
        };
        let mut head = Vec::new();
        super::write_header(&mut head, MAGIC);
        w.raw(&head)?;
        Ok(w)
    }

    fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.out.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Opens a section of `kind` (closing none: call [`Self::end_section`]).
    pub fn begin_section(&mut self, kind: u32) -> std::io::Result<()> {
        debug_assert!(self.open.is_none());
        let pad = (8 - (self.offset % 8) as usize) % 8;
        self.raw(&[0u8; 8][..pad])?;
        self.open = Some((kind, self.offset));
        Ok(())
    }

    /// Appends bytes to the open section.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        debug_assert!(self.open.is_some());
        self.raw(bytes)
    }

    /// Bytes written to the open section so far.
    pub fn section_len(&self) -> u64 {
        self.open.map_or(0, |(_, start)| self.offset - start)
    }

    /// Closes the open section.
    pub fn end_section(&mut self) {
        let (kind, start) = self.open.take().expect("a section is open");
        self.sections.push((kind, start, self.offset - start));
    }

    /// Writes a whole section at once.
    pub fn section(&mut self, kind: u32, bytes: &[u8]) -> std::io::Result<()> {
        self.begin_section(kind)?;
        self.write(bytes)?;
        self.end_section();
        Ok(())
    }

    /// Writes the directory and the checksum; returns the writer and the file length.
    pub fn finish(mut self) -> std::io::Result<(W, u64)> {
        let dir_offset = self.offset;
        let mut dir = Vec::new();
        dir.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for &(kind, off, len) in &self.sections {
            dir.extend_from_slice(&kind.to_le_bytes());
            dir.extend_from_slice(&off.to_le_bytes());
            dir.extend_from_slice(&len.to_le_bytes());
        }
        dir.extend_from_slice(&dir_offset.to_le_bytes());
        self.raw(&dir)?;
        let crc = self.hasher.clone().finalize();
        self.out.write_all(&crc.to_le_bytes())?;
        Ok((self.out, self.offset + 4))
    }
}

const VALUE_STR: u8 = 0;
const VALUE_I64: u8 = 1;
const VALUE_F64: u8 = 2;

/// Appends one stored value: field id varint, type tag, payload.
pub fn put_stored_value(out: &mut Vec<u8>, field: u16, value: &Value) {
    super::put_varint(out, u64::from(field));
    match value {
        Value::Str(s) => {
            out.push(VALUE_STR);
            super::put_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Value::I64(v) => {
            out.push(VALUE_I64);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Value::F64(v) => {
            out.push(VALUE_F64);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
}

/// Decodes a document's stored values; `None` when the bytes are malformed.
pub fn get_stored_values(mut bytes: &[u8]) -> Option<Vec<(u16, Value)>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let mut pos = 0;
        let field = u16::try_from(super::get_varint(bytes, &mut pos)?).ok()?;
        let tag = *bytes.get(pos)?;
        pos += 1;
        let value = match tag {
            VALUE_STR => {
                let n = usize::try_from(super::get_varint(bytes, &mut pos)?).ok()?;
                let s = bytes.get(pos..pos.checked_add(n)?)?;
                pos += n;
                Value::Str(String::from_utf8(s.to_vec()).ok()?)
            }
            VALUE_I64 | VALUE_F64 => {
                let b: [u8; 8] = bytes.get(pos..pos + 8)?.try_into().ok()?;
                pos += 8;
                if tag == VALUE_I64 {
                    Value::I64(i64::from_le_bytes(b))
                } else {
                    Value::F64(f64::from_bits(u64::from_le_bytes(b)))
                }
            }
            _ => return None,
        };
        out.push((field, value));
        bytes = &bytes[pos..];
    }
    Some(out)
}

/// Raw bytes of stored documents gathered into one compressed block.
pub const STORED_BLOCK_BYTES: usize = 16 * 1024;

/// Encodes the stored section: documents' stored bytes (`offsets` has
/// `doc_count + 1` entries into `blob`) cut into blocks of about
/// [`STORED_BLOCK_BYTES`], each compressed with LZ4.
///
/// ```text
/// u32 block_count
/// block_count x { u32 first_doc, u64 offset }   offset of the block in the data area
/// data: per block, LZ4 (block format, u32 uncompressed size first) of
///       { doc lengths as varints, then the documents' bytes }
/// ```
///
/// A writer that cannot hold the section streams it instead: a first
/// pass of a [`StoredBlockEncoder`] gives the blocks' sizes for
/// [`put_stored_index`], a second one the blocks themselves.
pub fn encode_stored(offsets: &[u64], blob: &[u8], out: &mut Vec<u8>) {
    let mut enc = StoredBlockEncoder::default();
    let (mut index, mut data) = (Vec::new(), Vec::new());
    let mut add = |block: Option<(u32, Vec<u8>)>| {
        if let Some((first, bytes)) = block {
            index.push((first, data.len() as u64));
            data.extend_from_slice(&bytes);
        }
    };
    for d in offsets.windows(2) {
        add(enc.push(&blob[d[0] as usize..d[1] as usize]));
    }
    add(enc.finish());
    put_stored_index(&index, out);
    out.extend_from_slice(&data);
}

/// Appends the head of the stored section: the block count and each
/// block's `(first_doc, offset)`.
pub fn put_stored_index(index: &[(u32, u64)], out: &mut Vec<u8>) {
    out.extend_from_slice(&(index.len() as u32).to_le_bytes());
    for (d, off) in index {
        out.extend_from_slice(&d.to_le_bytes());
        out.extend_from_slice(&off.to_le_bytes());
    }
}

/// Cuts documents' stored bytes, given one at a time in document order,
/// into the compressed blocks of the stored section ([`encode_stored`]):
/// a block takes documents while it holds fewer than
/// [`STORED_BLOCK_BYTES`] raw bytes (and always at least one). It holds
/// one block's documents.
#[derive(Debug, Default)]
pub struct StoredBlockEncoder {
    /// The block's documents' lengths as varints, then their bytes.
    raw: Vec<u8>,
    docs: Vec<u8>,
    first: u32,
    next: u32,
}

impl StoredBlockEncoder {
    /// Adds the next document's bytes; returns the block completed before
    /// it (its first document and its compressed bytes), if any.
    pub fn push(&mut self, doc: &[u8]) -> Option<(u32, Vec<u8>)> {
        let done = (self.docs.len() >= STORED_BLOCK_BYTES)
            .then(|| self.finish())
            .flatten();
        super::put_varint(&mut self.raw, doc.len() as u64);
        self.docs.extend_from_slice(doc);
        self.next += 1;
        done
    }

    /// Completes the last block (`None` when no document is pending).
    pub fn finish(&mut self) -> Option<(u32, Vec<u8>)> {
        if self.next == self.first {
            return None;
        }
        self.raw.extend_from_slice(&self.docs);
        let block = lz4_flex::block::compress_prepend_size(&self.raw);
        self.raw.clear();
        self.docs.clear();
        let first = self.first;
        self.first = self.next;
        Some((first, block))
    }
}

/// A parsed stored section.
#[derive(Clone, Copy, Debug)]
pub struct StoredBlocks<'a> {
    index: &'a [u8],
    data: &'a [u8],
    doc_count: u32,
}

/// Bytes of one stored block index entry.
const STORED_ENTRY: usize = 12;

impl<'a> StoredBlocks<'a> {
    /// Splits the section of a segment with `doc_count` documents, checking
    /// only that the index fits; see [`StoredBlocks::validate`].
    pub fn view(section: &'a [u8], doc_count: u32) -> Option<StoredBlocks<'a>> {
        let n = u32::from_le_bytes(section.get(..4)?.try_into().ok()?) as usize;
        let index = section.get(4..4 + n.checked_mul(STORED_ENTRY)?)?;
        let data = &section[4 + n * STORED_ENTRY..];
        Some(StoredBlocks {
            index,
            data,
            doc_count,
        })
    }

    /// Checks the block index: the first block starts at doc 0 and offset
    /// 0, and both increase and stay in range.
    pub fn validate(&self) -> bool {
        let mut prev: Option<(u32, u64)> = None;
        for i in 0..self.len() {
            let (d, off) = self.entry(i);
            let ok = match prev {
                None => d == 0 && off == 0,
                Some((pd, po)) => d > pd && off >= po,
            };
            if !ok || d >= self.doc_count || off > self.data.len() as u64 {
                return false;
            }
            prev = Some((d, off));
        }
        self.len() > 0 || self.doc_count == 0
    }

    fn entry(&self, i: usize) -> (u32, u64) {
        let e = &self.index[i * STORED_ENTRY..(i + 1) * STORED_ENTRY];
        (
            u32::from_le_bytes(e[..4].try_into().expect("4")),
            u64::from_le_bytes(e[4..].try_into().expect("8")),
        )
    }

    fn len(&self) -> usize {
        self.index.len() / STORED_ENTRY
    }

    /// Number of blocks.
    pub fn block_count(&self) -> usize {
        self.len()
    }

    /// The block holding `doc`.
    pub fn block_of(&self, doc: u32) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.entry(mid).0 <= doc {
                lo = mid
            } else {
                hi = mid
            }
        }
        lo
    }

    /// Decompresses block `b` into `buf`; returns its first document and the
    /// byte ranges (within `buf`) of its documents.
    pub fn decode(
        &self,
        b: usize,
        buf: &mut Vec<u8>,
        ranges: &mut Vec<(usize, usize)>,
    ) -> Option<u32> {
        let (first, off) = self.entry(b);
        let end = if b + 1 < self.len() {
            self.entry(b + 1).1
        } else {
            self.data.len() as u64
        };
        let next_doc = if b + 1 < self.len() {
            self.entry(b + 1).0
        } else {
            self.doc_count
        };
        let bytes = self.data.get(off as usize..end as usize)?;
        let raw_len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        // LZ4 expands at most about 255 to 1: a larger claim is damage.
        if raw_len > bytes.len().saturating_mul(255) + 64 {
            return None;
        }
        buf.clear();
        buf.resize(raw_len, 0);
        let n = lz4_flex::block::decompress_into(&bytes[4..], buf).ok()?;
        if n != raw_len {
            return None;
        }
        ranges.clear();
        let mut pos = 0;
        let mut lens = Vec::with_capacity((next_doc - first) as usize);
        for _ in first..next_doc {
            lens.push(usize::try_from(super::get_varint(buf, &mut pos)?).ok()?);
        }
        for len in lens {
            let end = pos.checked_add(len).filter(|&e| e <= buf.len())?;
            ranges.push((pos, end));
            pos = end;
        }
        (pos == buf.len()).then_some(first)
    }
}

/// The term key of an `i64` value: big-endian with the sign bit flipped, so
/// byte order is numeric order.
pub fn i64_key(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

/// Inverse of [`i64_key`].
pub fn key_i64(key: &[u8]) -> Option<i64> {
    let b: [u8; 8] = key.try_into().ok()?;
    Some((u64::from_be_bytes(b) ^ (1 << 63)) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_round_trip() {
        let vals = vec![
            (0u16, Value::Str("héllo".into())),
            (3, Value::I64(-5)),
            (300, Value::F64(2.5)),
            (1, Value::Str(String::new())),
        ];
        let mut buf = Vec::new();
        for (f, v) in &vals {
            put_stored_value(&mut buf, *f, v);
        }
        assert_eq!(get_stored_values(&buf).unwrap(), vals);
        for cut in 0..buf.len() {
            // Truncation never panics; it either fails or yields a prefix.
            let _ = get_stored_values(&buf[..cut]);
        }
    }

    #[test]
    fn stored_blocks_round_trip() {
        // Empty documents, small ones, and one larger than a block.
        let docs: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| match i % 500 {
                0 => Vec::new(),
                7 => vec![b'x'; 3 * STORED_BLOCK_BYTES],
                _ => format!("doc {i} {}", "abc".repeat((i % 13) as usize)).into_bytes(),
            })
            .collect();
        let mut offsets = vec![0u64];
        let mut blob = Vec::new();
        for d in &docs {
            blob.extend_from_slice(d);
            offsets.push(blob.len() as u64);
        }
        let mut section = Vec::new();
        encode_stored(&offsets, &blob, &mut section);
        assert!(
            section.len() < blob.len() / 2,
            "compressed {} of {}",
            section.len(),
            blob.len()
        );
        let blocks = StoredBlocks::view(&section, docs.len() as u32).unwrap();
        assert!(blocks.validate());
        let (mut buf, mut ranges) = (Vec::new(), Vec::new());
        for (i, d) in docs.iter().enumerate() {
            let b = blocks.block_of(i as u32);
            let first = blocks.decode(b, &mut buf, &mut ranges).unwrap();
            let (s, e) = ranges[i - first as usize];
            assert_eq!(&buf[s..e], &d[..]);
        }
        // Damage never panics.
        for at in (0..section.len()).step_by(97) {
            let mut bad = section.clone();
            bad[at] ^= 0x41;
            if let Some(b) = StoredBlocks::view(&bad, docs.len() as u32).filter(|b| b.validate()) {
                for doc in (0..docs.len() as u32).step_by(50) {
                    let _ = b.decode(b.block_of(doc), &mut buf, &mut ranges);
                }
            }
        }
    }

    #[test]
    fn i64_keys_sort_numerically() {
        let vals = [i64::MIN, -2, -1, 0, 1, 7, i64::MAX];
        for w in vals.windows(2) {
            assert!(i64_key(w[0]) < i64_key(w[1]));
        }
        for v in vals {
            assert_eq!(key_i64(&i64_key(v)), Some(v));
        }
    }
}
