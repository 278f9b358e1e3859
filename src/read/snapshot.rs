//! A committed snapshot: the newest manifest and its segments.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::manifest::{self, Manifest, SegmentEntry};
use crate::read::backing::{ReadMode, wrong_length};
use crate::read::segment::SegmentReader;

/// A segment of a snapshot with its deletions.
#[derive(Clone, Debug)]
pub struct LiveSegment {
    /// The segment.
    pub reader: Arc<SegmentReader>,
    /// Deleted-document bits, if any document is deleted.
    pub deletes: Option<Arc<Vec<u64>>>,
    /// The manifest's entry for it.
    pub entry: SegmentEntry,
    /// Global number of its first document in the snapshot.
    pub base: u64,
}

/// Whether `bits` (deleted-document bits, a bit per document of a
/// segment) marks local document `doc` deleted.
#[inline]
pub(crate) fn is_deleted_in(bits: &[u64], doc: u32) -> bool {
    bits[(doc >> 6) as usize] & (1u64 << (doc & 63)) != 0
}

impl LiveSegment {
    /// Whether local document `doc` is deleted.
    #[inline]
    pub fn is_deleted(&self, doc: u32) -> bool {
        match &self.deletes {
            None => false,
            Some(bits) => is_deleted_in(bits, doc),
        }
    }

    /// Documents not deleted.
    pub fn live_docs(&self) -> u32 {
        self.entry.doc_count - self.entry.del_count
    }
}

/// One committed generation of an index, ready to search.
#[derive(Debug)]
pub struct Snapshot {
    dir: PathBuf,
    manifest: Manifest,
    segments: Vec<LiveSegment>,
    mode: ReadMode,
}

/// The newest manifest in `dir`, or `None` when there is none.
///
/// A damaged newest manifest is an error, not a reason to fall back to an
/// older one: manifests are published by an atomic rename after an fsync, so
/// a crash can leave only a whole manifest or none.
pub fn latest_manifest(dir: &Path) -> Result<Option<(PathBuf, Manifest)>> {
    latest_manifest_attempt(dir, 0)
}

fn latest_manifest_attempt(dir: &Path, attempt: u32) -> Result<Option<(PathBuf, Manifest)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NoIndex(dir.to_owned())
        } else {
            Error::io(dir, e)
        }
    })?;
    let mut best: Option<(u64, PathBuf)> = None;
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name();
        if let Some(g) = name.to_str().and_then(manifest::parse_manifest_name)
            && best.as_ref().is_none_or(|(b, _)| g > *b)
        {
            best = Some((g, e.path()));
        }
    }
    let Some((g, path)) = best else {
        return Ok(None);
    };
    // A writer removes superseded manifests; one may vanish between the
    // listing and the read. Then list again.
    let bytes = match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt < 8 => {
            return latest_manifest_attempt(dir, attempt + 1);
        }
        r => r.map_err(|e| Error::io(&path, e))?,
    };
    let m = Manifest::decode(&path, &bytes)?;
    if m.generation != g {
        return Err(Error::corrupt(
            &path,
            format!("names generation {g}, holds {}", m.generation),
        ));
    }
    Ok(Some((path, m)))
}

impl Snapshot {
    /// Opens the newest commit in `dir`, mapping its segments.
    pub fn open(dir: &Path) -> Result<Snapshot> {
        Self::open_with(dir, ReadMode::Mmap)
    }

    /// Opens the newest commit in `dir`, reading its segments in `mode`.
    pub fn open_with(dir: &Path, mode: ReadMode) -> Result<Snapshot> {
        Self::open_in(dir, mode, None)
    }

    /// Opens the newest commit in `previous`'s mode, reusing the segments
    /// of `previous` that are unchanged. A reused segment's file must still
    /// have the length its manifest records (else `Corrupt` naming it): a
    /// reopen reports a committed file changed behind quarry's back.
    pub fn open_reusing(dir: &Path, previous: Option<&Snapshot>) -> Result<Snapshot> {
        let mode = previous.map_or(ReadMode::Mmap, |p| p.mode);
        Self::open_in(dir, mode, previous)
    }

    fn open_in(dir: &Path, mode: ReadMode, previous: Option<&Snapshot>) -> Result<Snapshot> {
        // A writer may remove files of superseded commits between our reading
        // the manifest and opening its segments; then read the newer manifest.
        let mut attempt = 0;
        loop {
            let Some((_, manifest)) = latest_manifest(dir)? else {
                return Err(Error::NoIndex(dir.to_owned()));
            };
            match Self::load(dir, manifest, mode, previous) {
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound && attempt < 8 =>
                {
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn load(
        dir: &Path,
        manifest: Manifest,
        mode: ReadMode,
        previous: Option<&Snapshot>,
    ) -> Result<Snapshot> {
        let mut segments = Vec::with_capacity(manifest.segments.len());
        let mut base = 0u64;
        for entry in &manifest.segments {
            let reuse = previous.and_then(|p| {
                p.segments
                    .iter()
                    .find(|s| s.entry.id == entry.id && p.manifest.schema == manifest.schema)
            });
            let path = dir.join(manifest::segment_name(entry.id));
            let reader = match reuse {
                Some(s) => {
                    // Only the file's length, never the reused bytes: with
                    // a mapping, touching a truncated file's pages would
                    // raise SIGBUS.
                    let len = std::fs::metadata(&path)
                        .map_err(|e| Error::io(&path, e))?
                        .len();
                    if len != entry.file_len {
                        return Err(wrong_length(&path, len, entry.file_len));
                    }
                    s.reader.clone()
                }
                None => {
                    let r = SegmentReader::open(&path, &manifest.schema, entry.file_len, mode)?;
                    if r.doc_count() != entry.doc_count {
                        return Err(Error::corrupt(
                            &path,
                            "segment size disagrees with the manifest",
                        ));
                    }
                    Arc::new(r)
                }
            };
            let deletes = match reuse {
                Some(s) if s.entry.del_gen == entry.del_gen => s.deletes.clone(),
                _ if entry.del_gen == 0 => None,
                _ => {
                    let path = dir.join(manifest::tombstone_name(entry.id, entry.del_gen));
                    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                    let (bits, del) = manifest::decode_tombstones(&path, &bytes, entry.doc_count)?;
                    if del != entry.del_count {
                        return Err(Error::corrupt(
                            &path,
                            "deleted count disagrees with the manifest",
                        ));
                    }
                    Some(Arc::new(bits))
                }
            };
            segments.push(LiveSegment {
                reader,
                deletes,
                entry: entry.clone(),
                base,
            });
            base += u64::from(entry.doc_count);
        }
        Ok(Snapshot {
            dir: dir.to_owned(),
            manifest,
            segments,
            mode,
        })
    }

    /// How its segments were read (reopening keeps it).
    pub fn read_mode(&self) -> ReadMode {
        self.mode
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest this snapshot was opened from.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Its segments in doc-number order.
    pub fn segments(&self) -> &[LiveSegment] {
        &self.segments
    }

    /// Bytes per section kind (`postings`, `terms`, `norms`, `stored`,
    /// `sort`, `positions`), summed over its segments, in that order.
    pub fn section_sizes(&self) -> Vec<(&'static str, u64)> {
        let mut sums: Vec<(&'static str, u64)> = Vec::new();
        for seg in &self.segments {
            for (name, n) in seg.reader.section_sizes() {
                match sums.iter_mut().find(|(c, _)| *c == name) {
                    Some((_, sum)) => *sum += n as u64,
                    None => sums.push((name, n as u64)),
                }
            }
        }
        sums
    }

    /// Documents including deleted ones (one past the largest doc number).
    pub fn max_doc(&self) -> u64 {
        self.segments
            .iter()
            .map(|s| u64::from(s.entry.doc_count))
            .sum()
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        self.segments.iter().map(|s| u64::from(s.live_docs())).sum()
    }

    /// The segment holding global doc number `doc`, and the local doc id.
    pub fn locate(&self, doc: u64) -> Option<(&LiveSegment, u32)> {
        locate(&self.segments, doc)
    }
}

/// Of `segments` (in document order, numbered by their `base`), the one
/// holding document `doc`, and its local id there.
pub fn locate(segments: &[LiveSegment], doc: u64) -> Option<(&LiveSegment, u32)> {
    let i = segments.partition_point(|s| s.base + u64::from(s.entry.doc_count) <= doc);
    let s = segments.get(i).filter(|s| doc >= s.base)?;
    Some((s, (doc - s.base) as u32))
}
