//! Indexing on several threads.
//!
//! Documents go to the indexing threads in contiguous runs of the input
//! order, run after run, thread after thread. Each thread inverts its run
//! into its own [`SegmentBuffer`] and flushes it as its own segment (more
//! than one when the buffer fills up within a run), and the writer orders
//! the flushed segments by their first document. So documents keep the
//! input order: their ids, and with them the order of ties, are those of a
//! one-thread build, and since scores depend only on corpus-wide
//! statistics, searches return what they return on a one-thread build of
//! the same documents, score bits included.
//!
//! A run ends once its documents' values reach its byte target (a string's
//! bytes, 8 for a number, each value 8 more): that is computed on the
//! calling thread from the documents alone, so the runs, and so the
//! segments, depend on the documents and the commit points only, never on
//! timing. The first runs are small (a sixteenth of the thread's share of
//! the memory budget, doubling each round of runs up to the share) so that
//! every thread gets work on a small input too. A single indexing thread
//! takes every document in one run, so it flushes where a build on the
//! caller's thread would: the same segments, while the caller makes the
//! next documents.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use crate::document::{Document, Value};
use crate::error::{Error, Result};
use crate::format::manifest::{self, SegmentEntry};
use crate::schema::Schema;
use crate::write::buffer::{SegmentBuffer, validate_values};
use crate::write::io::IoHooks;
use crate::write::{release_freed_memory, remove_partial};

/// Documents queued per thread before the caller waits.
const QUEUE: usize = 256;
/// Rounds of runs before runs reach the whole share (each doubles).
const RAMP: u32 = 4;

/// A flushed segment and the ordinal of its first document.
pub(crate) type Flushed = (SegmentEntry, u64);
/// A thread's answer to a sync: its flushed segments and its first error.
type Report = (Vec<Flushed>, Option<Error>);

/// What a segment buffer needs to flush, shared by the threads.
struct Context {
    dir: PathBuf,
    schema: Schema,
    io: Arc<IoHooks>,
    /// The next segment id: taken by each flush, never given twice.
    ids: Arc<AtomicU64>,
    /// Bytes each thread's buffer may hold.
    share: usize,
    max_docs: Option<u32>,
}

enum Msg {
    Doc(Document, u64),
    EndRun,
    /// Flush everything (retrying failed flushes) and report.
    Sync(Sender<Report>),
    /// Drop everything buffered, remove the files flushed but not reported.
    Discard(Sender<Report>),
}

/// One indexing thread's state.
struct Lane {
    cx: Arc<Context>,
    buffer: SegmentBuffer,
    first_seq: u64,
    flushed: Vec<Flushed>,
    /// Buffers whose flush failed, kept for the next sync to retry.
    failed: Vec<(u64, SegmentBuffer)>,
    error: Option<Error>,
}

impl Lane {
    fn add(&mut self, doc: &Document, seq: u64) {
        if self.buffer.must_flush(self.cx.share, self.cx.max_docs) {
            self.flush();
        }
        if self.buffer.doc_count() == 0 {
            self.first_seq = seq;
        }
        self.buffer.add(&self.cx.schema, doc);
    }

    fn flush(&mut self) {
        if self.buffer.doc_count() > 0 {
            let b = std::mem::replace(&mut self.buffer, SegmentBuffer::new(&self.cx.schema));
            self.write(self.first_seq, b);
        }
    }

    fn write(&mut self, first_seq: u64, b: SegmentBuffer) {
        let cx = &self.cx;
        let id = cx.ids.fetch_add(1, Ordering::Relaxed);
        match b.write_segment(&cx.schema, &cx.dir, id, &cx.io) {
            Ok(entry) => {
                self.flushed.push((entry, first_seq));
                drop(b);
                release_freed_memory();
            }
            Err(e) => {
                // The id is never taken again, so a partial file that stays
                // collides with nothing.
                let _ = remove_partial(&cx.io, &cx.dir, id, &e);
                self.failed.push((first_seq, b));
                self.error.get_or_insert(e);
            }
        }
    }

    fn run(mut self, rx: Receiver<Msg>) {
        for msg in rx {
            match msg {
                Msg::Doc(doc, seq) => self.add(&doc, seq),
                Msg::EndRun => self.flush(),
                Msg::Sync(reply) => {
                    self.error = None;
                    self.flush();
                    for (s, b) in std::mem::take(&mut self.failed) {
                        self.write(s, b);
                    }
                    let _ = reply.send((std::mem::take(&mut self.flushed), self.error.take()));
                }
                Msg::Discard(reply) => {
                    self.buffer = SegmentBuffer::new(&self.cx.schema);
                    self.failed.clear();
                    self.error = None;
                    for (e, _) in self.flushed.drain(..) {
                        let _ = self
                            .cx
                            .io
                            .remove(&self.cx.dir.join(manifest::segment_name(e.id)));
                    }
                    let _ = reply.send((Vec::new(), None));
                }
            }
        }
    }
}

struct Worker {
    tx: SyncSender<Msg>,
    handle: Option<JoinHandle<()>>,
}

/// The indexing threads of a writer.
pub(crate) struct Pool {
    workers: Vec<Worker>,
    ids: Arc<AtomicU64>,
    share: usize,
    current: usize,
    runs: u64,
    run_bytes: usize,
    seen: Vec<bool>,
}

/// The bytes a document counts for toward its run's target.
fn input_bytes(doc: &Document) -> usize {
    doc.values()
        .iter()
        .map(|(_, v)| {
            8 + match v {
                Value::Str(s) => s.len(),
                Value::I64(_) | Value::F64(_) => 8,
            }
        })
        .sum()
}

impl Pool {
    /// Starts `threads` indexing threads writing segments into `dir`, each
    /// buffering up to `budget / threads` bytes.
    pub(crate) fn new(
        threads: usize,
        dir: PathBuf,
        schema: &Schema,
        io: Arc<IoHooks>,
        budget: usize,
        max_docs: Option<u32>,
    ) -> Result<Pool> {
        let ids = Arc::new(AtomicU64::new(0));
        let share = (budget / threads).max(1);
        let cx = Arc::new(Context {
            dir,
            schema: schema.clone(),
            io,
            ids: ids.clone(),
            share,
            max_docs,
        });
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let (tx, rx) = sync_channel(QUEUE);
            let lane = Lane {
                cx: cx.clone(),
                buffer: SegmentBuffer::new(schema),
                first_seq: 0,
                flushed: Vec::new(),
                failed: Vec::new(),
                error: None,
            };
            let handle = std::thread::Builder::new()
                .name(format!("quarry-index-{i}"))
                .spawn(move || lane.run(rx))
                .map_err(|e| Error::io(&cx.dir, e))?;
            workers.push(Worker {
                tx,
                handle: Some(handle),
            });
        }
        Ok(Pool {
            workers,
            ids,
            share,
            current: 0,
            runs: 0,
            run_bytes: 0,
            seen: vec![false; schema.fields().len()],
        })
    }

    /// Sends `msg` to worker `i`; a worker that is gone panicked, and its
    /// panic goes on here.
    fn send(&mut self, i: usize, msg: Msg) {
        if self.workers[i].tx.send(msg).is_err() {
            let h = self.workers[i]
                .handle
                .take()
                .expect("a live worker's handle");
            match h.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("an indexing thread ended with its channel open"),
            }
        }
    }

    /// A segment id at least `at_least` that no flush takes.
    pub(crate) fn take_id(&self, at_least: u64) -> u64 {
        self.ids.fetch_max(at_least, Ordering::Relaxed);
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Checks `doc` and queues it as document `seq` of the writer; segment
    /// ids start at `next_id` or later.
    pub(crate) fn add(
        &mut self,
        schema: &Schema,
        doc: &Document,
        seq: u64,
        next_id: u64,
    ) -> Result<()> {
        validate_values(schema, doc, &mut self.seen)?;
        self.ids.fetch_max(next_id, Ordering::Relaxed);
        let n = self.workers.len();
        // One thread takes every document and flushes only when its buffer
        // is full, as the caller's thread would: the same segments, and no
        // runs to cut.
        if n > 1 {
            let round = (self.runs / n as u64).min(u64::from(RAMP)) as u32;
            let target = (self.share >> (RAMP - round)).max(1);
            let bytes = input_bytes(doc);
            if self.run_bytes > 0 && self.run_bytes + bytes > target {
                self.send(self.current, Msg::EndRun);
                self.current = (self.current + 1) % n;
                self.runs += 1;
                self.run_bytes = 0;
            }
            self.run_bytes += bytes;
        }
        self.send(self.current, Msg::Doc(doc.clone(), seq));
        Ok(())
    }

    fn gather(&mut self, make: fn(Sender<Report>) -> Msg) -> Report {
        let (tx, rx) = channel();
        for i in 0..self.workers.len() {
            self.send(i, make(tx.clone()));
        }
        drop(tx);
        let mut all = Vec::new();
        let mut error = None;
        let mut replies = 0;
        for (flushed, e) in rx {
            replies += 1;
            all.extend(flushed);
            if error.is_none() {
                error = e;
            }
        }
        if replies < self.workers.len() {
            // A thread dropped its reply: it is unwinding a panic, which
            // goes on here once it has ended.
            loop {
                for w in &mut self.workers {
                    if let Some(h) = w.handle.take_if(|h| h.is_finished())
                        && let Err(panic) = h.join()
                    {
                        std::panic::resume_unwind(panic);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        if self.run_bytes > 0 {
            self.current = (self.current + 1) % self.workers.len();
            self.runs += 1;
            self.run_bytes = 0;
        }
        all.sort_by_key(|f| f.1);
        (all, error)
    }

    /// Flushes every thread's buffer (retrying flushes that failed before);
    /// returns the segments flushed since the last sync in input order, the
    /// id every later segment is above, and the first error. Buffers whose
    /// flush failed are kept for the next sync.
    pub(crate) fn sync(&mut self) -> (Vec<Flushed>, u64, Option<Error>) {
        let (flushed, e) = self.gather(Msg::Sync);
        (flushed, self.ids.load(Ordering::Relaxed), e)
    }

    /// Drops every buffered document and the segments flushed since the
    /// last sync (their files removed).
    pub(crate) fn discard(&mut self) {
        self.gather(Msg::Discard);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // As `discard`, but a thread that is gone (it panicked) is skipped.
        let (tx, rx) = channel();
        for w in &self.workers {
            let _ = w.tx.send(Msg::Discard(tx.clone()));
        }
        drop(tx);
        for _ in rx {}
        for w in &mut self.workers {
            // Closing the channel ends the thread.
            let (tx, _) = sync_channel(0);
            drop(std::mem::replace(&mut w.tx, tx));
            if let Some(h) = w.handle.take() {
                let _ = h.join();
            }
        }
    }
}
