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
    /// Document number within the searcher's corpus: its shards' documents
    /// numbered one after the other, in the order the shards were given
    /// (a searcher of one index: the index's document number).
    pub doc: u64,
    /// BM25 score (0 for documents matched only by filters, and for every
    /// hit of a sorted search whose spec has no score rule and does not ask
    /// for [`SortSpec::track_scores`]: the score is then never computed).
    pub score: f32,
    /// One value per sort rule (empty without a sort spec): the score as
    /// `F64`, the doc number as `I64`, or the field's value (`None` when the
    /// document has none). Hits from several searchers merge by these.
    pub sort_values: Vec<Option<Value>>,
    /// The shard holding the document: its position among the searcher's
    /// directories (0 for a searcher of one index), or the shard number
    /// given with imported statistics.
    pub shard: u32,
    /// The document's number within its shard's index.
    pub shard_doc: u64,
}

impl Hit {
    /// A hit of document `doc` of a searcher of one index (shard 0).
    pub fn new(doc: u64, score: f32, sort_values: Vec<Option<Value>>) -> Hit {
        Hit {
            doc,
            score,
            sort_values,
            shard: 0,
            shard_doc: doc,
        }
    }

    /// The bytes whose order is the order of hits in a search by `sort`
    /// (`None`: by score): of two hits of any shards, searched with the same
    /// statistics and request, the one whose key compares lower (bytewise,
    /// as `memcmp`, a shorter key first when it is a prefix) comes first.
    /// Merging shards' hits is sorting them by it (`docs/SCALE-OUT.md`).
    ///
    /// In score order: the score (widened to f64, which is exact) as its
    /// bits in IEEE total order, inverted, big-endian, then the shard (u32) and the shard's document (u64),
    /// big-endian. Sorted: per rule a byte 1 and the value's encoding
    /// (every byte inverted for a descending rule), or a byte 2 for a
    /// missing value (last in both directions); an i64 as its
    /// sign-flipped big-endian bits, an f64 (and a score) as its bits in
    /// IEEE total order, a string as its UTF-8 bytes with each 0 byte
    /// followed by 0xFF, ended by two 0 bytes; then shard and document as
    /// in score order. Documents of one shard are in their shards' order,
    /// so ties go to the lower document number of a searcher of all the
    /// shards, as they do in one.
    pub fn merge_key(&self, sort: Option<&SortSpec>) -> Vec<u8> {
        let mut key = Vec::with_capacity(32);
        match sort.filter(|s| !s.is_score_order()) {
            None => key.extend_from_slice(&(!f64_order(f64::from(self.score))).to_be_bytes()),
            Some(spec) => {
                for (i, rule) in spec.rules.iter().enumerate() {
                    let Some(v) = self.sort_values.get(i).and_then(Option::as_ref) else {
                        key.push(2);
                        continue;
                    };
                    key.push(1);
                    let start = key.len();
                    match v {
                        Value::I64(x) => {
                            key.extend_from_slice(&((*x as u64) ^ (1 << 63)).to_be_bytes())
                        }
                        Value::F64(x) => key.extend_from_slice(&f64_order(*x).to_be_bytes()),
                        Value::Str(s) => {
                            for &b in s.as_bytes() {
                                key.push(b);
                                if b == 0 {
                                    key.push(0xff);
                                }
                            }
                            key.extend_from_slice(&[0, 0]);
                        }
                    }
                    if rule.descending {
                        key[start..].iter_mut().for_each(|b| *b = !*b);
                    }
                }
            }
        }
        key.extend_from_slice(&self.shard.to_be_bytes());
        key.extend_from_slice(&self.shard_doc.to_be_bytes());
        key
    }
}

/// The bits of `x` as an unsigned integer in IEEE total order.
fn f64_order(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The values one hit may hold for a rule, one per kind (i64, f64,
    /// string: short, over an alphabet with 0 bytes, so prefixes and
    /// embedded zeros are common), and whether it holds one.
    fn values() -> impl Strategy<Value = (i64, f64, String, bool)> {
        (
            prop_oneof![
                Just(i64::MIN),
                Just(-1i64),
                Just(0),
                Just(i64::MAX),
                any::<i64>()
            ],
            prop_oneof![
                Just(-0.0f64),
                Just(0.0),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(f64::NAN),
                any::<f64>()
            ],
            proptest::collection::vec(prop_oneof![Just('\0'), Just('a'), Just('b')], 0..4)
                .prop_map(String::from_iter),
            proptest::bool::weighted(0.8),
        )
    }

    proptest! {
        /// Sorting by merge keys is the typed order of the rules, then
        /// shard and document.
        #[test]
        fn merge_keys_sort_as_the_rules_compare(
            kinds in proptest::collection::vec((0u8..3, any::<bool>()), 1..4),
            raw in proptest::collection::vec(
                (any::<u32>(), 0u32..3, 0u64..5, proptest::collection::vec(values(), 3)),
                1..12,
            ),
        ) {
            let mut spec = SortSpec::new();
            for (i, (_, desc)) in kinds.iter().enumerate() {
                spec.push(SortKey::Field(FieldId(i as u16)), *desc);
            }
            let mut hits: Vec<Hit> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (bits, shard, doc, vals))| Hit {
                    doc: i as u64,
                    score: f32::from_bits(bits & 0x7fff_ffff).min(f32::MAX),
                    sort_values: kinds
                        .iter()
                        .zip(vals)
                        .map(|((k, _), (x, y, s, some))| {
                            some.then_some(match k {
                                0 => Value::I64(x),
                                1 => Value::F64(y),
                                _ => Value::Str(s),
                            })
                        })
                        .collect(),
                    shard,
                    shard_doc: doc * 100 + i as u64,
                })
                .collect();
            let sorted_by = |hits: &mut Vec<Hit>, spec: Option<&SortSpec>| {
                hits.sort_by_key(|h| h.merge_key(spec));
                hits.iter().map(|h| h.doc).collect::<Vec<_>>()
            };
            let tie = |a: &Hit, b: &Hit| (a.shard, a.shard_doc).cmp(&(b.shard, b.shard_doc));
            let by_keys = sorted_by(&mut hits, Some(&spec));
            let mut want = hits.clone();
            want.sort_by(|a, b| {
                spec.rules
                    .iter()
                    .enumerate()
                    .map(|(i, r)| compare_values(&a.sort_values[i], &b.sort_values[i], r.descending))
                    .find(|o| o.is_ne())
                    .unwrap_or_else(|| tie(a, b))
            });
            prop_assert_eq!(by_keys, want.iter().map(|h| h.doc).collect::<Vec<_>>());
            let by_score = sorted_by(&mut hits, None);
            want.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| tie(a, b)));
            prop_assert_eq!(by_score, want.iter().map(|h| h.doc).collect::<Vec<_>>());
        }
    }
}
