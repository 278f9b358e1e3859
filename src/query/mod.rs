//! Queries, their BM25 weights, and the execution paths.
//!
//! A [`Query`] is compiled against a snapshot into a [`plan::Node`] tree: term
//! clauses resolved to corpus-wide BM25 weights, match queries analysed and
//! de-duplicated, booleans flattened into their clause lists. Every
//! execution path runs the same plan and scores a document with the same
//! function, summing clause scores in f32 in the query's clause order:
//!
//! - [`exhaustive`]: the oracle. Decodes every posting list it needs,
//!   evaluates the query per candidate document, sorts everything.
//! - [`daat`]: document-at-a-time iterators over the posting blocks.
//! - [`window`]: window-at-a-time loops over decoded blocks for flat
//!   queries, feeding a collector that rejects documents by field values
//!   (sorted search) or by score bounds under its floor (score order).
//! - [`prune`]: the exact per-candidate limits the window loop checks.

pub mod bm25;
pub mod daat;
pub mod exhaustive;
pub mod plan;
pub mod prune;
pub mod window;

use crate::format::segment::i64_key;
use crate::schema::FieldId;

/// How a match query combines its terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// Every term must occur.
    And,
    /// At least one term must occur.
    Or,
}

/// How a boolean clause takes part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occur {
    /// Must match; contributes to the score.
    Must,
    /// May match; contributes to the score when it does. A boolean without
    /// `Must` or `Filter` clauses needs at least one `Should` to match.
    Should,
    /// Must not match.
    MustNot,
    /// Must match; does not contribute to the score.
    Filter,
}

/// A query.
#[derive(Clone, Debug, PartialEq)]
pub enum Query {
    /// Documents whose `field` contains exactly the term `key` (raw bytes:
    /// a token as the analyzer produces it for text fields, the exact value
    /// for string fields, [`Query::term_i64`] for i64 fields).
    Term {
        /// The field.
        field: FieldId,
        /// The term's bytes.
        key: Vec<u8>,
    },
    /// `text` analysed with the field's analyzer; its distinct terms, in
    /// order of first occurrence, combined with `op`.
    Match {
        /// The field.
        field: FieldId,
        /// The text to analyse.
        text: String,
        /// AND or OR.
        op: Operator,
    },
    /// Clauses combined as their [`Occur`] says. The score is the f32 sum of
    /// the matching scoring clauses' scores, in clause order. A boolean with
    /// no `Must`, `Filter` or `Should` clause matches nothing.
    Boolean(Vec<(Occur, Query)>),
}

impl Query {
    /// A term query on a text or string field (the term is not analysed).
    pub fn term(field: FieldId, term: &str) -> Query {
        Query::Term {
            field,
            key: term.as_bytes().to_vec(),
        }
    }

    /// A term query on an indexed `i64` field.
    pub fn term_i64(field: FieldId, value: i64) -> Query {
        Query::Term {
            field,
            key: i64_key(value).to_vec(),
        }
    }

    /// A match query.
    pub fn matching(field: FieldId, text: &str, op: Operator) -> Query {
        Query::Match {
            field,
            text: text.to_owned(),
            op,
        }
    }

    /// An empty boolean query, to add clauses to with [`Query::add`].
    pub fn boolean() -> Query {
        Query::Boolean(Vec::new())
    }

    /// Adds a clause to a boolean query (turning any other query into the
    /// first `Must` clause of a new boolean).
    pub fn add(self, occur: Occur, clause: Query) -> Query {
        match self {
            Query::Boolean(mut v) => {
                v.push((occur, clause));
                Query::Boolean(v)
            }
            other => Query::Boolean(vec![(Occur::Must, other), (occur, clause)]),
        }
    }
}
