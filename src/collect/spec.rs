//! Sort specifications and hits: what collectors are told and what they return.

use std::cmp::Ordering;

use crate::document::Value;
use crate::schema::FieldId;

/// What a sort rule compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// The BM25 score.
    Score,
    /// The document number.
    Doc,
    /// A sortable field's value. Documents without a value sort after all
    /// documents with one, in both directions.
    Field(FieldId),
}

/// One rule of a sort specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortRule {
    /// What to compare.
    pub key: SortKey,
    /// Larger first.
    pub descending: bool,
}

/// An ordered list of rules; ties after the last rule go to the lower doc number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SortSpec {
    /// The rules, most significant first.
    pub rules: Vec<SortRule>,
    /// Compute every returned hit's BM25 score even when no rule needs it
    /// (the same bits a score-order search gives). Off by default: a sort
    /// by fields alone then does no BM25 work and reports score 0.
    pub track_scores: bool,
}

impl SortSpec {
    /// An empty spec (add rules with [`SortSpec::push`]).
    pub fn new() -> SortSpec {
        SortSpec::default()
    }

    /// Appends a rule.
    pub fn push(&mut self, key: SortKey, descending: bool) -> &mut Self {
        self.rules.push(SortRule { key, descending });
        self
    }

    /// This spec with [`SortSpec::track_scores`] set to `on`.
    pub fn with_scores(mut self, on: bool) -> Self {
        self.track_scores = on;
        self
    }

    /// Whether its hits need BM25 scores: a score rule orders by them, or
    /// [`SortSpec::track_scores`] asks for them.
    pub fn needs_score(&self) -> bool {
        self.track_scores || self.rules.iter().any(|r| r.key == SortKey::Score)
    }

    /// Whether this is exactly the default order: score descending, then
    /// doc ascending.
    pub fn is_score_order(&self) -> bool {
        let score_desc = SortRule {
            key: SortKey::Score,
            descending: true,
        };
        let doc_asc = SortRule {
            key: SortKey::Doc,
            descending: false,
        };
        self.rules.is_empty() || self.rules == [score_desc] || self.rules == [score_desc, doc_asc]
    }
}

/// One result.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Document number within the searcher's snapshot.
    pub doc: u64,
    /// BM25 score (0 for documents matched only by filters, and for every
    /// hit of a sorted search whose spec has no score rule and does not ask
    /// for [`SortSpec::track_scores`]: the score is then never computed).
    pub score: f32,
    /// One value per sort rule (empty without a sort spec): the score as
    /// `F64`, the doc number as `I64`, or the field's value (`None` when the
    /// document has none). Hits from several searchers merge by these.
    pub sort_values: Vec<Option<Value>>,
}

/// Compares two values of one sort rule; `None` (missing) sorts last in both directions.
pub fn compare_values(a: &Option<Value>, b: &Option<Value>, descending: bool) -> Ordering {
    let ord = match (a, b) {
        (None, None) => return Ordering::Equal,
        (None, Some(_)) => return Ordering::Greater,
        (Some(_), None) => return Ordering::Less,
        (Some(x), Some(y)) => match (x, y) {
            (Value::I64(x), Value::I64(y)) => x.cmp(y),
            (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
            (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
            _ => Ordering::Equal,
        },
    };
    if descending { ord.reverse() } else { ord }
}
