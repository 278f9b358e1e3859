//! Score-order top-k of a single term: a loop over the term's blocks
//! straight into the inline queue ([`TopDocsSink`]) that skips, without
//! scoring them, the blocks (and the runs of [`L2_BLOCKS`] blocks) whose
//! best impact cannot beat the queue's floor.
//!
//! The bound of a block is [`TermWeight::bound`] of its stored impacts.
//! Every document of the block is dominated by one of them (no smaller
//! norm, no larger frequency), and the score is monotone in both in f32
//! (see [`crate::query::bm25`]), so no document of the block scores above
//! the bound: a block whose bound is at most the floor holds
//! nothing that can enter (a tie loses, the kept hit having the lower
//! doc number). Every other document is scored by the same function as
//! the other paths, so the hits are the same bits.
//!
//! Skipped blocks still count: their length when the segment has no
//! deletes, else their live documents (decoded, not scored); or nothing
//! when the request allows a lower-bound total.

use crate::collect::Sink;
use crate::error::Result;
use crate::format::postings::{BLOCK_LEN, BadPostings, Impact, L2_BLOCKS, Postings};
use crate::query::bm25::TermWeight;
use crate::query::plan::TermNode;
use crate::read::LiveSegment;

/// Runs the single term `t` over `seg` into `sink` (whose `base` is the
/// segment's), counting and scoring through it.
pub fn run<S: Sink>(t: &TermNode, seg: &LiveSegment, sink: &mut S) -> Result<()> {
    let Some(info) = t.info(seg) else {
        return Ok(());
    };
    let postings = seg.reader.postings(&info)?;
    Loop {
        postings,
        weight: &t.weight,
        norms: seg.reader.norms(t.field),
        seg,
        impacts: Vec::new(),
        docs: [0; BLOCK_LEN],
        tfs: [0; BLOCK_LEN],
    }
    .run(sink)
    .map_err(|e| seg.reader.bad(e))
}

struct Loop<'a> {
    postings: Postings<'a>,
    weight: &'a TermWeight,
    norms: Option<&'a [u8]>,
    seg: &'a LiveSegment,
    impacts: Vec<Impact>,
    docs: [u32; BLOCK_LEN],
    tfs: [u32; BLOCK_LEN],
}

impl Loop<'_> {
    fn run<S: Sink>(mut self, sink: &mut S) -> Result<(), BadPostings> {
        let p = self.postings;
        let n = p.num_blocks();
        let mut b = 0;
        while b < n {
            if let Some(floor) = sink.floor().filter(|_| p.has_skip_data()) {
                // A whole second-level run first, from its start.
                let g = b / L2_BLOCKS;
                if b % L2_BLOCKS == 0 {
                    p.l2_impacts(g, &mut self.impacts)?;
                    if self.weight.bound(&self.impacts) <= floor {
                        let end = ((g + 1) * L2_BLOCKS).min(n);
                        for s in b..end {
                            self.skip(s, sink)?;
                        }
                        b = end;
                        continue;
                    }
                }
                p.block_impacts(b, &mut self.impacts)?;
                if self.weight.bound(&self.impacts) <= floor {
                    self.skip(b, sink)?;
                    b += 1;
                    continue;
                }
            }
            self.score_block(b, sink)?;
            b += 1;
        }
        Ok(())
    }

    /// Counts block `b` without scoring it.
    fn skip<S: Sink>(&mut self, b: usize, sink: &mut S) -> Result<(), BadPostings> {
        let len = self.postings.block_len(b);
        if sink.prefilter() {
            sink.dropped(len);
        } else if self.seg.deletes.is_none() {
            sink.count(len);
        } else {
            let len = self
                .postings
                .decode_docs(b, &mut self.docs, &mut self.tfs)?;
            let live = self.docs[..len]
                .iter()
                .filter(|&&d| !self.seg.is_deleted(d))
                .count();
            sink.count(live);
        }
        Ok(())
    }

    /// Scores every live document of block `b` into `sink`.
    fn score_block<S: Sink>(&mut self, b: usize, sink: &mut S) -> Result<(), BadPostings> {
        let p = self.postings;
        let len = p.decode_docs(b, &mut self.docs, &mut self.tfs)?;
        if p.is_packed(b) {
            p.decode_tfs(b, &mut self.tfs)?;
        }
        for i in 0..len {
            let doc = self.docs[i];
            if self.seg.is_deleted(doc) {
                continue;
            }
            let norm = self.norms.map_or(0, |n| n[doc as usize]);
            sink.count(1);
            sink.offer(doc, || self.weight.score(self.tfs[i], norm));
        }
        Ok(())
    }
}
