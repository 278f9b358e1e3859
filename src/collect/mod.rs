//! Collectors: the inline priority queue and what is built on it.

mod sort;
mod topdocs;

pub use sort::SortCollector;
pub use topdocs::{TopDocs, score_key};
