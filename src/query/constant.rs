//! Constant-score iterators for the document-at-a-time path: match-all,
//! ranges over sort columns, and term sets (expanded prefixes and ranges
//! served from the term dictionary). Every match scores its node's
//! constant.
//!
//! [`ConstScorer`] walks one [`Matches`] set:
//!
//! - [`Every`] is every document of the segment.
//! - [`RangeMatches`] turns the range's bounds into a half-open range of
//!   ords once per segment (by binary search of the column's sorted
//!   values), so the per-document test is one ord comparison; 4096-document
//!   blocks whose (min, max) present ords miss that range are passed whole.
//! - [`TermSet`] decodes the documents (not the frequencies) of the
//!   set's terms in the segment into a bitset once, then walks its bits:
//!   cheaper than merging many posting lists, and what Lucene does for a
//!   constant-score multi-term query.

use std::ops::Bound;

use crate::document::Value;
use crate::error::Result;
use crate::format::ords::{self, ORD_BLOCK};
use crate::format::postings::{BLOCK_LEN, BadPostings};
use crate::query::daat::{NO_MORE, Scorer};
use crate::query::plan::{Node, RangeNode, TermSetNode};
use crate::read::{LiveSegment, SortColumn};

/// The scorer of a constant-score node ([`Node::All`], [`Node::Range`],
/// [`Node::Terms`]) over `seg`. Other nodes are not constant-score: they
/// get a scorer matching nothing ([`crate::query::daat::scorer`] builds
/// theirs).
pub fn scorer<'a>(node: &'a Node, seg: &'a LiveSegment) -> Result<Box<dyn Scorer + 'a>> {
    Ok(match node {
        Node::All(score) => boxed(Every(seg.reader.doc_count()), *score),
        Node::Range(r) => match RangeMatches::new(r, seg) {
            Some(m) => boxed(m, r.score),
            None => boxed(Every(0), r.score),
        },
        Node::Terms(t) => boxed(TermSet::new(t, seg)?, t.score),
        Node::Empty | Node::Term(_) | Node::Bool(_) | Node::Phrase(_) => boxed(Every(0), 0.0),
    })
}

fn boxed<'a, M: Matches + 'a>(set: M, score: f32) -> Box<dyn Scorer + 'a> {
    Box::new(ConstScorer::new(set, score))
}

/// A set of documents walked in ascending order.
pub trait Matches {
    /// The first member `>= from`, or [`NO_MORE`].
    fn next_from(&self, from: u32) -> u32;
    /// An estimate of the cost of walking the set.
    fn cost(&self) -> u64;
}

/// Iterates a [`Matches`], every member scoring `score`.
pub struct ConstScorer<M> {
    set: M,
    doc: u32,
    score: f32,
}

impl<M: Matches> ConstScorer<M> {
    /// A scorer on the set's first member.
    pub fn new(set: M, score: f32) -> ConstScorer<M> {
        let doc = set.next_from(0);
        ConstScorer { set, doc, score }
    }
}

impl<M: Matches> Scorer for ConstScorer<M> {
    fn doc(&self) -> u32 {
        self.doc
    }

    fn advance(&mut self) -> u32 {
        let target = self.doc.saturating_add(1);
        self.seek(target)
    }

    fn seek(&mut self, target: u32) -> u32 {
        if self.doc < target {
            self.doc = self.set.next_from(target);
        }
        self.doc
    }

    fn score(&mut self) -> f32 {
        self.score
    }

    fn cost(&self) -> u64 {
        self.set.cost()
    }

    fn error(&self) -> Option<BadPostings> {
        // Term sets decode their postings up front and fail there.
        None
    }
}

/// Every document below the count.
pub struct Every(pub u32);

impl Matches for Every {
    fn next_from(&self, from: u32) -> u32 {
        if from < self.0 { from } else { NO_MORE }
    }

    fn cost(&self) -> u64 {
        u64::from(self.0)
    }
}

/// The half-open range of ords of `col` whose values lie between `lower`
/// and `upper` (empty when the bounds cross).
pub fn ord_span(col: &SortColumn<'_>, lower: &Bound<Value>, upper: &Bound<Value>) -> (u32, u32) {
    let find = |v: &Value| match v {
        Value::I64(x) => col.find(ords::i64_to_key(*x), ""),
        Value::F64(x) => col.find(ords::f64_to_key(*x), ""),
        Value::Str(s) => col.find(0, s),
    };
    // `Ok(o)`: the value is ord `o`; `Err(p)`: it sorts just before ord `p`.
    let lo = match lower {
        Bound::Unbounded => 0,
        Bound::Included(v) => find(v).unwrap_or_else(|p| p),
        Bound::Excluded(v) => find(v).map_or_else(|p| p, |o| o + 1),
    };
    let hi = match upper {
        Bound::Unbounded => col.cardinality,
        Bound::Included(v) => find(v).map_or_else(|p| p, |o| o + 1),
        Bound::Excluded(v) => find(v).unwrap_or_else(|p| p),
    };
    (lo, hi.max(lo))
}

/// The documents whose ord lies in `lo..hi` (the missing ord never does:
/// it is at least the cardinality).
pub struct RangeMatches<'a> {
    col: SortColumn<'a>,
    lo: u32,
    hi: u32,
    end: u32,
}

impl<'a> RangeMatches<'a> {
    /// The range's documents in `seg`, `None` when no ord can match.
    fn new(r: &RangeNode, seg: &'a LiveSegment) -> Option<RangeMatches<'a>> {
        let col = seg.reader.sort_column(r.field)?;
        let (lo, hi) = ord_span(&col, &r.lower, &r.upper);
        (lo < hi).then(|| RangeMatches {
            col,
            lo,
            hi,
            end: seg.reader.doc_count(),
        })
    }
}

impl Matches for RangeMatches<'_> {
    fn next_from(&self, mut d: u32) -> u32 {
        while d < self.end {
            // One pass per block: passed whole when its present ords miss
            // the range (a block without values has the missing ord, which
            // is at least `hi`, for both).
            let block = d as usize / ORD_BLOCK;
            let block_end = ((block + 1) * ORD_BLOCK).min(self.end as usize) as u32;
            let (min, max) = self.col.block_bounds(block);
            if min >= self.hi || max < self.lo {
                d = block_end;
                continue;
            }
            while d < block_end {
                let o = self.col.ord(d);
                if o >= self.lo && o < self.hi {
                    return d;
                }
                d += 1;
            }
        }
        NO_MORE
    }

    fn cost(&self) -> u64 {
        // A scan of the column: any posting list leads a conjunction.
        u64::from(self.end)
    }
}

/// The documents holding any term of a set, in a bitset filled once.
pub struct TermSet {
    bits: Vec<u64>,
    cost: u64,
}

impl TermSet {
    fn new(t: &TermSetNode, seg: &LiveSegment) -> Result<TermSet> {
        let r = &seg.reader;
        let mut bits = vec![0u64; (r.doc_count() as usize).div_ceil(64)];
        let (mut docs, mut tfs) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        let mut cost = 0;
        for info in t.infos(seg) {
            let p = r.postings(info)?;
            cost += u64::from(info.df);
            for b in 0..p.num_blocks() {
                let n = p
                    .decode_docs(b, &mut docs, &mut tfs)
                    .map_err(|e| r.bad(e))?;
                for &d in &docs[..n] {
                    // Decoding checked every id against the segment's size.
                    if let Some(w) = bits.get_mut(d as usize / 64) {
                        *w |= 1 << (d % 64);
                    }
                }
            }
        }
        Ok(TermSet { bits, cost })
    }
}

impl Matches for TermSet {
    fn next_from(&self, from: u32) -> u32 {
        let mut w = from as usize / 64;
        let Some(&first) = self.bits.get(w) else {
            return NO_MORE;
        };
        let mut word = first & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return (w * 64) as u32 + word.trailing_zeros();
            }
            w += 1;
            match self.bits.get(w) {
                Some(&x) => word = x,
                None => return NO_MORE,
            }
        }
    }

    fn cost(&self) -> u64 {
        self.cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of `set` from 0, by `advance`, and the same by `seek`
    /// to every target.
    fn walk<M: Matches>(set: M, max: u32) -> Vec<u32> {
        let members: Vec<u32> = (0..=max).filter(|&d| set.next_from(d) == d).collect();
        let mut s = ConstScorer::new(set, 2.5);
        let mut got = Vec::new();
        while s.doc() != NO_MORE {
            assert_eq!(s.score(), 2.5);
            got.push(s.doc());
            s.advance();
        }
        assert_eq!(s.advance(), NO_MORE, "stays exhausted");
        assert_eq!(got, members);
        for target in 0..=max + 1 {
            let want = members
                .iter()
                .copied()
                .find(|&d| d >= target)
                .unwrap_or(NO_MORE);
            assert_eq!(s.set.next_from(target), want, "next_from({target})");
        }
        got
    }

    #[test]
    fn every_walks_each_document_once() {
        assert_eq!(walk(Every(5), 6), [0, 1, 2, 3, 4]);
        assert!(walk(Every(0), 3).is_empty());
    }

    #[test]
    fn a_term_set_walks_its_bits_across_words() {
        let docs = [0u32, 1, 63, 64, 65, 127, 128, 300, 319];
        let mut bits = vec![0u64; 5];
        for d in docs {
            bits[d as usize / 64] |= 1 << (d % 64);
        }
        assert_eq!(walk(TermSet { bits, cost: 9 }, 330), docs);
        let empty = TermSet {
            bits: vec![0; 3],
            cost: 0,
        };
        assert!(walk(empty, 200).is_empty());
    }

    #[test]
    fn seek_never_moves_back() {
        let mut s = ConstScorer::new(Every(100), 1.0);
        assert_eq!(s.seek(40), 40);
        assert_eq!(s.seek(10), 40);
        assert_eq!(s.advance(), 41);
        assert_eq!(s.seek(100), NO_MORE);
    }
}
