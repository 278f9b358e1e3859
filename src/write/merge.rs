//! Merging segments into one: the sources' live documents, renumbered in
//! order, written through the same [`SegmentWriter`] a flush uses.
//!
//! A merge streams: postings term by term (the sources' term cursors
//! merged by key), stored documents block by block (twice, the block
//! index coming first), sort columns 4096 ords at a time from the
//! sources' ord arrays, and the positions section through a scratch file
//! ([`SegmentWriter`]). What it holds, whatever the number and size of
//! its sources:
//!
//! - of the sources' mapped files, what it read since it last released
//!   their pages: at most [`RELEASE_BYTES`] (32 MiB) and the regions of
//!   the term being merged;
//! - fixed buffers of the output: 1 MiB of file buffer, up to 1 MiB of
//!   positions before they spill, a stored block (16 KiB of raw bytes,
//!   or one document when it is larger), a 1 MiB copy buffer;
//! - per document: 4 bytes (the old-to-new document maps) and 1 byte per
//!   text field (its norms, which the posting blocks' impacts read by
//!   new document);
//! - per term, the longest merged list: 8 bytes a posting (documents and
//!   frequencies), 4 bytes a position for a field with positions, and
//!   the list and its positions encoded;
//! - per sort column, one at a time after the postings: 4 bytes per
//!   distinct value of each source (its ord table) and the merged
//!   column's values (8 bytes a distinct number while they are merged,
//!   then encoded; a string column's distinct strings);
//! - the output's term dictionary, encoded (a few bytes a term), and
//!   each source's in-memory dictionary sample.
//!
//! Nothing else grows with the sources: `docs/perf.md` ("Merge memory")
//! has the measurements.
//!
//! A merge can be cancelled (the writer closing while it runs on the
//! merge thread): it checks its flag between terms and between stored
//! documents, and stops with an error; the caller removes the partial file.

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};
use crate::read::{LiveSegment, SortColumn, StoredCache, TermInfo, Terms};
use crate::schema::{FieldId, FieldType, Schema};
use crate::write::io::IoHooks;
use crate::write::segment_writer::{
    SegmentParts, SegmentWriter, SortColumnFn, SortColumnParts, numeric_values, string_values,
};

/// The error of a merge stopped by its cancel flag.
fn cancelled(path: &Path) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::Interrupted, "merge cancelled"),
    )
}

/// Writes the merge of `sources` to `path`; returns (documents, file length).
/// Stops with an error soon after `cancel` is set.
pub(crate) fn merge_segments(
    schema: &Schema,
    sources: &[LiveSegment],
    path: &Path,
    io: &IoHooks,
    cancel: &AtomicBool,
) -> Result<(u32, u64)> {
    let check = || {
        if cancel.load(Ordering::Relaxed) {
            Err(cancelled(path))
        } else {
            Ok(())
        }
    };
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
    // Start with none of the sources resident (opening them let go of
    // what their CRC checks read, but a searcher may have read more).
    let pager = Pager::new(sources);
    pager.release();

    let mut norms: Vec<(FieldId, Vec<u8>)> = Vec::new();
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
    }

    let mut w = SegmentWriter::create(path, schema, doc_count, io)?;
    let mut total_tokens = vec![0u64; schema.fields().len()];
    let mut docs = Vec::new();
    let mut tfs = Vec::new();
    let mut positions = Vec::new();
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
            check()?;
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
                // Decoded after the postings gathered so far, then
                // renumbered in place, deleted documents' postings dropped.
                let (start, pos_start) = (docs.len(), positions.len());
                reader
                    .postings(info)?
                    .decode_all(&mut docs, &mut tfs)
                    .map_err(|e| reader.bad(e))?;
                if def.positions {
                    // The schema is the index's, so every source has them.
                    let p = reader.positions(info)?.ok_or_else(|| {
                        Error::corrupt(reader.path(), "a term of a field with positions has none")
                    })?;
                    p.decode_all(&tfs[start..], &mut positions)
                        .map_err(|e| reader.bad(e))?;
                }
                let (mut kept, mut pos_kept, mut at) = (start, pos_start, pos_start);
                for i in start..docs.len() {
                    let (nd, tf) = (maps[si][docs[i] as usize], tfs[i]);
                    let next = if def.positions { at + tf as usize } else { at };
                    if nd != u32::MAX {
                        docs[kept] = nd;
                        tfs[kept] = tf;
                        kept += 1;
                        positions.copy_within(at..next, pos_kept);
                        pos_kept += next - at;
                    }
                    at = next;
                }
                docs.truncate(kept);
                tfs.truncate(kept);
                positions.truncate(pos_kept);
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
    drop((docs, tfs, positions));
    let norm_refs: Vec<(FieldId, &[u8])> = norms.iter().map(|(f, n)| (*f, n.as_slice())).collect();
    let pager = &pager;
    let maps = &maps;
    let sort: Vec<SortColumnFn<'_>> = schema
        .iter()
        .filter(|(_, def)| def.flags.sortable)
        .map(|(fid, def)| -> SortColumnFn<'_> {
            Box::new(move || Ok(merged_sort_column(fid, def.ty, sources, maps, pager)))
        })
        .collect();
    let len = w.finish(
        SegmentParts {
            doc_count,
            total_tokens: &total_tokens,
            norms: &norm_refs,
            stored: &|sink| {
                for (s, map) in sources.iter().zip(maps) {
                    let mut cache = StoredCache::default();
                    for d in 0..s.reader.doc_count() {
                        if map[d as usize] != u32::MAX {
                            check()?;
                            let bytes = s.reader.stored_bytes(d, &mut cache)?;
                            pager.read(bytes.len() as u64);
                            sink(bytes)?;
                        }
                    }
                }
                pager.release();
                Ok(())
            },
            sort,
        },
        io,
    )?;
    Ok((doc_count, len))
}

/// The merged column of sortable field `field`: the distinct values of
/// the sources' live documents, merged from the sources' sorted values
/// (each source's ords renumbered through a table of its cardinality),
/// and the live documents' ords read from the sources as they are
/// written. No value is held per document.
fn merged_sort_column<'a>(
    field: FieldId,
    ty: FieldType,
    sources: &'a [LiveSegment],
    maps: &'a [Vec<u32>],
    pager: &'a Pager<'a>,
) -> SortColumnParts<'a> {
    let columns: Vec<_> = sources
        .iter()
        .map(|s| {
            s.reader
                .sort_column(field)
                .expect("sortable fields have ord arrays")
        })
        .collect();
    // Per source, its ord -> the merged ord; u32::MAX until a live
    // document is seen to hold it (a value only deleted documents hold
    // is dropped).
    let mut remap: Vec<Vec<u32>> = columns
        .iter()
        .map(|c| vec![u32::MAX; c.cardinality as usize])
        .collect();
    for ((c, map), r) in columns.iter().zip(maps).zip(&mut remap) {
        let missing = c.missing();
        for (d, &m) in map.iter().enumerate() {
            if m != u32::MAX {
                let o = c.ord(d as u32);
                if o != missing {
                    r[o as usize] = 0;
                }
            }
        }
        pager.read(4 * map.len() as u64);
    }
    // The used values merged: numeric columns by their order-preserving
    // keys, string columns by their bytes.
    let (count, values) = if matches!(ty, FieldType::I64 | FieldType::F64) {
        let mut keys = Vec::new();
        let key = |c: &SortColumn<'a>, o| c.numeric_key(o).expect("numeric");
        let n = merge_values(&columns, &mut remap, key, |k| keys.push(k));
        (n, numeric_values(&keys))
    } else {
        let mut strings = Vec::new();
        let key = |c: &SortColumn<'a>, o| c.str_at(o).as_bytes();
        let n = merge_values(&columns, &mut remap, key, |b| strings.push(b));
        (n, string_values(strings.len(), strings.into_iter()))
    };
    pager.release();
    let ords =
        sources
            .iter()
            .zip(maps)
            .zip(columns)
            .zip(remap)
            .flat_map(move |(((s, map), c), r)| {
                let missing = c.missing();
                (0..s.reader.doc_count())
                    .filter(move |&d| map[d as usize] != u32::MAX)
                    .map(move |d| {
                        pager.read(4);
                        match c.ord(d) {
                            o if o == missing => u32::MAX,
                            o => r[o as usize],
                        }
                    })
            });
    SortColumnParts {
        field,
        ty,
        cardinality: count as usize,
        values,
        ords: Box::new(ords),
    }
}

/// Merges the values of the sources' columns that `remap` marks used (not
/// `u32::MAX`), smallest `key` first: gives each distinct one the next
/// merged ord in every source's `remap` that holds it and hands it to
/// `emit`. Returns the number of distinct values.
fn merge_values<'c, K: Ord + Copy>(
    columns: &[SortColumn<'c>],
    remap: &mut [Vec<u32>],
    key: impl Fn(&SortColumn<'c>, u32) -> K,
    mut emit: impl FnMut(K),
) -> u32 {
    let mut next = vec![0usize; columns.len()];
    let mut count = 0u32;
    loop {
        let mut min: Option<K> = None;
        for ((c, r), n) in columns.iter().zip(&*remap).zip(&mut next) {
            while *n < r.len() && r[*n] == u32::MAX {
                *n += 1;
            }
            if *n < r.len() {
                let k = key(c, *n as u32);
                if min.is_none_or(|m| k < m) {
                    min = Some(k);
                }
            }
        }
        let Some(m) = min else { return count };
        for ((c, r), n) in columns.iter().zip(&mut *remap).zip(&mut next) {
            if *n < r.len() && key(c, *n as u32) == m {
                r[*n] = count;
                *n += 1;
            }
        }
        emit(m);
        count += 1;
    }
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
