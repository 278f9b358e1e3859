//! Reading: committed snapshots and their segments, mapped or read into
//! memory ([`ReadMode`]).
//!
//! `read` depends on `format` only, never on `write`.

mod backing;
mod segment;
mod snapshot;

pub use backing::ReadMode;
pub use segment::{SegmentReader, SortColumn, StoredCache, TermInfo, Terms};
pub(crate) use snapshot::is_deleted_in;
pub use snapshot::{LiveSegment, Snapshot, latest_manifest, locate};
