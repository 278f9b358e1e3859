//! Phrase queries: the conjunction of a phrase's terms, with positions
//! read only for the candidates that can still compete.
//!
//! # The phrase frequency
//!
//! Each token of the phrase (a *slot*: a term at an offset in the phrase)
//! stands at one of its term's positions in the document; its *relative
//! position* is that position minus its offset. Matches are found left to
//! right, every slot starting at its term's first position: while the
//! slots stand at distinct positions whose relative positions span at
//! most `slop` (largest minus least), that is a match: it is counted and
//! every slot moves to its term's next position; otherwise the slot with
//! the least relative position (the first in the phrase on ties) moves
//! on. It ends when a slot runs out of positions. Each position so serves
//! at most one match per slot, and the frequency is at most each term's
//! frequency in the document: the phrase's score is at most the score of
//! that frequency, which the bounds use. With slop 0 it is the number of
//! positions the phrase starts at (Lucene's and tantivy's exact phrase
//! frequency); a slop of `n` lets the tokens be `n` moves out of place in
//! total, as in Lucene (two swapped tokens are 2 moves).
//!
//! A phrase scores like one term whose frequency is the phrase's, with
//! the sum of its tokens' idfs (a repeated token counted each time) for
//! idf: `w = sum(idf) * (k1 + 1) * boost`, the field's norms as usual.
//!
//! # Execution
//!
//! [`PhraseScorer`] is the document-at-a-time scorer (in booleans, and on
//! the document-at-a-time path): its terms' lists leapfrogged, rarest
//! first. A phrase that is the whole query runs in the window loop
//! ([`crate::query::window`]) as the conjunction of its terms, the
//! rarest leading and the others filtering: candidates come from its bulk
//! intersections, a block at a time, and only then does
//! [`PhrasePositions::freq`] read positions. The lead alone bounds the
//! phrase (a phrase's frequency is at most its lead's, scored with the
//! same weight and norm), so when the collector has a floor and may leave
//! documents uncounted, lead blocks and candidates that cannot beat it
//! are passed and rejected as a term's are, before any position is
//! read; with exact totals every candidate's positions are read, as the
//! count needs them.

use crate::error::{Error, Result};
use crate::format::positions::{Positions, PositionsReader};
use crate::format::postings::BadPostings;
use crate::query::daat::{self, NO_MORE, Scorer, TermScorer};
use crate::query::plan::PhraseNode;
use crate::read::LiveSegment;

/// The error of a phrase over a segment whose field has no positions
/// (written before positions existed, or with them off): names the field
/// and the segment (its id and file).
pub fn no_positions(seg: &LiveSegment, node: &PhraseNode) -> Error {
    let file = seg.reader.path();
    let file = file.file_name().map_or(file.as_os_str(), |f| f);
    Error::Unsupported(format!(
        "phrase queries need token positions, which field {:?} does not hold in segment {} ({}): \
         it was indexed without positions, or by a version before positions",
        &*node.field_name,
        seg.entry.id,
        file.display()
    ))
}

/// One phrase's terms over a segment: their postings cursors, weighted
/// with the phrase's weight (so their bounds are the phrase's), and their
/// positions (the phrase's frequency in the document they are all on).
/// Cursor `i` is term `i` of the phrase.
pub struct PhraseTerms<'a> {
    /// Per term, its postings cursor.
    pub cursors: Vec<TermScorer<'a>>,
    /// The terms' positions.
    pub positions: PhrasePositions<'a>,
}

impl<'a> PhraseTerms<'a> {
    /// `None` when `seg` lacks one of the terms.
    pub fn open(node: &'a PhraseNode, seg: &'a LiveSegment) -> Result<Option<PhraseTerms<'a>>> {
        let r = &seg.reader;
        let n = node.terms.len();
        let (mut cursors, mut positions) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for t in &node.terms {
            let Some(info) = t.info(seg) else {
                return Ok(None);
            };
            let Some(p) = r.positions(&info)? else {
                return Err(no_positions(seg, node));
            };
            positions.push(p);
            cursors.push(TermScorer::new(
                r.postings(&info)?,
                &node.weight,
                r.norms(node.field),
            ));
        }
        let mut slot_order: Vec<usize> = (0..node.slots.len()).collect();
        slot_order.sort_by_key(|&s| cursors[node.slots[s].1].cost());
        Ok(Some(PhraseTerms {
            cursors,
            positions: PhrasePositions {
                node,
                positions,
                slot_order,
                bufs: vec![Vec::new(); n],
                readers: vec![PositionsReader::default(); n],
                fresh: vec![false; n],
                at: vec![0; node.slots.len()],
                starts: Vec::new(),
                kept: Vec::new(),
                err: None,
            },
        }))
    }

    /// The cursor of the phrase's rarest term (the first of the rarest).
    pub fn rarest(&self) -> usize {
        (0..self.cursors.len())
            .min_by_key(|&i| self.cursors[i].cost())
            .unwrap_or(0)
    }
}

/// A phrase's positions over a segment and the scratch space matching
/// reuses: what turns a document holding every term into a frequency.
pub struct PhrasePositions<'a> {
    node: &'a PhraseNode,
    positions: Vec<Positions<'a>>,
    /// Slot indexes, their terms rarest first: the order an exact phrase
    /// is checked in.
    slot_order: Vec<usize>,
    /// Per term, the positions read for the current candidate.
    bufs: Vec<Vec<u32>>,
    /// Per term, its positions reader (which resumes where it read last),
    /// and whether `bufs` holds the current candidate's.
    readers: Vec<PositionsReader>,
    fresh: Vec<bool>,
    /// Per slot, the index of its position in its term's buffer.
    at: Vec<usize>,
    /// The exact phrase's possible starts still standing, and scratch
    /// for the next slot's.
    starts: Vec<u32>,
    kept: Vec<u32>,
    err: Option<BadPostings>,
}

/// The phrase's score in `doc` at frequency `freq`: its terms' cursors
/// are weighted with the phrase's weight and read the field's norms.
pub fn score(cursors: &[TermScorer], freq: u32, doc: u32) -> f32 {
    let c = &cursors[0];
    c.weight().score(freq, c.norm(doc))
}

impl PhrasePositions<'_> {
    /// Reads term `i`'s positions in `doc` (which it holds) into its
    /// buffer, once per candidate, its cursor moved there first; false
    /// after a decode error.
    fn read(&mut self, cursors: &mut [TermScorer], i: usize, doc: u32) -> bool {
        if self.fresh[i] {
            return true;
        }
        let c = &mut cursors[i];
        c.seek(doc);
        let (b, index) = (c.block(), c.pos());
        let r = &mut self.readers[i];
        match self.positions[i].read(r, b, index, c.block_tfs(), &mut self.bufs[i]) {
            Ok(()) => {
                self.fresh[i] = true;
                true
            }
            Err(e) => {
                self.err = Some(e);
                false
            }
        }
    }

    /// The phrase frequency of `doc`, which every cursor holds (see the
    /// module docs), reading positions only as needed, each term's once
    /// (its cursor moved to `doc` only then). An exact phrase reads its
    /// terms rarest first and stops when no start is left, so most
    /// candidates that fail read few terms' positions. Documents are
    /// asked in ascending order.
    pub fn freq(&mut self, cursors: &mut [TermScorer], doc: u32) -> u32 {
        self.fresh.fill(false);
        let slots = &self.node.slots;
        if self.node.slop > 0 {
            for i in 0..cursors.len() {
                if !self.read(cursors, i, doc) {
                    return 0;
                }
            }
            return sloppy_freq(slots, &self.bufs, self.node.slop, &mut self.at);
        }
        let (first_off, first) = slots[self.slot_order[0]];
        if !self.read(cursors, first, doc) {
            return 0;
        }
        if slots.len() == 1 {
            return slot_starts(&self.bufs[first], first_off).count() as u32;
        }
        for k in 1..self.slot_order.len() {
            let (off, t) = slots[self.slot_order[k]];
            if !self.read(cursors, t, doc) {
                return 0;
            }
            let (list, kept) = (&self.bufs[t], &mut self.kept);
            kept.clear();
            if k == 1 {
                // The first slot's starts are never gathered apart.
                let firsts = &self.bufs[first];
                keep_starts(
                    slot_starts(firsts, first_off),
                    firsts.len(),
                    list,
                    off,
                    kept,
                );
            } else {
                let starts = self.starts.iter().copied();
                keep_starts(starts, self.starts.len(), list, off, kept);
            }
            std::mem::swap(&mut self.starts, &mut self.kept);
            if self.starts.is_empty() {
                return 0;
            }
        }
        self.starts.len() as u32
    }

    /// The first positions decode error met, if any.
    pub fn error(&self) -> Option<BadPostings> {
        self.err.clone()
    }
}

/// The exact phrase's starts that the ascending positions `list` of a
/// slot at offset `off` allow: each position minus the offset (the
/// phrase's tokens at `start + offset`), those under the offset (at most
/// `off` of them, at the front) left out. The phrase's frequency at slop
/// 0 is the size of the intersection of its slots' starts.
fn slot_starts(list: &[u32], off: u32) -> impl Iterator<Item = u32> + '_ {
    list.iter().filter_map(move |&p| p.checked_sub(off))
}

/// Appends to `out` the `starts` (ascending, `n` of them) that the slot
/// at offset `off`, whose term's positions are `list` (ascending), allows
/// too: those `s` with `s + off` in `list`. A start looks its position up
/// by a binary search over what is left of `list` when `list` is much the
/// longer (the usual case: the rarest slot's few starts against a common
/// term's positions), else both are walked together. Lists inside one
/// document are short, so either beats a general intersection kernel and
/// the copies around it.
fn keep_starts(
    starts: impl Iterator<Item = u32>,
    n: usize,
    list: &[u32],
    off: u32,
    out: &mut Vec<u32>,
) {
    let search = list.len() > 8 * n;
    let mut from = 0;
    for s in starts {
        // Ascending: once one start's position is past the list (or past
        // u32), so are the rest's.
        let Some(want) = s.checked_add(off) else {
            break;
        };
        if search {
            from += list[from..].partition_point(|&p| p < want);
        } else {
            while from < list.len() && list[from] < want {
                from += 1;
            }
        }
        match list.get(from) {
            None => break,
            Some(&p) if p == want => out.push(s),
            Some(_) => {}
        }
    }
}

/// The sloppy phrase frequency of the module docs; `at` is scratch.
fn sloppy_freq(slots: &[(u32, usize)], lists: &[Vec<u32>], slop: u32, at: &mut [usize]) -> u32 {
    at.fill(0);
    let mut count = 0;
    loop {
        let (mut min, mut argmin, mut max) = (i64::MAX, 0, i64::MIN);
        for (s, &(off, t)) in slots.iter().enumerate() {
            let Some(&p) = lists[t].get(at[s]) else {
                return count;
            };
            let rel = i64::from(p) - i64::from(off);
            if rel < min {
                (min, argmin) = (rel, s);
            }
            max = max.max(rel);
        }
        // Two slots of one term on the same position are not a match.
        let distinct = || {
            slots.iter().enumerate().all(|(s, &(_, t))| {
                slots[..s]
                    .iter()
                    .enumerate()
                    .all(|(r, &(_, u))| u != t || at[r] != at[s])
            })
        };
        if max - min <= i64::from(slop) && distinct() {
            count += 1;
            at.iter_mut().for_each(|a| *a += 1);
        } else {
            at[argmin] += 1;
        }
    }
}

/// The document-at-a-time scorer of a phrase: its matches, each scored
/// with its phrase frequency.
pub struct PhraseScorer<'a> {
    terms: PhraseTerms<'a>,
    /// Cursor indexes, rarest first: the leapfrog's order.
    order: Vec<usize>,
    doc: u32,
    freq: u32,
}

impl PhraseScorer<'_> {
    fn next_match(&mut self, mut target: u32) -> u32 {
        loop {
            let cursors = &mut self.terms.cursors;
            let d = daat::leapfrog(&self.order, target, |i, t| cursors[i].seek(t));
            if d == NO_MORE {
                return NO_MORE;
            }
            self.freq = self.terms.positions.freq(cursors, d);
            if self.freq > 0 {
                return d;
            }
            target = d + 1;
        }
    }
}

impl Scorer for PhraseScorer<'_> {
    fn doc(&self) -> u32 {
        self.doc
    }

    fn seek(&mut self, target: u32) -> u32 {
        if self.doc < target {
            self.doc = self.next_match(target);
        }
        self.doc
    }

    fn score(&mut self) -> f32 {
        score(&self.terms.cursors, self.freq, self.doc)
    }

    fn cost(&self) -> u64 {
        self.terms.cursors[self.order[0]].cost()
    }

    fn error(&self) -> Option<BadPostings> {
        let t = &self.terms;
        t.positions
            .error()
            .or_else(|| t.cursors.iter().find_map(|c| c.error()))
    }
}

/// The document-at-a-time scorer of `node` over `seg`, or `None` when the
/// segment lacks one of its terms.
pub fn scorer<'a>(
    node: &'a PhraseNode,
    seg: &'a LiveSegment,
) -> Result<Option<Box<dyn Scorer + 'a>>> {
    let Some(terms) = PhraseTerms::open(node, seg)? else {
        return Ok(None);
    };
    let mut order: Vec<usize> = (0..terms.cursors.len()).collect();
    order.sort_by_key(|&i| terms.cursors[i].cost());
    let mut s = PhraseScorer {
        terms,
        order,
        doc: 0,
        freq: 0,
    };
    s.doc = s.next_match(0);
    Ok(Some(Box::new(s)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Both ways of narrowing (searching a long list, walking a short
        /// one) keep exactly the starts whose position is in the list.
        #[test]
        fn keep_starts_keeps_the_starts_the_list_allows(
            starts in proptest::collection::btree_set(0u32..400, 0..40),
            list in proptest::collection::btree_set(0u32..400, 0..400),
            off in 0u32..8,
        ) {
            let want: Vec<u32> = starts
                .iter()
                .copied()
                .filter(|s| list.contains(&(s + off)))
                .collect();
            let list: Vec<u32> = list.into_iter().collect();
            let mut got = Vec::new();
            keep_starts(starts.iter().copied(), starts.len(), &list, off, &mut got);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn keep_starts_past_the_largest_position() {
        let mut kept = Vec::new();
        keep_starts(
            [3, u32::MAX - 1].into_iter(),
            2,
            &[5, u32::MAX],
            2,
            &mut kept,
        );
        assert_eq!(kept, vec![3]);
    }

    fn sloppy(slots: &[(u32, usize)], lists: &[Vec<u32>], slop: u32) -> u32 {
        sloppy_freq(slots, lists, slop, &mut vec![0; slots.len()])
    }

    /// The exact frequency, slots taken last to first (any order gives it).
    fn exact_freq(slots: &[(u32, usize)], lists: &[Vec<u32>]) -> u32 {
        let (last_off, last) = slots[slots.len() - 1];
        let mut starts: Vec<u32> = slot_starts(&lists[last], last_off).collect();
        for &(off, t) in slots.iter().rev().skip(1) {
            let mut kept = Vec::new();
            keep_starts(
                starts.iter().copied(),
                starts.len(),
                &lists[t],
                off,
                &mut kept,
            );
            starts = kept;
        }
        starts.len() as u32
    }

    #[test]
    fn exact_and_sloppy_frequencies() {
        // "a b" in "a b x a b a": twice.
        let ab = [(0, 0), (1, 1)];
        let lists = vec![vec![0, 3, 5], vec![1, 4]];
        assert_eq!(exact_freq(&ab, &lists), 2);
        assert_eq!(sloppy(&ab, &lists, 0), 2);
        // "b a" in it: once exactly (4, 5), twice with a gap (1, 3).
        let ba = [(0, 1), (1, 0)];
        assert_eq!(exact_freq(&ba, &lists), 1);
        assert_eq!(sloppy(&ba, &lists, 1), 2);
        // "a b" in "b a": swapped, 2 moves.
        let swapped = vec![vec![1], vec![0]];
        assert_eq!(exact_freq(&ab, &swapped), 0);
        assert_eq!(sloppy(&ab, &swapped, 1), 0);
        assert_eq!(sloppy(&ab, &swapped, 2), 1);
        // "a a" in "a a a": overlapping starts, 2, sloppy too (a position
        // serves one match per slot).
        let aa = [(0, 0), (1, 0)];
        let a3 = vec![vec![0, 1, 2]];
        assert_eq!(exact_freq(&aa, &a3), 2);
        assert_eq!(sloppy(&aa, &a3, 0), 2);
        assert_eq!(sloppy(&aa, &a3, 5), 2);
        assert_eq!(sloppy(&aa, &[vec![0, 1]], 5), 1);
        // A lone "a" never matches "a a", however sloppy.
        assert_eq!(sloppy(&aa, &[vec![4]], 9), 0);
        // "a b" ~5 in "a a a b": the one b serves one match.
        assert_eq!(sloppy(&ab, &[vec![0, 1, 2], vec![3]], 5), 1);
        // Gaps: "a b" ~2 in "a x x b".
        assert_eq!(sloppy(&ab, &[vec![0], vec![3]], 1), 0);
        assert_eq!(sloppy(&ab, &[vec![0], vec![3]], 2), 1);
    }
}
