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
use crate::query::phrase::no_positions;
use crate::query::plan::{Node, PhraseNode, RangeNode, TermNode, TermSetNode};
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
        Node::Phrase(p) => phrase(p, seg),
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

/// A phrase by its definition (`query::phrase`'s module docs): every
/// term's postings and positions decoded in full, then per document holding
/// every term, the slots moved left to right as the definition says.
fn phrase(p: &PhraseNode, seg: &LiveSegment) -> Result<Vec<(u32, f32)>> {
    let r = &seg.reader;
    // Per term: docs, and per doc its positions.
    let mut lists: Vec<(Vec<u32>, Vec<Vec<u32>>)> = Vec::new();
    for t in &p.terms {
        let Some(info) = r.term(t.field, &t.key)? else {
            return Ok(Vec::new());
        };
        let (mut docs, mut tfs, mut all) = (Vec::new(), Vec::new(), Vec::new());
        r.postings(&info)?
            .decode_all(&mut docs, &mut tfs)
            .map_err(|e| r.bad(e))?;
        let Some(positions) = r.positions(&info)? else {
            return Err(no_positions(seg, p));
        };
        positions.decode_all(&tfs, &mut all).map_err(|e| r.bad(e))?;
        let mut rest = all.as_slice();
        let per_doc = tfs
            .iter()
            .map(|&tf| {
                let (mine, after) = rest.split_at(tf as usize);
                rest = after;
                mine.to_vec()
            })
            .collect();
        lists.push((docs, per_doc));
    }
    let norms = r.norms(p.field);
    let mut out = Vec::new();
    for &d in &lists[0].0 {
        let mut here = Vec::new();
        for (docs, per_doc) in &lists {
            match docs.binary_search(&d) {
                Ok(i) => here.push(&per_doc[i]),
                Err(_) => break,
            }
        }
        if here.len() < lists.len() {
            continue;
        }
        // Each slot's relative positions; `at` where each slot stands.
        let rel: Vec<Vec<i64>> = p
            .slots
            .iter()
            .map(|&(off, t)| {
                here[t]
                    .iter()
                    .map(|&x| i64::from(x) - i64::from(off))
                    .collect()
            })
            .collect();
        let mut at = vec![0usize; rel.len()];
        let mut freq = 0u32;
        while at.iter().zip(&rel).all(|(&a, l)| a < l.len()) {
            let now: Vec<i64> = at.iter().zip(&rel).map(|(&a, l)| l[a]).collect();
            let lo = *now.iter().min().expect("two slots or more");
            let hi = *now.iter().max().expect("two slots or more");
            let clash = (0..at.len())
                .any(|s| (0..s).any(|q| p.slots[q].1 == p.slots[s].1 && at[q] == at[s]));
            if hi - lo <= i64::from(p.slop) && !clash {
                freq += 1;
                for a in &mut at {
                    *a += 1;
                }
            } else {
                let first_least = now.iter().position(|&x| x == lo).expect("the least");
                at[first_least] += 1;
            }
        }
        if freq > 0 {
            let norm = norms.map_or(0, |n| n[d as usize]);
            out.push((d, p.weight.score(freq, norm)));
        }
    }
    Ok(out)
}
