//! The one error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong in quarry.
///
/// Each variant maps to one stable status code of the C API (see
/// `capi::status`), so a variant is never repurposed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system I/O error on the named path.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory the operation was about.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file's bytes are not what the format says they must be.
    #[error("corrupt index file {path}: {detail}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A file was written by a format version this build cannot read.
    #[error(
        "unsupported format version {found} in {path} (this build reads versions 1 to {supported})"
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version found in the file.
        found: u32,
        /// The newest version this build reads (it reads every one from 1).
        supported: u32,
    },
    /// Another writer holds the index's lock.
    #[error("index {0} is locked by another writer")]
    Locked(PathBuf),
    /// No index exists at the path.
    #[error("no index at {0}")]
    NoIndex(PathBuf),
    /// An index already exists where a new one was to be created.
    #[error("an index already exists at {0}")]
    IndexExists(PathBuf),
    /// The schema is invalid, or a document or query does not fit it.
    #[error("schema error: {0}")]
    Schema(String),
    /// An argument is out of its valid range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A feature that the request needs is not built yet.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A query string is not in the query syntax (`docs/QUERY-SYNTAX.md`).
    #[error("query syntax error at byte {position}: {message}")]
    QuerySyntax {
        /// The byte offset in the query string where the problem is.
        position: usize,
        /// What was found and what was expected there.
        message: String,
    },
    /// A prefix or dictionary-served range expands to more distinct terms
    /// than the searcher's limit ([`crate::SearchOptions::max_expansions`]).
    #[error("{what} expands to more than {limit} terms")]
    TooManyTerms {
        /// The query part that expanded, for the message.
        what: String,
        /// The limit.
        limit: usize,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, detail: impl Into<String>) -> Self {
        Error::Corrupt {
            path: path.into(),
            detail: detail.into(),
        }
    }
}
