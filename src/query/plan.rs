//! A query compiled against one snapshot.

use std::sync::Arc;

use crate::analysis;
use crate::error::{Error, Result};
use crate::query::bm25::{self, TermWeight};
use crate::query::{Occur, Operator, Query};
use crate::read::{LiveSegment, Snapshot, TermInfo};
use crate::schema::{FieldId, FieldType};

/// A term clause with its corpus-wide weight.
#[derive(Clone, Debug)]
pub struct TermNode {
    /// The field.
    pub field: FieldId,
    /// The term's bytes.
    pub key: Vec<u8>,
    /// Whether the field has norms (text fields).
    pub has_norms: bool,
    /// Documents holding the term across the snapshot.
    pub doc_freq: u64,
    /// BM25 constants.
    pub weight: Arc<TermWeight>,
    /// Where the term is in each segment holding it, by the address of the
    /// segment's reader (see [`TermNode::info`]).
    infos: Vec<(usize, TermInfo)>,
}

impl TermNode {
    /// The term's postings info in `seg` (a segment of the snapshot the
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
}

/// Compiles `query` for `snap`.
pub fn compile(query: &Query, snap: &Snapshot) -> Result<Node> {
    let schema = &snap.manifest().schema;
    match query {
        Query::Term { field, key } => {
            let def = schema.get(*field).ok_or_else(|| {
                Error::Schema(format!("field id {} is not in the schema", field.0))
            })?;
            if !def.is_indexed() {
                return Err(Error::Schema(format!(
                    "field {:?} is not indexed, so it cannot be searched",
                    def.name
                )));
            }
            term_node(snap, *field, key.clone(), def.ty == FieldType::Text)
        }
        Query::Match { field, text, op } => {
            let def = schema.get(*field).ok_or_else(|| {
                Error::Schema(format!("field id {} is not in the schema", field.0))
            })?;
            let terms: Vec<Vec<u8>> = match def.ty {
                FieldType::Text => {
                    let mut seen = Vec::<Vec<u8>>::new();
                    for t in analysis::tokens(text) {
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
                        term_node(snap, *field, key, def.ty == FieldType::Text)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(simplify(clauses))
        }
        Query::Boolean(clauses) => {
            let clauses = clauses
                .iter()
                .map(|(o, q)| Ok((*o, compile(q, snap)?)))
                .collect::<Result<Vec<_>>>()?;
            Ok(simplify(clauses))
        }
    }
}

fn term_node(snap: &Snapshot, field: FieldId, key: Vec<u8>, has_norms: bool) -> Result<Node> {
    let mut doc_freq = 0u64;
    let mut infos = Vec::new();
    for s in snap.segments() {
        if let Some(info) = s.reader.term(field, &key)? {
            doc_freq += u64::from(info.df);
            infos.push((Arc::as_ptr(&s.reader) as usize, info));
        }
    }
    if doc_freq == 0 {
        return Ok(Node::Empty);
    }
    let inv = snap.field_table(field, || {
        let total_tokens = snap
            .segments()
            .iter()
            .map(|s| s.reader.total_tokens(field))
            .sum();
        bm25::length_factors(snap.max_doc(), total_tokens, has_norms)
    });
    let weight = TermWeight::with_factors(snap.max_doc(), doc_freq, inv);
    Ok(Node::Term(TermNode {
        field,
        key,
        has_norms,
        doc_freq,
        weight: Arc::new(weight),
        infos,
    }))
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
