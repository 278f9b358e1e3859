//! The term dictionary (segment section 2): per field, its terms in key
//! order, each with its document frequency and its postings region. This
//! module is the one place both layouts are encoded and decoded; the
//! segment writer feeds [`TermsEncoder`], the segment reader and the
//! checker read through [`TermDict`] and [`TermCursor`].
//!
//! Version 2 (written): front-coded blocks of [`BLOCK_TERMS`] terms.
//!
//! ```text
//! u16 field_count
//! field_count x u32 term_count          ordinals run on from field to field
//! u32 block_count                       = sum of ceil(term_count / BLOCK_TERMS)
//! block_count x u32 block_offset        within `blocks`; the first 0, strictly ascending
//! u32 blocks_len
//! blocks: per field, its terms cut into blocks of BLOCK_TERMS (the last may
//!         be shorter), a block never holding two fields' terms:
//!   varint postings_base                its first term's postings offset
//!   entries x { varint shared,          bytes shared with the previous key
//!                                       of the block (0 for the first)
//!               varint suffix_len, suffix bytes,
//!               varint doc_freq,
//!               varint postings_len }   the region's length; the next
//!                                       term's region starts where it ends
//! ```
//!
//! A block's first key is stored whole, so a lookup binary-searches the
//! blocks by their first keys (narrowed first by an in-memory sample of
//! their 8-byte prefixes, built at open) and then scans one block.
//!
//! Version 1 (read only): a fixed 16-byte entry per term and the keys
//! concatenated.
//!
//! ```text
//! u16 field_count
//! field_count x { u32 first_term, u32 term_count }
//! u32 term_count
//! term_count x { u32 key_offset, u32 doc_freq, u64 postings_offset }
//! u32 keys_len
//! keys
//! ```

use std::cmp::Ordering;

use super::{get_varint, put_varint};

/// Terms per front-coded block of a version-2 dictionary (see
/// `docs/FORMAT.md`, "Term dictionary block size", for the measurement).
pub const BLOCK_TERMS: usize = 16;

/// Bytes of one version-1 term entry.
const V1_ENTRY: usize = 16;

/// Keys per in-memory sample of a version-1 dictionary.
const V1_STRIDE: usize = 32;

/// What is wrong with a dictionary's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadTerms(pub String);

fn bad<T>(what: impl Into<String>) -> Result<T, BadTerms> {
    Err(BadTerms(what.into()))
}

/// One term's dictionary entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermEntry {
    /// Documents containing the term.
    pub df: u32,
    /// Start of its postings region within the postings section.
    pub post_off: usize,
    /// End of the region.
    pub post_end: usize,
    /// Its positions region within the positions section (start, end),
    /// for a field with positions.
    pub positions: Option<(usize, usize)>,
}

/// Encodes a version-2 dictionary from terms given in (field, key) order.
#[derive(Debug)]
pub struct TermsEncoder {
    counts: Vec<u32>,
    offsets: Vec<u32>,
    blocks: Vec<u8>,
    prev: Vec<u8>,
    field: usize,
    in_block: usize,
    post_end: u64,
    /// Per field: whether its terms have positions regions.
    positions: Vec<bool>,
    pos_end: u64,
}

/// A dictionary or region too large for its u32 fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge;

impl TermsEncoder {
    /// An encoder for a schema whose fields have positions where
    /// `positions` says, over postings and positions sections whose first
    /// regions start at offset 0.
    pub fn new(positions: Vec<bool>) -> TermsEncoder {
        TermsEncoder {
            counts: vec![0; positions.len()],
            offsets: Vec::new(),
            blocks: Vec::new(),
            prev: Vec::new(),
            field: 0,
            in_block: 0,
            post_end: 0,
            positions,
            pos_end: 0,
        }
    }

    /// Adds the next term: `field` and `key` ascending, its postings region
    /// `post_len` bytes right after the previous term's, and for a field
    /// with positions its positions region of `pos_len` bytes likewise.
    pub fn add(
        &mut self,
        field: usize,
        key: &[u8],
        df: u32,
        post_len: u64,
        pos_len: Option<u64>,
    ) -> Result<(), TooLarge> {
        debug_assert!(field >= self.field && field < self.counts.len());
        debug_assert_eq!(pos_len.is_some(), self.positions[field]);
        if field != self.field || self.in_block == BLOCK_TERMS || self.offsets.is_empty() {
            self.field = field;
            self.in_block = 0;
            self.offsets
                .push(u32::try_from(self.blocks.len()).map_err(|_| TooLarge)?);
            put_varint(&mut self.blocks, self.post_end);
            if self.positions[field] {
                put_varint(&mut self.blocks, self.pos_end);
            }
            self.prev.clear();
        }
        let shared = self
            .prev
            .iter()
            .zip(key)
            .take_while(|(a, b)| a == b)
            .count();
        debug_assert!(self.in_block == 0 || self.prev.as_slice() < key);
        put_varint(&mut self.blocks, shared as u64);
        put_varint(&mut self.blocks, (key.len() - shared) as u64);
        self.blocks.extend_from_slice(&key[shared..]);
        put_varint(&mut self.blocks, u64::from(df));
        put_varint(&mut self.blocks, post_len);
        if let Some(n) = pos_len {
            put_varint(&mut self.blocks, n);
            self.pos_end += n;
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.in_block += 1;
        self.counts[field] = self.counts[field].checked_add(1).ok_or(TooLarge)?;
        self.post_end += post_len;
        Ok(())
    }

    /// Appends the encoded section to `out`.
    pub fn finish(self, out: &mut Vec<u8>) -> Result<(), TooLarge> {
        let (head, blocks) = self.finish_parts()?;
        out.extend_from_slice(&head);
        out.extend_from_slice(&blocks);
        Ok(())
    }

    /// The encoded section in two parts, to be written one after the
    /// other: the counts and block offsets, then the blocks (so a writer
    /// need not copy the blocks to lay out the section).
    pub fn finish_parts(self) -> Result<(Vec<u8>, Vec<u8>), TooLarge> {
        let blocks_len = u32::try_from(self.blocks.len()).map_err(|_| TooLarge)?;
        let mut out = Vec::with_capacity(2 + 5 * self.counts.len() + 8 + 4 * self.offsets.len());
        out.extend_from_slice(&(self.counts.len() as u16).to_le_bytes());
        for (c, &p) in self.counts.iter().zip(&self.positions) {
            out.extend_from_slice(&c.to_le_bytes());
            out.push(u8::from(p));
        }
        out.extend_from_slice(&(self.offsets.len() as u32).to_le_bytes());
        for o in &self.offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        out.extend_from_slice(&blocks_len.to_le_bytes());
        Ok((out, self.blocks))
    }
}

/// One field's slice of the dictionary.
#[derive(Clone, Copy, Debug, Default)]
struct FieldTerms {
    /// Its first term's ordinal (version 1: its first entry).
    first: u32,
    count: u32,
    /// Version 2: its first block.
    first_block: u32,
    /// Version 2: its terms have positions regions.
    positions: bool,
}

/// The layout-specific part of a parsed dictionary (offsets within the section).
#[derive(Clone, Copy, Debug)]
enum Layout {
    V1 {
        entries: usize,
        nterms: u32,
        keys: usize,
        keys_len: usize,
    },
    V2 {
        index: usize,
        nblocks: u32,
        blocks: usize,
        blocks_len: usize,
    },
}

/// A parsed term dictionary of either version. It holds no borrow: every
/// method takes the section's bytes, which must be the ones it was parsed
/// from.
#[derive(Clone, Debug)]
pub struct TermDict {
    layout: Layout,
    fields: Vec<FieldTerms>,
    /// Per field, its in-memory key sample.
    samples: Vec<Sample>,
    postings_len: usize,
    positions_len: usize,
}

/// One field's in-memory key sample: the 8-byte [`key_prefix`] of the
/// first key of each of its units (version 1: every [`V1_STRIDE`]-th key;
/// version 2: each block), so a lookup binary-searches integers in memory
/// before it reads keys.
#[derive(Clone, Debug, Default)]
struct Sample {
    prefixes: Vec<u64>,
    /// For a field of at least [`BY_BYTE_UNITS`] units (else empty):
    /// `by_byte[c]` is the number of units whose prefix's first byte is
    /// below `c` (257 entries), so a search starts among one first byte's
    /// units.
    by_byte: Vec<u32>,
}

/// Units from which a field's sample is also indexed by first byte.
const BY_BYTE_UNITS: usize = 64;

impl Sample {
    fn new(prefixes: Vec<u64>) -> Sample {
        let mut by_byte = Vec::new();
        if prefixes.len() >= BY_BYTE_UNITS {
            // Counted, not searched: monotone and within the sample even
            // over a damaged dictionary's unsorted keys.
            by_byte = vec![0u32; 257];
            for &x in &prefixes {
                by_byte[(x >> 56) as usize + 1] += 1;
            }
            for c in 1..257 {
                by_byte[c] += by_byte[c - 1];
            }
        }
        Sample { prefixes, by_byte }
    }

    fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// The units whose prefix is `p`, as `below..not_above`: those before
    /// start below a key of prefix `p`, those from `not_above` on above it.
    #[inline]
    fn equal_range(&self, p: u64) -> (u32, u32) {
        let (lo, hi) = match self.by_byte.as_slice() {
            [] => (0, self.prefixes.len()),
            t => {
                let c = (p >> 56) as usize;
                (t[c] as usize, t[c + 1] as usize)
            }
        };
        let within = &self.prefixes[lo..hi];
        let not_above = within.partition_point(|&x| x <= p);
        // Usually no unit shares the prefix: one search, one compare.
        let below = match not_above.checked_sub(1) {
            Some(last) if within[last] == p => within[..last].partition_point(|&x| x < p),
            _ => not_above,
        };
        ((lo + below) as u32, (lo + not_above) as u32)
    }
}

/// The first eight bytes of `key`, zero-padded, as a big-endian integer:
/// integer order agrees with key order wherever two prefixes differ.
#[inline]
fn key_prefix(key: &[u8]) -> u64 {
    if let Some(head) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    // A short key byte by byte (a copy of a variable length is a call).
    key.iter()
        .enumerate()
        .fold(0, |p, (i, &b)| p | u64::from(b) << (56 - 8 * i))
}

fn le32(s: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(s[at..at + 4].try_into().expect("4"))
}

fn le64(s: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(s[at..at + 8].try_into().expect("8"))
}

/// A bounds-checked cursor over the section for parsing.
struct Take<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Take<'_> {
    fn skip(&mut self, n: usize, what: &str) -> Result<usize, BadTerms> {
        let at = self.pos;
        match at.checked_add(n).filter(|&e| e <= self.s.len()) {
            Some(e) => self.pos = e,
            None => return bad(format!("term dictionary truncated in its {what}")),
        }
        Ok(at)
    }
    fn u16(&mut self) -> Result<u16, BadTerms> {
        let at = self.skip(2, "header")?;
        Ok(u16::from_le_bytes([self.s[at], self.s[at + 1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32, BadTerms> {
        let at = self.skip(4, what)?;
        Ok(le32(self.s, at))
    }
}

impl TermDict {
    /// Parses a dictionary of format `version` over postings and positions
    /// sections of `postings_len` and `positions_len` bytes, checking its
    /// framing and building the in-memory key sample (which reads one key
    /// per sample unit).
    pub fn parse(
        version: u32,
        s: &[u8],
        nfields: usize,
        postings_len: usize,
        positions_len: usize,
    ) -> Result<TermDict, BadTerms> {
        let mut t = Take { s, pos: 0 };
        if t.u16()? as usize != nfields {
            return bad("term table field count disagrees with schema");
        }
        let mut fields = vec![FieldTerms::default(); nfields];
        let layout = if version == 1 {
            for f in fields.iter_mut() {
                f.first = t.u32("field ranges")?;
                f.count = t.u32("field ranges")?;
            }
            let nterms = t.u32("header")?;
            if fields
                .iter()
                .any(|f| u64::from(f.first) + u64::from(f.count) > u64::from(nterms))
            {
                return bad("field term range out of range");
            }
            let entries = t.skip(nterms as usize * V1_ENTRY, "entries")?;
            let keys_len = t.u32("header")? as usize;
            let keys = t.skip(keys_len, "keys")?;
            Layout::V1 {
                entries,
                nterms,
                keys,
                keys_len,
            }
        } else {
            let (mut first, mut first_block) = (0u64, 0u64);
            for f in fields.iter_mut() {
                f.count = t.u32("field counts")?;
                let at = t.skip(1, "field counts")?;
                f.positions = match s[at] {
                    0 => false,
                    1 => true,
                    x => return bad(format!("unknown field dictionary flags {x:#x}")),
                };
                f.first = u32::try_from(first).or_else(|_| bad("too many terms"))?;
                f.first_block = u32::try_from(first_block).or_else(|_| bad("too many blocks"))?;
                first += u64::from(f.count);
                first_block += (f.count as usize).div_ceil(BLOCK_TERMS) as u64;
            }
            let nblocks = t.u32("header")?;
            if u64::from(nblocks) != first_block {
                return bad(format!(
                    "{nblocks} term blocks, the fields' term counts make {first_block}"
                ));
            }
            let index = t.skip(nblocks as usize * 4, "block index")?;
            let blocks_len = t.u32("header")? as usize;
            let blocks = t.skip(blocks_len, "blocks")?;
            if t.pos != s.len() {
                return bad("trailing bytes after the term blocks");
            }
            let mut prev = None;
            for b in 0..nblocks as usize {
                let off = le32(s, index + 4 * b) as usize;
                let ok = match prev {
                    None => off == 0,
                    Some(p) => off > p,
                };
                if !ok || off >= blocks_len {
                    return bad(format!("term block {b} offset {off} out of order or range"));
                }
                prev = Some(off);
            }
            Layout::V2 {
                index,
                nblocks,
                blocks,
                blocks_len,
            }
        };
        let mut dict = TermDict {
            layout,
            fields,
            samples: Vec::new(),
            postings_len,
            positions_len,
        };
        dict.samples = (0..nfields)
            .map(|f| {
                (0..dict.units(f))
                    .map(|u| dict.unit_key(s, f, u).map(key_prefix))
                    .collect::<Result<_, _>>()
                    .map(Sample::new)
            })
            .collect::<Result<_, _>>()?;
        Ok(dict)
    }

    /// The format version the dictionary was parsed as.
    pub fn version(&self) -> u32 {
        match self.layout {
            Layout::V1 { .. } => 1,
            Layout::V2 { .. } => 2,
        }
    }

    /// Terms of field `f` (0 for a field past the schema).
    pub fn num_terms(&self, f: usize) -> u32 {
        self.fields.get(f).map_or(0, |x| x.count)
    }

    /// Front-coded blocks of field `f` (0 in version 1).
    pub fn num_blocks(&self, f: usize) -> u32 {
        match self.layout {
            Layout::V1 { .. } => 0,
            Layout::V2 { .. } => self.num_terms(f).div_ceil(BLOCK_TERMS as u32),
        }
    }

    /// Sample units of field `f`.
    fn units(&self, f: usize) -> u32 {
        let stride = match self.layout {
            Layout::V1 { .. } => V1_STRIDE,
            Layout::V2 { .. } => BLOCK_TERMS,
        };
        self.fields[f].count.div_ceil(stride as u32)
    }

    /// The first key of unit `u` of field `f`.
    fn unit_key<'s>(&self, s: &'s [u8], f: usize, u: u32) -> Result<&'s [u8], BadTerms> {
        let ft = self.fields[f];
        match self.layout {
            Layout::V1 { .. } => self.v1_key(s, ft.first + u * V1_STRIDE as u32),
            Layout::V2 { .. } => {
                let mut b = self.block(s, ft.first_block + u);
                let key = b.base(ft.positions).and_then(|_| b.key());
                let (shared, suffix) = key.ok_or_else(|| b.damaged())?;
                if shared != 0 {
                    return bad(format!(
                        "term block {} starts with a key sharing {shared} bytes",
                        ft.first_block + u
                    ));
                }
                Ok(suffix)
            }
        }
    }

    /// Version 1: entry `i`'s (key offset, df, postings offset).
    fn v1_entry(&self, s: &[u8], i: u32) -> (usize, u32, usize) {
        let Layout::V1 { entries, .. } = self.layout else {
            unreachable!("a version-1 entry of a version-2 dictionary")
        };
        let at = entries + i as usize * V1_ENTRY;
        (
            le32(s, at) as usize,
            le32(s, at + 4),
            le64(s, at + 8) as usize,
        )
    }

    fn v1_key<'s>(&self, s: &'s [u8], i: u32) -> Result<&'s [u8], BadTerms> {
        let Layout::V1 {
            nterms,
            keys,
            keys_len,
            ..
        } = self.layout
        else {
            unreachable!("a version-1 key of a version-2 dictionary")
        };
        let start = self.v1_entry(s, i).0;
        let end = if i + 1 < nterms {
            self.v1_entry(s, i + 1).0
        } else {
            keys_len
        };
        if start > end || end > keys_len {
            return bad(format!("term key {i} out of range"));
        }
        Ok(&s[keys + start..keys + end])
    }

    fn v1_info(&self, s: &[u8], i: u32) -> Result<TermEntry, BadTerms> {
        let Layout::V1 { nterms, .. } = self.layout else {
            unreachable!("a version-1 entry of a version-2 dictionary")
        };
        let (_, df, post_off) = self.v1_entry(s, i);
        let post_end = if i + 1 < nterms {
            self.v1_entry(s, i + 1).2
        } else {
            self.postings_len
        };
        self.entry(
            df,
            Spans {
                post: post_off,
                pos: 0,
            },
            Spans {
                post: post_end,
                pos: 0,
            },
            false,
            i,
        )
    }

    /// An entry with its region checked against the postings section.
    fn entry(
        &self,
        df: u32,
        start: Spans,
        end: Spans,
        positions: bool,
        i: u32,
    ) -> Result<TermEntry, BadTerms> {
        if start.post > end.post
            || end.post > self.postings_len
            || start.pos > end.pos
            || end.pos > self.positions_len
            || df == 0
        {
            return bad(format!("term entry {i} out of range"));
        }
        Ok(TermEntry {
            df,
            post_off: start.post,
            post_end: end.post,
            positions: positions.then_some((start.pos, end.pos)),
        })
    }

    /// Version 2: a reader at the start of block `b`.
    #[inline]
    fn block<'s>(&self, s: &'s [u8], b: u32) -> BlockReader<'s> {
        let Layout::V2 {
            index,
            nblocks,
            blocks,
            blocks_len,
        } = self.layout
        else {
            unreachable!("a version-2 block of a version-1 dictionary")
        };
        debug_assert!(b < nblocks);
        let start = le32(s, index + 4 * b as usize) as usize;
        let end = if b + 1 < nblocks {
            le32(s, index + 4 * (b as usize + 1)) as usize
        } else {
            blocks_len
        };
        BlockReader {
            bytes: &s[blocks..blocks + end],
            pos: start,
            block: b,
        }
    }

    /// Version 2: the number of terms in block `u` of field `f`.
    fn block_terms(&self, f: usize, u: u32) -> u32 {
        let count = self.fields[f].count;
        (count - u * BLOCK_TERMS as u32).min(BLOCK_TERMS as u32)
    }

    /// Looks up `key` in field `f`.
    pub fn lookup(&self, s: &[u8], f: usize, key: &[u8]) -> Result<Option<TermEntry>, BadTerms> {
        Ok(self.find(s, f, key)?.1)
    }

    /// A cursor over field `f`'s terms in key order from the first key at
    /// or after `key` (its lower bound): one lookup, then the walk.
    pub fn seek<'d, 's>(
        &'d self,
        s: &'s [u8],
        f: usize,
        key: &[u8],
    ) -> Result<TermCursor<'d, 's>, BadTerms> {
        let (from, _) = self.find(s, f, key)?;
        Ok(self.cursor(s, f, from))
    }

    /// Where `key` falls among field `f`'s terms: the ordinal (within the
    /// field) of the first term at or after it, and that term's entry if
    /// its key is `key`.
    fn find(&self, s: &[u8], f: usize, key: &[u8]) -> Result<(u32, Option<TermEntry>), BadTerms> {
        let Some(ft) = self.fields.get(f).copied() else {
            return Ok((0, None));
        };
        // Units whose sampled prefix is below the key's start below it;
        // those above start above it; only equal prefixes need the keys.
        let sample = &self.samples[f];
        let p = key_prefix(key);
        let (below, not_above) = sample.equal_range(p);
        match self.layout {
            Layout::V1 { .. } => {
                let stride = V1_STRIDE as u32;
                let mut lo = match below {
                    0 => ft.first,
                    k => ft.first + (k - 1) * stride + 1,
                };
                let mut hi = if (not_above as usize) < sample.len() {
                    ft.first + not_above * stride
                } else {
                    ft.first + ft.count
                };
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    match self.v1_key(s, mid)?.cmp(key) {
                        Ordering::Less => lo = mid + 1,
                        Ordering::Greater => hi = mid,
                        Ordering::Equal => {
                            return Ok((mid - ft.first, Some(self.v1_info(s, mid)?)));
                        }
                    }
                }
                Ok((lo - ft.first, None))
            }
            Layout::V2 { .. } => {
                // The key can only be in the last block whose first key is
                // at most the key: among the equal-prefix blocks by their
                // keys, else the last block below them.
                let (mut lo, mut hi) = (below, not_above);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    match self.unit_key(s, f, mid)?.cmp(key) {
                        Ordering::Less => lo = mid + 1,
                        Ordering::Greater => hi = mid,
                        Ordering::Equal => {
                            lo = mid + 1;
                            break;
                        }
                    }
                }
                let Some(u) = lo.checked_sub(1) else {
                    return Ok((0, None));
                };
                let b = self.block(s, ft.first_block + u);
                let n = self.block_terms(f, u);
                let found = if ft.positions {
                    b.find::<true>(key, n)
                } else {
                    b.find::<false>(key, n)
                };
                let (j, hit) = found.ok_or_else(|| b.damaged())?;
                let i = u * BLOCK_TERMS as u32 + j;
                match hit {
                    Some((df, start, end)) => {
                        let e = self.entry(df, start, end, ft.positions, ft.first + i)?;
                        Ok((i, Some(e)))
                    }
                    None => Ok((i, None)),
                }
            }
        }
    }

    /// A cursor over field `f`'s terms in key order, from ordinal `from`
    /// (within the field).
    pub fn cursor<'d, 's>(&'d self, s: &'s [u8], f: usize, from: u32) -> TermCursor<'d, 's> {
        TermCursor {
            dict: self,
            s,
            f,
            next: from,
            key: Vec::new(),
            block: None,
            at: Spans::default(),
        }
    }
}

/// Reads one version-2 block's varints. Its reads return `None` on bytes
/// that do not decode (a varint past the block, a suffix running past
/// it, a value too large); the caller turns that into one error
/// ([`BlockReader::damaged`]), so the scans' inner loops carry no error
/// values.
struct BlockReader<'s> {
    bytes: &'s [u8],
    pos: usize,
    /// Its number, for errors.
    block: u32,
}

impl<'s> BlockReader<'s> {
    /// The error for a block whose bytes do not decode.
    #[cold]
    fn damaged(&self) -> BadTerms {
        BadTerms(format!(
            "term block {} does not decode at byte {}",
            self.block, self.pos
        ))
    }
    #[inline(always)]
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(get_varint(self.bytes, &mut self.pos)?).ok()
    }
    /// A block's starting offsets.
    #[inline(always)]
    fn base(&mut self, positions: bool) -> Option<Spans> {
        let post = self.usize()?;
        let pos = if positions { self.usize()? } else { 0 };
        Some(Spans { post, pos })
    }
    /// The next `n` bytes.
    #[inline(always)]
    fn take(&mut self, n: usize) -> Option<&'s [u8]> {
        let at = self.pos;
        let bytes = self.bytes.get(at..at.checked_add(n)?)?;
        self.pos = at + n;
        Some(bytes)
    }
    /// A key's shared length and suffix bytes.
    #[inline(always)]
    fn key(&mut self) -> Option<(usize, &'s [u8])> {
        let shared = self.usize()?;
        let n = self.usize()?;
        Some((shared, self.take(n)?))
    }
    /// A term's df and region lengths.
    #[inline(always)]
    fn stats(&mut self, positions: bool) -> Option<(u32, Spans)> {
        let df = u32::try_from(get_varint(self.bytes, &mut self.pos)?).ok()?;
        Some((df, self.base(positions)?))
    }

    /// Scans the block from its start for `key`, over its `n` entries: the
    /// index of the first entry whose key is at or after `key`, and if that
    /// key is `key`, its df and region (start, end). `POSITIONS`: the
    /// field's entries have positions regions (a constant, so the loop
    /// tests nothing per entry for it).
    ///
    /// No key is rebuilt: `matched` is how many bytes the previous key
    /// shares with `key` (all previous keys sort below it). A key sharing
    /// more than that with its predecessor also sorts below, whatever its
    /// suffix; one sharing at most that compares by its suffix. The
    /// position is a local (not the reader's field) so that it stays in a
    /// register; on an error the reader is left at the block's start.
    #[inline(always)]
    fn find<const POSITIONS: bool>(&self, key: &[u8], n: u32) -> Option<(u32, Option<Hit>)> {
        // A varint of one or two bytes inline (keys and the lengths of
        // most regions); a longer one out of line, taking the position by
        // value so that it stays in a register here.
        #[inline(never)]
        fn long(bytes: &[u8], mut pos: usize) -> Option<(usize, usize)> {
            let v = usize::try_from(get_varint(bytes, &mut pos)?).ok()?;
            Some((v, pos))
        }
        #[inline(always)]
        fn next(bytes: &[u8], pos: &mut usize) -> Option<usize> {
            let b = *bytes.get(*pos)?;
            if b < 0x80 {
                *pos += 1;
                return Some(usize::from(b));
            }
            if let Some(&c) = bytes.get(*pos + 1)
                && c < 0x80
            {
                *pos += 2;
                return Some(usize::from(b & 0x7f) | usize::from(c) << 7);
            }
            let (v, end) = long(bytes, *pos)?;
            *pos = end;
            Some(v)
        }
        // A varint passed over unread: up to its first byte below 0x80.
        #[inline(always)]
        fn skip(bytes: &[u8], pos: &mut usize) -> Option<()> {
            loop {
                let b = *bytes.get(*pos)?;
                *pos += 1;
                if b < 0x80 {
                    return Some(());
                }
            }
        }
        #[inline(always)]
        fn spans<const POSITIONS: bool>(bytes: &[u8], pos: &mut usize) -> Option<Spans> {
            let post = next(bytes, pos)?;
            let pos = if POSITIONS { next(bytes, pos)? } else { 0 };
            Some(Spans { post, pos })
        }
        let bytes = self.bytes;
        let mut pos = self.pos;
        let mut at = spans::<POSITIONS>(bytes, &mut pos)?;
        let mut matched = 0;
        for j in 0..n {
            let shared = next(bytes, &mut pos)?;
            let len = next(bytes, &mut pos)?;
            let end = pos.checked_add(len)?;
            let suffix = bytes.get(pos..end)?;
            pos = end;
            if shared <= matched {
                // `shared <= matched <= key.len()`.
                let rest = &key[shared..];
                let common = suffix.iter().zip(rest).take_while(|(a, b)| a == b).count();
                matched = shared + common;
                // The first byte past the common part decides (a key that
                // ends there sorts first).
                match suffix.get(common).cmp(&rest.get(common)) {
                    Ordering::Less => {}
                    Ordering::Greater => return Some((j, None)),
                    Ordering::Equal => {
                        let df = u32::try_from(next(bytes, &mut pos)?).ok()?;
                        let lens = spans::<POSITIONS>(bytes, &mut pos)?;
                        return Some((j, Some((df, at, at.after(lens)?))));
                    }
                }
            }
            // Past this key: its df unread, its regions added up.
            skip(bytes, &mut pos)?;
            at = at.after(spans::<POSITIONS>(bytes, &mut pos)?)?;
        }
        Some((n, None))
    }
}

/// A found term's df and region (start, end).
type Hit = (u32, Spans, Spans);

/// Offsets (or lengths) in the postings and positions sections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Spans {
    post: usize,
    pos: usize,
}

impl Spans {
    /// The offsets just past regions of `lens` starting here.
    #[inline(always)]
    fn after(self, lens: Spans) -> Option<Spans> {
        Some(Spans {
            post: self.post.checked_add(lens.post)?,
            pos: self.pos.checked_add(lens.pos)?,
        })
    }
}

/// Iterates a field's terms in key order (see [`TermDict::cursor`]),
/// decoding each version-2 block once. In version 2 it also checks that
/// each block's postings start where the previous term's end and that a
/// block's entries fill it exactly.
pub struct TermCursor<'d, 's> {
    dict: &'d TermDict,
    s: &'s [u8],
    f: usize,
    next: u32,
    key: Vec<u8>,
    block: Option<BlockReader<'s>>,
    at: Spans,
}

impl TermCursor<'_, '_> {
    /// The next term: its key and entry, or `None` past the field's last.
    pub fn advance(&mut self) -> Result<Option<(&[u8], TermEntry)>, BadTerms> {
        let d = self.dict;
        let Some(ft) = d.fields.get(self.f).copied() else {
            return Ok(None);
        };
        if self.next >= ft.count {
            return Ok(None);
        }
        let i = self.next;
        self.next += 1;
        let entry = match d.layout {
            Layout::V1 { .. } => {
                self.key.clear();
                self.key.extend_from_slice(d.v1_key(self.s, ft.first + i)?);
                d.v1_info(self.s, ft.first + i)?
            }
            Layout::V2 { .. } => {
                let u = i / BLOCK_TERMS as u32;
                let j = i % BLOCK_TERMS as u32;
                if j == 0 || self.block.is_none() {
                    let mut b = d.block(self.s, ft.first_block + u);
                    let base = b.base(ft.positions).ok_or_else(|| b.damaged())?;
                    if self.block.is_some() && base != self.at {
                        return bad(format!(
                            "term block {} puts its regions at {base:?}, the previous term's end at {:?}",
                            ft.first_block + u,
                            self.at
                        ));
                    }
                    self.at = base;
                    self.key.clear();
                    self.block = Some(b);
                    // A cursor started inside a block skips to its term.
                    for _ in 0..j {
                        self.step(ft.positions)?;
                    }
                }
                let (df, start) = self.step(ft.positions)?;
                if j + 1 == d.block_terms(self.f, u)
                    && let Some(b) = &self.block
                    && b.pos != b.bytes.len()
                {
                    return bad(format!(
                        "term block {} has {} bytes past its last entry",
                        ft.first_block + u,
                        b.bytes.len() - b.pos
                    ));
                }
                d.entry(df, start, self.at, ft.positions, ft.first + i)?
            }
        };
        Ok(Some((&self.key, entry)))
    }

    /// Decodes the open block's next entry into `key`, moving `at` past
    /// its regions: (df, their start).
    fn step(&mut self, positions: bool) -> Result<(u32, Spans), BadTerms> {
        let b = self.block.as_mut().expect("a block is open");
        let (shared, suffix) = b.key().ok_or_else(|| b.damaged())?;
        if shared > self.key.len() {
            return bad(format!(
                "term key shares {shared} bytes with a previous key of {}",
                self.key.len()
            ));
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(suffix);
        let stats = b
            .stats(positions)
            .and_then(|(df, lens)| Some((df, self.at.after(lens)?)));
        let (df, end) = stats.ok_or_else(|| b.damaged())?;
        let start = self.at;
        self.at = end;
        Ok((df, start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (field, key, df, postings length) terms of a two-field dictionary.
    fn sample_terms() -> Vec<(usize, Vec<u8>, u32, u64)> {
        let mut out = Vec::new();
        for i in 0..100u32 {
            // Shared prefixes longer than the 8-byte sample, and short keys.
            out.push((
                0,
                format!("prefixprefix{i:04}").into_bytes(),
                i + 1,
                3 + u64::from(i % 7),
            ));
        }
        for i in 0..(BLOCK_TERMS as u32 * 2) {
            out.push((2, format!("k{i:03}").into_bytes(), 1, 2));
        }
        out.sort();
        out
    }

    fn encode(terms: &[(usize, Vec<u8>, u32, u64)]) -> (Vec<u8>, usize) {
        let mut e = TermsEncoder::new(vec![false, false, true]);
        for (f, k, df, len) in terms {
            let pos = (*f == 2).then_some(2 * *len);
            e.add(*f, k, *df, *len, pos).unwrap();
        }
        let mut out = Vec::new();
        e.finish(&mut out).unwrap();
        let total = terms.iter().map(|t| t.3 as usize).sum();
        (out, total)
    }

    fn positions_len(terms: &[(usize, Vec<u8>, u32, u64)]) -> usize {
        terms
            .iter()
            .filter(|t| t.0 == 2)
            .map(|t| 2 * t.3 as usize)
            .sum()
    }

    #[test]
    fn v2_round_trips_by_lookup_and_cursor() {
        let terms = sample_terms();
        let (s, post_len) = encode(&terms);
        let d = TermDict::parse(2, &s, 3, post_len, positions_len(&terms)).unwrap();
        assert_eq!(
            (d.num_terms(0), d.num_terms(1), d.num_terms(2)),
            (100, 0, 32)
        );
        assert_eq!(d.num_blocks(0), 7);
        let (mut off, mut pos) = (0, 0);
        for (f, k, df, len) in &terms {
            let e = d.lookup(&s, *f, k).unwrap().unwrap();
            let positions = (*f == 2).then(|| (pos, pos + 2 * *len as usize));
            assert_eq!(
                e,
                TermEntry {
                    df: *df,
                    post_off: off,
                    post_end: off + *len as usize,
                    positions,
                }
            );
            off += *len as usize;
            pos = positions.map_or(pos, |p| p.1);
            let mut longer = k.clone();
            longer.push(0);
            assert_eq!(d.lookup(&s, *f, &longer).unwrap(), None);
            assert_eq!(d.lookup(&s, *f, &k[..k.len() - 1]).unwrap(), None);
            assert_eq!(d.lookup(&s, 1, k).unwrap(), None);
        }
        for missing in [
            &b""[..],
            b"\0",
            b"zzzz",
            b"prefixprefix",
            b"prefixprefix9999",
        ] {
            assert_eq!(d.lookup(&s, 0, missing).unwrap(), None);
        }
        for f in 0..3 {
            let want: Vec<_> = terms.iter().filter(|t| t.0 == f).collect();
            for from in [0, 1, 15, 16, 17] {
                let mut c = d.cursor(&s, f, from);
                let mut got = Vec::new();
                while let Some((k, e)) = c.advance().unwrap() {
                    got.push((k.to_vec(), e.df));
                }
                let expect: Vec<_> = want
                    .iter()
                    .skip(from as usize)
                    .map(|t| (t.1.clone(), t.2))
                    .collect();
                assert_eq!(got, expect, "field {f} from {from}");
            }
        }
    }

    /// Field `f`'s keys from a cursor, at most `n`.
    fn keys(mut c: TermCursor<'_, '_>, n: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while out.len() < n
            && let Some((k, _)) = c.advance().unwrap()
        {
            out.push(k.to_vec());
        }
        out
    }

    #[test]
    fn v2_seek_starts_at_the_lower_bound() {
        let terms = sample_terms();
        let (s, post_len) = encode(&terms);
        let d = TermDict::parse(2, &s, 3, post_len, positions_len(&terms)).unwrap();
        for f in 0..3 {
            let field: Vec<&Vec<u8>> = terms.iter().filter(|t| t.0 == f).map(|t| &t.1).collect();
            let mut probes: Vec<Vec<u8>> = vec![b"".to_vec(), b"\0".to_vec(), b"zzzz".to_vec()];
            for k in &field {
                probes.push(k.to_vec());
                probes.push([&k[..], b"\0"].concat());
                probes.push(k[..k.len() - 1].to_vec());
            }
            for p in &probes {
                let want: Vec<Vec<u8>> = field
                    .iter()
                    .filter(|k| k.as_slice() >= p.as_slice())
                    .take(20)
                    .map(|k| k.to_vec())
                    .collect();
                let got = keys(d.seek(&s, f, p).unwrap(), 20);
                assert_eq!(got, want, "field {f} seek {p:?}");
            }
        }
    }

    #[test]
    fn v2_damage_is_an_error_never_a_panic() {
        let terms = sample_terms();
        let (s, post_len) = encode(&terms);
        let pos_len = positions_len(&terms);
        for at in 0..s.len() {
            for flip in [0x01u8, 0xff] {
                let mut bad = s.clone();
                bad[at] ^= flip;
                let Ok(d) = TermDict::parse(2, &bad, 3, post_len, pos_len) else {
                    continue;
                };
                for (f, k, ..) in &terms {
                    let _ = d.lookup(&bad, *f, k);
                    if let Ok(mut c) = d.seek(&bad, *f, k) {
                        let _ = c.advance();
                    }
                }
                for f in 0..3 {
                    let mut c = d.cursor(&bad, f, 0);
                    while let Ok(Some(_)) = c.advance() {}
                }
            }
        }
        for cut in 0..s.len() {
            assert!(TermDict::parse(2, &s[..cut], 3, post_len, pos_len).is_err());
        }
    }
}
