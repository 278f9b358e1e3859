//! A query compiled against the segments a searcher searches, with the
//! corpus statistics it scores by ([`crate::query::stats`]).

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use crate::document::Value;
use crate::error::{Error, Result};
use crate::format::segment::i64_key;
use crate::query::bm25::{self, TermWeight};
use crate::query::limits;
use crate::query::stats::{Expansion, FieldTables, Statistics};
use crate::query::{Occur, Operator, Query};
use crate::read::{LiveSegment, TermInfo};
use crate::schema::{FieldDef, FieldId, FieldType, Schema};

/// A term clause with its corpus-wide weight.
#[derive(Clone, Debug)]
pub struct TermNode {
    /// The field.
    pub field: FieldId,
    /// The term's bytes.
    pub key: Vec<u8>,
    /// Whether the field has norms (text fields).
    pub has_norms: bool,
    /// Documents holding the term across the corpus (its statistics').
    pub doc_freq: u64,
    /// BM25 constants.
    pub weight: Arc<TermWeight>,
    /// Where the term is in each segment holding it, by the address of the
    /// segment's reader (see [`TermNode::info`]).
    infos: Vec<(usize, TermInfo)>,
}

impl TermNode {
    /// The term's postings info in `seg` (a segment of the target the
    /// plan was compiled against), or `None` when `seg` lacks the term.
    pub fn info(&self, seg: &LiveSegment) -> Option<TermInfo> {
        let key = Arc::as_ptr(&seg.reader) as usize;
        self.infos.iter().find(|(k, _)| *k == key).map(|(_, i)| *i)
    }
}

/// A compiled query node.
#[derive(Clone, Debug)]
pub enum Node {
    /// Matches nothing.
    Empty,
    /// One term.
    Term(TermNode),
    /// Clauses in the query's order. At least one `Must`, `Filter` or
    /// `Should` clause; with no `Must`/`Filter`, at least one `Should` must
    /// match.
    Bool(Vec<(Occur, Node)>),
    /// Every document, each scoring the constant.
    All(f32),
    /// Documents whose sort-column value lies in a range.
    Range(RangeNode),
    /// Documents holding any of a set of terms (an expanded prefix or a
    /// range served from the term dictionary), each scoring a constant.
    Terms(TermSetNode),
    /// Two or more tokens as a phrase.
    Phrase(PhraseNode),
}

/// A phrase of two or more tokens in a text field with positions, scored
/// as one term whose frequency is the phrase's ([`crate::query::phrase`]).
#[derive(Clone, Debug)]
pub struct PhraseNode {
    /// The field.
    pub field: FieldId,
    /// The field's name (for errors).
    pub field_name: Arc<str>,
    /// The phrase's distinct terms, in order of first occurrence (each
    /// with its own weight, unused: the phrase scores with `weight`).
    pub terms: Vec<TermNode>,
    /// Per token of the phrase, in order: its offset in the phrase and
    /// the index of its term in `terms`.
    pub slots: Vec<(u32, usize)>,
    /// How far the tokens may be out of place (see [`crate::query::Query::Phrase`]).
    pub slop: u32,
    /// `(sum of the tokens' idfs) * (k1 + 1) * boost`, and the field's
    /// length factors.
    pub weight: Arc<TermWeight>,
}

/// A range over a sortable field's sort column, scoring a constant.
#[derive(Clone, Debug)]
pub struct RangeNode {
    /// The (sortable) field.
    pub field: FieldId,
    /// The lower end, a value of the field's type (f64 never NaN).
    pub lower: Bound<Value>,
    /// The upper end.
    pub upper: Bound<Value>,
    /// The score of every match.
    pub score: f32,
}

/// A set of terms of one field, scoring a constant.
#[derive(Clone, Debug)]
pub struct TermSetNode {
    /// The field.
    pub field: FieldId,
    /// The distinct terms over the searched segments, in key order.
    pub keys: Vec<Vec<u8>>,
    /// The score of every match.
    pub score: f32,
    /// The terms' postings in each segment holding some, by the address of
    /// the segment's reader (see [`TermSetNode::infos`]).
    infos: Vec<(usize, Vec<TermInfo>)>,
}

impl TermSetNode {
    /// The postings of the set's terms in `seg` (empty when it has none).
    pub fn infos(&self, seg: &LiveSegment) -> &[TermInfo] {
        let key = Arc::as_ptr(&seg.reader) as usize;
        self.infos
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(&[], |(_, i)| i.as_slice())
    }
}

/// The default of [`crate::SearchOptions::max_expansions`]: the most
/// distinct terms a prefix (or a range served from the term dictionary)
/// may expand to over a corpus.
pub const DEFAULT_MAX_EXPANSIONS: usize = 1024;

/// What a query is compiled against.
pub struct Target<'a> {
    /// The schema of the segments.
    pub schema: &'a Schema,
    /// The segments searched, in document order.
    pub segments: &'a [LiveSegment],
    /// The corpus statistics the scores use.
    pub stats: &'a dyn Statistics,
    /// The length factors of `stats`, kept from one compilation to the next.
    pub tables: &'a FieldTables,
    /// A prefix or dictionary range expanding to more distinct terms over
    /// the corpus is [`Error::TooManyTerms`].
    pub max_expansions: usize,
}

/// Compiles `query` for `target`. Every statistic a term, phrase or
/// expansion of `query` takes is asked of `target.stats` whether or not the
/// segments hold the term, so every shard of a corpus asks for the same. A
/// query nesting deeper than [`crate::query::MAX_DEPTH`] (checked before
/// anything recurses), or one a score of which could overflow f32, is
/// [`Error::InvalidArgument`] ([`crate::query::limits`]).
pub fn compile(query: &Query, target: &Target) -> Result<Node> {
    limits::check_depth(query)?;
    let node = Compiler { t: target }.node(query, 1.0)?;
    limits::check_scores(&node)?;
    Ok(node)
}

struct Compiler<'a> {
    t: &'a Target<'a>,
}

impl Compiler<'_> {
    fn def(&self, field: FieldId) -> Result<&FieldDef> {
        self.t
            .schema
            .get(field)
            .ok_or_else(|| Error::Schema(format!("field id {} is not in the schema", field.0)))
    }

    /// The node of `query` under the product `boost` of the boosts above it.
    fn node(&self, query: &Query, boost: f64) -> Result<Node> {
        match query {
            Query::Term { field, key } => {
                let def = self.def(*field)?;
                if !def.is_indexed() {
                    return Err(Error::Schema(format!(
                        "field {:?} is not indexed, so it cannot be searched",
                        def.name
                    )));
                }
                self.term_node(*field, key.clone(), def.ty == FieldType::Text, boost)
            }
            Query::Match { field, text, op } => {
                let def = self.def(*field)?;
                let terms: Vec<Vec<u8>> = match def.ty {
                    FieldType::Text => {
                        let mut seen = Vec::<Vec<u8>>::new();
                        for t in def.analyzer.tokens(text) {
                            if !seen.iter().any(|s| s == t.as_bytes()) {
                                seen.push(t.into_bytes());
                            }
                        }
                        seen
                    }
                    FieldType::String if def.flags.indexed => vec![text.as_bytes().to_vec()],
                    _ => {
                        return Err(Error::Schema(format!(
                            "match queries need a text or indexed string field; {:?} is {}",
                            def.name,
                            def.ty.name()
                        )));
                    }
                };
                let occur = match op {
                    Operator::And => Occur::Must,
                    Operator::Or => Occur::Should,
                };
                let clauses = terms
                    .into_iter()
                    .map(|key| {
                        Ok((
                            occur,
                            self.term_node(*field, key, def.ty == FieldType::Text, boost)?,
                        ))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(simplify(clauses))
            }
            Query::Boolean(clauses) => {
                let clauses = clauses
                    .iter()
                    .map(|(o, q)| Ok((*o, self.node(q, boost)?)))
                    .collect::<Result<Vec<_>>>()?;
                Ok(simplify(clauses))
            }
            Query::Boost(inner, b) => {
                if !b.is_finite() || *b < 0.0 {
                    return Err(Error::InvalidArgument(format!(
                        "a boost must be finite and at least 0, not {b}"
                    )));
                }
                self.node(inner, boost * f64::from(*b))
            }
            Query::All => Ok(Node::All(boost as f32)),
            Query::None => Ok(Node::Empty),
            Query::Prefix { field, prefix } => {
                let def = self.def(*field)?;
                if !(def.ty == FieldType::Text || def.ty == FieldType::String && def.flags.indexed)
                {
                    return Err(Error::Schema(format!(
                        "prefix queries need a text or indexed string field; {:?} is {}{}",
                        def.name,
                        if def.ty == FieldType::String {
                            "a non-indexed "
                        } else {
                            ""
                        },
                        def.ty.name()
                    )));
                }
                let what = format!(
                    "prefix {:?} on field {:?}",
                    String::from_utf8_lossy(prefix),
                    def.name
                );
                self.expand(*field, &what, boost, Bound::Included(prefix), |k| {
                    k.starts_with(prefix)
                })
            }
            Query::Range {
                field,
                lower,
                upper,
            } => self.range(*field, lower, upper, boost),
            Query::Phrase { field, text, slop } => self.phrase(*field, text, *slop, boost),
        }
    }

    /// A phrase: the field's analysis of `text`; nothing matches nothing,
    /// one token is that term, more are a [`PhraseNode`] weighted by the
    /// sum of its tokens' idfs (a repeated token counted each time).
    fn phrase(&self, field: FieldId, text: &str, slop: u32, boost: f64) -> Result<Node> {
        let def = self.def(field)?;
        if def.ty != FieldType::Text {
            return Err(Error::Schema(format!(
                "phrase queries need a text field; {:?} is {}",
                def.name,
                def.ty.name()
            )));
        }
        if !def.positions {
            return Err(Error::Unsupported(format!(
                "phrase queries need token positions, which field {:?} does not store",
                def.name
            )));
        }
        // Each token's place in the phrase is its analyzer position, so a
        // removed stop word leaves its gap in the phrase as in documents.
        let tokens = def.analyzer.tokens_at(text);
        if tokens.len() <= 1 {
            return match tokens.into_iter().next() {
                Some((t, _)) => self.term_node(field, t.into_bytes(), true, boost),
                None => Ok(Node::Empty),
            };
        }
        let mut terms: Vec<TermNode> = Vec::new();
        let mut slots = Vec::with_capacity(tokens.len());
        let mut idf_sum = 0.0f64;
        // Every token is looked up, also after one that the segments lack
        // (a phrase of it matches nothing here), so the statistics asked
        // for do not depend on what the segments hold.
        let mut absent = false;
        for (tok, offset) in tokens {
            let at = match terms.iter().position(|t| t.key == tok.as_bytes()) {
                Some(at) => at,
                None => match self.term(field, tok.into_bytes(), true, boost)? {
                    Some(t) => {
                        terms.push(t);
                        terms.len() - 1
                    }
                    None => {
                        absent = true;
                        continue;
                    }
                },
            };
            idf_sum += bm25::idf(self.t.stats.doc_count(), terms[at].doc_freq);
            slots.push((offset, at));
        }
        if absent {
            return Ok(Node::Empty);
        }
        let inv = terms[0].weight.inv.clone();
        let weight = TermWeight::from_idf(idf_sum, inv, boost);
        Ok(Node::Phrase(PhraseNode {
            field,
            field_name: self.def(field)?.name.as_str().into(),
            terms,
            slots,
            slop,
            weight: Arc::new(weight),
        }))
    }

    fn range(
        &self,
        field: FieldId,
        lower: &Bound<Value>,
        upper: &Bound<Value>,
        boost: f64,
    ) -> Result<Node> {
        let def = self.def(field)?;
        if def.ty == FieldType::Text {
            return Err(Error::Schema(format!(
                "range queries need an i64, f64 or string field; {:?} is text",
                def.name
            )));
        }
        for end in [lower, upper] {
            let v = match end {
                Bound::Included(v) | Bound::Excluded(v) => v,
                Bound::Unbounded => continue,
            };
            let fits = match (def.ty, v) {
                (FieldType::I64, Value::I64(_)) | (FieldType::String, Value::Str(_)) => true,
                (FieldType::F64, Value::F64(x)) => {
                    if x.is_nan() {
                        return Err(Error::InvalidArgument(format!(
                            "a range bound of field {:?} is NaN",
                            def.name
                        )));
                    }
                    true
                }
                _ => false,
            };
            if !fits {
                return Err(Error::Schema(format!(
                    "a range bound of the {} field {:?} must be {}, not {v:?}",
                    def.ty.name(),
                    def.name,
                    def.ty.name()
                )));
            }
        }
        let column = || {
            Node::Range(RangeNode {
                field,
                lower: lower.clone(),
                upper: upper.clone(),
                score: boost as f32,
            })
        };
        // An indexed field is served by its dictionary, which measured
        // faster than the sort column (docs/QUERY-SYNTAX.md); past the
        // expansion limit a sortable field falls back to its column.
        if !def.flags.indexed || def.ty == FieldType::F64 {
            if def.flags.sortable {
                return Ok(column());
            }
            return Err(Error::Schema(format!(
                "range queries on field {:?} need it sortable{}",
                def.name,
                if def.ty == FieldType::F64 {
                    " (f64 fields are never indexed)"
                } else {
                    " or indexed"
                }
            )));
        }
        let key = |v: &Value| match v {
            Value::I64(x) => i64_key(*x).to_vec(),
            Value::Str(s) => s.as_bytes().to_vec(),
            // Checked above: f64 ranges are served by the column.
            Value::F64(_) => unreachable!("an f64 range over the dictionary"),
        };
        let (lo_key, hi_key) = (lower.as_ref().map(key), upper.as_ref().map(key));
        let what = format!("the range on field {:?}", def.name);
        let lo = lo_key.as_ref().map(Vec::as_slice);
        self.expand(field, &what, boost, lo, |t| match &hi_key {
            Bound::Unbounded => true,
            Bound::Included(k) => t <= k.as_slice(),
            Bound::Excluded(k) => t < k.as_slice(),
        })
        .or_else(|e| match e {
            Error::TooManyTerms { .. } if def.flags.sortable => Ok(column()),
            e => Err(e),
        })
    }

    /// The set of the terms of `field` from `lower` on, while `within`
    /// holds (it must hold for a prefix of those keys in key order), at
    /// most `max_expansions` distinct ones over the corpus: in each
    /// segment one dictionary seek to the lower bound, then a walk, which
    /// stops at the first distinct term past the limit.
    fn expand(
        &self,
        field: FieldId,
        what: &str,
        boost: f64,
        lower: Bound<&[u8]>,
        within: impl Fn(&[u8]) -> bool,
    ) -> Result<Node> {
        let limit = self.t.max_expansions;
        let mut keys = BTreeSet::new();
        let mut infos = Vec::new();
        let mut complete = true;
        'segments: for s in self.t.segments {
            let from = match lower {
                Bound::Included(k) | Bound::Excluded(k) => k,
                Bound::Unbounded => &[],
            };
            let mut terms = s.reader.terms_from_key(field, from)?;
            let mut seg_infos = Vec::new();
            while let Some((key, info)) = terms.advance()? {
                if matches!(lower, Bound::Excluded(k) if k == key) {
                    continue;
                }
                if !within(key) {
                    break;
                }
                if !keys.contains(key) {
                    keys.insert(key.to_vec());
                    if keys.len() > limit {
                        complete = false;
                        break 'segments;
                    }
                }
                seg_infos.push(info);
            }
            if !seg_infos.is_empty() {
                infos.push((Arc::as_ptr(&s.reader) as usize, seg_infos));
            }
        }
        let corpus = self.t.stats.expansion(&Expansion {
            field,
            lower,
            within: &within,
            local: &keys,
            complete,
        })?;
        if !complete || corpus > limit {
            return Err(Error::TooManyTerms {
                what: what.to_owned(),
                limit,
            });
        }
        if keys.is_empty() {
            return Ok(Node::Empty);
        }
        Ok(Node::Terms(TermSetNode {
            field,
            keys: keys.into_iter().collect(),
            score: boost as f32,
            infos,
        }))
    }

    /// A term clause, or [`Node::Empty`] when no searched segment holds it.
    fn term_node(&self, field: FieldId, key: Vec<u8>, has_norms: bool, boost: f64) -> Result<Node> {
        Ok(self
            .term(field, key, has_norms, boost)?
            .map_or(Node::Empty, Node::Term))
    }

    /// A term with its corpus-wide weight, or `None` when no searched
    /// segment holds it (its statistics are asked for all the same).
    fn term(
        &self,
        field: FieldId,
        key: Vec<u8>,
        has_norms: bool,
        boost: f64,
    ) -> Result<Option<TermNode>> {
        let mut local = 0u64;
        let mut infos = Vec::new();
        for s in self.t.segments {
            if let Some(info) = s.reader.term(field, &key)? {
                local += u64::from(info.df);
                infos.push((Arc::as_ptr(&s.reader) as usize, info));
            }
        }
        let stats = self.t.stats;
        let doc_freq = stats.doc_freq(field, &key, local)?;
        if local == 0 {
            return Ok(None);
        }
        let inv = self.t.tables.get(field, || {
            Ok(bm25::length_factors(
                stats.doc_count(),
                stats.total_tokens(field)?,
                has_norms,
            ))
        })?;
        let weight = TermWeight::boosted(stats.doc_count(), doc_freq, inv, boost);
        Ok(Some(TermNode {
            field,
            key,
            has_norms,
            doc_freq,
            weight: Arc::new(weight),
            infos,
        }))
    }
}

/// Drops clauses that cannot matter and collapses what matches nothing.
fn simplify(clauses: Vec<(Occur, Node)>) -> Node {
    let mut out = Vec::with_capacity(clauses.len());
    for (o, n) in clauses {
        match (o, &n) {
            (Occur::Must | Occur::Filter, Node::Empty) => return Node::Empty,
            (Occur::Should | Occur::MustNot, Node::Empty) => {}
            _ => out.push((o, n)),
        }
    }
    if !out.iter().any(|(o, _)| *o != Occur::MustNot) {
        return Node::Empty;
    }
    // A single scoring clause scores as itself (0 + s == s in f32).
    if out.len() == 1 && matches!(out[0].0, Occur::Must | Occur::Should) {
        return out.pop().expect("one clause").1;
    }
    Node::Bool(out)
}
