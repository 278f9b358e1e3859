//! File-system steps of the writer, each one a point where a failure can be
//! injected. Tests use [`IoHooks::fail_at`] to stop a commit at every step in
//! turn (as a crash or a full disk would) and check that the index still
//! opens as the previous commit or the new one, and [`IoHooks::lift`] to
//! end a full disk and check that the same writer then commits.

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Counts file-system steps and fails the one chosen for a test.
#[derive(Debug)]
pub struct IoHooks {
    steps: AtomicU64,
    /// The first failing step; [`NEVER`] when none fails.
    fail_at: AtomicU64,
    once: bool,
}

const NEVER: u64 = u64::MAX;

impl Default for IoHooks {
    fn default() -> IoHooks {
        IoHooks::new()
    }
}

impl IoHooks {
    /// Hooks that never fail.
    pub fn new() -> IoHooks {
        IoHooks {
            steps: AtomicU64::new(0),
            fail_at: AtomicU64::new(NEVER),
            once: false,
        }
    }

    /// Hooks whose step number `n` (from 0) and every later step fail with
    /// an injected "no space left on device" error.
    pub fn fail_at(n: u64) -> IoHooks {
        IoHooks {
            fail_at: AtomicU64::new(n),
            ..IoHooks::new()
        }
    }

    /// Hooks whose step number `n` alone fails (a transient error, such as
    /// a full disk that is then cleared).
    pub fn fail_once_at(n: u64) -> IoHooks {
        IoHooks {
            fail_at: AtomicU64::new(n),
            once: true,
            ..IoHooks::new()
        }
    }

    /// Ends the failures: no later step fails (the disk has space again).
    pub fn lift(&self) {
        self.fail_at.store(NEVER, Ordering::Relaxed);
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.steps.load(Ordering::Relaxed)
    }

    fn step(&self, path: &Path) -> Result<()> {
        let n = self.steps.fetch_add(1, Ordering::Relaxed);
        match self.fail_at.load(Ordering::Relaxed) {
            NEVER => Ok(()),
            f if n == f || (n > f && !self.once) => Err(Error::io(
                path,
                std::io::Error::from_raw_os_error(libc::ENOSPC),
            )),
            _ => Ok(()),
        }
    }

    /// A point in the middle of writing a file.
    pub(crate) fn check_write(&self, path: &Path) -> Result<()> {
        self.step(path)
    }

    /// Creates a new file for writing; fails if it exists.
    pub(crate) fn create_new(&self, path: &Path) -> Result<File> {
        self.step(path)?;
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(path, e))
    }

    /// Creates a scratch file at `path`, read and written by the caller
    /// alone: it is unlinked at once, so its space goes when it is closed
    /// and only a crash between the two leaves its name (an existing file
    /// of that name is truncated and taken over; a segment's scratch name
    /// starts with the segment's, so the next writer's clean-up removes
    /// it). One step: a failure is injected before the file is made.
    pub(crate) fn scratch_file(&self, path: &Path) -> Result<File> {
        self.step(path)?;
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
            _ => Ok(f),
        }
    }

    /// Writes a whole small file and fsyncs it.
    pub(crate) fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let mut f = self.create_new(path)?;
        self.step(path)?;
        f.write_all(bytes).map_err(|e| Error::io(path, e))?;
        self.sync(path, &f)
    }

    /// fsyncs a file.
    pub(crate) fn sync(&self, path: &Path, file: &File) -> Result<()> {
        self.step(path)?;
        file.sync_all().map_err(|e| Error::io(path, e))
    }

    /// Atomically renames `from` to `to`.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.step(to)?;
        std::fs::rename(from, to).map_err(|e| Error::io(to, e))
    }

    /// fsyncs a directory so that renames and creations in it are durable.
    pub(crate) fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.step(dir)?;
        let f = File::open(dir).map_err(|e| Error::io(dir, e))?;
        f.sync_all().map_err(|e| Error::io(dir, e))
    }

    /// Removes a file; a file already gone is not an error.
    pub(crate) fn remove(&self, path: &Path) -> Result<()> {
        self.step(path)?;
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
            _ => Ok(()),
        }
    }
}
