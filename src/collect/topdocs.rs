//! Top documents by score descending, doc number ascending.
//!
//! Each candidate is packed into one `u64`: the score mapped to an
//! order-preserving `u32` in the high half and `u32::MAX - doc` in the low
//! half, so "better" is simply "larger key" and every comparison is one
//! integer compare. The queue has a fixed capacity and allocates nothing
//! once full: a sorted array up to 16 hits, a binary min-heap above; its
//! first key is the worst kept hit (the floor).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::collect::{RESERVE_HITS, Sink, Tally, Window};

/// Maps an `f32` to a `u32` with the same order (for non-NaN values).
#[inline]
pub fn score_key(score: f32) -> u32 {
    let bits = score.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

#[inline]
fn key_score(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 {
        key & 0x7fff_ffff
    } else {
        !key
    })
}

#[inline]
fn pack(score: f32, doc: u32) -> u64 {
    (u64::from(score_key(score)) << 32) | u64::from(u32::MAX - doc)
}

/// A [`TopDocs`] fed segment by segment by the score-order loops
/// ([`crate::query::window`] and the other paths): every offered
/// match is scored and offered as document `base + doc`, and the queue's
/// floor lets the loops leave what cannot beat it unscored. It counts for
/// the whole search (or, in a search on several threads, for the
/// segments its thread runs).
pub struct TopDocsSink<'a> {
    /// The queue.
    pub top: TopDocs,
    /// The current segment's first global document number.
    pub base: u32,
    /// What is counted.
    pub tally: Tally,
    /// Documents scored.
    pub scored: u64,
    /// The floor this thread knows: the queue's own once it is full, or
    /// the largest score below that of `k` matches known to exist
    /// ([`Sink::known_scores`]), whichever is higher; kept up to date as
    /// either rises, so that reading it costs no computation.
    floor: Option<f32>,
    /// The floor the threads of one search share, if there are several.
    shared: Option<&'a SharedFloor>,
}

impl<'a> TopDocsSink<'a> {
    /// A sink into a queue of `k` hits, counting as `tally` says.
    pub fn new(k: usize, tally: Tally) -> Self {
        TopDocsSink {
            top: TopDocs::new(k),
            base: 0,
            tally,
            scored: 0,
            floor: None,
            shared: None,
        }
    }

    /// The same, for one of the threads of a search that share `floor`:
    /// each raises it to its own queue's k-th score, and rejects what
    /// scores below the highest any of them has reached.
    pub fn sharing(k: usize, tally: Tally, floor: &'a SharedFloor) -> Self {
        TopDocsSink {
            shared: Some(floor),
            ..TopDocsSink::new(k, tally)
        }
    }

    /// `k` matches score at least `kth`, so what beats `floor` (`kth`, or
    /// the float below it) may enter: raises the floor, and tells the
    /// other threads.
    #[inline]
    fn raise(&mut self, kth: f32, floor: f32) {
        self.floor = Some(self.floor.map_or(floor, |f| f.max(floor)));
        if let Some(shared) = self.shared {
            shared.raise(kth);
        }
    }
}

/// The k-th best score that one of a search's threads has seen: `k`
/// matches score at least it. A match that scores less cannot enter the
/// results, whichever thread finds it; one that scores exactly as much
/// still may (by a lower document number than theirs), so the floor the
/// others take from it is the largest float below it.
#[derive(Debug, Default)]
pub struct SharedFloor(AtomicU32);

impl SharedFloor {
    /// Raises the shared score to `score` if that is higher. Scores are
    /// non-negative, and non-negative floats order as their bits; anything
    /// else is ignored.
    #[inline]
    pub fn raise(&self, score: f32) {
        if score > 0.0 && score.is_finite() {
            self.0.fetch_max(score.to_bits(), Ordering::Relaxed);
        }
    }

    /// The floor it gives: the largest float below the shared score
    /// (`None` before any thread has raised it).
    #[inline]
    pub fn floor(&self) -> Option<f32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            bits => Some(f32::from_bits(bits - 1)),
        }
    }
}

impl Sink for TopDocsSink<'_> {
    fn window(&mut self, _start: u32) -> Window {
        Window::Take(u32::MAX)
    }

    #[inline]
    fn prefilter(&self) -> bool {
        self.tally.may_skip()
    }

    fn counts_all(&self) -> bool {
        self.tally.counts_all()
    }

    fn filter(&self, _docs: &mut Vec<u32>) {}

    #[inline]
    fn dropped(&mut self, n: usize) {
        self.tally.dropped(n);
    }

    #[inline]
    fn count(&mut self, n: usize) {
        self.tally.count(n);
    }

    #[inline]
    fn offer(&mut self, doc: u32, mut score: impl FnMut() -> f32) {
        self.scored += 1;
        if self.top.offer(score(), self.base + doc)
            && let Some(kth) = self.top.floor()
        {
            // Documents come in ascending order: a tie with the queue's
            // k-th loses, so the floor is the k-th itself.
            self.raise(kth, kth);
        }
    }

    #[inline]
    fn floor(&self) -> Option<f32> {
        match (self.floor, self.shared.and_then(SharedFloor::floor)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// `k` documents scoring at least the `k`-th largest of `scores`, `s`,
    /// exist, and each beats anything scoring less, whatever the document
    /// numbers: the floor may rise to the largest float below `s` (a
    /// document scoring `s` itself may still be kept, by a lower number).
    #[inline]
    fn floor_ties(&self) -> u32 {
        match (self.floor(), self.top.kth()) {
            (Some(floor), Some((score, doc))) if score == floor => doc.saturating_sub(self.base),
            (Some(_), _) => 0,
            (None, _) => u32::MAX,
        }
    }

    fn known_scores(&mut self, keys: &mut [f32], score: impl Fn(f32) -> f32) {
        let k = self.top.capacity();
        if k == 0 || keys.len() < k {
            return;
        }
        let (_, &mut kth, _) = keys.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
        let kth = score(kth);
        if kth > 0.0 && kth.is_finite() {
            self.raise(kth, f32::from_bits(kth.to_bits() - 1));
        }
    }

    fn ranks_by_score(&self) -> bool {
        true
    }
}

/// The largest capacity [`TopDocs`] keeps as a sorted array rather than
/// a heap: an offer then moves every kept key by a min and a max, without
/// a branch on the keys, where a heap's sift takes a data-dependent turn
/// at each level (a mispredicted branch costs about as much as the whole
/// array's pass at this size).
const SORTED_CAPACITY: usize = 16;

/// A fixed-capacity queue of the best `(score, doc)` pairs, as packed
/// keys ([`pack`]; unique, as documents are): up to [`SORTED_CAPACITY`]
/// a sorted array, ascending; above it a binary min-heap. Either way the
/// worst kept key is at index 0.
#[derive(Clone, Debug)]
pub struct TopDocs {
    keys: Vec<u64>,
    capacity: usize,
}

impl TopDocs {
    /// A queue keeping the best `capacity` hits (room for up to
    /// `RESERVE_HITS` reserved up front).
    pub fn new(capacity: usize) -> TopDocs {
        TopDocs {
            keys: Vec::with_capacity(capacity.min(RESERVE_HITS)),
            capacity,
        }
    }

    /// Hits kept so far.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// How many hits it keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether the queue holds `capacity` hits.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.keys.len() == self.capacity
    }

    /// The worst kept hit's score when full: a new hit must score strictly
    /// more to enter (documents arrive in ascending order, and ties go to the
    /// lower doc number).
    #[inline]
    pub fn floor(&self) -> Option<f32> {
        if self.is_full() && self.capacity > 0 {
            Some(key_score((self.keys[0] >> 32) as u32))
        } else {
            None
        }
    }

    /// The worst kept hit, score and document, when full.
    #[inline]
    pub fn kth(&self) -> Option<(f32, u32)> {
        if self.is_full() && self.capacity > 0 {
            let key = self.keys[0];
            Some((key_score((key >> 32) as u32), u32::MAX - key as u32))
        } else {
            None
        }
    }

    /// Offers a hit; returns whether it was kept.
    #[inline]
    pub fn offer(&mut self, score: f32, doc: u32) -> bool {
        let key = pack(score, doc);
        if self.capacity <= SORTED_CAPACITY {
            return self.offer_sorted(key);
        }
        if self.keys.len() < self.capacity {
            self.keys.push(key);
            self.sift_up(self.keys.len() - 1);
            true
        } else if self.capacity > 0 && key > self.keys[0] {
            self.keys[0] = key;
            self.sift_down(0);
            true
        } else {
            false
        }
    }

    /// [`Self::offer`] into the sorted array. Below capacity, `key` is
    /// inserted: from the top down, each place takes the lesser of its key
    /// and the greater of `key` and the key below (the array grows by a
    /// sentinel above every key first). At capacity a key above the least
    /// replaces it: from the bottom up, each place takes the greater of
    /// its key and the lesser of `key` and the key above.
    #[inline]
    fn offer_sorted(&mut self, key: u64) -> bool {
        let h = &mut self.keys;
        let n = h.len();
        if n < self.capacity {
            h.push(u64::MAX);
            for i in (0..=n).rev() {
                let below = if i > 0 { h[i - 1] } else { 0 };
                h[i] = h[i].min(key.max(below));
            }
            true
        } else if n > 0 && key > h[0] {
            for i in 0..n {
                let above = if i + 1 < n { h[i + 1] } else { u64::MAX };
                h[i] = h[i].max(key.min(above));
            }
            true
        } else {
            false
        }
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let h = &mut self.keys;
        let x = h[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if h[p] <= x {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = x;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let h = &mut self.keys;
        let n = h.len();
        let x = h[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && h[r] < h[l] { r } else { l };
            if h[c] >= x {
                break;
            }
            h[i] = h[c];
            i = c;
        }
        h[i] = x;
    }

    /// The kept hits, best first, as `(score, doc)`.
    pub fn into_sorted(mut self) -> Vec<(f32, u32)> {
        self.keys.sort_unstable_by(|a, b| b.cmp(a));
        self.keys
            .into_iter()
            .map(|k| (key_score((k >> 32) as u32), u32::MAX - k as u32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn score_keys_preserve_order() {
        let v = [
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-30,
            1.0,
            1.0000001,
            f32::INFINITY,
        ];
        for w in v.windows(2) {
            assert!(score_key(w[0]) <= score_key(w[1]));
        }
        for x in v {
            assert_eq!(key_score(score_key(x)).to_bits(), x.to_bits());
        }
    }

    /// Known scores raise the floor to just below the k-th of them, so a
    /// document that ties it is still kept (by a lower number), and only
    /// once k of them are known.
    #[test]
    fn known_scores_raise_the_floor_below_the_kth() {
        let mut sink = TopDocsSink::new(2, Tally::new(u64::MAX));
        assert_eq!(sink.floor(), None);
        sink.known_scores(&mut [2.0], |s| s);
        assert_eq!(sink.floor(), None, "fewer than k known");
        sink.known_scores(&mut [1.0, 3.0, 2.0, 2.0], |s| s);
        let floor = sink.floor().unwrap();
        assert!(floor < 2.0 && f32::from_bits(floor.to_bits() + 1) == 2.0);
        // A weaker report never lowers it; the full queue's floor counts
        // once above it.
        sink.known_scores(&mut [0.5, 0.5], |s| s);
        assert_eq!(sink.floor(), Some(floor));
        sink.offer(0, || 5.0);
        sink.offer(1, || 4.0);
        assert_eq!(sink.floor(), Some(4.0));
        // Zero scores say nothing (every score is at least 0).
        let mut sink = TopDocsSink::new(1, Tally::new(u64::MAX));
        sink.known_scores(&mut [0.0], |s| s);
        assert_eq!(sink.floor(), None);
        // Keys are ranked, then the k-th is mapped to its score.
        let mut sink = TopDocsSink::new(2, Tally::new(u64::MAX));
        sink.known_scores(&mut [1.0, 4.0, 3.0], |key| key * 10.0);
        assert_eq!(sink.floor(), Some(f32::from_bits(30.0f32.to_bits() - 1)));
    }

    /// A tie with the floor may enter out of document order below the
    /// k-th kept document (in the segment's numbers) only when the floor
    /// is that document's score; under a floor from known scores, none.
    #[test]
    fn ties_with_the_floor_enter_below_the_kth_document_only() {
        let mut sink = TopDocsSink::new(2, Tally::new(u64::MAX));
        assert_eq!(sink.floor_ties(), u32::MAX, "no floor");
        sink.base = 100;
        sink.offer(40, || 3.0);
        sink.offer(7, || 2.0);
        assert_eq!(sink.top.kth(), Some((2.0, 107)));
        assert_eq!((sink.floor(), sink.floor_ties()), (Some(2.0), 7));
        // A tie by a lower number enters and becomes the k-th.
        sink.offer(5, || 2.0);
        assert_eq!((sink.floor(), sink.floor_ties()), (Some(2.0), 5));
        // The next segment's documents all come after it.
        sink.base = 200;
        assert_eq!(sink.floor_ties(), 0);
        // Known scores above the queue's: no tie with that floor enters.
        sink.known_scores(&mut [4.0, 4.0], |s| s);
        assert!(sink.floor() > Some(2.0));
        assert_eq!(sink.floor_ties(), 0);
    }

    /// Threads sharing a floor: one's k-th score floors the other just
    /// below it (a tie may still enter by a lower number), only once its
    /// queue is full, and never lower than the other's own floor.
    #[test]
    fn a_shared_floor_is_the_float_below_the_best_kth_score() {
        let shared = SharedFloor::default();
        let mut a = TopDocsSink::sharing(2, Tally::new(u64::MAX), &shared);
        let mut b = TopDocsSink::sharing(2, Tally::new(u64::MAX), &shared);
        a.offer(0, || 3.0);
        assert_eq!(b.floor(), None, "a's queue is not full");
        a.offer(1, || 2.0);
        let below_two = f32::from_bits(2.0f32.to_bits() - 1);
        assert_eq!(b.floor(), Some(below_two));
        assert_eq!(a.floor(), Some(2.0), "a's own floor is exclusive");
        // b's own, higher k-th wins for b, and raises a's floor.
        b.offer(5, || 4.0);
        b.offer(6, || 5.0);
        assert_eq!(b.floor(), Some(4.0));
        assert_eq!(a.floor(), Some(f32::from_bits(4.0f32.to_bits() - 1)));
        // Known scores are shared too; zero, infinite and NaN ones are not.
        let shared = SharedFloor::default();
        let mut c = TopDocsSink::sharing(1, Tally::new(u64::MAX), &shared);
        for bad in [0.0, f32::INFINITY, f32::NAN] {
            shared.raise(bad);
            assert_eq!(shared.floor(), None);
        }
        c.known_scores(&mut [1.5], |s| s);
        assert_eq!(shared.floor(), Some(f32::from_bits(1.5f32.to_bits() - 1)));
    }

    proptest! {
        #[test]
        fn agrees_with_sort_and_truncate(scores in proptest::collection::vec(0u8..20, 0..300), k in 0usize..40) {
            let mut q = TopDocs::new(k);
            for (doc, &s) in scores.iter().enumerate() {
                q.offer(f32::from(s) / 4.0, doc as u32);
            }
            let mut want: Vec<(f32, u32)> = scores.iter().enumerate().map(|(d, &s)| (f32::from(s) / 4.0, d as u32)).collect();
            want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            want.truncate(k);
            prop_assert_eq!(q.into_sorted(), want);
        }

        /// Out of document order too (a loop in bound order), with the
        /// floor and the k-th kept hit right after every offer, on both
        /// sides of the sorted array's capacity.
        #[test]
        fn keeps_the_best_in_any_order(
            scores in proptest::collection::vec(0u8..20, 0..200),
            seed in any::<u64>(),
            k in 0usize..(2 * SORTED_CAPACITY + 4),
        ) {
            let mut order: Vec<u32> = (0..scores.len() as u32).collect();
            // A Fisher-Yates shuffle from the seed (xorshift).
            let mut x = seed | 1;
            for i in (1..order.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut q = TopDocs::new(k);
            let mut seen: Vec<(f32, u32)> = Vec::new();
            for &doc in &order {
                let score = f32::from(scores[doc as usize]) / 4.0;
                q.offer(score, doc);
                seen.push((score, doc));
                seen.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                let kth = (k > 0 && seen.len() >= k).then(|| seen[k - 1]);
                prop_assert_eq!(q.kth(), kth);
                prop_assert_eq!(q.floor(), kth.map(|h| h.0));
            }
            seen.truncate(k);
            prop_assert_eq!(q.into_sorted(), seen);
        }
    }
}
