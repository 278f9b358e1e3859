//! One segment, mapped (or read into memory) and checked.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::document::Value;
use crate::error::{Error, Result};
use crate::format::positions::Positions;
use crate::format::postings::{BadPostings, Postings};
use crate::format::terms::{BadTerms, TermCursor, TermDict, TermEntry};
use crate::format::{self, Reader, ords, segment};
use crate::read::backing::{Backing, ReadMode};
use crate::schema::{FieldId, FieldType, Schema};

/// Where a term's postings are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermInfo {
    /// Documents containing the term (deleted ones included).
    pub df: u32,
    post_off: usize,
    post_end: usize,
    positions: Option<(usize, usize)>,
}

impl TermInfo {
    /// Bytes of the term's postings region (up to the next term's).
    pub fn region_len(&self) -> usize {
        self.post_end - self.post_off
    }

    /// The term's positions region (start, end) within the positions
    /// section, for a field with positions.
    pub fn positions_region(&self) -> Option<(usize, usize)> {
        self.positions
    }

    /// Offset of the term's postings region within the postings section.
    pub fn post_off(&self) -> usize {
        self.post_off
    }
}

/// A field's terms in key order, from [`SegmentReader::terms`].
pub struct Terms<'a> {
    seg: &'a SegmentReader,
    cursor: TermCursor<'a, 'a>,
}

impl Terms<'_> {
    /// The next term's key and postings info, `None` after the last; a
    /// malformed dictionary is `Corrupt`.
    pub fn advance(&mut self) -> Result<Option<(&[u8], TermInfo)>> {
        let seg = self.seg;
        match self.cursor.advance() {
            Ok(Some((key, e))) => Ok(Some((key, seg.info(e)?))),
            Ok(None) => Ok(None),
            Err(e) => Err(seg.bad_terms(e)),
        }
    }
}

/// A sortable field's ord array in one segment.
#[derive(Clone, Copy, Debug)]
pub struct SortColumn<'a> {
    /// The field's type.
    pub ty: FieldType,
    /// Bits per ord.
    pub width: u8,
    /// Distinct values.
    pub cardinality: u32,
    values: &'a [u8],
    /// A numeric column's keys decoded, when it has few values (see
    /// [`DECODED_KEYS`]).
    keys: Option<&'a [u64]>,
    ords: &'a [u8],
    blocks: &'a [u8],
}

/// Numeric sort columns with at most this many distinct values keep their
/// keys decoded per segment (8 bytes each), so that finding a value (at
/// every segment switch of a sorted search) is a plain binary search.
const DECODED_KEYS: u32 = 1 << 16;

impl<'a> SortColumn<'a> {
    /// The ord of `doc` ([`SortColumn::missing`] when it has no value).
    #[inline]
    pub fn ord(&self, doc: u32) -> u32 {
        ords::get(self.ords, self.width, doc as usize)
    }

    /// The reserved ord of documents without a value.
    pub fn missing(&self) -> u32 {
        ords::missing_ord(self.width)
    }

    /// The packed ords (see `format::ords`).
    pub fn packed_ords(&self) -> &'a [u8] {
        self.ords
    }

    /// Number of per-4096-document summary blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len() / 8
    }

    /// An order-preserving `u64` of a numeric value of ord `o` (`i64`:
    /// sign bit flipped; `f64`: IEEE total order). `None` for strings.
    pub fn numeric_key(&self, o: u32) -> Option<u64> {
        if let Some(keys) = self.keys {
            return keys.get(o as usize).copied();
        }
        match self.ty {
            FieldType::I64 | FieldType::F64 => Some(ords::key_at(
                self.values,
                self.cardinality as usize,
                o as usize,
            )),
            _ => None,
        }
    }

    /// The string value of ord `o` (`string` columns).
    pub fn str_at(&self, o: u32) -> &'a str {
        self.str_value(o as usize)
    }

    /// Where a value falls among this column's sorted values: `Ok(ord)` when
    /// present, `Err(p)` when it sorts between ords `p - 1` and `p`.
    /// `numeric` is a key as [`SortColumn::numeric_key`] makes; `text` a string value.
    pub fn find(&self, numeric: u64, text: &str) -> Result<u32, u32> {
        if let Some(keys) = self.keys {
            return keys
                .binary_search(&numeric)
                .map(|o| o as u32)
                .map_err(|o| o as u32);
        }
        if matches!(self.ty, FieldType::I64 | FieldType::F64) {
            return ords::find_key(self.values, self.cardinality as usize, numeric)
                .map(|o| o as u32)
                .map_err(|o| o as u32);
        }
        let (mut lo, mut hi) = (0u32, self.cardinality);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.bytes_at(mid as usize).cmp(text.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The value of ord `o` (`o < cardinality`).
    pub fn value(&self, o: u32) -> Value {
        match self.ty {
            FieldType::I64 => Value::I64(ords::key_to_i64(self.numeric_key(o).expect("numeric"))),
            FieldType::F64 => Value::F64(ords::key_to_f64(self.numeric_key(o).expect("numeric"))),
            _ => Value::Str(self.str_value(o as usize).to_owned()),
        }
    }

    fn str_value(&self, o: usize) -> &'a str {
        // Checked when the column was opened.
        std::str::from_utf8(self.bytes_at(o)).unwrap_or("")
    }

    /// The bytes of string value `o` (what ords order).
    fn bytes_at(&self, o: usize) -> &'a [u8] {
        let off = |i: usize| {
            u32::from_le_bytes(self.values[i * 4..i * 4 + 4].try_into().expect("4")) as usize
        };
        let base = (self.cardinality as usize + 1) * 4;
        &self.values[base + off(o)..base + off(o + 1)]
    }

    /// Per-4096-document (min, max) present ords.
    pub fn block_bounds(&self, block: usize) -> (u32, u32) {
        let b = &self.blocks[block * 8..block * 8 + 8];
        (
            u32::from_le_bytes(b[..4].try_into().expect("4")),
            u32::from_le_bytes(b[4..].try_into().expect("4")),
        )
    }
}

/// The last decompressed block of stored documents.
#[derive(Debug, Default)]
pub struct StoredCache {
    block: Option<usize>,
    first: u32,
    buf: Vec<u8>,
    ranges: Vec<(usize, usize)>,
}

/// A segment file, mapped or in memory ([`ReadMode`]).
pub struct SegmentReader {
    path: PathBuf,
    map: Backing,
    doc_count: u32,
    total_tokens: Vec<u64>,
    /// Byte ranges of the sections within `map`.
    terms: (usize, usize),
    postings: (usize, usize),
    positions: (usize, usize),
    stored: (usize, usize),
    /// The format version of the file.
    version: u32,
    /// The term dictionary, parsed (with its in-memory key sample).
    dict: TermDict,
    /// Per schema field: offset of its norms in `map`.
    norms: Vec<Option<usize>>,
    /// Per schema field: its sort column (offsets into `map`).
    sort: Vec<Option<SortColumnAt>>,
    /// Per schema field: a small numeric sort column's keys, decoded on
    /// first use.
    decoded_keys: Vec<OnceLock<Box<[u64]>>>,
}

#[derive(Clone, Copy, Debug)]
struct SortColumnAt {
    ty: FieldType,
    width: u8,
    cardinality: u32,
    values: (usize, usize),
    ords: (usize, usize),
    blocks: (usize, usize),
}

impl std::fmt::Debug for SegmentReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentReader")
            .field("path", &self.path)
            .field("doc_count", &self.doc_count)
            .finish()
    }
}

impl SegmentReader {
    /// Opens the segment file at `path` in `mode` and checks it against
    /// `schema` and `file_len`, the length its manifest entry records (a
    /// file of another length is `Corrupt` before a byte of it is read).
    pub fn open(
        path: &Path,
        schema: &Schema,
        file_len: u64,
        mode: ReadMode,
    ) -> Result<SegmentReader> {
        let map = Backing::open(path, file_len, mode)?;
        Self::parse(path.to_owned(), map, schema)
    }

    fn parse(path: PathBuf, map: Backing, schema: &Schema) -> Result<SegmentReader> {
        let bytes: &[u8] = &map;
        let (version, _) =
            format::check_file_hashed(&path, bytes, segment::MAGIC, |b| map.crc32(b))?;
        let end = bytes.len() - format::FOOTER_LEN;
        let corrupt = |d: String| Error::corrupt(&path, d);
        let dir_off = u64::from_le_bytes(bytes[end - 8..end].try_into().expect("8"));
        let dir_off = usize::try_from(dir_off)
            .ok()
            .filter(|&o| o >= format::HEADER_LEN && o.checked_add(12).is_some_and(|e| e <= end))
            .ok_or_else(|| corrupt(format!("directory offset {dir_off} out of range")))?;
        let mut r = Reader::new(&path, &bytes[dir_off..end - 8]);
        let count = r.u32()? as usize;
        let mut sections = std::collections::HashMap::new();
        for _ in 0..count {
            let kind = r.u32()?;
            let off = r.usize64()?;
            let len = r.usize64()?;
            if off < format::HEADER_LEN || off.checked_add(len).is_none_or(|e| e > dir_off) {
                return Err(corrupt(format!("section {kind} out of range")));
            }
            sections.insert(kind, (off, off + len));
        }
        let sec = |kind: u32| {
            sections.get(&kind).copied().ok_or_else(|| {
                Error::corrupt(
                    &path,
                    format!("missing section {}", segment::section_name(kind)),
                )
            })
        };
        let nfields = schema.fields().len();

        // Meta.
        let (m0, m1) = sec(segment::SECTION_META)?;
        let mut r = Reader::new(&path, &bytes[m0..m1]);
        let doc_count = r.u32()?;
        if doc_count > segment::MAX_SEGMENT_DOCS {
            return Err(r.err("document count out of range"));
        }
        let n = r.u16()? as usize;
        if n != nfields {
            return Err(r.err(format!("segment has {n} fields, schema has {nfields}")));
        }
        let mut total_tokens = Vec::with_capacity(n);
        for _ in 0..n {
            total_tokens.push(r.u64()?);
        }

        // Terms.
        let terms = sec(segment::SECTION_TERMS)?;
        let postings = sec(segment::SECTION_POSTINGS)?;
        // Version 1 has no positions section.
        let positions = if version >= 2 {
            sec(segment::SECTION_POSITIONS)?
        } else {
            (0, 0)
        };
        let dict = TermDict::parse(
            version,
            &bytes[terms.0..terms.1],
            nfields,
            postings.1 - postings.0,
            positions.1 - positions.0,
        )
        .map_err(|e| corrupt(e.0))?;

        // Norms.
        let (n0, n1) = sec(segment::SECTION_NORMS)?;
        let mut r = Reader::new(&path, &bytes[n0..n1]);
        let mut norms = vec![None; nfields];
        for _ in 0..r.u16()? {
            let f = r.u16()? as usize;
            let at = n0 + r.pos();
            r.bytes(doc_count as usize)?;
            if f >= nfields || schema.fields()[f].ty != FieldType::Text {
                return Err(r.err(format!("norms for field {f}, which is not a text field")));
            }
            norms[f] = Some(at);
        }
        for (f, def) in schema.fields().iter().enumerate() {
            if def.ty == FieldType::Text && norms[f].is_none() {
                return Err(corrupt(format!("no norms for text field {:?}", def.name)));
            }
        }

        // Stored.
        let stored = sec(segment::SECTION_STORED)?;
        if !segment::StoredBlocks::view(&bytes[stored.0..stored.1], doc_count)
            .is_some_and(|b| b.validate())
        {
            return Err(corrupt("stored block index out of range".into()));
        }

        // Sort columns.
        let (s0, s1) = sec(segment::SECTION_SORT)?;
        let mut r = Reader::new(&path, &bytes[s0..s1]);
        let mut sort = vec![None; nfields];
        for _ in 0..r.u16()? {
            let len = r.usize64()?;
            let col_start = s0 + r.pos();
            let col = r.bytes(len)?;
            let at = Self::parse_sort_column(&path, col, col_start, doc_count, schema)?;
            sort[at.0] = Some(at.1);
        }
        for (f, def) in schema.fields().iter().enumerate() {
            if def.flags.sortable && sort[f].is_none() {
                return Err(corrupt(format!(
                    "no ord array for sortable field {:?}",
                    def.name
                )));
            }
        }

        Ok(SegmentReader {
            path,
            map,
            doc_count,
            total_tokens,
            terms,
            postings,
            positions,
            stored,
            version,
            dict,
            norms,
            decoded_keys: sort.iter().map(|_| OnceLock::new()).collect(),
            sort,
        })
    }

    fn parse_sort_column(
        path: &Path,
        col: &[u8],
        base: usize,
        doc_count: u32,
        schema: &Schema,
    ) -> Result<(usize, SortColumnAt)> {
        let mut r = Reader::new(path, col);
        let field = r.u16()? as usize;
        let ty = r.u8()?;
        let width = r.u8()?;
        let cardinality = r.u32()?;
        let values_len = r.usize64()?;
        let def = schema
            .fields()
            .get(field)
            .filter(|d| d.flags.sortable && d.ty.code() == ty)
            .ok_or_else(|| {
                r.err(format!(
                    "ord array for field {field}, which is not sortable"
                ))
            })?;
        if ords::ord_width(u64::from(cardinality)) != width {
            return Err(r.err(format!(
                "ord width {width} wrong for cardinality {cardinality}"
            )));
        }
        let v0 = base + r.pos();
        let values = r.bytes(values_len)?;
        match def.ty {
            FieldType::I64 | FieldType::F64 => {
                if !ords::check_keys(values, cardinality as usize) {
                    return Err(r.err("sort values out of range"));
                }
            }
            _ => {
                let n = cardinality as usize;
                if values.len() < (n + 1) * 4 {
                    return Err(r.err("string sort values truncated"));
                }
                let off = |i: usize| {
                    u32::from_le_bytes(values[i * 4..i * 4 + 4].try_into().expect("4")) as usize
                };
                let blob = &values[(n + 1) * 4..];
                if off(0) != 0 || off(n) != blob.len() {
                    return Err(r.err("string sort values offsets out of range"));
                }
                for i in 0..n {
                    // `get`: an offset past the blob is an error (only the
                    // last one was checked above).
                    if blob
                        .get(off(i)..off(i + 1))
                        .is_none_or(|v| std::str::from_utf8(v).is_err())
                    {
                        return Err(r.err("bad string sort value"));
                    }
                }
            }
        }
        while !r.pos().is_multiple_of(4) {
            r.u8()?;
        }
        let o0 = base + r.pos();
        let olen = ords::packed_len(doc_count as usize, width);
        r.bytes(olen)?;
        let b0 = base + r.pos();
        let blen = (doc_count as usize).div_ceil(ords::ORD_BLOCK) * 8;
        r.bytes(blen)?;
        if r.remaining() != 0 {
            return Err(r.err("trailing bytes in ord array"));
        }
        // Every stored ord must be a value's ord or the missing ord.
        let missing = ords::missing_ord(width);
        let packed = &col[o0 - base..o0 - base + olen];
        for d in 0..doc_count as usize {
            let o = ords::get(packed, width, d);
            if o >= cardinality && o != missing {
                return Err(r.err(format!("ord {o} of document {d} out of range")));
            }
        }
        Ok((
            field,
            SortColumnAt {
                ty: def.ty,
                width,
                cardinality,
                values: (v0, v0 + values_len),
                ords: (o0, o0 + olen),
                blocks: (b0, b0 + blen),
            },
        ))
    }

    /// The file this segment was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Documents in the segment, deleted ones included.
    pub fn doc_count(&self) -> u32 {
        self.doc_count
    }

    /// Bytes of the segment file.
    pub fn file_len(&self) -> usize {
        self.map.len()
    }

    /// Total tokens of a text field over all documents (deleted ones included).
    pub fn total_tokens(&self, field: FieldId) -> u64 {
        self.total_tokens
            .get(field.0 as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Byte length per section kind, for statistics.
    pub fn section_sizes(&self) -> Vec<(&'static str, usize)> {
        let norms: usize = self.norms.iter().flatten().count() * self.doc_count as usize;
        let sort: usize = self
            .sort
            .iter()
            .flatten()
            .map(|s| (s.values.1 - s.values.0) + (s.ords.1 - s.ords.0) + (s.blocks.1 - s.blocks.0))
            .sum();
        vec![
            ("postings", self.postings.1 - self.postings.0),
            ("terms", self.terms.1 - self.terms.0),
            ("norms", norms),
            ("stored", self.stored.1 - self.stored.0),
            ("sort", sort),
            ("positions", self.positions.1 - self.positions.0),
        ]
    }

    /// Bytes of the positions section (0 in a version-1 segment).
    pub fn positions_len(&self) -> usize {
        self.positions.1 - self.positions.0
    }

    /// Bytes of the postings section.
    pub fn postings_len(&self) -> usize {
        self.postings.1 - self.postings.0
    }

    /// The segment file's format version.
    pub fn format_version(&self) -> u32 {
        self.version
    }

    /// Front-coded dictionary blocks of a field (0 in a version-1 segment).
    pub fn num_term_blocks(&self, field: FieldId) -> u32 {
        self.dict.num_blocks(field.0 as usize)
    }

    fn terms_bytes(&self) -> &[u8] {
        &self.map[self.terms.0..self.terms.1]
    }

    /// A dictionary entry as a [`TermInfo`], its frequency checked against
    /// the segment's documents.
    fn info(&self, e: TermEntry) -> Result<TermInfo> {
        if e.df > self.doc_count {
            return Err(Error::corrupt(
                &self.path,
                format!(
                    "a term's document frequency {} exceeds the segment's {} documents",
                    e.df, self.doc_count
                ),
            ));
        }
        Ok(TermInfo {
            df: e.df,
            post_off: e.post_off,
            post_end: e.post_end,
            positions: e.positions,
        })
    }

    fn bad_terms(&self, e: BadTerms) -> Error {
        Error::corrupt(&self.path, e.0)
    }

    /// Looks up a term's key in a field's dictionary.
    pub fn term(&self, field: FieldId, key: &[u8]) -> Result<Option<TermInfo>> {
        match self.dict.lookup(self.terms_bytes(), field.0 as usize, key) {
            Ok(Some(e)) => self.info(e).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(self.bad_terms(e)),
        }
    }

    /// Number of distinct terms of a field.
    pub fn num_terms(&self, field: FieldId) -> u32 {
        self.dict.num_terms(field.0 as usize)
    }

    /// A field's terms in key order (what merging and checking walk):
    /// each version-2 dictionary block is decoded once.
    pub fn terms(&self, field: FieldId) -> Terms<'_> {
        self.terms_from(field, 0)
    }

    /// A field's terms in key order from the first key at or after `key`
    /// (its lower bound): one dictionary lookup, then a walk decoding each
    /// version-2 block once (what prefix and range expansion use).
    pub fn terms_from_key(&self, field: FieldId, key: &[u8]) -> Result<Terms<'_>> {
        match self.dict.seek(self.terms_bytes(), field.0 as usize, key) {
            Ok(cursor) => Ok(Terms { seg: self, cursor }),
            Err(e) => Err(self.bad_terms(e)),
        }
    }

    fn terms_from(&self, field: FieldId, from: u32) -> Terms<'_> {
        Terms {
            seg: self,
            cursor: self.dict.cursor(self.terms_bytes(), field.0 as usize, from),
        }
    }

    /// The `i`-th term (in key order) of a field: its key and postings
    /// info. In a version-2 segment this decodes the term's dictionary
    /// block up to it; to walk a field's terms use [`Self::terms`].
    /// An index past the field's terms is an `InvalidArgument` error, a
    /// dictionary that ends before its count a `Corrupt` one.
    pub fn term_at(&self, field: FieldId, i: u32) -> Result<(Vec<u8>, TermInfo)> {
        let n = self.num_terms(field);
        if i >= n {
            return Err(Error::InvalidArgument(format!(
                "term index {i} is out of range: the field has {n} terms"
            )));
        }
        match self.terms_from(field, i).advance()? {
            Some((key, info)) => Ok((key.to_vec(), info)),
            None => {
                Err(self.bad_terms(BadTerms(format!("the dictionary ends before its term {i}"))))
            }
        }
    }

    /// Drops this process's resident pages of a mapped segment (see
    /// [`ReadMode`]); the next read maps them in again. Lets a reader that
    /// walks a whole segment, as a merge does, keep only what it read
    /// recently resident. Answers are unchanged.
    pub fn release_pages(&self) {
        self.map.release_pages();
    }

    /// The postings of a term found by [`Self::term`].
    pub fn postings(&self, info: &TermInfo) -> Result<Postings<'_>> {
        let region = &self.map[self.postings.0 + info.post_off..self.postings.0 + info.post_end];
        Postings::parse(region, info.df, self.doc_count).map_err(|e| self.bad(e))
    }

    /// The token positions of a term found by [`Self::term`] (or walked
    /// by [`Self::terms`]), `None` for a field without positions (and in
    /// a version-1 segment). Posting `i` of the term's list is posting
    /// `i % BLOCK_LEN` of block `i / BLOCK_LEN`; with the block's
    /// frequencies (`Postings::decode_docs` gives a tail's,
    /// `Postings::decode_tfs` a packed block's),
    /// [`Positions::read`](crate::format::positions::Positions::read)
    /// reads that posting's positions without decoding other blocks' (a
    /// [`PositionsReader`](crate::format::positions::PositionsReader)
    /// per term keeps what it decoded for the next posting of the block):
    ///
    /// ```no_run
    /// # fn f(seg: &quarry::read::SegmentReader, field: quarry::FieldId) -> quarry::Result<()> {
    /// use quarry::format::{positions::PositionsReader, postings::BLOCK_LEN};
    /// let info = seg.term(field, b"fox")?.expect("a term of the segment");
    /// let list = seg.postings(&info)?;
    /// let positions = seg.positions(&info)?.expect("a field with positions");
    /// let (mut docs, mut tfs) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
    /// let (mut out, mut reader) = (Vec::new(), PositionsReader::default());
    /// for b in 0..list.num_blocks() {
    ///     let n = list.decode_docs(b, &mut docs, &mut tfs).map_err(|e| seg.bad(e))?;
    ///     if list.is_packed(b) {
    ///         list.decode_tfs(b, &mut tfs).map_err(|e| seg.bad(e))?;
    ///     }
    ///     for i in 0..n {
    ///         positions.read(&mut reader, b, i, &tfs[..n], &mut out).map_err(|e| seg.bad(e))?;
    ///         // `out`: the ascending token positions of "fox" in docs[i].
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn positions(&self, info: &TermInfo) -> Result<Option<Positions<'_>>> {
        let Some((a, e)) = info.positions else {
            return Ok(None);
        };
        let region = &self.map[self.positions.0 + a..self.positions.0 + e];
        Positions::parse(region, info.df, self.version)
            .map(Some)
            .map_err(|e| self.bad(e))
    }

    /// A `Corrupt` error for a postings problem in this segment.
    pub fn bad(&self, e: BadPostings) -> Error {
        Error::corrupt(&self.path, e.0)
    }

    /// A text field's norms (one byte per document).
    pub fn norms(&self, field: FieldId) -> Option<&[u8]> {
        let at = (*self.norms.get(field.0 as usize)?)?;
        Some(&self.map[at..at + self.doc_count as usize])
    }

    /// A sortable field's ord array.
    pub fn sort_column(&self, field: FieldId) -> Option<SortColumn<'_>> {
        let c = (*self.sort.get(field.0 as usize)?)?;
        let values = &self.map[c.values.0..c.values.1];
        let numeric = matches!(c.ty, FieldType::I64 | FieldType::F64);
        let keys = (numeric && c.cardinality <= DECODED_KEYS).then(|| {
            &**self.decoded_keys[field.0 as usize].get_or_init(|| {
                let n = c.cardinality as usize;
                (0..n).map(|o| ords::key_at(values, n, o)).collect()
            })
        });
        Some(SortColumn {
            ty: c.ty,
            width: c.width,
            cardinality: c.cardinality,
            values,
            keys,
            ords: &self.map[c.ords.0..c.ords.1],
            blocks: &self.map[c.blocks.0..c.blocks.1],
        })
    }

    /// The raw stored bytes of `doc`, decompressing its block into `cache`
    /// unless the cache already holds it (reading documents in order
    /// decompresses each block once).
    pub fn stored_bytes<'c>(&self, doc: u32, cache: &'c mut StoredCache) -> Result<&'c [u8]> {
        if doc >= self.doc_count {
            return Err(Error::InvalidArgument(format!(
                "document {doc} out of range"
            )));
        }
        let blocks =
            segment::StoredBlocks::view(&self.map[self.stored.0..self.stored.1], self.doc_count)
                .expect("checked when the segment was opened");
        let b = blocks.block_of(doc);
        if cache.block != Some(b) {
            cache.block = None;
            cache.first = blocks
                .decode(b, &mut cache.buf, &mut cache.ranges)
                .ok_or_else(|| {
                    Error::corrupt(&self.path, format!("stored block {b} is malformed"))
                })?;
            cache.block = Some(b);
        }
        let (a, e) = *cache
            .ranges
            .get((doc - cache.first) as usize)
            .ok_or_else(|| {
                Error::corrupt(&self.path, format!("stored block {b} lacks document {doc}"))
            })?;
        Ok(&cache.buf[a..e])
    }

    /// Number of compressed blocks of stored documents.
    pub fn stored_block_count(&self) -> usize {
        segment::StoredBlocks::view(&self.map[self.stored.0..self.stored.1], self.doc_count)
            .map_or(0, |b| b.block_count())
    }

    /// The stored values of `doc`.
    pub fn stored(&self, doc: u32) -> Result<Vec<(FieldId, Value)>> {
        let mut cache = StoredCache::default();
        let bytes = self.stored_bytes(doc, &mut cache)?;
        segment::get_stored_values(bytes)
            .map(|v| v.into_iter().map(|(f, v)| (FieldId(f), v)).collect())
            .ok_or_else(|| {
                Error::corrupt(
                    &self.path,
                    format!("stored values of document {doc} are malformed"),
                )
            })
    }
}
