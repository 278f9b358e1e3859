//! Writing: buffering documents, flushing segments, committing, deleting
//! and merging.
//!
//! A commit is crash-safe: new segment and tombstone files are written and
//! fsynced first, then the manifest of the new generation is written to a
//! temporary name, fsynced, renamed into place, and the directory fsynced.
//! A crash at any point leaves either the previous manifest or the new one
//! as the newest complete manifest, and readers never see a mix.
//!
//! A writer that dies (a crash, SIGKILL) leaves files behind: segments it
//! flushed or merged but never published, tombstones and a `.tmp` manifest
//! of a commit it did not finish, the superseded commit's files when it died
//! between publishing and cleaning up. None of them is referenced by the
//! newest manifest, so the next writer removes them as soon as it holds the
//! lock ([`IndexWriter::open`]), exactly as a commit removes what it
//! superseded, and never reuses the segment id of a file it could not remove.
//!
//! Merging: after each publication the merge policy (`policy.rs`) chooses
//! contiguous runs of segments to merge (documents keep their insertion
//! order, and so ties their order). With [`WriterConfig::background_merges`]
//! (the default) the merges run on the writer's merge thread while
//! documents are added and committed; the thread only writes the merged
//! segment file. The writer publishes a finished merge itself, on its own
//! thread, in its next manifest: the next commit's (which then also holds
//! the new documents), or one of its own when the caller merges
//! ([`IndexWriter::merge`]), waits ([`IndexWriter::wait_merges`]) or drops
//! the writer. So manifests are written by one thread, in the order of
//! their generations, by the protocol above; a crash during a merge leaves
//! an unpublished segment file, garbage like any other. A segment being
//! merged is not chosen by another merge, and may still receive deletes:
//! the merge's sources are the segments as they were when it started, and
//! when it is published, the documents deleted from its sources since
//! (their tombstones changed, or the whole segment was dropped) are
//! deleted from the merged segment through the merge's renumbering. A
//! merge that fails (a full disk) removes its partial file, leaves its
//! sources as they are, and its error is returned by the next commit,
//! merge or wait (after that call's own publication); the policy chooses
//! it again after the next publication. Dropping the writer waits for the
//! merges and publishes them; [`IndexWriter::rollback`] cancels them.
//!
//! A merge runs beside indexing: its memory (see `merge.rs`) adds to the
//! indexing buffers', and one merge runs at a time.

mod background;
mod buffer;
mod ingest;
pub mod io;
mod merge;
mod policy;
mod segment_writer;

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::document::{Document, Value};
use crate::error::{Error, Result};
use crate::format::manifest::{self, Manifest, SegmentEntry};
use crate::format::segment::i64_key;
use crate::read::{LiveSegment, ReadMode, SegmentReader, latest_manifest};
use crate::schema::{FieldId, FieldType, Schema};
use buffer::SegmentBuffer;
pub use io::IoHooks;

/// Options of an [`IndexWriter`].
#[derive(Clone, Debug)]
pub struct WriterConfig {
    /// Flush a segment when the buffered documents take about this many bytes.
    pub memory_budget: usize,
    /// Also flush after this many documents (none: only the memory budget).
    pub max_docs_per_segment: Option<u32>,
    /// Merge policy: segments allowed per size tier, and most segments
    /// merged at once (at least 3). After each commit, while there are
    /// more segments than about `merge_factor` per tier (tiers growing by
    /// this factor from `merge_floor_docs` live documents), runs of adjacent segments
    /// of similar sizes are merged: the segment count stays logarithmic in
    /// the documents, and so does the number of times a document is
    /// rewritten. 0 or 1 turns automatic merging off ([`IndexWriter::merge`]
    /// still merges).
    pub merge_factor: usize,
    /// The automatic merges make no segment of more than this many live
    /// documents, and leave alone segments of more than half of it (none:
    /// no limit but the format's). [`IndexWriter::merge`] ignores it.
    pub max_merge_docs: Option<u32>,
    /// The merge policy's floor: segments of fewer live documents count as
    /// this many, so the small segments of frequent commits are merged
    /// together early, and tiers grow by `merge_factor` from it (default
    /// 10,000; 0 counts as 1). Larger floors mean fewer, larger merges of
    /// small segments.
    pub merge_floor_docs: u64,
    /// Run the automatic merges on the writer's merge thread, while
    /// documents are added and committed (true, the default), or within
    /// [`IndexWriter::commit`] (false: the segments after each commit
    /// depend on the documents and commit points only).
    pub background_merges: bool,
    /// Threads that analyse and invert documents apart from the caller's
    /// (0, the default: [`IndexWriter::add_document`] does it on the
    /// caller's thread). With one, the caller only checks and queues each
    /// document, so whatever makes the documents (parsing, say) runs
    /// beside their indexing; its segments are those of a build on the
    /// caller's thread. With more, each buffers its own segments under an
    /// equal share of `memory_budget`, documents going to them in
    /// contiguous runs of the input order (see
    /// [`IndexWriter::add_document`]); searches return the same documents,
    /// scores and totals as on a one-thread build.
    pub indexing_threads: usize,
    /// File-system hooks (tests inject failures through them).
    #[doc(hidden)]
    pub io: Arc<IoHooks>,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            memory_budget: 256 << 20,
            max_docs_per_segment: None,
            merge_factor: 10,
            max_merge_docs: None,
            merge_floor_docs: policy::FLOOR_DOCS,
            background_merges: true,
            indexing_threads: 0,
            io: Arc::new(IoHooks::new()),
        }
    }
}

/// A segment written by this writer but not committed yet.
struct PendingSegment {
    entry: SegmentEntry,
    /// Ordinal (among documents added by this writer) of its first document.
    first_seq: u64,
}

/// A merge started by this writer and not yet published.
struct Merge {
    /// The merged segment's id.
    id: u64,
    /// The sources as they were when it started (their deletes then).
    sources: Vec<LiveSegment>,
    /// (documents, file length) once written.
    done: Option<(u32, u64)>,
}

struct PendingDelete {
    field: FieldId,
    key: Vec<u8>,
    /// Documents added by this writer before the delete (only they are hit).
    seq: u64,
}

/// The one writer of an index. Holds the index's lock until dropped;
/// dropping it discards uncommitted work.
///
/// Thread safety: use from one thread at a time (it is `Send`).
pub struct IndexWriter {
    dir: PathBuf,
    schema: Schema,
    config: WriterConfig,
    _lock: File,
    base: Manifest,
    buffer: SegmentBuffer,
    /// The indexing threads, with `indexing_threads` above 0 (then `buffer`
    /// stays empty).
    pool: Option<ingest::Pool>,
    pending: Vec<PendingSegment>,
    deletes: Vec<PendingDelete>,
    seq: u64,
    next_segment_id: u64,
    readers: HashMap<u64, Arc<SegmentReader>>,
    /// Merges running or written, not yet published.
    merges: Vec<Merge>,
    /// The merge thread, once a background merge started.
    merger: Option<background::MergeThread>,
    /// The first failure of a background merge not yet reported.
    merge_error: Option<Error>,
    /// Rolled back: dropping it starts and finishes no merge.
    rolled_back: bool,
}

impl Drop for IndexWriter {
    /// Finishes the automatic merges (as [`IndexWriter::wait_merges`],
    /// errors ignored: a merge that fails leaves the index as committed),
    /// unless the thread is panicking, then cancels what still runs.
    /// Discards uncommitted work: removes the segment files flushed since the
    /// last commit (no manifest references them), then releases the lock.
    /// What this cannot remove (or what a crash leaves when it never runs)
    /// is removed by the next writer when it opens the index.
    fn drop(&mut self) {
        if !std::thread::panicking() && !self.rolled_back {
            let _ = self.wait_merges();
        }
        self.stop_merges();
        for p in &self.pending {
            let _ = self
                .config
                .io
                .remove(&self.dir.join(manifest::segment_name(p.entry.id)));
        }
    }
}

/// Removes the partial file that a failed write of segment `id` in `dir`
/// (error `e`) may have left, unless the write failed because the file
/// already existed: then it is not this writer's file. Returns false when
/// a partial file stays (its id must not be used again).
fn remove_partial(io: &IoHooks, dir: &Path, id: u64, e: &Error) -> bool {
    let path = dir.join(manifest::segment_name(id));
    let existed = matches!(e, Error::Io { path: p, source }
        if *p == path && source.kind() == std::io::ErrorKind::AlreadyExists);
    existed || io.remove(&path).is_ok()
}

/// Hands the memory this process's allocator holds free back to the
/// system, once a buffer that held documents or a merge's state is
/// dropped. glibc keeps what a thread frees in that thread's arena, and
/// after freeing a large block it serves blocks up to that size from the
/// arenas rather than from their own mappings; so without this, each
/// indexing thread and the merge thread would keep about the high-water
/// mark of its last buffer or merge besides the next one (two threads at
/// 3M documents: a peak of 318 MiB under a 256 MiB budget, 224 MiB with
/// this alone). Elsewhere a no-op.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointers and has no preconditions; it
    // only returns free pages of the allocator's own arenas to the system,
    // under the allocator's locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn acquire_lock(dir: &Path) -> Result<File> {
    use std::os::fd::AsRawFd;
    let path = dir.join(manifest::LOCK_FILE);
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    // SAFETY: `f` is an open file, so its descriptor is valid for the call;
    // flock has no memory-safety preconditions beyond that.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Err(Error::Locked(dir.to_owned()))
        } else {
            Err(Error::io(&path, err))
        };
    }
    // The lock is an flock on LOCK, released by the kernel when the holder's
    // descriptor closes, so a lock file left by a dead process is stale by
    // construction and is simply taken over. The pid is for humans only.
    let _ = f.set_len(0);
    let _ = std::io::Write::write_all(&mut &f, format!("{}\n", std::process::id()).as_bytes());
    Ok(f)
}

impl IndexWriter {
    /// Creates a new index at `dir` (creating the directory if needed).
    ///
    /// Errors: [`Error::IndexExists`] when `dir` already holds an index
    /// (whether or not a writer holds it), [`Error::Locked`] when another
    /// writer holds a directory without one, I/O errors.
    pub fn create(
        dir: impl AsRef<Path>,
        schema: &Schema,
        config: WriterConfig,
    ) -> Result<IndexWriter> {
        let dir = dir.as_ref();
        if schema.fields().is_empty() {
            return Err(Error::Schema("a schema needs at least one field".into()));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // Reading manifests needs no lock (searchers do it), so an existing
        // index is reported as one even while its writer holds the lock;
        // the check under the lock catches an index created meanwhile.
        if latest_manifest(dir)?.is_some() {
            return Err(Error::IndexExists(dir.to_owned()));
        }
        let lock = acquire_lock(dir)?;
        if latest_manifest(dir)?.is_some() {
            return Err(Error::IndexExists(dir.to_owned()));
        }
        let base = Manifest {
            generation: 0,
            next_segment_id: 1,
            schema: schema.clone(),
            segments: Vec::new(),
        };
        let mut w = Self::with_base(dir, lock, base, config);
        w.commit()?;
        Ok(w)
    }

    /// Opens the existing index at `dir` for writing.
    ///
    /// Recovers from a writer that died mid-flush, mid-commit or mid-merge:
    /// with the lock held, the files the newest manifest does not reference
    /// (unpublished segments and tombstones, `.tmp` manifests, superseded
    /// commits) are removed. Removal is best effort; the id of a segment file
    /// that stays is never used again, so nothing a dead writer left can
    /// collide with this writer's files.
    ///
    /// Errors: [`Error::NoIndex`], [`Error::Locked`] when another live
    /// writer holds the lock, [`Error::Corrupt`] for a damaged newest
    /// manifest, I/O errors.
    pub fn open(dir: impl AsRef<Path>, config: WriterConfig) -> Result<IndexWriter> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(Error::NoIndex(dir.to_owned()));
        }
        let lock = acquire_lock(dir)?;
        let (_, base) = latest_manifest(dir)?.ok_or_else(|| Error::NoIndex(dir.to_owned()))?;
        let mut w = Self::with_base(dir, lock, base, config);
        w.collect_garbage();
        Ok(w)
    }

    /// Opens the index at `dir`, creating it with `schema` when absent.
    /// With an existing index, `schema` (if given) must equal the index's.
    pub fn open_or_create(
        dir: impl AsRef<Path>,
        schema: Option<&Schema>,
        config: WriterConfig,
    ) -> Result<IndexWriter> {
        let dir = dir.as_ref();
        let exists = dir.is_dir() && latest_manifest(dir)?.is_some();
        if exists {
            let w = Self::open(dir, config)?;
            if let Some(s) = schema
                && s != &w.schema
            {
                return Err(Error::Schema(format!(
                    "the schema given differs from the schema of the index at {}",
                    dir.display()
                )));
            }
            Ok(w)
        } else {
            let schema = schema.ok_or_else(|| Error::NoIndex(dir.to_owned()))?;
            Self::create(dir, schema, config)
        }
    }

    fn with_base(dir: &Path, lock: File, base: Manifest, config: WriterConfig) -> IndexWriter {
        IndexWriter {
            dir: dir.to_owned(),
            schema: base.schema.clone(),
            buffer: SegmentBuffer::new(&base.schema),
            next_segment_id: base.next_segment_id,
            base,
            config,
            _lock: lock,
            pool: None,
            pending: Vec::new(),
            deletes: Vec::new(),
            seq: 0,
            readers: HashMap::new(),
            merges: Vec::new(),
            merger: None,
            merge_error: None,
            rolled_back: false,
        }
    }

    /// The index's schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Generation of the last commit.
    pub fn generation(&self) -> u64 {
        self.base.generation
    }

    /// Discards everything added and deleted since the last commit, cancels
    /// the background merges not yet published, and removes every file the
    /// last commit does not reference (segments flushed since, merged
    /// segments, the tombstones and `.tmp` manifest of a commit that failed
    /// before publishing), then releases the lock. The directory is left
    /// exactly as the last publication (a commit, or merges published
    /// after it) wrote it.
    pub fn rollback(mut self) {
        self.rolled_back = true;
        self.discard();
        self.collect_garbage();
    }

    /// Discards everything added and deleted since the last commit and
    /// cancels the background merges not yet published, keeping the writer
    /// (and its lock): once it returns no thread of the writer writes a
    /// file. The files flushed or merged since the last publication stay
    /// until the next commit or [`IndexWriter::rollback`] removes them.
    pub fn discard(&mut self) {
        self.stop_merges();
        self.pending.clear();
        self.deletes.clear();
        self.buffer = SegmentBuffer::new(&self.schema);
        if let Some(pool) = &mut self.pool {
            pool.discard();
        }
        self.seq = 0;
    }

    /// Adds a document. It becomes searchable at the next commit.
    ///
    /// Errors: [`Error::Schema`] when a value does not fit its field; I/O
    /// errors from flushing the full buffer. On any error the document is
    /// not added and the documents buffered before it are kept, so the call
    /// (and a later commit) can be retried.
    ///
    /// With [`WriterConfig::indexing_threads`] above 0 the document is
    /// checked here and analysed on an indexing thread: documents go to the
    /// threads in contiguous runs of the order they are added in (one
    /// thread takes them all), and the
    /// segments are ordered by their first document, so document ids (and
    /// the order of ties) are the input order, as with one thread. An error
    /// flushing a thread's full buffer is then returned by the next commit,
    /// which keeps that buffer and retries it.
    pub fn add_document(&mut self, doc: &Document) -> Result<()> {
        let threads = self.config.indexing_threads;
        if threads > 0 {
            if self.pool.is_none() {
                self.pool = Some(ingest::Pool::new(
                    threads,
                    self.dir.clone(),
                    &self.schema,
                    self.config.io.clone(),
                    self.config.memory_budget,
                    self.config.max_docs_per_segment,
                )?);
            }
            let pool = self.pool.as_mut().expect("just made");
            pool.add(&self.schema, doc, self.seq, self.next_segment_id)?;
            self.seq += 1;
            return Ok(());
        }
        self.buffer.validate(&self.schema, doc)?;
        // Flush a full buffer before adding, so that an error means the
        // document was not added (and the buffered ones are kept).
        let (budget, max_docs) = (self.config.memory_budget, self.config.max_docs_per_segment);
        if self.buffer.must_flush(budget, max_docs) {
            self.flush()?;
        }
        self.buffer.add(&self.schema, doc);
        self.seq += 1;
        Ok(())
    }

    /// Deletes every document whose `field` holds exactly `value`: documents
    /// already committed and documents added before this call. `field` must
    /// be an indexed `string` or `i64` field. Takes effect at the next commit.
    pub fn delete_term(&mut self, field: FieldId, value: &Value) -> Result<()> {
        let def = self
            .schema
            .get(field)
            .ok_or_else(|| Error::Schema(format!("field id {} is not in the schema", field.0)))?;
        let key = match (def.ty, value, def.flags.indexed) {
            (FieldType::String, Value::Str(s), true) => s.as_bytes().to_vec(),
            (FieldType::I64, Value::I64(v), true) => i64_key(*v).to_vec(),
            _ => {
                return Err(Error::Schema(format!(
                    "delete by term needs an indexed string or i64 field and a value of its type; {:?} is {}{}",
                    def.name,
                    if def.flags.indexed { "" } else { "unindexed " },
                    def.ty.name()
                )));
            }
        };
        self.deletes.push(PendingDelete {
            field,
            key,
            seq: self.seq,
        });
        Ok(())
    }

    /// Writes the buffered documents as a segment (not yet committed), or
    /// with indexing threads, waits for their segments.
    fn flush(&mut self) -> Result<()> {
        if let Some(pool) = &mut self.pool {
            let (flushed, next_id, error) = pool.sync();
            self.next_segment_id = self.next_segment_id.max(next_id);
            self.pending.extend(
                flushed
                    .into_iter()
                    .map(|(entry, first_seq)| PendingSegment { entry, first_seq }),
            );
            self.pending.sort_by_key(|p| p.first_seq);
            if let Some(e) = error {
                return Err(e);
            }
        }
        if self.buffer.doc_count() == 0 {
            return Ok(());
        }
        let id = self.next_segment_id;
        match self
            .buffer
            .write_segment(&self.schema, &self.dir, id, &self.config.io)
        {
            Ok(entry) => {
                self.next_segment_id += 1;
                let first_seq = self.seq - u64::from(entry.doc_count);
                self.pending.push(PendingSegment { entry, first_seq });
                self.buffer = SegmentBuffer::new(&self.schema);
                release_freed_memory();
                Ok(())
            }
            Err(e) => {
                // Nothing references the partial file; remove it, keep the buffer.
                self.discard_partial(id, &e);
                Err(e)
            }
        }
    }

    /// Removes the partial segment file of a failed write of segment `id`,
    /// unless the write failed because the file already existed: then it is
    /// not this writer's file, and the error says so. A partial file that
    /// cannot be removed now (the next commit's clean-up removes it) keeps
    /// its id out of use, so that a retry does not collide with it.
    fn discard_partial(&mut self, id: u64, e: &Error) {
        if !remove_partial(&self.config.io, &self.dir, id, e) {
            self.next_segment_id = self.next_segment_id.max(id.saturating_add(1));
        }
    }

    fn reader(&mut self, entry: &SegmentEntry) -> Result<Arc<SegmentReader>> {
        if let Some(r) = self.readers.get(&entry.id) {
            return Ok(r.clone());
        }
        let path = self.dir.join(manifest::segment_name(entry.id));
        let r = Arc::new(SegmentReader::open(
            &path,
            &self.schema,
            entry.file_len,
            ReadMode::Mmap,
        )?);
        // Opening checked the file's CRC, which read all of it; the writer
        // reads little of it again (deletes) or streams through it
        // (merges), so it need not stay resident.
        r.release_pages();
        self.readers.insert(entry.id, r.clone());
        Ok(r)
    }

    fn load_deletes(&self, entry: &SegmentEntry) -> Result<Vec<u64>> {
        let words = (entry.doc_count as usize).div_ceil(64);
        if entry.del_gen == 0 {
            return Ok(vec![0; words]);
        }
        let path = self
            .dir
            .join(manifest::tombstone_name(entry.id, entry.del_gen));
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        Ok(manifest::decode_tombstones(&path, &bytes, entry.doc_count)?.0)
    }

    /// Makes everything added and deleted so far durable and visible to
    /// searchers opened (or reopened) afterwards. Returns the new generation.
    ///
    /// The new manifest also publishes the background merges that finished
    /// since the last commit (with the deletes committed while they ran);
    /// then the merge policy chooses the next merges, which start on the
    /// merge thread (or run here, without [`WriterConfig::background_merges`]).
    ///
    /// An error before the new manifest is renamed into place (a full disk
    /// while flushing, writing tombstones or the manifest) leaves the
    /// previous commit the index; the writer keeps its uncommitted work, so
    /// the commit can be retried once the cause is gone. The rename
    /// publishes the commit: an error after it (making the rename durable,
    /// the automatic merges that follow, or a background merge that failed
    /// since the last call) is still returned, but the commit is visible and
    /// [`IndexWriter::generation`] has advanced; the writer's state follows
    /// it, so a retry commits nothing twice. A failed merge loses nothing
    /// (its sources stay as committed) and is chosen again.
    pub fn commit(&mut self) -> Result<u64> {
        self.flush()?;
        self.poll_merges(false);
        let new_gen = self.base.generation + 1;

        // Segments of the new manifest: the committed ones, then the new ones.
        let mut entries: Vec<(SegmentEntry, Option<u64>)> = self
            .base
            .segments
            .iter()
            .map(|e| (e.clone(), None))
            .chain(
                self.pending
                    .iter()
                    .map(|p| (p.entry.clone(), Some(p.first_seq))),
            )
            .collect();
        if !self.deletes.is_empty() {
            for (entry, first_seq) in entries.iter_mut() {
                let reader = self.reader(entry)?;
                let mut bits = self.load_deletes(entry)?;
                let mut changed = false;
                let (mut docs, mut tfs) = (Vec::new(), Vec::new());
                for d in &self.deletes {
                    let Some(info) = reader.term(d.field, &d.key)? else {
                        continue;
                    };
                    docs.clear();
                    tfs.clear();
                    reader
                        .postings(&info)?
                        .decode_all(&mut docs, &mut tfs)
                        .map_err(|e| reader.bad(e))?;
                    for &doc in &docs {
                        if let Some(s) = *first_seq
                            && s + u64::from(doc) >= d.seq
                        {
                            break;
                        }
                        let w = &mut bits[(doc >> 6) as usize];
                        changed |= *w & (1 << (doc & 63)) == 0;
                        *w |= 1 << (doc & 63);
                    }
                }
                if changed {
                    self.write_tombstones(entry, &bits, new_gen)?;
                }
            }
        }
        let segments = entries.into_iter().map(|(e, _)| e).collect();
        self.publish_with_merges(segments, true)?;
        self.after_publish()?;
        Ok(self.base.generation)
    }

    /// Writes the tombstones `bits` of `entry` as of generation `generation`
    /// and points `entry` at them.
    fn write_tombstones(
        &self,
        entry: &mut SegmentEntry,
        bits: &[u64],
        generation: u64,
    ) -> Result<()> {
        let io = &self.config.io;
        let path = self
            .dir
            .join(manifest::tombstone_name(entry.id, generation));
        io.remove(&path)?;
        io.write_file(&path, &manifest::encode_tombstones(bits, entry.doc_count))?;
        entry.del_gen = generation;
        entry.del_count = bits.iter().map(|w| w.count_ones()).sum();
        Ok(())
    }

    /// Publishes the next generation: `segments` with the finished merges
    /// put in place of their sources, fully deleted segments dropped. With
    /// `commit`, it covers the writer's pending work (see [`Self::publish`]).
    /// The merges it publishes are forgotten once the rename happened,
    /// even if an error follows.
    /// Without `commit` and with no finished merge, publishes nothing.
    fn publish_with_merges(&mut self, mut segments: Vec<SegmentEntry>, commit: bool) -> Result<()> {
        if !commit && self.merges.iter().all(|m| m.done.is_none()) {
            return Ok(());
        }
        let new_gen = self.base.generation + 1;
        let published = self.fold_merges(&mut segments, new_gen)?;
        segments.retain(|e| e.del_count < e.doc_count);
        let manifest = Manifest {
            generation: new_gen,
            next_segment_id: self.next_segment_id,
            schema: self.schema.clone(),
            segments,
        };
        let r = self.publish(manifest, commit);
        if self.base.generation == new_gen {
            self.merges.retain(|m| !published.contains(&m.id));
        }
        r
    }

    /// Puts each finished merge in `segments` in place of its sources (a
    /// contiguous run of them: only this writer changes the manifest, and
    /// never a merge's sources but by deleting). Documents deleted from a
    /// source since the merge started (its tombstones changed, or it was
    /// dropped as fully deleted) are deleted from the merged segment too,
    /// through the merge's renumbering: a source's live documents at the
    /// start, in order, after those of the sources before it. Returns the
    /// ids of the merges placed.
    fn fold_merges(&self, segments: &mut Vec<SegmentEntry>, generation: u64) -> Result<Vec<u64>> {
        let mut placed = Vec::new();
        for m in &self.merges {
            let Some((doc_count, file_len)) = m.done else {
                continue;
            };
            let mut bits = vec![0u64; (doc_count as usize).div_ceil(64)];
            let mut at = 0usize;
            let mut run: Option<(usize, usize)> = None;
            for s in &m.sources {
                let now = segments.iter().position(|e| e.id == s.entry.id);
                if let Some(i) = now {
                    run = Some(run.map_or((i, i), |(a, _)| (a, i)));
                }
                let current = match now.map(|i| &segments[i]) {
                    Some(e) if e.del_gen == s.entry.del_gen => None,
                    Some(e) => Some(self.load_deletes(e)?),
                    // Dropped: every document was deleted.
                    None => Some(vec![u64::MAX; (s.entry.doc_count as usize).div_ceil(64)]),
                };
                for d in 0..s.entry.doc_count {
                    if s.is_deleted(d) {
                        continue;
                    }
                    if let Some(c) = &current
                        && c[(d >> 6) as usize] & (1 << (d & 63)) != 0
                    {
                        bits[at >> 6] |= 1 << (at & 63);
                    }
                    at += 1;
                }
            }
            debug_assert_eq!(at, doc_count as usize);
            let mut entry = SegmentEntry {
                id: m.id,
                doc_count,
                del_count: 0,
                del_gen: 0,
                file_len,
            };
            if bits.iter().any(|&w| w != 0) {
                self.write_tombstones(&mut entry, &bits, generation)?;
            }
            if let Some((a, b)) = run {
                segments.splice(a..=b, (doc_count > 0).then_some(entry));
            }
            placed.push(m.id);
        }
        Ok(placed)
    }

    /// Writes, fsyncs and renames the manifest into place. For a commit,
    /// then forgets the pending work it covers and removes files no recent
    /// manifest needs; a publication of merges alone removes just what they
    /// replaced (segments flushed but not committed are still needed).
    fn publish(&mut self, manifest: Manifest, commit: bool) -> Result<()> {
        let io = self.config.io.clone();
        let name = manifest::manifest_name(manifest.generation);
        let tmp = self.dir.join(format!("{name}.tmp"));
        io.sync_dir(&self.dir)?;
        io.remove(&tmp)?;
        io.write_file(&tmp, &manifest.encode())?;
        io.rename(&tmp, &self.dir.join(&name))?;
        // Published: from here the writer's state follows it, even if
        // making the rename durable or cleaning up fails.
        let old = std::mem::replace(&mut self.base, manifest);
        if commit {
            self.pending.clear();
            self.deletes.clear();
            self.seq = 0;
        }
        io.sync_dir(&self.dir)?;
        if commit {
            self.collect_garbage();
        } else {
            self.remove_superseded(&old);
        }
        Ok(())
    }

    /// The files to keep besides those of the newest manifest: the merged
    /// segments being written or not yet published.
    fn merge_outputs(&self) -> impl Iterator<Item = String> + '_ {
        self.merges.iter().map(|m| manifest::segment_name(m.id))
    }

    /// Removes the files of manifest `old` that the newest one (just
    /// published after it) no longer references. Best effort.
    fn remove_superseded(&mut self, old: &Manifest) {
        let mut keep: HashSet<String> = self.merge_outputs().collect();
        keep.extend(
            self.pending
                .iter()
                .map(|p| manifest::segment_name(p.entry.id)),
        );
        for s in &self.base.segments {
            keep.insert(manifest::segment_name(s.id));
            if s.del_gen != 0 {
                keep.insert(manifest::tombstone_name(s.id, s.del_gen));
            }
        }
        let mut gone = vec![manifest::manifest_name(old.generation)];
        for s in &old.segments {
            gone.push(manifest::segment_name(s.id));
            if s.del_gen != 0 {
                gone.push(manifest::tombstone_name(s.id, s.del_gen));
            }
        }
        for name in gone.into_iter().filter(|n| !keep.contains(n)) {
            let _ = self.config.io.remove(&self.dir.join(name));
        }
        let live: HashSet<u64> = self.base.segments.iter().map(|s| s.id).collect();
        self.readers.retain(|id, _| live.contains(id));
    }

    /// Removes the index files the newest manifest (`self.base`, published
    /// by this writer or found by [`IndexWriter::open`]) does not reference,
    /// but for the merged segments still to be published. Called when no
    /// flushed segment is pending (after a commit, at open, at rollback).
    /// A reader that read an older manifest just before and then finds one
    /// of its files gone re-reads the newest manifest and retries; a reader
    /// that has mapped its segments keeps them (unlinking a mapped file
    /// leaves the mapping intact). No reader ever reads a file that no
    /// manifest references (unpublished segments, `.tmp` manifests).
    ///
    /// Best effort: a file that cannot be removed is left for the next
    /// collection, and its segment id is never used by this writer.
    fn collect_garbage(&mut self) {
        let mut keep: HashSet<String> = self.merge_outputs().collect();
        keep.insert(manifest::manifest_name(self.base.generation));
        for s in &self.base.segments {
            keep.insert(manifest::segment_name(s.id));
            if s.del_gen != 0 {
                keep.insert(manifest::tombstone_name(s.id, s.del_gen));
            }
        }
        let live: HashSet<u64> = self.base.segments.iter().map(|s| s.id).collect();
        self.readers.retain(|id, _| live.contains(id));
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let ours = name.starts_with("seg-") || name.starts_with("manifest-");
            if ours
                && !keep.contains(name)
                && self.config.io.remove(&e.path()).is_err()
                && let Some(id) = manifest::parse_segment_file_id(name)
            {
                self.next_segment_id = self.next_segment_id.max(id.saturating_add(1));
            }
        }
    }

    fn policy(&self) -> policy::Policy {
        policy::Policy {
            factor: self.config.merge_factor,
            floor: self.config.merge_floor_docs.max(1),
            max_docs: u64::from(self.config.max_merge_docs.unwrap_or(u32::MAX)),
        }
    }

    /// After a publication: starts the merges the policy ([`policy`])
    /// chooses among the segments no merge holds, on the merge thread; or,
    /// without background merges, runs them, publishes them and chooses
    /// again until the policy chooses none. Then reports the first failure
    /// of a background merge since the last report. Merging only adjacent
    /// segments keeps documents in insertion order, so ties keep breaking
    /// the same way.
    fn after_publish(&mut self) -> Result<()> {
        let background = self.config.background_merges;
        loop {
            let busy: HashSet<u64> = self
                .merges
                .iter()
                .flat_map(|m| m.sources.iter().map(|s| s.entry.id))
                .collect();
            let (sizes, held): (Vec<u64>, Vec<bool>) = self
                .base
                .segments
                .iter()
                .map(|s| (u64::from(s.doc_count - s.del_count), busy.contains(&s.id)))
                .unzip();
            let windows = self.policy().choose(&sizes, &held);
            if windows.is_empty() {
                break;
            }
            for w in windows {
                self.start_merge(w.collect(), background)?;
            }
            if background {
                break;
            }
            let segments = self.base.segments.clone();
            self.publish_with_merges(segments, false)?;
        }
        self.merge_error.take().map_or(Ok(()), Err)
    }

    /// A new segment id, never given before (also not by the indexing
    /// threads, which take theirs from the same counter).
    fn take_segment_id(&mut self) -> u64 {
        let id = match &self.pool {
            Some(pool) => pool.take_id(self.next_segment_id),
            None => self.next_segment_id,
        };
        self.next_segment_id = self.next_segment_id.max(id + 1);
        id
    }

    /// Starts the merge of the committed segments at `group` (indexes into
    /// the current manifest, ascending and adjacent): on the merge thread
    /// when `background`, else here, returning its error. The merged
    /// segment takes the place of the first of them when published.
    fn start_merge(&mut self, group: Vec<usize>, background: bool) -> Result<()> {
        let mut sources = Vec::with_capacity(group.len());
        for &i in &group {
            let entry = self.base.segments[i].clone();
            let reader = self.reader(&entry)?;
            let deletes = (entry.del_count > 0)
                .then(|| self.load_deletes(&entry))
                .transpose()?
                .map(Arc::new);
            sources.push(LiveSegment {
                reader,
                deletes,
                entry,
                base: 0,
            });
        }
        let id = self.take_segment_id();
        let job = background::Job {
            id,
            sources: sources.clone(),
        };
        let done = if background {
            if self.merger.is_none() {
                self.merger = Some(background::MergeThread::spawn(
                    self.dir.clone(),
                    self.schema.clone(),
                    self.config.io.clone(),
                )?);
            }
            self.merger.as_ref().expect("just made").submit(job);
            None
        } else {
            let io = &self.config.io;
            let never = AtomicBool::new(false);
            Some(background::run(&self.schema, &self.dir, io, &job, &never)?)
        };
        self.merges.push(Merge { id, sources, done });
        Ok(())
    }

    /// Takes the merge thread's reports: those there, or, with `block`,
    /// until no merge runs. A failed merge is forgotten (its partial file
    /// is gone, its sources are as committed) and its error kept for the
    /// next report.
    fn poll_merges(&mut self, block: bool) {
        while self.merges.iter().any(|m| m.done.is_none()) {
            let Some(merger) = &self.merger else {
                return;
            };
            let Some(r) = merger.report(block) else {
                if block {
                    // The thread is gone: its panic goes on here.
                    if let Some(mut merger) = self.merger.take() {
                        merger.stop();
                    }
                    self.merges.retain(|m| m.done.is_some());
                }
                break;
            };
            match r.result {
                Ok(done) => {
                    if let Some(m) = self.merges.iter_mut().find(|m| m.id == r.id) {
                        m.done = Some(done);
                    }
                }
                Err(e) => {
                    self.merges.retain(|m| m.id != r.id);
                    self.merge_error.get_or_insert(e);
                }
            }
        }
    }

    /// Cancels the running merges, joins the merge thread and removes the
    /// merged segments not published.
    fn stop_merges(&mut self) {
        if let Some(mut merger) = self.merger.take() {
            merger.stop();
        }
        for m in std::mem::take(&mut self.merges) {
            if m.done.is_some() {
                let _ = self
                    .config
                    .io
                    .remove(&self.dir.join(manifest::segment_name(m.id)));
            }
        }
    }

    /// Waits for the background merges, publishes them, and runs the
    /// merges the policy then chooses, until it chooses none: what a
    /// commit without background merges does. Documents added since the
    /// last commit stay pending. Returns the generation.
    ///
    /// Errors: the first failure of a merge (reported once; the index stays
    /// as committed, without the merge's partial file), I/O errors of the
    /// publication as for [`IndexWriter::commit`].
    pub fn wait_merges(&mut self) -> Result<u64> {
        loop {
            self.poll_merges(true);
            let segments = self.base.segments.clone();
            self.publish_with_merges(segments, false)?;
            if let Some(e) = self.merge_error.take() {
                return Err(e);
            }
            self.after_publish()?;
            if self.merges.is_empty() {
                return Ok(self.base.generation);
            }
        }
    }

    /// Merges segments until at most `max_segments` remain (at least 1), and
    /// rewrites a lone segment that has deletions. Commits first, then waits
    /// for the background merges ([`IndexWriter::wait_merges`]), then merges
    /// here.
    ///
    /// Errors as [`IndexWriter::commit`]: a failed merge (a full disk) leaves
    /// the index as the commit left it, removes its partial segment, and can
    /// be retried.
    pub fn merge(&mut self, max_segments: usize) -> Result<u64> {
        let max_segments = max_segments.max(1);
        self.commit()?;
        self.wait_merges()?;
        let n = self.base.segments.len();
        let group: Vec<usize> = if n > max_segments {
            // Merge the adjacent run of segments with the fewest live
            // documents, so documents keep their relative order.
            let width = n - max_segments + 1;
            let live: Vec<u64> = self
                .base
                .segments
                .iter()
                .map(|s| u64::from(s.doc_count - s.del_count))
                .collect();
            let start = (0..=n - width)
                .min_by_key(|&i| live[i..i + width].iter().sum::<u64>())
                .expect("n >= width");
            (start..start + width).collect()
        } else if n == 1 && self.base.segments[0].del_count > 0 {
            vec![0]
        } else {
            return Ok(self.base.generation);
        };
        self.start_merge(group, false)?;
        let segments = self.base.segments.clone();
        self.publish_with_merges(segments, false)?;
        Ok(self.base.generation)
    }
}
