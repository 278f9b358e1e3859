//! The merge policy: which contiguous runs of segments to merge after a
//! commit, as a pure function of the segments' sizes.
//!
//! Documents are numbered in insertion order across the manifest's
//! segments, and score ties go to the lower number, so a merge may only
//! replace a contiguous run of the manifest by one segment placed where
//! the run was: the policy chooses windows of adjacent segments, never a
//! set scattered over the manifest.
//!
//! Sizes are live documents, raised to a floor (the writer's
//! `merge_floor_docs`, by default [`FLOOR_DOCS`]): every
//! segment smaller than the floor costs as much as one at the floor, so
//! runs of tiny segments (the last flush of each commit, segments that
//! lost most of their documents to deletes) are cheap to merge and always
//! get merged.
//!
//! **Segment budget.** With `f` the merge factor and `N` the total of the
//! (floored) sizes of the segments the policy may merge, the budget is
//! computed tier by tier as Lucene's TieredMergePolicy does: `f` segments
//! of the floor, `f` of `f` floors, `f` of `f²` floors, ..., and what is
//! left at the first tier that cannot fill `f` segments (at least `f` in
//! all). That is at most `f · (log_f(N / floor) + 2)` segments. While
//! there are more segments than the budget, the policy merges; it never
//! merges within the budget. So the segment count stays `O(f · log_f N)`,
//! plus the segments at or above half of the maximum merged size
//! (`max_docs`), which are left alone, and the segments being merged.
//!
//! **Choice of merge.** Over budget, the policy takes, among the windows
//! of 2 to `max(f, 3)` adjacent segments that are not being merged, below
//! half the maximum size and whose merge stays within it, a balanced one
//! if there is one: a window whose largest member holds at most 2/3 of
//! its total. Among balanced windows it takes the least skew (largest
//! member over total: `1/f` for `f` equal segments), then the smaller
//! total; when none is balanced, the smallest total (the cheapest merge,
//! so no large segment absorbs small ones one at a time while smaller
//! merges are possible); ties go to the left. It repeats on the manifest
//! as it would be after that merge until within the budget, so one call
//! can return several disjoint windows (they can run one after another
//! without choosing again). Windows of 3 are allowed with a factor of 2
//! because two segments are balanced only when about equal.
//!
//! **Write amplification.** A balanced merge puts each of its documents
//! in a segment at least 1.5 times larger than the one it was in (`f`
//! times for `f` equal segments). Through balanced merges a document is
//! therefore rewritten at most `log_1.5(N / floor) + 1` times, about
//! `1.71 log_2(N / floor) + 1`, and `O(log_f(N / floor))` times in the
//! steady state of similar flushes appended at the right end, which is
//! what an indexing run produces. Unbalanced merges happen only when no
//! balanced window exists over budget; the property tests below check
//! the bound `2 log_2(N / floor) + 2` rewrites over random sequences of
//! flushes of any sizes, odd ones included, for factors 2 to 11.
//! Deletes make segments smaller, and a segment whose live documents
//! fell is merged as a smaller one (that is how deleted documents are
//! reclaimed).

use std::ops::Range;

/// Segments below this many live documents count as this many, unless
/// the writer sets another floor (`WriterConfig::merge_floor_docs`).
pub(crate) const FLOOR_DOCS: u64 = 10_000;

/// The policy's parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policy {
    /// Segments per tier and most segments per merge (2 or more).
    pub factor: usize,
    /// The size below which segments count as this size.
    pub floor: u64,
    /// The largest merged segment, in live documents.
    pub max_docs: u64,
}

/// A segment as the policy sees it.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Range of the caller's segments it stands for (one, or a merge).
    span: (usize, usize),
    /// Live documents.
    size: u64,
    /// Being merged (or chosen for a merge by this call).
    busy: bool,
}

impl Policy {
    fn eff(&self, size: u64) -> u64 {
        size.max(self.floor).max(1)
    }

    /// The most segments one merge takes: the factor, but at least 3 (two
    /// segments are balanced only when about equal, and requiring that
    /// would let a large segment absorb small ones one at a time).
    fn widest(&self) -> usize {
        self.factor.max(3)
    }

    /// Whether a segment of `size` documents may take part in a merge.
    fn mergeable(&self, size: u64) -> bool {
        size < self.max_docs / 2
    }

    /// The segment budget for a total of `total` (floored) documents.
    pub(crate) fn budget(&self, total: u64) -> usize {
        let f = self.factor as u64;
        let (mut level, mut left, mut allowed) = (self.eff(0), total, 0u64);
        loop {
            let n = left.div_ceil(level);
            if n <= f || level >= self.max_docs / 2 {
                allowed += n;
                break;
            }
            allowed += f;
            left -= f * level;
            level = level.saturating_mul(f);
        }
        allowed.max(f) as usize
    }

    /// The windows to merge, given the live documents of each segment in
    /// manifest order and whether each is being merged: disjoint ranges
    /// of 2 to [`Policy::widest`] adjacent segments none of which is
    /// busy, in increasing order.
    pub(crate) fn choose(&self, sizes: &[u64], busy: &[bool]) -> Vec<Range<usize>> {
        debug_assert_eq!(sizes.len(), busy.len());
        let mut out = Vec::new();
        if self.factor < 2 {
            return out;
        }
        let mut slots: Vec<Slot> = sizes
            .iter()
            .zip(busy)
            .enumerate()
            .map(|(i, (&size, &busy))| Slot {
                span: (i, i + 1),
                size,
                busy,
            })
            .collect();
        loop {
            let eligible = |s: &Slot| !s.busy && self.mergeable(s.size);
            let (count, total) = slots
                .iter()
                .filter(|s| eligible(s))
                .fold((0usize, 0u64), |(c, t), s| (c + 1, t + self.eff(s.size)));
            if count <= self.budget(total) {
                break;
            }
            // (skew as a fraction largest/total, total, start, len)
            let mut best: Option<(u64, u64, usize, usize)> = None;
            for start in 0..slots.len() {
                let (mut largest, mut sum, mut docs) = (0u64, 0u64, 0u64);
                for len in 1..=self.widest().min(slots.len() - start) {
                    let s = &slots[start + len - 1];
                    if !eligible(s) {
                        break;
                    }
                    docs += s.size;
                    if docs > self.max_docs {
                        break;
                    }
                    largest = largest.max(self.eff(s.size));
                    sum += self.eff(s.size);
                    if len < 2 {
                        continue;
                    }
                    let better = match best {
                        None => true,
                        Some((bl, bs, _, _)) => {
                            // Balanced (largest at most half) first; among
                            // balanced ones the least skew (largest/sum,
                            // compared exactly), then the smaller total;
                            // among unbalanced ones the smaller total.
                            let (balanced, b_balanced) = (3 * largest <= 2 * sum, 3 * bl <= 2 * bs);
                            let (a, b) = (
                                u128::from(largest) * u128::from(bs),
                                u128::from(bl) * u128::from(sum),
                            );
                            match (balanced, b_balanced) {
                                (true, false) => true,
                                (false, true) => false,
                                (true, true) => a < b || (a == b && sum < bs),
                                (false, false) => sum < bs,
                            }
                        }
                    };
                    if better {
                        best = Some((largest, sum, start, len));
                    }
                }
            }
            let Some((_, _, start, len)) = best else {
                break;
            };
            let merged = Slot {
                span: (slots[start].span.0, slots[start + len - 1].span.1),
                size: slots[start..start + len].iter().map(|s| s.size).sum(),
                busy: true,
            };
            out.push(merged.span.0..merged.span.1);
            slots.splice(start..start + len, [merged]);
        }
        out.sort_by_key(|r| r.start);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy(factor: usize, floor: u64) -> Policy {
        Policy {
            factor,
            floor,
            max_docs: u64::from(u32::MAX),
        }
    }

    /// A simulated index: per segment, its size and the most times any of
    /// its documents was rewritten by a merge.
    #[derive(Default)]
    struct Sim {
        segs: Vec<(u64, u32)>,
    }

    impl Sim {
        /// Appends a flushed segment, then merges as a synchronous writer
        /// does (each chosen window, then choosing again, until none).
        fn flush(&mut self, p: &Policy, size: u64) {
            self.segs.push((size, 0));
            loop {
                let sizes: Vec<u64> = self.segs.iter().map(|s| s.0).collect();
                let windows = p.choose(&sizes, &vec![false; sizes.len()]);
                if windows.is_empty() {
                    return;
                }
                for w in windows.into_iter().rev() {
                    let size = self.segs[w.clone()].iter().map(|s| s.0).sum();
                    let rewrites = self.segs[w.clone()].iter().map(|s| s.1).max().unwrap() + 1;
                    self.segs.splice(w, [(size, rewrites)]);
                }
            }
        }

        fn total(&self) -> u64 {
            self.segs.iter().map(|s| s.0).sum()
        }
    }

    /// `log_f(n / floor)`, at least 0.
    fn tiers(n: u64, floor: u64, f: usize) -> f64 {
        ((n as f64 / floor as f64).max(1.0)).ln() / (f as f64).ln()
    }

    #[test]
    fn within_the_budget_nothing_is_merged() {
        let p = policy(10, 100);
        assert!(p.choose(&[5; 10], &[false; 10]).is_empty());
        assert!(p.choose(&[1000, 3, 1000, 3], &[false; 4]).is_empty());
        // Off with a factor below 2.
        assert!(policy(1, 100).choose(&[5; 50], &[false; 50]).is_empty());
    }

    #[test]
    fn an_odd_segment_does_not_block_merging() {
        // Runs of nine equal segments between tiny ones: the old size-class
        // policy found no ten adjacent segments of one class and merged
        // nothing, however many there were.
        let p = policy(10, 100);
        let mut sizes = Vec::new();
        for _ in 0..4 {
            sizes.extend([1000; 9]);
            sizes.push(1);
        }
        let w = p.choose(&sizes, &[false; 40]);
        assert!(!w.is_empty());
        // Equal segments, with or without a tiny one among them.
        assert!(w.iter().all(|r| r.len() >= 9), "{w:?}");
        let mut sim = Sim::default();
        for s in sizes {
            sim.flush(&p, s);
        }
        let total: u64 = sim.segs.iter().map(|s| p.eff(s.0)).sum();
        assert!(sim.segs.len() <= p.budget(total), "{:?}", sim.segs);
    }

    #[test]
    fn busy_segments_are_not_chosen() {
        let p = policy(4, 1);
        let sizes = [10; 12];
        let mut busy = [false; 12];
        for b in &mut busy[2..6] {
            *b = true;
        }
        for w in p.choose(&sizes, &busy) {
            assert!(w.clone().all(|i| !busy[i]), "{w:?}");
        }
    }

    #[test]
    fn equal_flushes_merge_factor_at_a_time() {
        let p = policy(10, 1);
        let mut sim = Sim::default();
        for _ in 0..1000 {
            sim.flush(&p, 1);
        }
        // Three tiers of at most ten segments, each document rewritten
        // about log_10(1000) = 3 times.
        assert!(sim.segs.len() <= 30, "{:?}", sim.segs);
        assert!(sim.segs.iter().all(|s| s.1 <= 4), "{:?}", sim.segs);
    }

    #[test]
    fn a_maximum_size_caps_merges() {
        let p = Policy {
            factor: 4,
            floor: 1,
            max_docs: 100,
        };
        let mut sim = Sim::default();
        for _ in 0..2000 {
            sim.flush(&p, 7);
        }
        assert!(sim.segs.iter().all(|s| s.0 <= 100));
        // Only what is below half the maximum counts against the budget.
        let small = sim.segs.iter().filter(|s| s.0 < 50).count();
        assert!(small <= p.budget(u64::MAX / 4).max(4 * 4), "{:?}", sim.segs);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the sizes and the busy segments: disjoint windows of
        /// 2 to max(f, 3) adjacent idle segments, in order.
        #[test]
        fn windows_are_contiguous_idle_and_disjoint(
            f in 2usize..12,
            segs in proptest::collection::vec((1u64..100_000, proptest::bool::weighted(0.2)), 0..80),
        ) {
            let p = policy(f, 1000);
            let sizes: Vec<u64> = segs.iter().map(|s| s.0).collect();
            let busy: Vec<bool> = segs.iter().map(|s| s.1).collect();
            let w = p.choose(&sizes, &busy);
            let mut end = 0;
            for r in &w {
                prop_assert!(r.start >= end && r.end <= sizes.len());
                prop_assert!((2..=f.max(3)).contains(&r.len()));
                prop_assert!(r.clone().all(|i| !busy[i]));
                end = r.end;
            }
        }

        /// Flushes of random sizes (odd ones included), merged as they
        /// come: the segment count stays within `f (log_f(N/floor) + 2)`
        /// and no document is rewritten more than `2 log_2(N/floor) + 2`
        /// times (the balanced bound is `log_1.5(N/floor) + 1`, about
        /// `1.71 log_2(N/floor) + 1`).
        #[test]
        fn segment_count_and_rewrites_stay_logarithmic(
            f in 2usize..12,
            floor in 1u64..2000,
            flushes in proptest::collection::vec(
                prop_oneof![8 => 1000u64..4000, 1 => 1u64..100, 1 => 1u64..40_000],
                1..400,
            ),
        ) {
            let p = policy(f, floor);
            let mut sim = Sim::default();
            for &n in &flushes {
                sim.flush(&p, n);
                let total: u64 = sim.segs.iter().map(|s| p.eff(s.0)).sum();
                let t = tiers(total, floor, f);
                prop_assert!(
                    sim.segs.len() as f64 <= f as f64 * (t + 2.0),
                    "{} segments for {} documents: {:?}", sim.segs.len(), sim.total(), sim.segs
                );
                let bound = 2.0 * (t * (f as f64).log2()) + 2.0;
                for s in &sim.segs {
                    prop_assert!(
                        f64::from(s.1) <= bound,
                        "rewritten {} times, bound {bound}: {:?}", s.1, sim.segs
                    );
                }
            }
        }
    }
}
