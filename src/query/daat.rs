//! Document-at-a-time execution: iterators over posting blocks, combined
//! by boolean iterators, feeding a collector in ascending doc order.

use std::sync::Arc;

use crate::collect::{Sink, Window};
use crate::error::Result;
use crate::format::postings::{
    BLOCK_LEN, BadPostings, Impact, L2_BLOCKS, MAX_IMPACTS, Postings, Presence,
};
use crate::kernels;
use crate::query::Occur;
use crate::query::bm25::TermWeight;
use crate::query::plan::{Node, TermNode};
use crate::read::LiveSegment;

/// The doc id past every document.
pub const NO_MORE: u32 = u32::MAX;

/// A positioned iterator over matching documents with their scores.
///
/// A new scorer is already on its first match (or [`NO_MORE`]). After a
/// decode error a scorer reports [`NO_MORE`] and [`Scorer::error`] returns
/// the error.
pub trait Scorer {
    /// The current document.
    fn doc(&self) -> u32;
    /// Moves to the next match and returns it: by default the first
    /// match after the current document (staying on [`NO_MORE`]).
    fn advance(&mut self) -> u32 {
        let next = self.doc().saturating_add(1);
        self.seek(next)
    }
    /// Moves to the first match `>= target` (staying put if already there).
    fn seek(&mut self, target: u32) -> u32;
    /// The current document's score.
    fn score(&mut self) -> f32;
    /// An estimate of the number of matches.
    fn cost(&self) -> u64;
    /// The first decode error met, if any.
    fn error(&self) -> Option<BadPostings>;
}

/// The most impact reads [`TermScorer::bound_until`] spends on one range.
const BOUND_STEPS: usize = 8;

/// A decoded block of a [`TermScorer`] and its scratch lists, on the
/// heap so that building and moving a scorer copies no kilobyte; the
/// window loop keeps them from one search to the next
/// ([`TermScorer::deferred`], [`TermScorer::into_buf`]), so that a
/// scorer's bound cache is allocated once a thread, not once a search.
pub struct BlockBuf {
    docs: [u32; BLOCK_LEN],
    tfs: [u32; BLOCK_LEN],
    /// Bounds computed so far: per block, then per second-level run
    /// (NaN where not yet computed; sized on first use, emptied when
    /// another scorer takes the buffer).
    bounds: Vec<f32>,
    /// Per block, its impacts' least norm byte, read with its bound.
    min_norms: Vec<u8>,
    /// One block's impacts ([`TermScorer::known_keys`]).
    impacts: Vec<Impact>,
}

impl Default for BlockBuf {
    fn default() -> Self {
        BlockBuf {
            docs: [0; BLOCK_LEN],
            tfs: [0; BLOCK_LEN],
            bounds: Vec::new(),
            min_norms: Vec::new(),
            impacts: Vec::new(),
        }
    }
}

/// Iterates one term's postings block by block; frequencies are decoded
/// only when a document of the block is scored.
pub struct TermScorer<'a> {
    postings: Postings<'a>,
    weight: &'a TermWeight,
    norms: Option<&'a [u8]>,
    block: usize,
    nblocks: usize,
    /// The decoded block's documents and frequencies.
    buf: Box<BlockBuf>,
    len: usize,
    pos: usize,
    /// The block whose frequencies `buf.tfs` holds (`usize::MAX` for none):
    /// the decoded one once a document of it is scored (a pending one's
    /// documents scored by rank read their frequencies one at a time,
    /// [`Self::score_of`]).
    tfs_of: usize,
    /// A block and where its frequencies start: the decoded block (when
    /// packed), or the pending one whose documents [`Self::score_ranked`]
    /// scores by rank, found once for all of them (`usize::MAX` for none).
    tfs_at: (usize, usize),
    /// Whether `block` is chosen but not decoded yet ([`Self::move_to`]
    /// past a block's end): `docs`, `len` and `doc` are stale until
    /// [`Self::ensure`] or [`Scorer::seek`] decodes it, so a loop that
    /// then skips the block by its bound never decodes it.
    pending: bool,
    doc: u32,
    err: Option<BadPostings>,
    /// The block [`Self::block_of`] found last.
    shallow: std::cell::Cell<usize>,
    /// The second-level run with the largest bound, and the bound (the
    /// whole list's), once computed.
    best_run: Option<(usize, f32)>,
    /// The block [`Self::pass_blocks_under`] stopped at, and its best key:
    /// the next call starts there.
    stopped: Option<(usize, f32)>,
}

impl<'a> TermScorer<'a> {
    /// A scorer positioned on the term's first document.
    pub fn new(postings: Postings<'a>, weight: &'a TermWeight, norms: Option<&'a [u8]>) -> Self {
        let mut s = Self::on_first_block(postings, weight, norms, Box::default());
        s.load(0);
        s
    }

    /// A scorer on the term's first block, not decoded yet
    /// ([`Self::is_pending`]): it is decoded when [`Self::ensure`] or
    /// [`Scorer::seek`] needs it, so a clause whose first block a search
    /// seeks past or passes by its bounds never decodes it, nor one of a
    /// query that cannot match in the segment (another required term
    /// missing there). Its block goes in `buf`, whatever it holds.
    pub fn deferred(
        postings: Postings<'a>,
        weight: &'a TermWeight,
        norms: Option<&'a [u8]>,
        buf: Box<BlockBuf>,
    ) -> Self {
        let mut s = Self::on_first_block(postings, weight, norms, buf);
        if postings.has_skip_data() {
            s.defer(0);
        } else {
            // One short block, which nothing passes by bounds.
            s.load(0);
        }
        s
    }

    /// The scorer's block buffer, for another scorer.
    pub fn into_buf(self) -> Box<BlockBuf> {
        self.buf
    }

    fn on_first_block(
        postings: Postings<'a>,
        weight: &'a TermWeight,
        norms: Option<&'a [u8]>,
        mut buf: Box<BlockBuf>,
    ) -> Self {
        buf.bounds.clear();
        buf.min_norms.clear();
        TermScorer {
            nblocks: postings.num_blocks(),
            postings,
            weight,
            norms,
            block: 0,
            buf,
            len: 0,
            pos: 0,
            tfs_of: usize::MAX,
            tfs_at: (usize::MAX, 0),
            pending: false,
            doc: NO_MORE,
            err: None,
            shallow: std::cell::Cell::new(0),
            best_run: None,
            stopped: None,
        }
    }

    /// The current block's documents from the current one on (empty once
    /// the list is exhausted).
    #[inline]
    pub fn block_rest(&self) -> &[u32] {
        debug_assert!(!self.pending, "block_rest of an undecoded block");
        if self.doc == NO_MORE {
            &[]
        } else {
            &self.buf.docs[self.pos..self.len]
        }
    }

    /// The position of the current document in its block.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to position `pos` (not before the current one) of the current
    /// block; at the block's end, to the next block, which is decoded only
    /// when [`Self::ensure`] or [`Scorer::seek`] needs it.
    #[inline]
    pub fn move_to(&mut self, pos: usize) {
        debug_assert!(!self.pending && pos >= self.pos && pos <= self.len);
        self.pos = pos;
        if pos < self.len {
            self.doc = self.buf.docs[pos];
        } else {
            self.defer(self.block + 1);
        }
    }

    /// The current block's index (possibly not decoded yet).
    #[inline]
    pub fn block(&self) -> usize {
        self.block
    }

    /// Whether the current block is chosen but not decoded.
    #[inline]
    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// Decodes the current block if it is pending.
    #[inline]
    pub fn ensure(&mut self) {
        if self.pending {
            self.load(self.block);
        }
    }

    /// Chooses block `b` without decoding it.
    #[inline]
    fn defer(&mut self, b: usize) {
        self.block = b;
        self.pos = 0;
        if b >= self.nblocks {
            self.doc = NO_MORE;
            self.pending = false;
        } else {
            self.pending = true;
        }
    }

    /// Moves back or forth to the start of block `b` (any block; `b` past
    /// the last exhausts the list), decoding nothing: the block is
    /// decoded when [`Self::ensure`] or [`Scorer::seek`] needs it, unless
    /// it is the one decoded now, which is kept. For loops that take a
    /// list's blocks out of document order; bounds computed so far stay.
    pub fn goto_block(&mut self, b: usize) {
        self.stopped = None;
        if !self.pending && b == self.block && b < self.nblocks && self.len > 0 {
            self.pos = 0;
            self.doc = self.buf.docs[0];
        } else {
            self.defer(b.min(self.nblocks));
        }
    }

    /// [`Self::goto_block`] to the first block that may hold `target` (the
    /// first whose last document is at least `target`), from any block.
    /// A list's documents spread over it about evenly, so the block at the
    /// target's share of the list's last document is a guess a few blocks
    /// off: steps doubling away from it bracket the block, and a binary
    /// search whose steps are conditional moves finds it there
    /// ([`Postings::first_block_to`]: targets come in no order, so a
    /// branch per step would be mispredicted half the time). A search of
    /// the whole skip data touched a cache line a step, each a miss for a
    /// conjunction led in bound order (seq-2 AND lower-bound, synthetic
    /// 200,000 documents: 2 % less time, 0.3 % fewer instructions).
    pub fn rewind_to(&mut self, target: u32) {
        let p = &self.postings;
        if !p.has_skip_data() {
            return self.goto_block(0);
        }
        let n = self.nblocks;
        let last = p.last_doc(n - 1).unwrap_or(u32::MAX);
        let guess = ((u64::from(target) * n as u64) / (u64::from(last) + 1)) as usize;
        let before = |b: usize| p.last_doc(b).is_some_and(|l| l < target);
        let g = guess.min(n - 1);
        // Every block before `lo` ends before the target; `hi` (or `n`)
        // does not.
        let (mut lo, mut hi);
        if before(g) {
            (lo, hi) = self.gallop_from(g + 1, target);
        } else {
            let mut step = 1;
            (lo, hi) = (0, g);
            while hi > 0 {
                let probe = hi.saturating_sub(step);
                if before(probe) {
                    lo = probe + 1;
                    break;
                }
                hi = probe;
                step *= 2;
            }
        }
        self.goto_block(p.first_block_to(lo..hi, target));
    }

    /// Passes the pending block and the `n - 1` after it without decoding
    /// them.
    pub fn pass_blocks(&mut self, n: usize) {
        debug_assert!(self.pending);
        self.defer(self.block + n);
    }

    /// Passes without decoding the pending block and those after it, up
    /// to the end of its second-level run, whose impacts' best key
    /// ([`TermWeight::key`]) is at most `key_limit`, each read in place
    /// and compared once (a passed block is not looked at again, so its
    /// bound is not kept; the one it stops at is bounded next, so its
    /// bound is, and its key for the next call, which starts there).
    /// Returns how many documents were passed.
    pub fn pass_blocks_under(&mut self, key_limit: f32) -> usize {
        debug_assert!(self.pending);
        let (p, w) = (self.postings, self.weight);
        let (mut b, mut docs) = (self.block, 0);
        while b < self.nblocks {
            let key = match self.stopped {
                Some((s, key)) if s == b => key,
                _ => match p.block_best(b, &w.inv) {
                    Ok((key, least)) => {
                        if key > key_limit {
                            // Bounded next, whatever the limit: kept
                            // where its bound is looked up.
                            self.keep_block_key(b, key, least);
                        }
                        key
                    }
                    Err(e) => {
                        self.err = Some(e);
                        break;
                    }
                },
            };
            if key > key_limit {
                self.stopped = Some((b, key));
                break;
            }
            docs += p.block_len(b);
            b += 1;
            if b.is_multiple_of(L2_BLOCKS) {
                break;
            }
        }
        if b > self.block {
            self.defer(b);
        }
        docs
    }

    /// Whether the list is exhausted (no document left, none pending).
    #[inline]
    pub fn is_exhausted(&self) -> bool {
        self.doc == NO_MORE && !self.pending
    }

    /// One past the last document of the block that holds the first
    /// document `>= target` (at or after the current block), by skip data
    /// alone; `NO_MORE` when no block does.
    pub fn shallow_end(&self, target: u32) -> u32 {
        let p = &self.postings;
        if !p.has_skip_data() {
            // A single block, decoded when the scorer was made.
            return match self.buf.docs[..self.len].last() {
                Some(&last) if !self.is_exhausted() && last >= target => last.saturating_add(1),
                _ => NO_MORE,
            };
        }
        let b = self.block_of(target);
        if b >= self.nblocks {
            return NO_MORE;
        }
        p.last_doc(b).map_or(NO_MORE, |last| last.saturating_add(1))
    }

    /// The first block at or after the current one whose last document
    /// is `>= target` (`nblocks` when none), by skip data alone: galloping
    /// from the block the previous call found, when that is still a valid
    /// start, then bisection. Lists with skip data only.
    fn block_of(&self, target: u32) -> usize {
        let p = &self.postings;
        let before = |b: usize| p.last_doc(b).is_some_and(|l| l < target);
        let hint = self.shallow.get();
        let lo = if hint > self.block && hint <= self.nblocks && before(hint - 1) {
            hint
        } else {
            self.block
        };
        let (mut lo, mut hi) = self.gallop_from(lo, target);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.shallow.set(lo);
        lo
    }

    /// Brackets the first block whose last document is `>= target`,
    /// galloping forward from `lo`, before which every block ends before
    /// it: `(lo, hi)` with every block before `lo` ending before `target`
    /// and block `hi` not (or `hi == nblocks`).
    fn gallop_from(&self, mut lo: usize, target: u32) -> (usize, usize) {
        let before = |b: usize| self.postings.last_doc(b).is_some_and(|l| l < target);
        let mut step = 1;
        let hi = loop {
            let probe = lo + step;
            if probe >= self.nblocks {
                break self.nblocks;
            }
            if !before(probe) {
                break probe;
            }
            lo = probe + 1;
            step *= 2;
        };
        (lo, hi)
    }

    /// The postings iterated.
    pub fn postings(&self) -> &Postings<'a> {
        &self.postings
    }

    /// The first document block `b` may hold: one past the previous
    /// block's last (skip data only).
    pub fn block_start(&self, b: usize) -> u32 {
        match b.checked_sub(1).and_then(|p| self.postings.last_doc(p)) {
            Some(last) => last + 1,
            None => 0,
        }
    }

    /// The norm bytes of the term's field (`None` without norms).
    pub fn norms(&self) -> Option<&'a [u8]> {
        self.norms
    }

    /// The term's weight.
    pub fn weight(&self) -> &'a TermWeight {
        self.weight
    }

    /// The current document's term frequency (frequencies decoded on
    /// first use in a block).
    #[inline]
    pub fn tf(&mut self) -> u32 {
        debug_assert!(!self.pending && self.doc != NO_MORE);
        if self.tfs_of != self.block {
            if let Err(e) = self
                .postings
                .decode_tfs_at(self.tfs_at.1, &mut self.buf.tfs)
            {
                self.err = Some(e);
            }
            self.tfs_of = self.block;
        }
        self.buf.tfs[self.pos]
    }

    /// The current block's frequencies, all of them (decoded on first
    /// use in a block): what a posting's positions are found by.
    #[inline]
    pub fn block_tfs(&mut self) -> &[u32] {
        self.tf();
        &self.buf.tfs[..self.len]
    }

    /// [`Self::block_rest`] with its documents' frequencies (decoded on
    /// first use in a block), and the field's norms.
    #[inline]
    pub fn rest_with_tfs(&mut self) -> (&[u32], &[u32], Option<&'a [u8]>) {
        if self.doc == NO_MORE {
            return (&[], &[], self.norms);
        }
        self.tf();
        let r = self.pos..self.len;
        (&self.buf.docs[r.clone()], &self.buf.tfs[r], self.norms)
    }

    /// The scores of the current block's next `n` documents, from the
    /// current one on (frequencies decoded on first use in a block).
    #[inline]
    pub fn rest_scores(&mut self, n: usize) -> impl Iterator<Item = f32> + '_ {
        let w = self.weight;
        let (docs, tfs, norms) = self.rest_with_tfs();
        let score = move |(&d, &tf): (&u32, &u32)| w.score_doc(tf, d, norms);
        docs[..n].iter().zip(&tfs[..n]).map(score)
    }

    /// The score of `doc` if the list holds it (the cursor at or before
    /// it). Inside the decoded block, a seek there. Past it, a dense
    /// list's presence bitmap answers first, so that a document it lacks
    /// costs no seek and no decode of the block that would hold it; and
    /// one it holds is scored by its rank ([`Self::score_ranked`]), its
    /// block's documents not decoded.
    #[inline(always)]
    pub fn score_of(&mut self, doc: u32) -> Option<f32> {
        let past = |s: &Self| s.pending || s.doc == NO_MORE || s.buf.docs[s.len - 1] < doc;
        match self.postings.presence() {
            Some(p) if past(self) => p.contains(doc).then(|| self.score_ranked(p, doc)),
            _ => (self.seek(doc) == doc).then(|| self.score()),
        }
    }

    /// The score of `doc`, which the list holds by its presence bitmap
    /// `p`, past the decoded block: the block that holds it is found by
    /// skip data and left pending (its documents undecoded), and its
    /// frequency is the block's at `doc`'s rank among the block's
    /// documents, the bitmap's count from the block's first document (a
    /// few words' popcount where decoding the documents costs a block's
    /// unpacking and prefix sum: rare-common-2 AND). That one frequency
    /// is read out of the packed block ([`Postings::tf_at`]) unless the
    /// block's frequencies are decoded already: unpacking all of them
    /// for it, and keeping them for the block's next document scored,
    /// cost more (rare-common-2 AND lower-bound 106.1k instructions a
    /// query against 96.2k; seq-5 AND 1.379M against 1.354M).
    #[inline(never)]
    fn score_ranked(&mut self, p: Presence<'_>, doc: u32) -> f32 {
        let b = self.next_block_to(doc);
        self.defer(b);
        if b >= self.nblocks || !self.postings.is_packed(b) {
            // A tail decodes its frequencies with its documents anyway.
            return if self.seek(doc) == doc {
                self.score()
            } else {
                self.err = Some(BadPostings(
                    "presence bitmap holds a document the list lacks",
                ));
                0.0
            };
        }
        let rank = p.count_between(self.block_start(b), doc);
        let tf = if self.tfs_of == b {
            self.buf
                .tfs
                .get(rank)
                .copied()
                .ok_or(BadPostings("rank past the block"))
        } else {
            if self.tfs_at.0 != b {
                match self.postings.tfs_start(b) {
                    Ok(at) => self.tfs_at = (b, at),
                    Err(e) => {
                        self.err = Some(e);
                        return 0.0;
                    }
                }
            }
            self.postings.tf_in_run(self.tfs_at.1, rank)
        };
        match tf {
            Ok(tf) => self.weight.score(tf, self.norm(doc)),
            Err(e) => {
                self.err = Some(e);
                0.0
            }
        }
    }

    /// The norm byte of `doc` (0 for a field without norms).
    #[inline]
    pub fn norm(&self, doc: u32) -> u8 {
        self.norms.map_or(0, |n| n[doc as usize])
    }

    /// The smallest norm byte any document of the current block may have:
    /// the least norm among its impacts (every document is dominated by
    /// one), or 0 without skip data.
    pub fn block_min_norm(&mut self) -> u8 {
        if !self.postings.has_skip_data() || self.block >= self.nblocks {
            return 0;
        }
        // Read with the block's bound (0, the least, if that failed).
        let b = self.block;
        self.cached_bound(b, false);
        self.buf.min_norms[b]
    }

    /// The best score of any document in `lo..=hi` (at or after the
    /// current block): the best score of its blocks' impacts, without
    /// decoding them. This is the one place block bounds are computed.
    /// Whole second-level runs inside the range count by their summary;
    /// a range that needs more than `BOUND_STEPS` (8) reads gets the
    /// bound of the whole list, found out from skip data before any
    /// impacts are read (a long range of a common term, which the window
    /// loop asks about for every second-level run of its lead, costs no
    /// reads: seq-2 AND lower-bound 1.28M instructions a query before,
    /// 1.21M after), and a list without skip data (shorter
    /// than a block) the term's weight, which no score exceeds.
    pub fn bound_until(&mut self, lo: u32, hi: u32) -> f32 {
        let p = self.postings;
        if self.doc == NO_MORE && !self.pending {
            // Nothing left: no match, no score (0 keeps sums of bounds
            // meaningful, as every score is at least 0).
            return 0.0;
        }
        if !p.has_skip_data() {
            return self.weight.weight;
        }
        // Most often (a union's windows end inside each clause's block)
        // the current block holds the whole range: its bound, found as
        // the search below would find it.
        let b = self.block;
        if b < self.nblocks && p.last_doc(b).is_some_and(|l| l >= hi) {
            return f32::NEG_INFINITY.max(self.cached_bound(b, false));
        }
        // The first block that may hold `lo` (the cursor may lag behind
        // when windows were skipped).
        let mut b = self.block_of(lo);
        if b == self.nblocks {
            // Nothing at or after `lo`: no match, no score.
            return 0.0;
        }
        // The range's blocks and whole runs, by skip data alone first: a
        // range that needs more reads than that gets the list's bound
        // without reading any of their impacts.
        let mut units = [(0usize, false); BOUND_STEPS];
        let mut n = 0;
        loop {
            if n == BOUND_STEPS {
                return self.list_bound();
            }
            let run_end = (b + L2_BLOCKS).min(self.nblocks);
            let whole_run = b.is_multiple_of(L2_BLOCKS)
                && run_end - b == L2_BLOCKS
                && p.last_doc(run_end - 1).is_some_and(|l| l < hi);
            if whole_run {
                units[n] = (b / L2_BLOCKS, true);
                b = run_end - 1;
            } else {
                units[n] = (b, false);
            }
            n += 1;
            match p.last_doc(b) {
                Some(last) if last < hi && b + 1 < self.nblocks => b += 1,
                _ => break,
            }
        }
        units[..n]
            .iter()
            .fold(f32::NEG_INFINITY, |best, &(u, run)| {
                best.max(self.cached_bound(u, run))
            })
    }

    /// Appends the keys ([`TermWeight::key`]) of documents of the list,
    /// one per document, read from impacts alone: those of the blocks of its best
    /// second-level run. A block's impacts are its documents' own (tf,
    /// norm) pairs, each at least one document, when there are fewer than
    /// [`MAX_IMPACTS`] (a longer frontier is merged into corners that no
    /// document need have, and such a block adds nothing); pairs differ,
    /// so their documents do, and blocks hold different documents. These
    /// are lower bounds of what a query that every document of the list
    /// matches can give them (the list's own score, with other clauses
    /// only adding to it).
    pub fn known_keys(&mut self, out: &mut Vec<f32>) {
        let p = self.postings;
        if !p.has_skip_data() || self.is_exhausted() {
            return;
        }
        let (run, _) = self.best_run();
        let mut impacts = std::mem::take(&mut self.buf.impacts);
        for b in run * L2_BLOCKS..((run + 1) * L2_BLOCKS).min(self.nblocks) {
            match p.block_impacts(b, &mut impacts) {
                Ok(()) if impacts.len() < MAX_IMPACTS => {
                    out.extend(impacts.iter().map(|im| self.weight.key(im.tf, im.norm)))
                }
                Ok(()) => {}
                Err(e) => {
                    self.err = Some(e);
                    break;
                }
            }
        }
        self.buf.impacts = impacts;
    }

    /// Appends the key of every document of the list, its blocks decoded
    /// into scratch (the cursor does not move): for a short list, what
    /// [`Self::known_keys`] reads from impacts, exactly.
    pub fn list_keys(&mut self, out: &mut Vec<f32>) {
        let (mut docs, mut tfs) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        for b in 0..self.nblocks {
            match self.postings.decode_block(b, &mut docs, &mut tfs) {
                Ok(n) => out.extend(
                    docs[..n]
                        .iter()
                        .zip(&tfs[..n])
                        .map(|(&d, &tf)| self.weight.key(tf, self.norm(d))),
                ),
                Err(e) => {
                    self.err = Some(e);
                    return;
                }
            }
        }
    }

    /// The bound of every document of the list: the largest of its
    /// second-level summaries' bounds (computed once), or the term's
    /// weight for a list without skip data; 0 once exhausted.
    pub fn list_bound(&mut self) -> f32 {
        if self.is_exhausted() {
            return 0.0;
        }
        if !self.postings.has_skip_data() {
            return self.weight.weight;
        }
        self.best_run().1
    }

    /// The second-level run with the largest bound, and that bound (the
    /// list's): computed once. Lists with skip data only.
    fn best_run(&mut self) -> (usize, f32) {
        if let Some(best) = self.best_run {
            return best;
        }
        let mut best = (0, f32::NEG_INFINITY);
        for i in 0..self.postings.num_l2() {
            let b = self.cached_bound(i, true);
            if b > best.1 {
                best = (i, b);
            }
        }
        self.best_run = Some(best);
        best
    }

    /// The best score of block `b`'s impacts, or with `run`, of
    /// second-level run `b`'s; each computed once per scorer. A block's
    /// least norm is read with its bound. (Reading a whole run's blocks at
    /// the second read of one was measured slower: windows skip most
    /// runs' blocks by the run's bound or by the other clauses.)
    fn cached_bound(&mut self, b: usize, run: bool) -> f32 {
        let p = self.postings;
        self.bound_cache();
        let slot = if run { p.num_blocks() + b } else { b };
        let cached = self.buf.bounds[slot];
        if !cached.is_nan() {
            return cached;
        }
        // The same function as the score, over the stored impacts, read
        // without storing them: the best key first, then its score (the
        // best score, as the score is monotone in the key).
        let w = self.weight;
        if run {
            return match p.l2_best(b, &w.inv) {
                Ok(key) => {
                    self.buf.bounds[slot] = w.score_of_key(key);
                    self.buf.bounds[slot]
                }
                Err(e) => self.fail(e),
            };
        }
        match p.block_best(b, &w.inv) {
            Ok((key, least)) => self.keep_block_bound(b, key, least),
            Err(e) => self.fail(e),
        }
    }

    /// The best key ([`TermWeight::key`]) of block `b`'s impacts, with
    /// their least norm byte, or with `run`, of second-level run `b`'s
    /// (norm 0), read in place and not kept (the score is monotone in the
    /// key, so keys order blocks as their bounds do, without a division
    /// each; [`Self::keep_block_key`] keeps a block's); infinite when the
    /// impacts are damaged, the error kept for the end of the search.
    /// Lists with skip data only.
    pub fn best_key(&mut self, b: usize, run: bool) -> (f32, u8) {
        let (p, inv) = (self.postings, &self.weight.inv);
        let best = if run {
            p.l2_best(b, inv).map(|key| (key, 0))
        } else {
            p.block_best(b, inv)
        };
        best.unwrap_or_else(|e| (self.fail(e), 0))
    }

    /// Block `b`'s impacts as lanes ([`kernels::Frontier`]), each norm's
    /// key factor from the term's weight; `None` for a list without skip
    /// data, past its last block, or for damaged impacts (the error kept
    /// for the end of the search).
    pub fn block_frontier(&mut self, b: usize) -> Option<kernels::Frontier> {
        if !self.postings.has_skip_data() || b >= self.nblocks {
            return None;
        }
        match self.postings.block_frontier(b, &self.weight.inv) {
            Ok(f) => Some(f),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    /// The blocks that may hold documents of `lo..=hi`, from the first
    /// at or after the current one that ends at `lo` or later, by skip
    /// data alone. Lists with skip data only.
    pub fn blocks_over(&self, lo: u32, hi: u32) -> std::ops::Range<usize> {
        let first = self.block_of(lo);
        let mut end = first;
        while end < self.nblocks && self.block_start(end) <= hi {
            end += 1;
        }
        first..end
    }

    /// Whether this list and `other` score by one field's norms, so that
    /// a document has one norm byte in both (what a joint bound of their
    /// impacts, [`kernels::joint_bound`], needs), and one field's key
    /// factors.
    pub fn shares_norms(&self, other: &TermScorer<'_>) -> bool {
        let same = match (self.norms, other.norms) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            (None, None) => true,
            _ => false,
        };
        same && Arc::ptr_eq(&self.weight.inv, &other.weight.inv)
    }

    /// Keeps block `b`'s bound from its best key and least norm, as
    /// [`Self::best_key`] read them (a loop that took them before
    /// deciding to bound the block saves reading its impacts again).
    pub fn keep_block_key(&mut self, b: usize, key: f32, least: u8) {
        self.bound_cache();
        if self.buf.bounds[b].is_nan() {
            self.keep_block_bound(b, key, least);
        }
    }

    /// Sizes the bound cache on first use (its buffer's vectors keep
    /// their room from earlier scorers).
    fn bound_cache(&mut self) {
        if self.buf.bounds.is_empty() {
            let p = self.postings;
            self.buf
                .bounds
                .resize(p.num_blocks() + p.num_l2(), f32::NAN);
            self.buf.min_norms.resize(p.num_blocks(), 0);
        }
    }

    /// Keeps block `b`'s bound, from its best key and least norm, in the
    /// cache ([`Self::bound_cache`] allocates it), and returns it.
    fn keep_block_bound(&mut self, b: usize, key: f32, least: u8) -> f32 {
        self.buf.bounds[b] = self.weight.score_of_key(key);
        self.buf.min_norms[b] = least;
        self.buf.bounds[b]
    }

    /// Records a damaged list: its bounds are infinite, so that nothing is
    /// pruned by them, and the error is reported when the search ends.
    fn fail(&mut self, e: BadPostings) -> f32 {
        self.err = Some(e);
        f32::INFINITY
    }

    /// The index of the first document `>= target` in the decoded block,
    /// which holds one (its last document is at least `target`), from
    /// the current one: a few steps by hand, where a dense list's next
    /// match usually is, then the kernel.
    #[inline]
    fn find_in_block(&self, target: u32) -> usize {
        const STEPS: usize = 4;
        let docs = &self.buf.docs[..self.len];
        let mut p = self.pos;
        for _ in 0..STEPS {
            match docs.get(p) {
                Some(&d) if d < target => p += 1,
                _ => return p,
            }
        }
        kernels::find_next_geq(docs, p, target)
    }

    /// [`Scorer::seek`] to a target past the decoded block (or with the
    /// current block pending): whole blocks skipped by their last
    /// document, the first that may hold it decoded.
    #[inline(never)]
    fn seek_blocks(&mut self, target: u32) -> u32 {
        self.load(self.next_block_to(target));
        if self.doc >= target {
            return self.doc;
        }
        self.pos = kernels::find_next_geq(&self.buf.docs[..self.len], self.pos, target);
        if self.pos < self.len {
            self.doc = self.buf.docs[self.pos];
        } else {
            self.load(self.block + 1);
        }
        self.doc
    }

    /// The first block past the decoded one (from the pending one, when
    /// it is) whose last document is at least `target` (`nblocks` when
    /// none): blocks passed by their last document, one by one.
    #[inline]
    fn next_block_to(&self, target: u32) -> usize {
        let mut b = if self.pending {
            self.block
        } else {
            self.block + 1
        };
        while b < self.nblocks && self.postings.last_doc(b).is_some_and(|l| l < target) {
            b += 1;
        }
        b
    }

    /// Decodes block `b` and moves to its first document.
    fn load(&mut self, b: usize) {
        self.block = b;
        self.pos = 0;
        self.pending = false;
        if b >= self.nblocks {
            self.doc = NO_MORE;
            return;
        }
        match self
            .postings
            .decode_docs_at(b, &mut self.buf.docs, &mut self.buf.tfs)
        {
            Ok((n, tfs_at)) => {
                self.len = n;
                self.tfs_at = (b, tfs_at);
                if !self.postings.is_packed(b) {
                    // A tail's frequencies come with its documents.
                    self.tfs_of = b;
                }
                self.doc = self.buf.docs[0];
            }
            Err(e) => {
                self.err = Some(e);
                self.nblocks = 0;
                self.doc = NO_MORE;
            }
        }
    }
}

impl Scorer for TermScorer<'_> {
    #[inline]
    fn doc(&self) -> u32 {
        debug_assert!(!self.pending, "doc of an undecoded block");
        self.doc
    }

    #[inline]
    fn advance(&mut self) -> u32 {
        self.pos += 1;
        if self.pos < self.len {
            self.doc = self.buf.docs[self.pos];
        } else {
            self.load(self.block + 1);
        }
        self.doc
    }

    /// Inlined for the usual case, a target inside the decoded block (a
    /// conjunction's or phrase's dense clauses); past it,
    /// [`Self::seek_blocks`]. Always: the window loop's conjunction runs
    /// in two loops (document order and bound order), and left to itself
    /// the compiler called it from both (rare-common-2 AND: 0.7 % more
    /// instructions a query).
    #[inline(always)]
    fn seek(&mut self, target: u32) -> u32 {
        if !self.pending {
            if self.doc >= target {
                return self.doc;
            }
            if self.buf.docs[self.len - 1] >= target {
                self.pos = self.find_in_block(target);
                self.doc = self.buf.docs[self.pos];
                return self.doc;
            }
        }
        self.seek_blocks(target)
    }

    #[inline]
    fn score(&mut self) -> f32 {
        let tf = self.tf();
        self.weight.score(tf, self.norm(self.doc))
    }

    fn cost(&self) -> u64 {
        u64::from(self.postings.df())
    }

    fn error(&self) -> Option<BadPostings> {
        self.err.clone()
    }
}

/// Combines clauses: a leapfrog over the required ones (led by the
/// cheapest), or a union of the optional ones; excluded documents removed.
/// Scores sum in clause order.
pub struct BoolScorer<'a> {
    children: Vec<Box<dyn Scorer + 'a>>,
    occurs: Vec<Occur>,
    /// Must and filter clauses, cheapest first.
    required: Vec<usize>,
    should: Vec<usize>,
    must_not: Vec<usize>,
    doc: u32,
}

/// A boolean's clauses by role: indexes into its clause list.
#[derive(Default)]
pub struct Roles {
    /// Must and filter clauses, cheapest first.
    pub required: Vec<usize>,
    /// Should clauses, in clause order.
    pub should: Vec<usize>,
    /// Must-not clauses, in clause order.
    pub must_not: Vec<usize>,
}

impl Roles {
    /// Sorts clauses by `occurs`; `cost(i)` orders the required ones.
    pub fn of(occurs: &[Occur], cost: impl Fn(usize) -> u64) -> Roles {
        let mut roles = Roles::default();
        roles.fill(occurs, cost);
        roles
    }

    /// [`Self::of`] into these lists (which a loop keeps from one search
    /// to the next).
    pub fn fill(&mut self, occurs: &[Occur], cost: impl Fn(usize) -> u64) {
        let pick = |to: &mut Vec<usize>, f: fn(Occur) -> bool| {
            to.clear();
            to.extend((0..occurs.len()).filter(|&i| f(occurs[i])));
        };
        pick(&mut self.required, |o| {
            matches!(o, Occur::Must | Occur::Filter)
        });
        self.required.sort_by_key(|&i| cost(i));
        pick(&mut self.should, |o| o == Occur::Should);
        pick(&mut self.must_not, |o| o == Occur::MustNot);
    }
}

impl<'a> BoolScorer<'a> {
    fn new(children: Vec<Box<dyn Scorer + 'a>>, occurs: Vec<Occur>) -> Self {
        let Roles {
            required,
            should,
            must_not,
        } = Roles::of(&occurs, |i| children[i].cost());
        let mut s = BoolScorer {
            children,
            occurs,
            required,
            should,
            must_not,
            doc: 0,
        };
        s.doc = s.next_match(0);
        s
    }

    /// The first match `>= target`.
    fn next_match(&mut self, mut target: u32) -> u32 {
        loop {
            let candidate = if self.required.is_empty() {
                let mut min = NO_MORE;
                for &i in &self.should {
                    min = min.min(self.children[i].seek(target));
                }
                min
            } else {
                self.leapfrog(target)
            };
            if candidate == NO_MORE {
                return NO_MORE;
            }
            let excluded = self
                .must_not
                .iter()
                .any(|&i| self.children[i].seek(candidate) == candidate);
            if !excluded {
                return candidate;
            }
            target = candidate + 1;
        }
    }

    fn leapfrog(&mut self, target: u32) -> u32 {
        let children = &mut self.children;
        leapfrog(&self.required, target, |i, t| children[i].seek(t))
    }
}

/// The first document `>= target` on which every clause of `required`
/// (indexes, the lead first) is, each moved by `seek(index, target)`.
#[inline]
pub fn leapfrog(required: &[usize], target: u32, mut seek: impl FnMut(usize, u32) -> u32) -> u32 {
    let lead = required[0];
    let mut candidate = seek(lead, target);
    'outer: while candidate != NO_MORE {
        for &i in &required[1..] {
            let d = seek(i, candidate);
            if d > candidate {
                candidate = seek(lead, d);
                continue 'outer;
            }
        }
        return candidate;
    }
    NO_MORE
}

impl Scorer for BoolScorer<'_> {
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
        let doc = self.doc;
        let mut score = 0.0f32;
        for (child, occur) in self.children.iter_mut().zip(&self.occurs) {
            match occur {
                Occur::Must => score += child.score(),
                Occur::Should => {
                    if child.seek(doc) == doc {
                        score += child.score();
                    }
                }
                Occur::Filter | Occur::MustNot => {}
            }
        }
        score
    }

    fn cost(&self) -> u64 {
        match self.required.first() {
            Some(&i) => self.children[i].cost(),
            None => self.should.iter().map(|&i| self.children[i].cost()).sum(),
        }
    }

    fn error(&self) -> Option<BadPostings> {
        self.children.iter().find_map(|c| c.error())
    }
}

/// Builds each clause of a boolean over a segment with `build`, keeping
/// those present there with their occurs, in clause order. `None` when the
/// boolean cannot match in the segment: a must or filter clause is absent,
/// or only must-not clauses remain.
pub fn present_clauses<C, T>(
    clauses: impl IntoIterator<Item = (Occur, C)>,
    mut build: impl FnMut(C) -> Result<Option<T>>,
) -> Result<Option<(Vec<T>, Vec<Occur>)>> {
    let clauses = clauses.into_iter();
    // Sized up front: a term scorer holds its decoded block, so regrowing
    // would copy kilobytes.
    let n = clauses.size_hint().0;
    let (mut built, mut occurs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (occur, c) in clauses {
        match (build(c)?, occur) {
            (Some(t), _) => {
                built.push(t);
                occurs.push(occur);
            }
            (None, Occur::Must | Occur::Filter) => return Ok(None),
            (None, _) => {}
        }
    }
    if !occurs.iter().any(|o| *o != Occur::MustNot) {
        return Ok(None);
    }
    Ok(Some((built, occurs)))
}

/// Builds the scorer of `node` over `seg`, or `None` when nothing can match.
pub fn scorer<'a>(node: &'a Node, seg: &'a LiveSegment) -> Result<Option<Box<dyn Scorer + 'a>>> {
    match node {
        Node::Empty => Ok(None),
        Node::Term(t) => Ok(term_scorer(t, seg)?.map(|s| Box::new(s) as Box<dyn Scorer>)),
        Node::Bool(clauses) => {
            let clauses = clauses.iter().map(|(o, n)| (*o, n));
            Ok(present_clauses(clauses, |n| scorer(n, seg))?
                .map(|(children, occurs)| Box::new(BoolScorer::new(children, occurs)) as _))
        }
        Node::All(_) | Node::Range(_) | Node::Terms(_) => {
            crate::query::constant::scorer(node, seg).map(Some)
        }
        Node::Phrase(p) => crate::query::phrase::scorer(p, seg),
    }
}

/// The scorer of one term over `seg`, or `None` when the segment lacks it.
pub fn term_scorer<'a>(t: &'a TermNode, seg: &'a LiveSegment) -> Result<Option<TermScorer<'a>>> {
    term_cursor(t, seg, TermScorer::new)
}

/// [`term_scorer`] built by `make` ([`TermScorer::new`] or
/// [`TermScorer::deferred`]).
pub fn term_cursor<'a>(
    t: &'a TermNode,
    seg: &'a LiveSegment,
    make: impl FnOnce(Postings<'a>, &'a TermWeight, Option<&'a [u8]>) -> TermScorer<'a>,
) -> Result<Option<TermScorer<'a>>> {
    let r = &seg.reader;
    let Some(info) = t.info(seg) else {
        return Ok(None);
    };
    let postings = r.postings(&info)?;
    Ok(Some(make(postings, &t.weight, r.norms(t.field))))
}

/// Runs `node` over `seg` into `sink`, a document at a time: every live
/// match counted and offered, except in the ranges the sink skips.
pub fn run<S: Sink>(node: &Node, seg: &LiveSegment, sink: &mut S) -> Result<()> {
    let Some(mut s) = scorer(node, seg)? else {
        return Ok(());
    };
    let mut doc = s.doc();
    let mut window_end = 0;
    while doc != NO_MORE {
        if doc >= window_end {
            match sink.window(doc) {
                Window::Take(end) => window_end = end,
                Window::Skip(end) => {
                    doc = s.seek(end);
                    continue;
                }
            }
        }
        if !seg.is_deleted(doc) {
            sink.count(1);
            sink.offer(doc, || s.score());
        }
        doc = s.advance();
    }
    match s.error() {
        Some(e) => Err(seg.reader.bad(e)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::postings;

    /// `rewind_to` lands on the first block whose last document is at
    /// least the target, for every target, wherever its guess from the
    /// list's spread falls: lists spread evenly, bunched at either end,
    /// and in clusters far apart.
    #[test]
    fn rewind_finds_the_first_block_that_may_hold_a_target() {
        let max_doc = 1 << 20;
        let lists: [Vec<u32>; 4] = [
            (0..5_000).map(|i| i * 200).collect(),
            (0..5_000).chain(max_doc - 10..max_doc).collect(),
            (0..10).chain(max_doc - 5_000..max_doc).collect(),
            (0..8)
                .flat_map(|c| (0..700).map(move |i| c * 130_000 + i * 3))
                .collect(),
        ];
        let factors = [1.0f32; 256];
        let weight = TermWeight::new(u64::from(max_doc), 5_000, u64::from(max_doc) * 10, false);
        for docs in &lists {
            let tfs = vec![1; docs.len()];
            let mut region = Vec::new();
            postings::encode(docs, &tfs, max_doc, |_| 0, &factors, &mut region).unwrap();
            let p = Postings::parse(&region, docs.len() as u32, max_doc).unwrap();
            assert!(p.has_skip_data());
            let mut c = TermScorer::new(p, &weight, None);
            let mut targets: Vec<u32> = docs.iter().flat_map(|&d| [d, d + 1]).collect();
            targets.extend([0, max_doc - 1, max_doc, u32::MAX]);
            for &t in targets.iter().rev().chain(&targets) {
                c.rewind_to(t);
                let want = (0..p.num_blocks())
                    .find(|&b| p.last_doc(b).is_some_and(|l| l >= t))
                    .unwrap_or(p.num_blocks());
                assert_eq!(c.block(), want, "target {t}");
            }
        }
    }
}
