//! Collectors: the inline priority queue and what is built on it.

mod sort;
mod spec;
mod topdocs;

pub use sort::SortCollector;
pub use spec::{Hit, SortKey, SortRule, SortSpec, compare_values};
pub use topdocs::{TopDocs, score_key};
