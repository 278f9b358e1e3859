//! Where a segment reader's bytes live: a read-only mapping of the file,
//! or a copy read into memory when the segment is opened.
//!
//! The reader works over one `&[u8]` whatever backs it, and reads every
//! integer byte-wise (`from_le_bytes` of a copied array, bitpacking over
//! byte slices), so the backing needs no alignment beyond a byte.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use memmap2::{Mmap, UncheckedAdvice};

use crate::error::{Error, Result};

/// How a searcher's segment files are read.
///
/// Both modes give identical results; they differ in what a change to a
/// committed file behind quarry's back can do (see `docs/FORMAT.md`, "The
/// file contract").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadMode {
    /// Map each segment file read-only (the default): opening costs no
    /// copy and the page cache is shared, but a file truncated while
    /// mapped makes the next access to its lost pages raise `SIGBUS`,
    /// which kills the process.
    #[default]
    Mmap,
    /// Read each segment file into memory when it is opened (and check its
    /// CRC once): the searcher never touches the file again, so nothing
    /// done to the file afterwards can affect it, at the cost of the
    /// segments' size in memory.
    Heap,
}

impl ReadMode {
    /// Parses `mmap` or `heap`.
    pub fn from_name(s: &str) -> Option<ReadMode> {
        Some(match s {
            "mmap" => ReadMode::Mmap,
            "heap" => ReadMode::Heap,
            _ => return None,
        })
    }

    /// The default overridden by the environment variable
    /// `QUARRY_READ=mmap|heap`. An unrecognised value is ignored.
    pub fn from_env() -> ReadMode {
        std::env::var("QUARRY_READ")
            .ok()
            .as_deref()
            .and_then(ReadMode::from_name)
            .unwrap_or_default()
    }
}

/// Bytes of a mapped file hashed between two releases of its pages
/// ([`Backing::crc32`]).
const CRC_WINDOW: usize = 8 << 20;

/// The bytes of one segment file.
pub(crate) enum Backing {
    Mmap(Mmap),
    Heap(Box<[u8]>),
}

impl std::ops::Deref for Backing {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Backing::Mmap(m) => m,
            Backing::Heap(b) => b,
        }
    }
}

/// The `Corrupt` error of a file whose length is not the one recorded for it.
pub(crate) fn wrong_length(path: &Path, len: u64, expected: u64) -> Error {
    Error::corrupt(
        path,
        format!(
            "file is {len} bytes, the manifest records {expected}: \
             it was changed after it was committed"
        ),
    )
}

impl Backing {
    /// Opens the file at `path`, which the manifest records as
    /// `expected_len` bytes long, in `mode`. A file of another length is
    /// `Corrupt` before any byte of it is mapped or read.
    pub(crate) fn open(path: &Path, expected_len: u64, mode: ReadMode) -> Result<Backing> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len != expected_len {
            return Err(wrong_length(path, len, expected_len));
        }
        let backing = match mode {
            ReadMode::Mmap => {
                // SAFETY: the mapping is read-only and the file's length
                // was just checked against the manifest. Committed segment
                // files are immutable: the writer creates each with
                // create_new, fsyncs it, and never opens it for writing
                // again (it only unlinks files no manifest references,
                // which leaves existing mappings intact). A process that
                // truncates or rewrites a committed file behind quarry's
                // back breaks the file contract of docs/FORMAT.md (a
                // truncation raises SIGBUS on access, a rewrite gives wrong
                // answers); `ReadMode::Heap` exists for hosts that cannot
                // accept that.
                Backing::Mmap(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?)
            }
            ReadMode::Heap => {
                let cap = usize::try_from(expected_len)
                    .map_err(|_| wrong_length(path, len, expected_len))?;
                let mut buf = Vec::with_capacity(cap);
                // One byte more than expected, so that a file that grew
                // since the check is noticed.
                (&file)
                    .take(expected_len + 1)
                    .read_to_end(&mut buf)
                    .map_err(|e| Error::io(path, e))?;
                Backing::Heap(buf.into_boxed_slice())
            }
        };
        // The file may have changed between the check and the mapping or read.
        if backing.len() as u64 != expected_len {
            return Err(wrong_length(path, backing.len() as u64, expected_len));
        }
        Ok(backing)
    }

    /// The CRC-32 of `bytes`, a prefix of this file's bytes. A mapping is
    /// hashed [`CRC_WINDOW`] bytes at a time, each window's pages let go
    /// once hashed, so that checking a file never makes all of it resident
    /// (a merge opens its sources, a searcher its segments, whatever
    /// their size); the searches that follow fault in what they read.
    pub(crate) fn crc32(&self, bytes: &[u8]) -> u32 {
        let Backing::Mmap(m) = self else {
            return crc32fast::hash(bytes);
        };
        let mut h = crc32fast::Hasher::new();
        for (i, w) in bytes.chunks(CRC_WINDOW).enumerate() {
            h.update(w);
            // SAFETY: as in `release_pages`: the mapping is read-only and
            // shared, so MADV_DONTNEED on a range of it only unmaps those
            // pages, which fault the same bytes in again from the file
            // (never modified once committed) on the next access; the
            // range lies inside the mapping (`bytes` is a prefix of it).
            // Advice is a hint: an error changes nothing and is ignored.
            let _ = unsafe {
                m.unchecked_advise_range(UncheckedAdvice::DontNeed, i * CRC_WINDOW, w.len())
            };
        }
        h.finalize()
    }

    /// Lets the kernel drop this process's mapped pages of the file (a
    /// no-op for a heap copy): they stop counting in its resident memory,
    /// and the next access reads them again from the page cache. A reader
    /// that streams through a file calls this now and then to keep only
    /// what it read since resident.
    pub(crate) fn release_pages(&self) {
        if let Backing::Mmap(m) = self {
            // SAFETY: the mapping is read-only and shared (`Mmap::map`), so
            // MADV_DONTNEED only unmaps its pages: nothing is written back
            // or discarded, and a later access faults the file's bytes in
            // again. Those bytes are the ones read before, since a
            // committed segment file is never modified (the file contract,
            // `docs/FORMAT.md`); slices borrowed from the mapping stay
            // valid, the mapping itself being unchanged. Advice is a hint:
            // an error changes nothing and is ignored.
            let _ = unsafe { m.unchecked_advise(UncheckedAdvice::DontNeed) };
        }
    }
}
