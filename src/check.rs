//! The integrity checker (`quarry check`): every file of the newest commit
//! against its checksum and the format's structural invariants.
//!
//! Like Lucene's CheckIndex or SQLite's `PRAGMA integrity_check`, it
//! reports every problem it finds, each with the file and what is wrong,
//! and never modifies the index: files are only read (segments mapped
//! read-only) and no lock is taken. That is safe beside a live writer
//! because committed files are immutable; a writer may remove the files of
//! a superseded commit meanwhile, which then shows as missing files (check
//! again). A segment the reader cannot open (bad checksum, a section out of
//! range) is one problem; the deep checks then skip that file.
//!
//! Checked per segment, beyond what opening it checks: terms strictly
//! ascending and well-formed per field, each dictionary block decoding
//! exactly, postings regions following each other in term order and
//! filling the postings section (positions regions likewise, for exactly
//! the terms of fields with positions, each decoding to its frequencies'
//! count of positions below the document's field length); every posting list decodes, its doc
//! ids ascend strictly below the document count, its frequencies are at
//! least 1, its blocks are contiguous and fill its region exactly (so the
//! document frequency is the list's length); skip entries' last docs and
//! offsets agree with the decoded blocks; block impacts are a frontier that
//! dominates every document of the block, second-level impacts dominate
//! their blocks' impacts; per text field each document's frequencies sum
//! to the length its norm encodes and all of them to the field's token
//! total; sort values strictly ascending, per-block ord bounds exact; every
//! stored document decodes into values of stored fields. Per commit: every
//! file the manifest references is present with the recorded length and
//! document count, tombstones cover exactly the segment's documents and
//! agree with the manifest's deletion count.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::document::Value;
use crate::error::{Error, Result};
use crate::format::manifest::{self, Manifest, SegmentEntry};
use crate::format::norms::length_to_norm;
use crate::format::postings::{BLOCK_LEN, Impact, L2_BLOCKS, Postings};
use crate::format::{ords, segment};
use crate::read::{ReadMode, SegmentReader, StoredCache, TermInfo, latest_manifest};
use crate::schema::{FieldId, FieldType, Schema};

/// Problems recorded per file before the rest are only counted.
const MAX_PROBLEMS_PER_FILE: usize = 100;

/// What kind of problem a file has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// The bytes break the format (checksum, structure, invariant).
    Corrupt,
    /// An intact file of a format version this build does not read.
    UnsupportedVersion,
    /// A file the manifest references is absent.
    Missing,
    /// The file could not be read.
    Io,
}

/// One problem: the file and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// Its kind.
    pub kind: ProblemKind,
    /// What is wrong.
    pub detail: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.detail)
    }
}

/// What the checker saw: counts of what it verified, and the problems.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Generation of the manifest checked (`None` when it was unreadable).
    pub generation: Option<u64>,
    /// Files checked (manifest, segments, tombstones).
    pub files: usize,
    /// Segments listed by the manifest.
    pub segments: usize,
    /// Documents in them, deleted ones included.
    pub documents: u64,
    /// Deleted documents (tombstone bits).
    pub deleted: u64,
    /// Terms checked.
    pub terms: u64,
    /// Postings (document, frequency pairs) checked.
    pub postings: u64,
    /// Format structures seen, so a test can tell which ones a set of files
    /// exercises.
    pub structures: Structures,
    /// Every problem found.
    pub problems: Vec<Problem>,
}

/// Counts of the format's structures in the checked files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Structures {
    /// Posting lists with skip data (at least one full block).
    pub skip_lists: u64,
    /// Bitpacked 128-document blocks.
    pub packed_blocks: u64,
    /// Varint tail blocks (including lists shorter than a block).
    pub tail_blocks: u64,
    /// Patched-frame-of-reference exceptions in doc-gap runs.
    pub doc_exceptions: u64,
    /// Exceptions in frequency runs.
    pub tf_exceptions: u64,
    /// Second-level skip entries.
    pub l2_entries: u64,
    /// Posting lists with more than one second-level entry.
    pub multi_l2_lists: u64,
    /// Posting lists with a presence bitmap (version 5 on).
    pub presence_lists: u64,
    /// Block impact lists holding the full [`crate::format::postings::MAX_IMPACTS`] pairs.
    pub full_impact_lists: u64,
    /// Sort columns seen per ord width (1, 2, 4, 8, 16, 32 bits).
    pub ord_widths: Vec<u8>,
    /// Compressed blocks of stored documents.
    pub stored_blocks: u64,
    /// Tombstone files.
    pub tombstone_files: u64,
    /// Front-coded term dictionary blocks (version-2 segments).
    pub term_blocks: u64,
    /// Terms with positions.
    pub position_lists: u64,
    /// Segments per format version: `segment_versions[v - 1]` of version `v`.
    pub segment_versions: Vec<u64>,
}

impl Report {
    /// Whether no problem was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Problems of one file, capped at [`MAX_PROBLEMS_PER_FILE`].
struct FileProblems<'a> {
    file: &'a Path,
    out: &'a mut Vec<Problem>,
    recorded: usize,
    dropped: usize,
}

impl<'a> FileProblems<'a> {
    fn new(file: &'a Path, out: &'a mut Vec<Problem>) -> Self {
        FileProblems {
            file,
            out,
            recorded: 0,
            dropped: 0,
        }
    }

    fn push(&mut self, detail: impl Into<String>) {
        if self.recorded < MAX_PROBLEMS_PER_FILE {
            self.out.push(Problem {
                file: self.file.to_owned(),
                kind: ProblemKind::Corrupt,
                detail: detail.into(),
            });
            self.recorded += 1;
        } else {
            self.dropped += 1;
        }
    }
}

impl Drop for FileProblems<'_> {
    fn drop(&mut self) {
        if self.dropped > 0 {
            self.out.push(Problem {
                file: self.file.to_owned(),
                kind: ProblemKind::Corrupt,
                detail: format!("{} more problems not listed", self.dropped),
            });
        }
    }
}

/// The problem an error stands for; `file` names it when the error does not.
fn problem_of(e: Error, file: &Path) -> Problem {
    let (file, kind, detail) = match e {
        Error::Corrupt { path, detail } => (path, ProblemKind::Corrupt, detail),
        e @ Error::UnsupportedVersion { .. } => {
            let Error::UnsupportedVersion { path, .. } = &e else {
                unreachable!()
            };
            (path.clone(), ProblemKind::UnsupportedVersion, e.to_string())
        }
        Error::Io { path, source } if source.kind() == std::io::ErrorKind::NotFound => (
            path,
            ProblemKind::Missing,
            "missing (the manifest references it)".into(),
        ),
        Error::Io { path, source } => (path, ProblemKind::Io, source.to_string()),
        other => (file.to_owned(), ProblemKind::Corrupt, other.to_string()),
    };
    Problem { file, kind, detail }
}

/// Checks the newest commit of the index in `dir`.
///
/// `Err` only when there is nothing to check (`NoIndex`: no directory or no
/// manifest) or the directory cannot be listed; every problem with the
/// index's files is in the report.
pub fn check_index(dir: impl AsRef<Path>) -> Result<Report> {
    let dir = dir.as_ref();
    let mut report = Report::default();
    let (mpath, manifest) = match latest_manifest(dir) {
        Ok(Some(m)) => m,
        Ok(None) => return Err(Error::NoIndex(dir.to_owned())),
        Err(e @ (Error::NoIndex(_) | Error::Io { .. })) => return Err(e),
        Err(e) => {
            report.files = 1;
            report.problems.push(problem_of(e, dir));
            return Ok(report);
        }
    };
    report.files = 1;
    report.generation = Some(manifest.generation);
    report.segments = manifest.segments.len();
    check_manifest(&mpath, &manifest, &mut report.problems);
    for entry in &manifest.segments {
        check_segment_files(dir, &manifest.schema, entry, &mut report);
    }
    Ok(report)
}

/// The manifest's own invariants: unique segment ids, deletion counts
/// that fit, no fully deleted segment.
fn check_manifest(path: &Path, m: &Manifest, out: &mut Vec<Problem>) {
    let mut p = FileProblems::new(path, out);
    let mut ids: Vec<u64> = m.segments.iter().map(|s| s.id).collect();
    ids.sort_unstable();
    for w in ids.windows(2) {
        if w[0] == w[1] {
            p.push(format!("segment {} is listed twice", w[0]));
        }
    }
    for s in &m.segments {
        if s.del_gen == 0 && s.del_count != 0 {
            p.push(format!(
                "segment {} has {} deletions but no tombstone file",
                s.id, s.del_count
            ));
        }
        if s.doc_count > 0 && s.del_count == s.doc_count {
            p.push(format!(
                "segment {} has every document deleted, so it should have been dropped",
                s.id
            ));
        }
    }
}

/// A segment's file and tombstones.
fn check_segment_files(dir: &Path, schema: &Schema, entry: &SegmentEntry, report: &mut Report) {
    let path = dir.join(manifest::segment_name(entry.id));
    report.files += 1;
    report.documents += u64::from(entry.doc_count);
    match std::fs::metadata(&path) {
        Err(e) => report.problems.push(problem_of(Error::io(&path, e), &path)),
        Ok(md) => {
            if md.len() != entry.file_len {
                report.problems.push(Problem {
                    file: path.clone(),
                    kind: ProblemKind::Corrupt,
                    detail: format!(
                        "file is {} bytes, the manifest records {}",
                        md.len(),
                        entry.file_len
                    ),
                });
            }
            // Read into memory: a file truncated while it is checked is
            // then a reported problem, never a SIGBUS; its length against
            // the manifest is reported above, so the bytes read are the
            // file's own.
            match SegmentReader::open(&path, schema, md.len(), ReadMode::Heap) {
                Err(e) => report.problems.push(problem_of(e, &path)),
                Ok(seg) => {
                    let v = seg.format_version() as usize;
                    let versions = &mut report.structures.segment_versions;
                    if versions.len() < v {
                        versions.resize(v, 0);
                    }
                    versions[v - 1] += 1;
                    let mut p = FileProblems::new(&path, &mut report.problems);
                    if seg.doc_count() != entry.doc_count {
                        p.push(format!(
                            "holds {} documents, the manifest records {}",
                            seg.doc_count(),
                            entry.doc_count
                        ));
                    }
                    let mut c = SegmentCheck {
                        seg: &seg,
                        schema,
                        p,
                        terms: 0,
                        postings: 0,
                        next_pos: 0,
                        st: &mut report.structures,
                    };
                    c.run();
                    report.terms += c.terms;
                    report.postings += c.postings;
                }
            }
        }
    }
    if entry.del_gen != 0 {
        report.files += 1;
        report.structures.tombstone_files += 1;
        let tpath = dir.join(manifest::tombstone_name(entry.id, entry.del_gen));
        match check_tombstones(&tpath, entry) {
            Ok((deleted, problems)) => {
                report.deleted += deleted;
                report.problems.extend(problems);
            }
            Err(e) => report.problems.push(problem_of(e, &tpath)),
        }
    }
}

/// A tombstone file: decodes against the segment, sets no bit past its
/// documents, and holds the manifest's deletion count.
fn check_tombstones(path: &Path, entry: &SegmentEntry) -> Result<(u64, Vec<Problem>)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let (bits, del) = manifest::decode_tombstones(path, &bytes, entry.doc_count)?;
    let mut out = Vec::new();
    let mut p = FileProblems::new(path, &mut out);
    let n = entry.doc_count as usize;
    if !n.is_multiple_of(64)
        && let Some(&last) = bits.last()
        && last >> (n % 64) != 0
    {
        p.push(format!(
            "deletes documents past the segment's {n} documents"
        ));
    }
    if del != entry.del_count {
        p.push(format!(
            "holds {del} deletions, the manifest records {}",
            entry.del_count
        ));
    }
    drop(p);
    Ok((u64::from(del), out))
}

/// The deep checks of one opened segment.
struct SegmentCheck<'a> {
    seg: &'a SegmentReader,
    schema: &'a Schema,
    p: FileProblems<'a>,
    terms: u64,
    postings: u64,
    /// Where the next term's positions must start.
    next_pos: usize,
    st: &'a mut Structures,
}

impl SegmentCheck<'_> {
    fn run(&mut self) {
        // Postings regions follow each other in (field, key) order and fill
        // the section.
        let mut next_region = 0;
        for (fid, def) in self.schema.iter() {
            if !def.is_indexed() && self.seg.num_terms(fid) != 0 {
                self.p.push(format!(
                    "field {:?} is not indexed but has {} terms",
                    def.name,
                    self.seg.num_terms(fid)
                ));
            }
            if def.ty != FieldType::Text && self.seg.total_tokens(fid) != 0 {
                self.p.push(format!(
                    "field {:?} is not a text field but counts {} tokens",
                    def.name,
                    self.seg.total_tokens(fid)
                ));
            }
            self.field_terms(fid, def.ty, &def.name, &mut next_region);
            if def.flags.sortable {
                self.sort_column(fid, &def.name);
            }
        }
        if self.next_pos != self.seg.positions_len() {
            self.p.push(format!(
                "the terms' positions regions end at byte {} of the {}-byte positions section",
                self.next_pos,
                self.seg.positions_len()
            ));
        }
        if next_region != self.seg.postings_len() {
            self.p.push(format!(
                "the terms' postings regions end at byte {next_region} of the {}-byte postings section",
                self.seg.postings_len()
            ));
        }
        self.stored();
    }

    /// Every term of a field and its postings; for text fields, the norms
    /// against the summed frequencies.
    fn field_terms(&mut self, fid: FieldId, ty: FieldType, name: &str, next_region: &mut usize) {
        let seg = self.seg;
        let norms = seg.norms(fid);
        let mut lengths = norms.map(|_| vec![0u64; seg.doc_count() as usize]);
        let mut prev: Option<Vec<u8>> = None;
        let positions = self.schema.def(fid).positions;
        // Per document, the largest position of any of its tokens.
        let mut last_pos: Vec<Option<u32>> = if positions {
            vec![None; seg.doc_count() as usize]
        } else {
            Vec::new()
        };
        let mut cursor = seg.terms(fid);
        self.st.term_blocks += u64::from(seg.num_term_blocks(fid));
        for i in 0..seg.num_terms(fid) {
            let (key, info) = match cursor.advance() {
                Ok(Some(t)) => t,
                Ok(None) => {
                    self.p
                        .push(format!("field {name:?}: its dictionary ends at term {i}"));
                    break;
                }
                Err(e) => {
                    // The cursor cannot resynchronise inside a damaged block.
                    self.p
                        .push(format!("field {name:?}: term {i}: {}", detail(e)));
                    break;
                }
            };
            self.terms += 1;
            let shown = show_key(ty, key);
            if prev.as_deref().is_some_and(|p| p >= key) {
                self.p.push(format!(
                    "field {name:?}: terms not sorted and unique: term {i} {shown} does not sort after {}",
                    show_key(ty, prev.as_deref().unwrap_or_default())
                ));
            }
            if *next_region != info.post_off() {
                self.p.push(format!(
                    "field {name:?}: term {i} {shown}'s postings start at byte {}, the previous term's end at {next_region}",
                    info.post_off()
                ));
            }
            *next_region = info.post_off() + info.region_len();
            let p = prev.get_or_insert_with(Vec::new);
            p.clear();
            p.extend_from_slice(key);
            let well_formed = match ty {
                FieldType::I64 => key.len() == 8,
                _ => std::str::from_utf8(key).is_ok(),
            };
            if !well_formed {
                self.p.push(format!(
                    "field {name:?}: term {i} {shown} is not a valid key"
                ));
            }
            let what = format!("field {name:?} term {shown}");
            match seg.postings(&info) {
                Err(e) => self.p.push(format!("{what}: {}", detail(e))),
                Ok(list) => {
                    if list.region_len() != info.region_len() {
                        self.p.push(format!(
                            "{what}: document frequency {} disagrees with the postings: its layout takes {} of the region's {} bytes",
                            info.df,
                            list.region_len(),
                            info.region_len()
                        ));
                    }
                    self.postings(&what, &list, norms, lengths.as_deref_mut());
                    self.positions(&what, positions, &info, &list, &mut last_pos);
                }
            }
        }
        // Positions count the tokens, unless the analyzer removes words and
        // leaves their positions as gaps.
        let gaps = self.schema.def(fid).analyzer.leaves_gaps();
        if let Some(lengths) = lengths.as_ref().filter(|_| !gaps) {
            for (d, (&p, &len)) in last_pos.iter().zip(lengths).enumerate() {
                if p.is_some_and(|p| u64::from(p) >= len) {
                    self.p.push(format!(
                        "field {name:?}: document {d} has a token at position {}, past its {len} tokens",
                        p.unwrap_or_default()
                    ));
                }
            }
        }
        if let (Some(norms), Some(lengths)) = (norms, lengths) {
            let mut total = 0u64;
            for (d, (&n, &len)) in norms.iter().zip(&lengths).enumerate() {
                total += len;
                let expect = length_to_norm(len.min(u64::from(u32::MAX)) as u32);
                if n != expect {
                    self.p.push(format!(
                        "field {name:?}: document {d} has norm {n}, its {len} tokens give {expect}"
                    ));
                }
            }
            if total != seg.total_tokens(fid) {
                self.p.push(format!(
                    "field {name:?}: meta counts {} tokens, the postings hold {total}",
                    seg.total_tokens(fid)
                ));
            }
        }
    }

    /// A term's positions: present exactly for fields with positions, in
    /// term order in the positions section, each block at its offset,
    /// filling the region (as many per posting as its frequency, strictly
    /// ascending by the encoding).
    fn positions(
        &mut self,
        what: &str,
        expected: bool,
        info: &TermInfo,
        list: &Postings<'_>,
        last_pos: &mut [Option<u32>],
    ) {
        let region = info.positions_region();
        if region.is_some() != expected {
            return self.p.push(format!(
                "{what}: has positions {}, its field {}",
                region.is_some(),
                if expected { "has" } else { "has none" }
            ));
        }
        let Some((start, end)) = region else {
            return;
        };
        if start != self.next_pos {
            self.p.push(format!(
                "{what}: positions start at byte {start}, the previous term's end at {}",
                self.next_pos
            ));
        }
        self.next_pos = end;
        self.st.position_lists += 1;
        let (mut docs, mut tfs, mut all) = (Vec::new(), Vec::new(), Vec::new());
        if list.decode_all(&mut docs, &mut tfs).is_err() {
            return; // reported by the postings checks
        }
        let decoded = self.seg.positions(info).and_then(|p| {
            p.expect("present")
                .decode_all(&tfs, &mut all)
                .map_err(|e| self.seg.bad(e))
        });
        if let Err(e) = decoded {
            return self.p.push(format!("{what}: positions: {}", detail(e)));
        }
        let mut at = 0;
        for (&d, &tf) in docs.iter().zip(&tfs) {
            at += tf as usize;
            if let Some(slot) = last_pos.get_mut(d as usize) {
                *slot = (*slot).max(Some(all[at - 1]));
            }
        }
    }

    /// One posting list: decoding, order, ranges, skip data and impacts.
    fn postings(
        &mut self,
        what: &str,
        list: &Postings<'_>,
        norms: Option<&[u8]>,
        mut lengths: Option<&mut [u64]>,
    ) {
        let max_doc = self.seg.doc_count();
        let norm_of = |d: u32| norms.map_or(0, |n| n[d as usize]);
        let (mut docs, mut tfs) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        let mut last: Option<u32> = None;
        let mut expected_start = 0usize;
        let mut impacts = Vec::new();
        let mut group: Vec<Impact> = Vec::new();
        let nblocks = list.num_blocks();
        if list.has_skip_data() {
            self.st.skip_lists += 1;
            self.st.l2_entries += list.num_l2() as u64;
            if list.num_l2() > 1 {
                self.st.multi_l2_lists += 1;
            }
        }
        for b in 0..nblocks {
            let at = format!("{what}: block {b}");
            let start = list.block_start(b);
            if start != expected_start {
                self.p.push(format!(
                    "{at}: skip data puts it at byte {start}, the previous block ends at {expected_start}"
                ));
                return;
            }
            let n = match list.decode_docs(b, &mut docs, &mut tfs) {
                Ok(n) => n,
                Err(e) => return self.p.push(format!("{at}: {}", e.0)),
            };
            if list.is_packed(b) {
                self.st.packed_blocks += 1;
                if let Err(e) = list.decode_tfs(b, &mut tfs) {
                    return self.p.push(format!("{at}: {}", e.0));
                }
                if let Ok((de, te)) = list.block_exceptions(b) {
                    self.st.doc_exceptions += de as u64;
                    self.st.tf_exceptions += te as u64;
                }
            } else {
                self.st.tail_blocks += 1;
            }
            match list.block_end(b) {
                Ok(end) => expected_start = end,
                Err(e) => return self.p.push(format!("{at}: {}", e.0)),
            }
            if let Some(bits) = list.presence()
                && let Some(&d) = docs[..n].iter().find(|&&d| !bits.contains(d))
            {
                self.p.push(format!(
                    "{at}: document {d} is missing from the presence bitmap"
                ));
            }
            for (&d, &tf) in docs[..n].iter().zip(&tfs[..n]) {
                if last.is_some_and(|l| d <= l) {
                    self.p.push(format!(
                        "{at}: doc ids not strictly ascending ({d} after {})",
                        last.unwrap_or_default()
                    ));
                }
                if d >= max_doc {
                    return self.p.push(format!(
                        "{at}: doc id {d} out of range (the segment has {max_doc} documents)"
                    ));
                }
                if tf == 0 {
                    self.p
                        .push(format!("{at}: document {d} has term frequency 0"));
                }
                if let Some(l) = lengths.as_deref_mut() {
                    l[d as usize] += u64::from(tf);
                }
                last = Some(d);
            }
            self.postings += n as u64;
            if !list.has_skip_data() {
                continue;
            }
            if list.last_doc(b) != last {
                self.p.push(format!(
                    "{at}: skip entry's last doc {:?} is not the block's last doc {:?}",
                    list.last_doc(b),
                    last
                ));
            }
            if let Err(e) = list.block_impacts(b, &mut impacts) {
                self.p.push(format!("{at}: impacts: {}", e.0));
                continue;
            }
            if impacts.len() == crate::format::postings::MAX_IMPACTS {
                self.st.full_impact_lists += 1;
            }
            if !is_frontier(&impacts) {
                self.p.push(format!(
                    "{at}: impacts {impacts:?} are not sorted by descending tf and norm"
                ));
            }
            for (&d, &tf) in docs[..n].iter().zip(&tfs[..n]) {
                let norm = norm_of(d);
                if !dominated(&impacts, tf, norm) {
                    self.p.push(format!(
                        "{at}: impacts {impacts:?} do not bound document {d} (tf {tf}, norm {norm})"
                    ));
                    break;
                }
            }
            group.extend_from_slice(&impacts);
            if (b + 1) % L2_BLOCKS == 0 || b + 1 == nblocks {
                self.level2(what, list, b / L2_BLOCKS, last, &group);
                group.clear();
            }
        }
        if let Some(bits) = list.presence() {
            self.st.presence_lists += 1;
            // Every document of the list is in it (above): equal counts
            // leave no other bit set.
            let set: u64 = bits
                .chunks()
                .iter()
                .map(|w| u64::from(u64::from_le_bytes(*w).count_ones()))
                .sum();
            if set != u64::from(list.df()) {
                self.p.push(format!(
                    "{what}: the presence bitmap holds {set} documents, the list {}",
                    list.df()
                ));
            }
        }
        if expected_start != list.blocks_len() {
            self.p.push(format!(
                "{what}: document frequency {} disagrees with the postings: the blocks end at byte {expected_start} of {}",
                list.df(),
                list.blocks_len()
            ));
        }
    }

    /// Second-level entry `g`: its last doc and its impacts over the
    /// group's blocks' impacts.
    fn level2(
        &mut self,
        what: &str,
        list: &Postings<'_>,
        g: usize,
        last: Option<u32>,
        blocks: &[Impact],
    ) {
        let at = format!("{what}: second-level entry {g}");
        if Some(list.l2_last_doc(g)) != last {
            self.p.push(format!(
                "{at}: last doc {} is not its last block's last doc {last:?}",
                list.l2_last_doc(g)
            ));
        }
        let mut impacts = Vec::new();
        if let Err(e) = list.l2_impacts(g, &mut impacts) {
            return self.p.push(format!("{at}: impacts: {}", e.0));
        }
        if !is_frontier(&impacts) {
            self.p.push(format!(
                "{at}: impacts {impacts:?} are not sorted by descending tf and norm"
            ));
        }
        if let Some(i) = blocks.iter().find(|i| !dominated(&impacts, i.tf, i.norm)) {
            self.p.push(format!(
                "{at}: impacts {impacts:?} do not bound its blocks' impact (tf {}, norm {})",
                i.tf, i.norm
            ));
        }
    }

    /// A sortable field's column: values ascending, per-block bounds exact.
    fn sort_column(&mut self, fid: FieldId, name: &str) {
        let Some(col) = self.seg.sort_column(fid) else {
            return;
        };
        if !self.st.ord_widths.contains(&col.width) {
            self.st.ord_widths.push(col.width);
            self.st.ord_widths.sort_unstable();
        }
        for o in 1..col.cardinality {
            let ascending = match col.ty {
                FieldType::I64 | FieldType::F64 => col.numeric_key(o - 1) < col.numeric_key(o),
                _ => col.str_at(o - 1).as_bytes() < col.str_at(o).as_bytes(),
            };
            if !ascending {
                self.p.push(format!(
                    "field {name:?}: sort value {o} does not sort after value {}",
                    o - 1
                ));
            }
        }
        let missing = col.missing();
        let n = self.seg.doc_count() as usize;
        for b in 0..col.num_blocks() {
            let docs = b * ords::ORD_BLOCK..((b + 1) * ords::ORD_BLOCK).min(n);
            let (mut lo, mut hi) = (u32::MAX, 0u32);
            for d in docs {
                let o = col.ord(d as u32);
                if o != missing {
                    lo = lo.min(o);
                    hi = hi.max(o);
                }
            }
            let expect = if lo == u32::MAX {
                (missing, missing)
            } else {
                (lo, hi)
            };
            if col.block_bounds(b) != expect {
                self.p.push(format!(
                    "field {name:?}: ord block {b} records bounds {:?}, its ords span {expect:?}",
                    col.block_bounds(b)
                ));
            }
        }
    }

    /// Every stored document decodes into values of stored fields of the
    /// right types.
    fn stored(&mut self) {
        self.st.stored_blocks += self.seg.stored_block_count() as u64;
        let mut cache = StoredCache::default();
        for d in 0..self.seg.doc_count() {
            let values = self.seg.stored_bytes(d, &mut cache).and_then(|b| {
                segment::get_stored_values(b).ok_or_else(|| {
                    Error::corrupt(
                        self.seg.path(),
                        format!("stored values of document {d} are malformed"),
                    )
                })
            });
            let values = match values {
                Ok(v) => v,
                Err(e) => {
                    self.p.push(detail(e));
                    continue;
                }
            };
            for (f, v) in values {
                let fits = self.schema.get(FieldId(f)).is_some_and(|def| {
                    def.flags.stored
                        && matches!(
                            (def.ty, &v),
                            (FieldType::Text | FieldType::String, Value::Str(_))
                                | (FieldType::I64, Value::I64(_))
                                | (FieldType::F64, Value::F64(_))
                        )
                });
                if !fits {
                    self.p.push(format!(
                        "document {d} stores {v:?} for field {f}, which is not a stored field of that type"
                    ));
                }
            }
        }
    }
}

/// The detail of an error about a file the problem list already names.
fn detail(e: Error) -> String {
    match e {
        Error::Corrupt { detail, .. } => detail,
        other => other.to_string(),
    }
}

/// A key for messages: text as a string, `i64` as its number.
fn show_key(ty: FieldType, key: &[u8]) -> String {
    match (ty, segment::key_i64(key)) {
        (FieldType::I64, Some(v)) => v.to_string(),
        _ => format!("{:?}", String::from_utf8_lossy(key)),
    }
}

/// Whether impacts are a frontier as stored: tf and norm strictly descending.
fn is_frontier(impacts: &[Impact]) -> bool {
    impacts
        .windows(2)
        .all(|w| w[0].tf > w[1].tf && w[0].norm > w[1].norm)
}

/// Whether some impact dominates (tf, norm): at least the tf, at most the
/// norm (shorter scores higher).
fn dominated(impacts: &[Impact], tf: u32, norm: u8) -> bool {
    impacts.iter().any(|i| i.tf >= tf && i.norm <= norm)
}
