//! Collectors: the inline priority queue and what is built on it.

mod topdocs;

pub use topdocs::{TopDocs, score_key};
