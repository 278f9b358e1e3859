//! The in-memory segment: documents added since the last flush, inverted.

use std::path::Path;

use crate::analysis::Scratch;
use crate::document::{Document, Value};
use crate::error::{Error, Result};
use crate::format::manifest::{self, SegmentEntry};
use crate::format::norms::length_to_norm;
use crate::format::segment::{MAX_SEGMENT_DOCS, i64_key, put_stored_value};
use crate::schema::{FieldId, FieldType, Schema};
use crate::write::io::IoHooks;
use crate::write::segment_writer::{SegmentParts, SegmentWriter, SortColumnFn, SortValues};

/// Data bytes of a term's first chunk in the postings arena; each next
/// chunk doubles, up to `FIRST_CHUNK << MAX_LEVEL` bytes.
const FIRST_CHUNK: u32 = 8;
const MAX_LEVEL: u8 = 12;

/// The size class of the chunk after one of class `level`: one more, up to
/// `MAX_LEVEL` (a term's stream may have any number of chunks).
fn next_level(level: u8) -> u8 {
    (level + 1).min(MAX_LEVEL)
}
/// A buffer whose arenas reach this many bytes is full whatever the budget:
/// arena addresses are `u32` (the postings arena's a page index of 12 bits,
/// 4,096 pages of at most 1 MiB), and one more document must still fit.
const ARENA_LIMIT: usize = 3 << 30;

/// One distinct term of a field's buffer.
struct Term {
    /// Its key: `keys[key_off..key_off + key_len]`.
    key_off: u32,
    key_len: u32,
    /// High half of the key's hash (probing starts at its top bits).
    hash: u32,
    /// Arena address of its first chunk, of the write cursor, and of the
    /// end of the cursor's chunk (where that chunk's 4-byte link to the next
    /// chunk goes).
    head: u32,
    cur: u32,
    end: u32,
    /// Size class of the cursor's chunk: its size is `FIRST_CHUNK << level`.
    level: u8,
    /// The last document holding the term, the documents holding it, its
    /// frequency in the last one and the last position recorded there.
    last_doc: u32,
    df: u32,
    tf: u32,
    last_pos: u32,
}

/// A field's inverted documents, compact: term keys interned in one byte
/// arena behind an open-addressing table of term ids, and each term's
/// postings a varint byte stream in chunks of a second arena (chunks double
/// in size and link to the next by its address, as tantivy's stacker).
///
/// A term's stream holds, per document, the document gap (the first
/// document itself), then without positions its frequency, with positions
/// each position's gap to the previous one (from 0) plus one and a 0 that
/// closes the document. The last document's frequency (or closing 0) is
/// written when the next document arrives, so it is never written: the
/// reader takes it from [`Term::tf`] (or the end of the stream).
///
/// [`TermTable::bytes`] is the capacity of all of it, so the memory budget
/// is what the buffer holds.
struct TermTable {
    positions: bool,
    keys: Vec<u8>,
    terms: Terms,
    /// Term id + 1 (0: empty); the length is a power of two, at most half full.
    slots: Vec<u32>,
    arena: Pages,
}

/// Grows `v` by a quarter of its capacity (at least `extra`, at least 4 KiB):
/// large arenas grow in place by `mremap` and so never hold two copies, and
/// the capacity beyond the length stays small.
fn reserve_arena(v: &mut Vec<u8>, extra: usize) {
    if v.capacity() - v.len() < extra {
        v.reserve_exact(extra.max(v.capacity() / 4).max(4096));
    }
}

fn key_hash(key: &[u8]) -> u32 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(key);
    (h.finish() >> 32) as u32
}

/// Address bits of a byte within its page of a [`Pages`] arena.
const PAGE_BITS: u32 = 20;
/// The largest page: 1 MiB. Pages start at `FIRST_PAGE` bytes and double.
const MAX_PAGE: usize = 1 << PAGE_BITS;
const FIRST_PAGE: usize = 4096;
const _: () = assert!(((FIRST_CHUNK as usize) << MAX_LEVEL) + 4 <= MAX_PAGE);

/// The postings arena: zeroed pages that are never moved or resized, a
/// chunk's address being its page's index above `PAGE_BITS` and its offset
/// below. A `Vec` grown by copying would leave its old blocks free in the
/// allocator's heap: glibc serves blocks up to the size of the largest
/// mapped block freed so far (32 MiB at most) from its heaps, so a growing
/// arena would hold up to about twice its length there; pages hold at
/// most a chunk's worth (32 KiB) unused at each page's end.
#[derive(Default)]
struct Pages {
    pages: Vec<Box<[u8]>>,
    /// Bytes used in the last page.
    used: usize,
    /// Bytes of all pages.
    bytes: usize,
}

impl Pages {
    /// A zeroed chunk of `size` data bytes and its 4-byte link slot, in one
    /// page; returns its address.
    fn alloc(&mut self, size: u32) -> u32 {
        let need = size as usize + 4;
        let room = self.pages.last().map_or(0, |p| p.len() - self.used);
        if room < need {
            let next = self
                .pages
                .last()
                .map_or(FIRST_PAGE, |p| (p.len() * 2).min(MAX_PAGE))
                .max(need);
            self.pages.push(vec![0u8; next].into_boxed_slice());
            self.bytes += next;
            self.used = 0;
        }
        let at = ((self.pages.len() - 1) << PAGE_BITS) | self.used;
        self.used += need;
        at as u32
    }

    /// `len` bytes at address `at`, all in one page.
    #[inline]
    fn get(&self, at: u32, len: usize) -> &[u8] {
        let off = at as usize & (MAX_PAGE - 1);
        &self.pages[(at >> PAGE_BITS) as usize][off..off + len]
    }

    #[inline]
    fn get_mut(&mut self, at: u32, len: usize) -> &mut [u8] {
        let off = at as usize & (MAX_PAGE - 1);
        &mut self.pages[(at >> PAGE_BITS) as usize][off..off + len]
    }
}

/// Terms of a [`Terms`] page: 8,192 (about 350 KiB).
const TERM_PAGE_BITS: u32 = 13;
const TERM_PAGE_MASK: usize = (1 << TERM_PAGE_BITS) - 1;

/// A field's terms by id, in pages of `1 << TERM_PAGE_BITS` (each growing
/// as a `Vec` up to that, then the next one starts): like [`Pages`], so
/// that a table of many terms never moves whole.
#[derive(Default)]
struct Terms {
    pages: Vec<Vec<Term>>,
    len: usize,
}

impl Terms {
    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, t: Term) {
        if self.len & TERM_PAGE_MASK == 0 {
            self.pages.push(Vec::new());
        }
        self.pages.last_mut().expect("just made").push(t);
        self.len += 1;
    }

    fn iter(&self) -> impl Iterator<Item = &Term> {
        self.pages.iter().flatten()
    }

    /// Heap bytes held (capacities).
    fn bytes(&self) -> usize {
        let terms: usize = self.pages.iter().map(Vec::capacity).sum();
        terms * std::mem::size_of::<Term>()
            + self.pages.capacity() * std::mem::size_of::<Vec<Term>>()
    }
}

impl std::ops::Index<usize> for Terms {
    type Output = Term;
    #[inline]
    fn index(&self, id: usize) -> &Term {
        &self.pages[id >> TERM_PAGE_BITS][id & TERM_PAGE_MASK]
    }
}

impl std::ops::IndexMut<usize> for Terms {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut Term {
        &mut self.pages[id >> TERM_PAGE_BITS][id & TERM_PAGE_MASK]
    }
}

/// Appends `v` as a LEB128 varint to `t`'s stream, opening chunks as needed.
#[inline]
fn push_varint(arena: &mut Pages, t: &mut Term, v: u64) {
    let mut buf = [0u8; 10];
    let n = crate::format::varint_bytes(v, &mut buf);
    let mut i = 0;
    while i < n {
        if t.cur == t.end {
            t.level = next_level(t.level);
            let next = arena.alloc(FIRST_CHUNK << t.level);
            arena.get_mut(t.end, 4).copy_from_slice(&next.to_le_bytes());
            t.cur = next;
            t.end = next + (FIRST_CHUNK << t.level);
        }
        let k = ((t.end - t.cur) as usize).min(n - i);
        arena.get_mut(t.cur, k).copy_from_slice(&buf[i..i + k]);
        t.cur += k as u32;
        i += k;
    }
}

impl TermTable {
    fn new(positions: bool) -> TermTable {
        TermTable {
            positions,
            keys: Vec::new(),
            terms: Terms::default(),
            slots: vec![0; 16],
            arena: Pages::default(),
        }
    }

    /// Heap bytes held (capacities).
    fn bytes(&self) -> usize {
        self.keys.capacity() + self.terms.bytes() + self.slots.capacity() * 4 + self.arena.bytes
    }

    fn key(&self, t: &Term) -> &[u8] {
        &self.keys[t.key_off as usize..(t.key_off + t.key_len) as usize]
    }

    fn slot_of(&self, hash: u32) -> usize {
        (hash >> (32 - self.slots.len().trailing_zeros())) as usize
    }

    /// The id of `key`'s term, made when new.
    #[inline]
    fn term_id(&mut self, key: &[u8]) -> usize {
        let hash = key_hash(key);
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(hash);
        loop {
            match self.slots[i] {
                0 => break,
                s => {
                    let t = &self.terms[s as usize - 1];
                    if t.hash == hash && self.key(t) == key {
                        return s as usize - 1;
                    }
                }
            }
            i = (i + 1) & mask;
        }
        let id = self.terms.len();
        let key_off = self.keys.len() as u32;
        reserve_arena(&mut self.keys, key.len());
        self.keys.extend_from_slice(key);
        let head = self.arena.alloc(FIRST_CHUNK);
        self.terms.push(Term {
            key_off,
            key_len: key.len() as u32,
            hash,
            head,
            cur: head,
            end: head + FIRST_CHUNK,
            level: 0,
            last_doc: 0,
            df: 0,
            tf: 0,
            last_pos: 0,
        });
        self.slots[i] = id as u32 + 1;
        if self.terms.len() * 2 > self.slots.len() {
            self.grow_slots();
        }
        id
    }

    fn grow_slots(&mut self) {
        // In place: a large table is a mapping that `mremap` grows, where a
        // new table and a freed old one would raise glibc's threshold for
        // mapping large blocks (see [`Pages`]).
        let n = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(n, 0);
        let mask = self.slots.len() - 1;
        for (id, t) in self.terms.iter().enumerate() {
            let mut i = self.slot_of(t.hash);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = id as u32 + 1;
        }
    }

    /// Records one occurrence of `key` in `doc` (at token `position` of
    /// the field, for a field with positions). Documents arrive in
    /// ascending order, a document's positions too.
    #[inline]
    fn add(&mut self, key: &[u8], doc: u32, position: Option<u32>) {
        let id = self.term_id(key);
        let t = &mut self.terms[id];
        let arena = &mut self.arena;
        if t.df == 0 || t.last_doc != doc {
            if t.df > 0 {
                let close = if self.positions { 0 } else { t.tf };
                push_varint(arena, t, u64::from(close));
            }
            let gap = if t.df == 0 { doc } else { doc - t.last_doc };
            push_varint(arena, t, u64::from(gap));
            t.last_doc = doc;
            t.df += 1;
            t.tf = 0;
            t.last_pos = 0;
        }
        t.tf += 1;
        if let Some(p) = position {
            push_varint(arena, t, u64::from(p - t.last_pos) + 1);
            t.last_pos = p;
        }
    }

    /// Term ids in ascending key order.
    fn sorted_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..self.terms.len() as u32).collect();
        ids.sort_unstable_by(|&a, &b| {
            self.key(&self.terms[a as usize])
                .cmp(self.key(&self.terms[b as usize]))
        });
        ids
    }

    /// Decodes term `id`'s postings into `p` (its stream goes through
    /// `p.stream`).
    fn decode(&self, id: u32, p: &mut Postings) {
        let t = &self.terms[id as usize];
        p.clear();
        let (mut at, mut level) = (t.head, 0u8);
        loop {
            let end = at + (FIRST_CHUNK << level);
            if end == t.end {
                p.stream
                    .extend_from_slice(self.arena.get(at, (t.cur - at) as usize));
                break;
            }
            p.stream
                .extend_from_slice(self.arena.get(at, (end - at) as usize));
            at = u32::from_le_bytes(self.arena.get(end, 4).try_into().expect("4 bytes"));
            level = next_level(level);
        }
        let bytes = &p.stream[..];
        let mut pos = 0usize;
        let next = |pos: &mut usize| {
            crate::format::get_varint(bytes, pos).expect("the buffer's own stream")
        };
        let mut doc = 0u32;
        for i in 0..t.df {
            let gap = next(&mut pos) as u32;
            doc = if i == 0 { gap } else { doc + gap };
            p.docs.push(doc);
            let last = i + 1 == t.df;
            if self.positions {
                let (mut tf, mut at) = (0u32, 0u64);
                while !(last && pos == bytes.len()) {
                    let v = next(&mut pos);
                    if v == 0 {
                        break;
                    }
                    at += v - 1;
                    p.positions.push(at as u32);
                    tf += 1;
                }
                p.tfs.push(tf);
            } else {
                p.tfs.push(if last { t.tf } else { next(&mut pos) as u32 });
            }
        }
    }
}

/// One term's postings decoded for the segment writer (reused scratch).
#[derive(Default)]
struct Postings {
    stream: Vec<u8>,
    docs: Vec<u32>,
    tfs: Vec<u32>,
    /// Each posting's positions, posting after posting (fields with positions).
    positions: Vec<u32>,
}

impl Postings {
    fn clear(&mut self) {
        self.stream.clear();
        self.docs.clear();
        self.tfs.clear();
        self.positions.clear();
    }
}

/// Checks `doc`'s values against the schema (`seen`: scratch, one flag a
/// field).
pub(crate) fn validate_values(schema: &Schema, doc: &Document, seen: &mut [bool]) -> Result<()> {
    seen.iter_mut().for_each(|s| *s = false);
    for (field, value) in doc.values() {
        let def = schema
            .get(*field)
            .ok_or_else(|| Error::Schema(format!("field id {} is not in the schema", field.0)))?;
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
        let flag = &mut seen[field.0 as usize];
        if *flag && def.ty != FieldType::Text {
            return Err(Error::Schema(format!(
                "field {:?} given more than once (only text fields may repeat)",
                def.name
            )));
        }
        *flag = true;
    }
    Ok(())
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
    /// Bytes of the sort columns' values (their strings included).
    sort_bytes: usize,
    scratch: Scratch,
    seen: Vec<bool>,
}

impl SegmentBuffer {
    pub(crate) fn new(schema: &Schema) -> SegmentBuffer {
        let fields = schema
            .fields()
            .iter()
            .map(|f| FieldBuf {
                terms: f.is_indexed().then(|| TermTable::new(f.positions)),
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
            sort_bytes: 0,
            scratch: Scratch::default(),
            seen: vec![false; schema.fields().len()],
        }
    }

    pub(crate) fn doc_count(&self) -> u32 {
        self.doc_count
    }

    /// Heap bytes held: the capacities of the term tables, norms, stored
    /// values and offsets, and the sort columns' values.
    pub(crate) fn bytes(&self) -> usize {
        let fields: usize = self
            .fields
            .iter()
            .map(|f| {
                f.terms.as_ref().map_or(0, TermTable::bytes)
                    + f.norms.as_ref().map_or(0, Vec::capacity)
            })
            .sum();
        fields + self.stored_offsets.capacity() * 8 + self.stored_blob.capacity() + self.sort_bytes
    }

    /// Whether the buffer holds `budget` bytes or more (or its arenas near
    /// their address limit): the next document goes to a new segment.
    pub(crate) fn is_full(&self, budget: usize) -> bool {
        self.bytes() >= budget
            || self.fields.iter().any(|f| {
                f.terms
                    .as_ref()
                    .is_some_and(|t| t.arena.bytes.max(t.keys.len()) >= ARENA_LIMIT)
            })
    }

    /// Whether the next document goes to a new segment: the buffer holds
    /// documents and is full ([`Self::is_full`]), or holds `max_docs`
    /// (a segment's limit without).
    pub(crate) fn must_flush(&self, budget: usize, max_docs: Option<u32>) -> bool {
        let n = self.doc_count;
        n > 0
            && (self.is_full(budget)
                || n >= MAX_SEGMENT_DOCS
                || max_docs.is_some_and(|m| n >= m.max(1)))
    }

    /// Checks `doc` against the schema without changing anything.
    pub(crate) fn validate(&mut self, schema: &Schema, doc: &Document) -> Result<()> {
        if self.doc_count >= MAX_SEGMENT_DOCS {
            return Err(Error::InvalidArgument("segment is full".into()));
        }
        validate_values(schema, doc, &mut self.seen)
    }

    /// Adds a document that [`Self::validate`] accepted.
    pub(crate) fn add(&mut self, schema: &Schema, doc: &Document) {
        let d = self.doc_count;
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
                                table.add(tok.text.as_bytes(), d, at);
                                len += 1;
                            });
                        next_position = base.saturating_add(used_positions);
                    }
                    (FieldType::String, Value::Str(s)) => {
                        if let Some(t) = f.terms.as_mut() {
                            t.add(s.as_bytes(), d, None);
                        }
                    }
                    (FieldType::I64, Value::I64(v)) => {
                        if let Some(t) = f.terms.as_mut() {
                            t.add(&i64_key(*v), d, None);
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
            }
            if let Some(sort) = f.sort.as_mut() {
                let v = doc
                    .values()
                    .iter()
                    .find(|(field, _)| field.0 as usize == fid)
                    .map(|(_, v)| v);
                self.sort_bytes += match (sort, v) {
                    (SortValues::I64(col), v) => {
                        col.push(v.and_then(Value::as_i64));
                        16
                    }
                    (SortValues::F64(col), v) => {
                        col.push(v.and_then(Value::as_f64));
                        16
                    }
                    (SortValues::Str(col), v) => {
                        let s = v.and_then(Value::as_str).map(str::to_owned);
                        let heap = s.as_ref().map_or(0, String::capacity);
                        col.push(s);
                        24 + heap
                    }
                };
            }
        }
        self.stored_offsets.push(self.stored_blob.len() as u64);
        self.doc_count += 1;
    }

    /// Writes the buffered documents as segment `id` in `dir` (not yet
    /// committed); returns its manifest entry. A failed write may leave a
    /// partial file ([`super::remove_partial`]).
    pub(crate) fn write_segment(
        &self,
        schema: &Schema,
        dir: &Path,
        id: u64,
        io: &IoHooks,
    ) -> Result<SegmentEntry> {
        let path = dir.join(manifest::segment_name(id));
        let mut w = SegmentWriter::create(&path, schema, self.doc_count, io)?;
        let mut p = Postings::default();
        for (fid, f) in self.fields.iter().enumerate() {
            let Some(table) = &f.terms else { continue };
            let has_positions = schema.fields()[fid].positions;
            for id in table.sorted_ids() {
                table.decode(id, &mut p);
                w.add_term(
                    FieldId(fid as u16),
                    table.key(&table.terms[id as usize]),
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
        let sort: Vec<SortColumnFn<'_>> = self
            .fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let s = f.sort.as_ref()?;
                Some(Box::new(move || Ok(s.column(FieldId(i as u16)))) as SortColumnFn<'_>)
            })
            .collect();
        let file_len = w.finish(
            SegmentParts {
                doc_count: self.doc_count,
                total_tokens: &total_tokens,
                norms: &norms,
                stored: &|sink| {
                    for d in self.stored_offsets.windows(2) {
                        sink(&self.stored_blob[d[0] as usize..d[1] as usize])?;
                    }
                    Ok(())
                },
                sort,
            },
            io,
        )?;
        Ok(SegmentEntry {
            id,
            doc_count: self.doc_count,
            del_count: 0,
            del_gen: 0,
            file_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// (key, doc, positions) occurrences decode to what a map of vectors holds.
    fn check(positions: bool, occurrences: &[(u8, u32, u32)]) {
        let mut table = TermTable::new(positions);
        let mut model: BTreeMap<Vec<u8>, Vec<(u32, Vec<u32>)>> = BTreeMap::new();
        // Documents ascending, positions ascending within a document.
        let mut occ = occurrences.to_vec();
        occ.sort_by_key(|&(_, doc, pos)| (doc, pos));
        for &(k, doc, pos) in &occ {
            // Keys of several lengths share prefixes, so probing compares bytes.
            let key = vec![b'a' + k % 7; 1 + (k as usize % 5)];
            table.add(&key, doc, positions.then_some(pos));
            let list = model.entry(key).or_default();
            match list.last_mut() {
                Some((d, ps)) if *d == doc => ps.push(pos),
                _ => list.push((doc, vec![pos])),
            }
        }
        let ids = table.sorted_ids();
        assert_eq!(ids.len(), model.len());
        let mut p = Postings::default();
        for (id, (key, list)) in ids.into_iter().zip(&model) {
            assert_eq!(table.key(&table.terms[id as usize]), &key[..]);
            table.decode(id, &mut p);
            let docs: Vec<u32> = list.iter().map(|x| x.0).collect();
            let tfs: Vec<u32> = list.iter().map(|x| x.1.len() as u32).collect();
            assert_eq!(p.docs, docs);
            assert_eq!(p.tfs, tfs);
            let want: Vec<u32> = if positions {
                list.iter().flat_map(|x| x.1.iter().copied()).collect()
            } else {
                Vec::new()
            };
            assert_eq!(p.positions, want);
        }
    }

    proptest! {
        #[test]
        fn term_table_decodes_what_was_added(
            positions in any::<bool>(),
            occ in proptest::collection::vec((0u8..60, 0u32..200, 0u32..100_000), 0..3000),
        ) {
            check(positions, &occ);
        }
    }

    #[test]
    fn long_streams_cross_many_chunks() {
        // One term in every document, with large gaps and positions: its
        // stream runs through chunks up to the largest size.
        let occ: Vec<(u8, u32, u32)> = (0..40_000u32)
            .flat_map(|d| [(0, d * 97, d), (0, d * 97, d + 1_000_000), (1, d * 97, 3)])
            .collect();
        check(true, &occ);
        check(false, &occ);
    }

    #[test]
    fn streams_of_more_than_256_chunks_decode() {
        // A common term with positions: 2M postings of 6 bytes each, about
        // 370 chunks, most of them of the largest size (a chunk count past
        // any small integer's range).
        let mut table = TermTable::new(true);
        let n = 2_000_000u32;
        for d in 0..n {
            table.add(b"the", d, Some(100_000_000 + d));
        }
        let mut p = Postings::default();
        table.decode(0, &mut p);
        assert!(p.stream.len() > 256 * (FIRST_CHUNK << MAX_LEVEL) as usize);
        // Through the small pages to many of the largest.
        let pages = &table.arena.pages;
        assert!(pages.len() > 16 && pages.iter().filter(|p| p.len() == MAX_PAGE).count() > 8);
        assert_eq!(p.docs.len(), n as usize);
        assert!(p.docs.iter().enumerate().all(|(i, &d)| d == i as u32));
        assert!(p.tfs.iter().all(|&tf| tf == 1));
        assert!(
            p.positions
                .iter()
                .enumerate()
                .all(|(i, &x)| x == 100_000_000 + i as u32)
        );
    }
}
