//! Reading: committed snapshots and their memory-mapped segments.
//!
//! `read` depends on `format` only, never on `write`.

mod segment;
mod snapshot;

pub use segment::{SegmentReader, SortColumn, StoredCache, TermInfo};
pub use snapshot::{LiveSegment, Snapshot, latest_manifest};
