//! Collectors: the inline priority queue and what is built on it.

mod sort;
mod spec;
mod topdocs;

pub use sort::SortCollector;
pub use spec::{Hit, SortKey, SortRule, SortSpec, compare_values};
pub use topdocs::{SharedFloor, TopDocs, TopDocsSink, score_key};

/// Hits a queue reserves room for up front; a larger queue (a deep page)
/// grows while it fills, and allocates nothing once full.
const RESERVE_HITS: usize = 4096;

/// How many matches a search counts: every one, only those a path sees,
/// or every one up to a threshold. The searcher's `TotalMode` maps onto
/// it; the collectors hold one and the loops ask it (through
/// [`Sink::prefilter`]) whether uncounted documents may be skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Matches counted.
    total: u64,
    /// Count every match while `total` is below this (`u64::MAX`: always;
    /// 0: never required).
    threshold: u64,
    /// Whether some match went uncounted.
    inexact: bool,
}

impl Tally {
    /// A tally that counts exactly until `threshold` matches are counted.
    pub fn new(threshold: u64) -> Tally {
        Tally {
            total: 0,
            threshold,
            inexact: false,
        }
    }

    /// Whether documents may now go uncounted.
    #[inline]
    pub fn may_skip(&self) -> bool {
        self.total >= self.threshold
    }

    /// Whether every match is to be counted, however many there are.
    #[inline]
    pub fn counts_all(&self) -> bool {
        self.threshold == u64::MAX
    }

    /// `n` more matches.
    #[inline]
    pub fn count(&mut self, n: usize) {
        self.total += n as u64;
    }

    /// `n` documents went uncounted.
    #[inline]
    pub fn dropped(&mut self, n: usize) {
        self.inexact |= n > 0;
    }

    /// Matches counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether [`Self::total`] is every match.
    pub fn is_exact(&self) -> bool {
        !self.inexact
    }

    /// Adds what `other` counted (another thread's share of a search).
    pub fn merge(&mut self, other: &Tally) {
        self.total += other.total;
        self.inexact |= other.inexact;
    }
}

/// A [`Sink`]'s answer for the documents from a window's start on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Match and offer the documents below this one.
    Take(u32),
    /// Skip the documents below this one.
    Skip(u32),
}

/// A collector fed window by window ([`crate::query::window`]) that can
/// reject documents by their field values before they are scored, and,
/// when its total may be a lower bound, before they are known to match.
pub trait Sink {
    /// Called before the documents from `start` on are matched: how far
    /// the caller may go before asking again, or that the documents up to
    /// some point cannot be collected and are skipped (the total then
    /// becomes a lower bound).
    fn window(&mut self, start: u32) -> Window;
    /// Whether [`Sink::filter`] may be applied to documents not yet known
    /// to match or not yet counted (each rejection reported by
    /// [`Sink::dropped`]).
    fn prefilter(&self) -> bool;
    /// Whether every match must be counted, however many (an exact
    /// total): the window loop may then count them up front from
    /// presence bitmaps ([`crate::query::totals`]) and run as though
    /// the total were a lower bound ([`Counted`]). False when the total
    /// may become a lower bound anyway (counting up to a threshold), or
    /// for a sink that collects every match.
    fn counts_all(&self) -> bool {
        false
    }
    /// Keeps those of the ascending `docs` that can still enter the
    /// results, judged by field values alone (all of them when that cannot
    /// decide).
    fn filter(&self, docs: &mut Vec<u32>);
    /// `n` documents were rejected before they were known to match, or
    /// without being counted: the total is now a lower bound.
    fn dropped(&mut self, n: usize);
    /// `n` more live matches (offered or not).
    fn count(&mut self, n: usize);
    /// Offers a live match (already counted); `score` is called at most
    /// once, and only if needed.
    fn offer(&mut self, doc: u32, score: impl FnMut() -> f32);
    /// The score a match must beat to be kept, when the sink orders by
    /// score alone: a window whose best score is at most this is not
    /// offered.
    fn floor(&self) -> Option<f32> {
        None
    }
    /// Below which document of the segment a match scoring exactly
    /// [`Sink::floor`] may still be kept when it comes out of document
    /// order: the `k`-th kept hit's, which loses a tie only to a lower
    /// number. 0 when no such match can be (the floor is under the scores
    /// of `k` matches known or kept elsewhere); `u32::MAX` when the sink
    /// does not say, so that every tie is looked at.
    fn floor_ties(&self) -> u32 {
        u32::MAX
    }

    /// `keys` (in any order; the sink may reorder them) are each, mapped
    /// by `score` (non-decreasing), a lower bound of the score of a
    /// different live match of this search: a sink that keeps the best `k`
    /// may leave out whatever scores below the `k`-th largest of those
    /// scores, and raise its floor so. (The map commutes with ranking, so
    /// a sink scores only the key it keeps.)
    fn known_scores(&mut self, _keys: &mut [f32], _score: impl Fn(f32) -> f32) {}

    /// Whether the sink orders by score alone, so every document it is
    /// offered is scored: a loop may then compute scores in bulk.
    fn ranks_by_score(&self) -> bool {
        false
    }
}

/// A [`Sink`] whose live matches were all counted before the loop ran
/// (the window loop's exact totals from presence bitmaps): the loop may
/// then leave documents uncounted as though the total were a lower
/// bound, and what it counts or drops is not passed on.
pub struct Counted<'s, S>(pub &'s mut S);

impl<S: Sink> Sink for Counted<'_, S> {
    #[inline]
    fn window(&mut self, start: u32) -> Window {
        self.0.window(start)
    }

    #[inline]
    fn prefilter(&self) -> bool {
        true
    }

    #[inline]
    fn filter(&self, docs: &mut Vec<u32>) {
        self.0.filter(docs)
    }

    #[inline]
    fn dropped(&mut self, _n: usize) {}

    #[inline]
    fn count(&mut self, _n: usize) {}

    #[inline]
    fn offer(&mut self, doc: u32, score: impl FnMut() -> f32) {
        self.0.offer(doc, score)
    }

    #[inline]
    fn floor(&self) -> Option<f32> {
        self.0.floor()
    }

    #[inline]
    fn floor_ties(&self) -> u32 {
        self.0.floor_ties()
    }

    fn known_scores(&mut self, keys: &mut [f32], score: impl Fn(f32) -> f32) {
        self.0.known_scores(keys, score)
    }

    fn ranks_by_score(&self) -> bool {
        self.0.ranks_by_score()
    }
}

/// A score-ranked [`Sink`] fed documents out of document order: its
/// floor is the next float below the inner sink's, so that a document
/// scoring exactly the k-th score is still offered (in document order it
/// could not enter, as ties go to the lower document, which came first;
/// out of order it may be that lower document). The queue itself compares
/// scores and then documents, so what it keeps does not depend on the
/// order of its offers.
pub struct AnyOrder<'s, S>(pub &'s mut S);

impl<S: Sink> Sink for AnyOrder<'_, S> {
    #[inline]
    fn window(&mut self, start: u32) -> Window {
        self.0.window(start)
    }

    #[inline]
    fn prefilter(&self) -> bool {
        self.0.prefilter()
    }

    fn counts_all(&self) -> bool {
        self.0.counts_all()
    }

    #[inline]
    fn filter(&self, docs: &mut Vec<u32>) {
        self.0.filter(docs)
    }

    #[inline]
    fn dropped(&mut self, n: usize) {
        self.0.dropped(n)
    }

    #[inline]
    fn count(&mut self, n: usize) {
        self.0.count(n)
    }

    #[inline]
    fn offer(&mut self, doc: u32, score: impl FnMut() -> f32) {
        self.0.offer(doc, score)
    }

    #[inline]
    fn floor(&self) -> Option<f32> {
        self.0.floor().map(f32::next_down)
    }

    fn known_scores(&mut self, keys: &mut [f32], score: impl Fn(f32) -> f32) {
        self.0.known_scores(keys, score)
    }

    fn ranks_by_score(&self) -> bool {
        self.0.ranks_by_score()
    }
}
