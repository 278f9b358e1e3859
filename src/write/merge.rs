//! Merging segments into one: the sources' live documents, renumbered in
//! order, written through the same [`SegmentWriter`] a flush uses.

use std::cell::Cell;
use std::path::Path;

use crate::document::Value;
use crate::error::{Error, Result};
use crate::read::{LiveSegment, StoredCache, TermInfo, Terms};
use crate::schema::{FieldId, FieldType, Schema};
use crate::write::io::IoHooks;
use crate::write::segment_writer::{SegmentParts, SegmentWriter, SortValues};

/// Writes the merge of `sources` to `path`; returns (documents, file length).
pub(crate) fn merge_segments(
    schema: &Schema,
    sources: &[LiveSegment],
    path: &Path,
    io: &IoHooks,
) -> Result<(u32, u64)> {
    // Old doc -> new doc per source (u32::MAX for deleted documents).
    let mut maps = Vec::with_capacity(sources.len());
    let mut next = 0u32;
    for s in sources {
        let map: Vec<u32> = (0..s.reader.doc_count())
            .map(|d| {
                if s.is_deleted(d) {
                    u32::MAX
                } else {
                    next += 1;
                    next - 1
                }
            })
            .collect();
        maps.push(map);
    }
    let doc_count = next;
    let pager = Pager::new(sources);

    let mut norms: Vec<(FieldId, Vec<u8>)> = Vec::new();
    let mut sort: Vec<(FieldId, SortValues)> = Vec::new();
    for (fid, def) in schema.iter() {
        if def.ty == FieldType::Text {
            let mut n = Vec::with_capacity(doc_count as usize);
            for (s, map) in sources.iter().zip(&maps) {
                let src = s.reader.norms(fid).expect("text fields have norms");
                n.extend(
                    src.iter()
                        .zip(map)
                        .filter(|(_, m)| **m != u32::MAX)
                        .map(|(b, _)| *b),
                );
                pager.read(src.len() as u64);
            }
            norms.push((fid, n));
        }
        if def.flags.sortable {
            let mut col = SortValues::new(def.ty);
            for (s, map) in sources.iter().zip(&maps) {
                let c = s
                    .reader
                    .sort_column(fid)
                    .expect("sortable fields have ord arrays");
                let missing = c.missing();
                for d in 0..s.reader.doc_count() {
                    if map[d as usize] == u32::MAX {
                        continue;
                    }
                    pager.read(4);
                    let o = c.ord(d);
                    let v = (o != missing).then(|| c.value(o));
                    match (&mut col, v) {
                        (SortValues::I64(x), v) => x.push(v.and_then(|v| v.as_i64())),
                        (SortValues::F64(x), v) => x.push(v.and_then(|v| v.as_f64())),
                        (SortValues::Str(x), v) => x.push(v.and_then(|v| match v {
                            Value::Str(s) => Some(s),
                            _ => None,
                        })),
                    }
                }
            }
            sort.push((fid, col));
        }
    }

    let mut stored_offsets = vec![0u64];
    let mut stored_blob = Vec::new();
    for (s, map) in sources.iter().zip(&maps) {
        let mut cache = StoredCache::default();
        for d in 0..s.reader.doc_count() {
            if map[d as usize] != u32::MAX {
                let bytes = s.reader.stored_bytes(d, &mut cache)?;
                pager.read(bytes.len() as u64);
                stored_blob.extend_from_slice(bytes);
                stored_offsets.push(stored_blob.len() as u64);
            }
        }
    }

    let mut w = SegmentWriter::create(path, schema, doc_count, io)?;
    let mut total_tokens = vec![0u64; schema.fields().len()];
    let mut docs = Vec::new();
    let mut tfs = Vec::new();
    let mut src_docs = Vec::new();
    let mut src_tfs = Vec::new();
    let mut positions = Vec::new();
    let mut src_positions = Vec::new();
    for (fid, def) in schema.iter() {
        if !def.is_indexed() {
            continue;
        }
        let field_norms = norms
            .iter()
            .find(|(f, _)| *f == fid)
            .map(|(_, n)| n.as_slice());
        // The sources' term cursors merged by key; a key's postings are
        // concatenated in source order, which is new-document order.
        let mut cursors: Vec<Terms<'_>> = sources.iter().map(|s| s.reader.terms(fid)).collect();
        let mut heads: Vec<Option<(Vec<u8>, TermInfo)>> = vec![None; sources.len()];
        for (t, h) in cursors.iter_mut().zip(&mut heads) {
            next_term(t, h)?;
        }
        let mut key = Vec::new();
        while let Some(min) = heads.iter().flatten().map(|h| &h.0).min() {
            key.clear();
            key.extend_from_slice(min);
            docs.clear();
            tfs.clear();
            positions.clear();
            for (si, (t, h)) in cursors.iter_mut().zip(&mut heads).enumerate() {
                let Some((k, info)) = h.as_ref() else {
                    continue;
                };
                if *k != key {
                    continue;
                }
                let reader = &sources[si].reader;
                let pos_len = info.positions_region().map_or(0, |(a, e)| e - a);
                pager.read((info.region_len() + pos_len) as u64);
                src_docs.clear();
                src_tfs.clear();
                reader
                    .postings(info)?
                    .decode_all(&mut src_docs, &mut src_tfs)
                    .map_err(|e| reader.bad(e))?;
                src_positions.clear();
                if def.positions {
                    // The schema is the index's, so every source has them.
                    let p = reader.positions(info)?.ok_or_else(|| {
                        Error::corrupt(reader.path(), "a term of a field with positions has none")
                    })?;
                    p.decode_all(&src_tfs, &mut src_positions)
                        .map_err(|e| reader.bad(e))?;
                }
                let mut at = 0;
                for (&d, &tf) in src_docs.iter().zip(&src_tfs) {
                    let nd = maps[si][d as usize];
                    let next = at + tf as usize;
                    if nd != u32::MAX {
                        docs.push(nd);
                        tfs.push(tf);
                        if def.positions {
                            positions.extend_from_slice(&src_positions[at..next]);
                        }
                    }
                    at = next;
                }
                next_term(t, h)?;
            }
            if !docs.is_empty() {
                if def.ty == FieldType::Text {
                    total_tokens[fid.0 as usize] += tfs.iter().map(|&t| u64::from(t)).sum::<u64>();
                }
                let pos = def.positions.then_some(&positions[..]);
                w.add_term(fid, &key, &docs, &tfs, field_norms, pos, io)?;
            }
        }
    }
    let norm_refs: Vec<(FieldId, &[u8])> = norms.iter().map(|(f, n)| (*f, n.as_slice())).collect();
    let sort_refs: Vec<(FieldId, &SortValues)> = sort.iter().map(|(f, s)| (*f, s)).collect();
    let len = w.finish(
        &SegmentParts {
            doc_count,
            total_tokens: &total_tokens,
            norms: &norm_refs,
            stored_offsets: &stored_offsets,
            stored_blob: &stored_blob,
            sort: &sort_refs,
        },
        io,
    )?;
    Ok((doc_count, len))
}

/// Moves a source's cursor to its next term, copying the key into `head`
/// (`None` past its last term).
fn next_term(t: &mut Terms<'_>, head: &mut Option<(Vec<u8>, TermInfo)>) -> Result<()> {
    match t.advance()? {
        Some((k, info)) => {
            let h = head.get_or_insert_with(|| (Vec::new(), info));
            h.0.clear();
            h.0.extend_from_slice(k);
            h.1 = info;
        }
        None => *head = None,
    }
    Ok(())
}

/// Bytes a merge reads from its sources' mappings between two releases of
/// their pages.
const RELEASE_BYTES: u64 = 32 << 20;

/// Counts the bytes a merge reads from its sources and releases their
/// mapped pages ([`crate::read::SegmentReader::release_pages`]) every
/// [`RELEASE_BYTES`], so that about that much of the sources' files is
/// resident at a time, whatever their number and size.
struct Pager<'a> {
    sources: &'a [LiveSegment],
    read: Cell<u64>,
}

impl<'a> Pager<'a> {
    fn new(sources: &'a [LiveSegment]) -> Pager<'a> {
        Pager {
            sources,
            read: Cell::new(0),
        }
    }

    fn read(&self, bytes: u64) {
        self.read.set(self.read.get() + bytes);
        if self.read.get() >= RELEASE_BYTES {
            self.release();
        }
    }

    fn release(&self) {
        for s in self.sources {
            s.reader.release_pages();
        }
        self.read.set(0);
    }
}
