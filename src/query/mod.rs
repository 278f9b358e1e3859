//! Queries, their BM25 weights, and the execution paths.
//!
//! A [`Query`] is compiled against the searched segments into a
//! [`plan::Node`] tree: term clauses resolved to corpus-wide BM25 weights
//! (the statistics from [`stats`]), match queries analysed and
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
//! - [`constant`]: the constant-score iterators (match-all, ranges, term
//!   sets of prefixes and dictionary ranges) the other two paths share.
//! - [`parser`]: the query language of `docs/QUERY-SYNTAX.md`.
//! - [`stats`]: where the corpus statistics come from (the segments, or
//!   statistics imported from a whole corpus of shards).
//! - [`limits`]: the depth ([`MAX_DEPTH`]) and score range every query
//!   keeps to, and the recursion-free drop, clone and comparison of a
//!   [`Query`] of any depth.
//!
//! # Scoring of the constant-score queries and of boosts
//!
//! [`Query::All`], [`Query::Range`] and [`Query::Prefix`] score a constant:
//! the product of the boosts above them (1.0 without any), rounded to f32
//! once. A prefix is scored as a constant (Lucene's default rewrite, and
//! tantivy's): its expansion's terms do not each add a BM25 score, so a
//! prefix that expands to many rare terms does not outrank a plain term
//! match, and the cost does not grow with the number of scored terms.
//!
//! A [`Query::Boost`] multiplies into its whole subtree: each term below it
//! is weighted with `w = idf * (k1 + 1) * b`, where `b` is the product of the
//! boosts on the term's path, computed in f64 and rounded to f32 once (the
//! same rounding as an unboosted weight, so a boost of 1.0 changes no bit).
//! A boolean's score stays the f32 sum of its clauses' (boosted) scores; the
//! boost is never applied to a sum. Every path and every pruning bound
//! evaluates the same boosted weight, so they stay bit-identical and exact.

pub mod bm25;
pub mod constant;
pub mod daat;
pub mod exhaustive;
pub mod limits;
pub mod parser;
pub mod phrase;
pub mod plan;
pub mod prune;
pub mod stats;
pub mod totals;
pub mod window;

pub use limits::MAX_DEPTH;
pub use std::ops::Bound;

use crate::document::Value;
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

/// A query. A value may nest to any depth, but searching one deeper than
/// [`MAX_DEPTH`] (see [`Query::depth`]) is [`crate::Error::InvalidArgument`],
/// as is one whose boosts would make a score overflow f32 (see
/// [`limits`]). `Clone`, `PartialEq` and dropping do not recurse; `Debug`
/// shows the first [`MAX_DEPTH`] levels.
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
    /// Documents whose `field` (text or indexed string) holds a term that
    /// starts with the bytes `prefix` (not analysed: give it as the analyzer
    /// would produce it, e.g. lowercase), scoring a constant (see the module
    /// docs). The matching terms are found by binary search in each
    /// segment's dictionary; more than [`crate::SearchOptions::max_expansions`]
    /// distinct terms over the snapshot is [`crate::Error::TooManyTerms`].
    Prefix {
        /// The field.
        field: FieldId,
        /// The prefix's bytes.
        prefix: Vec<u8>,
    },
    /// Documents whose value of `field` (i64, f64 or string) lies between
    /// the bounds, scoring a constant. Bounds are [`Value::I64`],
    /// [`Value::F64`] (finite or infinite, never NaN) or [`Value::Str`],
    /// matching the field's type; f64 values compare by IEEE total order
    /// (so -0.0 < 0.0), strings by their UTF-8 bytes. Served from the sort
    /// column when the field is sortable (one ord comparison per document),
    /// otherwise from the term dictionary (i64 and string fields that are
    /// indexed; expanded like a prefix, with the same cap). An f64 field is
    /// never indexed, so it must be sortable.
    Range {
        /// The field.
        field: FieldId,
        /// The lower end.
        lower: Bound<Value>,
        /// The upper end.
        upper: Bound<Value>,
    },
    /// Every document, scoring a constant (1.0, times the boosts above it).
    All,
    /// No document.
    None,
    /// The inner query with its scores multiplied by the factor (finite and
    /// at least 0, else [`crate::Error::InvalidArgument`]): folded into each
    /// term's BM25 weight and each constant score below it, see the module
    /// docs.
    Boost(Box<Query>, f32),
    /// The analysed `text` as a phrase in `field` (a text field with
    /// positions, else [`crate::Error::Schema`] or
    /// [`crate::Error::Unsupported`]), its tokens at most `slop` moves out
    /// of place in total (Lucene's slop: two swapped tokens are 2 moves).
    /// No token matches nothing; one token is [`Query::Term`].
    ///
    /// Scored as one BM25 term: its frequency the *phrase frequency*, the
    /// number of matches found left to right with each token position
    /// serving at most one match per token of the phrase (so at most each
    /// term's frequency; with slop 0, the positions the phrase starts
    /// at), its idf the sum of the tokens' idfs (a repeated token counted
    /// each time). The exact definition is in [`crate::query::phrase`]
    /// and `docs/QUERY-SYNTAX.md` ("Phrases").
    Phrase {
        /// The field.
        field: FieldId,
        /// The phrase's text (analysed with the field's analyzer).
        text: String,
        /// How many moves the terms may be out of place.
        slop: u32,
    },
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

    /// A prefix query on a text or string field (the prefix is not analysed).
    pub fn prefix(field: FieldId, prefix: &str) -> Query {
        Query::Prefix {
            field,
            prefix: prefix.as_bytes().to_vec(),
        }
    }

    /// A range query.
    pub fn range(field: FieldId, lower: Bound<Value>, upper: Bound<Value>) -> Query {
        Query::Range {
            field,
            lower,
            upper,
        }
    }

    /// This query with its scores multiplied by `boost`.
    pub fn boost(self, boost: f32) -> Query {
        Query::Boost(Box::new(self), boost)
    }

    /// Parses `text` in the query syntax (`docs/QUERY-SYNTAX.md`) over
    /// `schema`'s fields; see [`parser::parse`].
    pub fn parse(
        text: &str,
        schema: &crate::Schema,
        config: &parser::ParserConfig,
    ) -> crate::Result<Query> {
        parser::parse(text, schema, config)
    }

    /// An empty boolean query, to add clauses to with [`Query::add`].
    pub fn boolean() -> Query {
        Query::Boolean(Vec::new())
    }

    /// Adds a clause to a boolean query (turning any other query into the
    /// first `Must` clause of a new boolean).
    pub fn add(mut self, occur: Occur, clause: Query) -> Query {
        if let Query::Boolean(v) = &mut self {
            v.push((occur, clause));
            return self;
        }
        Query::Boolean(vec![(Occur::Must, self), (occur, clause)])
    }
}
