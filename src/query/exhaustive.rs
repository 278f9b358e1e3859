//! The exhaustive path: the oracle every other path must equal, bit for bit.
//!
//! It decodes every posting list the query touches in full, evaluates the
//! query for each candidate document with plain sorted-list operations, and
//! keeps every match. Slow and simple on purpose.

use crate::error::Result;
use crate::query::Occur;
use crate::query::plan::{Node, TermNode};
use crate::read::LiveSegment;

/// Every document of `seg` (deleted ones included) matching `node`, in
/// ascending local doc order, with its score.
pub fn evaluate(node: &Node, seg: &LiveSegment) -> Result<Vec<(u32, f32)>> {
    match node {
        Node::Empty => Ok(Vec::new()),
        Node::Term(t) => term(t, seg),
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
