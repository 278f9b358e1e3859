//! The exhaustive path: the oracle every other path must equal, bit for bit.
//!
//! It decodes every posting list the query touches in full, evaluates the
//! query for each candidate document with plain sorted-list operations, and
//! keeps every match. Slow and simple on purpose.

use std::cmp::Ordering;
use std::ops::Bound;

use crate::document::Value;
use crate::error::Result;
use crate::query::Occur;
use crate::query::plan::{Node, RangeNode, TermNode, TermSetNode};
use crate::read::LiveSegment;

/// Every document of `seg` (deleted ones included) matching `node`, in
/// ascending local doc order, with its score.
pub fn evaluate(node: &Node, seg: &LiveSegment) -> Result<Vec<(u32, f32)>> {
    match node {
        Node::Empty => Ok(Vec::new()),
        Node::Term(t) => term(t, seg),
        Node::All(score) => Ok((0..seg.reader.doc_count()).map(|d| (d, *score)).collect()),
        Node::Range(r) => Ok(range(r, seg)),
        Node::Terms(t) => terms(t, seg),
        Node::Bool(clauses) => {
            let lists = clauses
                .iter()
                .map(|(_, n)| evaluate(n, seg))
                .collect::<Result<Vec<_>>>()?;
            let has = |list: &[(u32, f32)], doc: u32| list.binary_search_by_key(&doc, |x| x.0).ok();
            let required: Vec<usize> = (0..clauses.len())
                .filter(|&i| matches!(clauses[i].0, Occur::Must | Occur::Filter))
                .collect();
            let mut candidates: Vec<u32> = if let Some(&first) = required.first() {
                lists[first]
                    .iter()
                    .map(|x| x.0)
                    .filter(|&d| required.iter().all(|&i| has(&lists[i], d).is_some()))
                    .collect()
            } else {
                let mut all: Vec<u32> = clauses
                    .iter()
                    .zip(&lists)
                    .filter(|((o, _), _)| *o == Occur::Should)
                    .flat_map(|(_, l)| l.iter().map(|x| x.0))
                    .collect();
                all.sort_unstable();
                all.dedup();
                all
            };
            candidates.retain(|&d| {
                clauses
                    .iter()
                    .zip(&lists)
                    .all(|((o, _), l)| *o != Occur::MustNot || has(l, d).is_none())
            });
            Ok(candidates
                .into_iter()
                .map(|d| {
                    let mut score = 0.0f32;
                    for ((o, _), l) in clauses.iter().zip(&lists) {
                        if matches!(o, Occur::Must | Occur::Should)
                            && let Some(i) = has(l, d)
                        {
                            score += l[i].1;
                        }
                    }
                    (d, score)
                })
                .collect())
        }
    }
}

fn term(t: &TermNode, seg: &LiveSegment) -> Result<Vec<(u32, f32)>> {
    let r = &seg.reader;
    let Some(info) = r.term(t.field, &t.key)? else {
        return Ok(Vec::new());
    };
    let (mut docs, mut tfs) = (Vec::new(), Vec::new());
    r.postings(&info)?
        .decode_all(&mut docs, &mut tfs)
        .map_err(|e| r.bad(e))?;
    let norms = r.norms(t.field);
    Ok(docs
        .iter()
        .zip(&tfs)
        .map(|(&d, &tf)| {
            let norm = norms.map_or(0, |n| n[d as usize]);
            (d, t.weight.score(tf, norm))
        })
        .collect())
}

/// Every document whose value, read back from the sort column, compares
/// within the bounds (values compared, not ords).
fn range(r: &RangeNode, seg: &LiveSegment) -> Vec<(u32, f32)> {
    let Some(col) = seg.reader.sort_column(r.field) else {
        return Vec::new();
    };
    let cmp = |a: &Value, b: &Value| match (a, b) {
        (Value::I64(x), Value::I64(y)) => x.cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        // The plan checked that the bounds have the field's type.
        _ => Ordering::Less,
    };
    let above = |v: &Value| match &r.lower {
        Bound::Unbounded => true,
        Bound::Included(b) => cmp(v, b) != Ordering::Less,
        Bound::Excluded(b) => cmp(v, b) == Ordering::Greater,
    };
    let below = |v: &Value| match &r.upper {
        Bound::Unbounded => true,
        Bound::Included(b) => cmp(v, b) != Ordering::Greater,
        Bound::Excluded(b) => cmp(v, b) == Ordering::Less,
    };
    (0..seg.reader.doc_count())
        .filter(|&d| {
            let o = col.ord(d);
            o != col.missing() && {
                let v = col.value(o);
                above(&v) && below(&v)
            }
        })
        .map(|d| (d, r.score))
        .collect()
}

/// The union of the set's terms' lists, each term looked up by its key.
fn terms(t: &TermSetNode, seg: &LiveSegment) -> Result<Vec<(u32, f32)>> {
    let r = &seg.reader;
    let (mut docs, mut tfs) = (Vec::new(), Vec::new());
    for key in &t.keys {
        if let Some(info) = r.term(t.field, key)? {
            r.postings(&info)?
                .decode_all(&mut docs, &mut tfs)
                .map_err(|e| r.bad(e))?;
        }
    }
    docs.sort_unstable();
    docs.dedup();
    Ok(docs.into_iter().map(|d| (d, t.score)).collect())
}
