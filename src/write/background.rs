//! The merge thread: runs the merges the writer hands it, one at a time,
//! while the writer goes on adding documents and committing.
//!
//! The thread only writes merged segment files. It never touches a
//! manifest: the writer publishes a finished merge itself, on its own
//! thread (see the `write` module), so the commit protocol has one author.
//! A merge that fails or is cancelled removes its partial file here, and
//! the writer learns of it from the report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::format::manifest;
use crate::read::LiveSegment;
use crate::schema::Schema;
use crate::write::io::IoHooks;
use crate::write::merge::merge_segments;
use crate::write::remove_partial;

/// A merge to run: segment `id` is written from `sources`.
pub(crate) struct Job {
    pub id: u64,
    pub sources: Vec<LiveSegment>,
}

/// A merge's outcome: (documents, file length) of segment `id`.
pub(crate) struct Report {
    pub id: u64,
    pub result: Result<(u32, u64)>,
}

/// Writes segment `id` of `dir` as the merge of `sources`. On an error the
/// partial file is removed (when that fails too, the id stays reserved and
/// the next clean-up removes the file).
pub(crate) fn run(
    schema: &Schema,
    dir: &Path,
    io: &IoHooks,
    job: &Job,
    cancel: &AtomicBool,
) -> Result<(u32, u64)> {
    let path = dir.join(manifest::segment_name(job.id));
    let result = merge_segments(schema, &job.sources, &path, io, cancel).inspect_err(|e| {
        remove_partial(io, dir, job.id, e);
    });
    crate::write::release_freed_memory();
    result
}

/// The writer's merge thread.
pub(crate) struct MergeThread {
    jobs: Option<Sender<Job>>,
    reports: Receiver<Report>,
    cancel: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl MergeThread {
    pub(crate) fn spawn(dir: PathBuf, schema: Schema, io: Arc<IoHooks>) -> Result<MergeThread> {
        let (jobs, rx) = channel::<Job>();
        let (tx, reports) = channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let handle = std::thread::Builder::new()
            .name("quarry-merge".into())
            .spawn(move || {
                for job in rx {
                    let result = run(&schema, &dir, &io, &job, &flag);
                    let id = job.id;
                    // Sources are released before the writer hears of it.
                    drop(job);
                    if tx.send(Report { id, result }).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| Error::io(Path::new("quarry-merge"), e))?;
        Ok(MergeThread {
            jobs: Some(jobs),
            reports,
            cancel,
            handle: Some(handle),
        })
    }

    /// Queues a merge.
    pub(crate) fn submit(&self, job: Job) {
        // The thread ends only when `jobs` is dropped, or by a panic, which
        // `stop` passes on.
        let _ = self.jobs.as_ref().expect("running").send(job);
    }

    /// The next report: waits for one when `block`, else only takes one
    /// that is there. None when none is (or the thread is gone).
    pub(crate) fn report(&self, block: bool) -> Option<Report> {
        if block {
            self.reports.recv().ok()
        } else {
            self.reports.try_recv().ok()
        }
    }

    /// Cancels the queued and running merges (each removes its partial
    /// file) and joins the thread. A panic on the thread goes on here.
    pub(crate) fn stop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.jobs = None;
        if let Some(h) = self.handle.take()
            && let Err(panic) = h.join()
            && !std::thread::panicking()
        {
            std::panic::resume_unwind(panic);
        }
    }
}

impl Drop for MergeThread {
    fn drop(&mut self) {
        self.stop();
    }
}
