//! Exact per-candidate pruning: a candidate's check against the queue's
//! floor in one compare, decided exactly as evaluating its bound would.
//!
//! A candidate's best possible score is a sum, in clause order in f32, of
//! what is known of each scoring clause: the exact score of the clauses
//! already scored and the block bounds of the rest. Such a sum is monotone
//! non-decreasing in each of its terms (f32 addition is), so for one
//! unknown slot `p` (the lead clause's score) the set of values that cannot
//! beat the floor, `{p : bound(p) <= floor}`, is the non-negative floats up
//! to one limit. [`exclusive_limit`] finds that limit by a binary search
//! over f32 bit patterns, once per (floor, window bounds); a candidate is
//! then rejected when `p <= limit`, which holds exactly when `bound(p) <=
//! floor`. The floor is exclusive because ties go to the lower document,
//! which arrived first.
//!
//! No rounding margin is needed (DESIGN's f64 sum widened by `2(n-1)ε`
//! guards a bound summed in another order than the score): scores and
//! bounds are summed in the same clause order with the same f32
//! additions, and a sum of larger terms is never smaller.
//!
//! [`min_tf`] goes one step earlier: with the best (least) norm byte of the
//! lead's block, a score is monotone in the frequency alone, so every
//! frequency below a threshold scores at most the limit whatever the
//! document's length: such a candidate is rejected by an integer compare
//! before its norm is loaded. (A table of 64 frequency buckets over a
//! monotone function is this threshold.)

use crate::query::bm25::TermWeight;

/// The largest non-negative `x` with `bound(x) <= floor`, for a `bound`
/// monotone non-decreasing over the non-negative floats: `NEG_INFINITY`
/// when even `bound(0) > floor` (nothing can be rejected, as every score
/// is at least 0), `INFINITY` when `bound(INFINITY) <= floor`. A NaN floor
/// or bound rejects nothing.
pub fn exclusive_limit(floor: f32, bound: impl Fn(f32) -> f32) -> f32 {
    // The limit of a sum is usually within a few ULPs of `floor - rest`.
    exclusive_limit_near(floor, |rest| floor - rest, bound)
}

/// [`exclusive_limit`], its search started at `guess(bound(0))`, a value
/// expected near the limit (any value gives the same answer).
pub fn exclusive_limit_near(
    floor: f32,
    guess: impl Fn(f32) -> f32,
    bound: impl Fn(f32) -> f32,
) -> f32 {
    let fails = |x: f32| bound(x) <= floor;
    let rest = bound(0.0);
    if rest.is_nan() || floor.is_nan() || rest > floor {
        return f32::NEG_INFINITY;
    }
    if fails(f32::INFINITY) {
        return f32::INFINITY;
    }
    // Non-negative floats order as their bit patterns.
    let hint = guess(rest);
    let hint = if hint.is_nan() {
        0.0
    } else {
        hint.clamp(0.0, f32::MAX)
    };
    let bits = last_failing(0, f32::INFINITY.to_bits(), hint.to_bits(), |b| {
        fails(f32::from_bits(b))
    });
    f32::from_bits(bits)
}

/// The least term frequency whose score, by `score` (monotone
/// non-decreasing in the frequency), is above `limit`; `u32::MAX` when
/// none is. Every frequency below it scores at most `limit`.
pub fn min_tf(limit: f32, score: impl Fn(u32) -> f32) -> u32 {
    let fails = |tf: u32| score(tf) <= limit;
    if !fails(1) {
        return 1;
    }
    if fails(u32::MAX) {
        return u32::MAX;
    }
    // Thresholds are small: gallop up from 1.
    last_failing(1, u32::MAX, 1, fails) + 1
}

/// The largest key (the part of a term's score that depends on the
/// document, [`TermWeight::key`]) whose score is at most `limit`: a
/// candidate whose key is at or under it cannot beat `limit`, decided
/// without a division (the score is monotone in the key).
/// `NEG_INFINITY` when every key beats it.
pub fn key_limit(limit: f32, w: &TermWeight) -> f32 {
    // w - w / (1 + x) = p at x = p / (w - p): the search starts there.
    exclusive_limit_near(limit, |_| limit / (w.weight - limit), |x| w.score_of_key(x))
}

/// The largest key of the clause at `slot`, weighted `w`, at which its
/// score summed in clause order with the other entries of `bounds` cannot
/// beat `floor`: [`key_limit`] of the [`exclusive_limit`] of that sum.
/// (One search over keys, the score summed for each probe, gives the same
/// limit and was measured no cheaper: a division a probe.)
/// `NEG_INFINITY` when every key beats it.
pub fn slot_key_limit(floor: f32, bounds: &[f32], slot: usize, w: &TermWeight) -> f32 {
    key_limit(exclusive_limit(floor, |p| sum_with(bounds, slot, p)), w)
}

/// The least term frequency whose key `tf * inv` (in f32, as
/// [`TermWeight::key`] computes it) is above `key_limit`; `u32::MAX` when
/// none is. With `inv` the factor of a block's least norm, every
/// frequency below it is at most the key limit at every norm of the
/// block. [`min_tf`] with a multiplication for a predicate.
pub fn min_tf_of_key(key_limit: f32, inv: f32) -> u32 {
    min_tf(key_limit, |tf| tf as f32 * inv)
}

/// The largest `x` in `lo..hi` for which `fails(x)` holds, where `fails`
/// is true up to some point and false after it, `fails(lo)` holds and
/// `fails(hi)` does not: galloping away from `hint` until the boundary is
/// bracketed, then bisection.
fn last_failing(mut lo: u32, mut hi: u32, hint: u32, fails: impl Fn(u32) -> bool) -> u32 {
    debug_assert!(lo < hi);
    let h = hint.clamp(lo, hi);
    let mut step = 1u32;
    if h < hi && fails(h) {
        lo = h;
        while hi - lo > 1 {
            let c = lo + step.min(hi - lo - 1);
            if fails(c) {
                lo = c;
                step = step.saturating_mul(2);
            } else {
                hi = c;
                break;
            }
        }
    } else if h > lo {
        hi = h;
        while hi - lo > 1 {
            let c = hi - step.min(hi - lo - 1);
            if fails(c) {
                lo = c;
                break;
            }
            hi = c;
            step = step.saturating_mul(2);
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fails(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The clause-order f32 sum of `bounds` with `slot`'s entry replaced by
/// `p`: the best score of a candidate whose clause `slot` scores `p`.
#[inline]
pub fn sum_with(bounds: &[f32], slot: usize, p: f32) -> f32 {
    bounds
        .iter()
        .enumerate()
        .fold(0.0f32, |s, (i, &b)| s + if i == slot { p } else { b })
}

/// The cached key limit and frequency threshold of one lead clause,
/// each keyed on exactly its own inputs, so a floor that rises in the
/// middle of a window (or becomes known there) is never checked against a
/// stale one.
#[derive(Clone, Debug, Default)]
pub struct LeadPrune {
    /// (floor bits, window number) the key limit was last asked for, and
    /// (floor bits, slot) it was computed for. A lone clause's limit
    /// depends on the floor alone, so its next window keeps it; with other
    /// clauses, whose bounds change from window to window, each window
    /// computes its own (comparing their bounds to the last window's cost
    /// seq-2/3/5 AND exact 0.6 % more instructions for 1.3 % fewer in
    /// seq-2 AND lower-bound).
    key_key: Option<(u32, u64)>,
    key_inputs: Option<(u32, usize)>,
    key_limit: f32,
    /// (key limit bits, least norm byte) the threshold was computed for.
    tf_key: Option<(u32, u8)>,
    min_tf: u32,
}

impl LeadPrune {
    /// [`slot_key_limit`] for `floor` in window `window`, whose clause
    /// bounds (in clause order, the lead's slot included) `bounds` gives,
    /// for the lead weighted `w`.
    #[inline]
    pub fn key_limit(
        &mut self,
        floor: f32,
        window: u64,
        slot: usize,
        bounds: &[f32],
        w: &TermWeight,
    ) -> f32 {
        let key = (floor.to_bits(), window);
        if self.key_key != Some(key) {
            self.key_key = Some(key);
            let inputs = (floor.to_bits(), slot);
            if bounds.len() != 1 || self.key_inputs != Some(inputs) {
                self.key_limit = slot_key_limit(floor, bounds, slot, w);
                self.key_inputs = Some(inputs);
            }
        }
        self.key_limit
    }

    /// [`min_tf_of_key`] for `key_limit` (from [`Self::key_limit`]) at
    /// the block's least norm byte.
    #[inline]
    pub fn min_tf(&mut self, key_limit: f32, min_norm: u8, w: &TermWeight) -> u32 {
        let key = (key_limit.to_bits(), min_norm);
        if self.tf_key != Some(key) {
            self.min_tf = min_tf_of_key(key_limit, w.key(1, min_norm));
            self.tf_key = Some(key);
        }
        self.min_tf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Floats near `x`: a few ULPs either side.
    fn around(x: f32) -> Vec<f32> {
        if !x.is_finite() {
            return vec![x, f32::MAX, 0.0];
        }
        let b = x.to_bits() as i64;
        (-3i64..=3)
            .map(|d| (b + d).clamp(0, i64::from(f32::INFINITY.to_bits())))
            .map(|b| f32::from_bits(b as u32))
            .collect()
    }

    fn bound_of() -> impl Strategy<Value = f32> {
        prop_oneof![
            8 => 0.0f32..30.0,
            1 => Just(0.0f32),
            1 => Just(f32::INFINITY),
            1 => (1u32..1 << 20).prop_map(|b| f32::from_bits(0x3f80_0000 + b)),
        ]
    }

    proptest! {
        /// `p <= limit` decides exactly as `bound(p) <= floor`, for values
        /// at the boundary (a few ULPs either side of the limit and of the
        /// floor's share), random values, and non-finite floors and bounds.
        #[test]
        fn the_limit_decides_as_the_bound(
            bounds in proptest::collection::vec(bound_of(), 1..9),
            slot_pick in 0usize..8,
            floor in prop_oneof![8 => 0.0f32..60.0, 1 => Just(f32::INFINITY), 1 => Just(f32::NAN), 1 => Just(0.0f32)],
            extra in proptest::collection::vec(0.0f32..40.0, 8),
        ) {
            let slot = slot_pick % bounds.len();
            let limit = exclusive_limit(floor, |p| sum_with(&bounds, slot, p));
            let rest: f32 = bounds.iter().enumerate().filter(|&(i, _)| i != slot).map(|(_, &b)| b).sum();
            let mut probes = around(limit);
            probes.extend(around((floor - rest).max(0.0)));
            probes.extend(extra);
            probes.extend([0.0, f32::INFINITY, f32::MIN_POSITIVE]);
            for p in probes.into_iter().filter(|p| *p >= 0.0) {
                let exact = sum_with(&bounds, slot, p) <= floor;
                prop_assert_eq!(p <= limit, exact, "p {} limit {} floor {} bounds {:?} slot {}", p, limit, floor, bounds, slot);
            }
        }

        /// Frequencies below the threshold score at most the limit at the
        /// block's least norm, and so at every norm of the block; the
        /// threshold itself scores above it.
        #[test]
        fn the_frequency_threshold_is_exact(
            df in 1u64..5000,
            limit_at in 0.0f32..1.2,
            min_norm in 0u8..=255,
        ) {
            let w = TermWeight::new(10_000, df, 3_000_000, true);
            let limit = limit_at * w.weight;
            let t = min_tf(limit, |tf| w.score(tf, min_norm));
            if t > 1 {
                prop_assert!(w.score(t - 1, min_norm) <= limit);
                for norm in min_norm..=255 {
                    prop_assert!(w.score(t - 1, norm) <= limit);
                }
            }
            if t < u32::MAX {
                prop_assert!(w.score(t, min_norm) > limit);
            }
        }

        /// A key above the key limit is exactly a score above the limit:
        /// keys a few ULPs either side of the key limit, of the keys whose
        /// score is the limit, and random documents' keys, for limits
        /// around real scores, negative, zero, infinite and NaN.
        #[test]
        fn the_key_limit_decides_as_the_score(
            df in 1u64..5000,
            limit in prop_oneof![8 => -0.5f32..14.0, 1 => Just(0.0f32), 1 => Just(f32::INFINITY), 1 => Just(f32::NEG_INFINITY), 1 => Just(f32::NAN)],
            docs in proptest::collection::vec((1u32..300, any::<u8>()), 8),
            guess_off in -5.0f32..5.0,
        ) {
            let w = TermWeight::new(10_000, df, 3_000_000, true);
            let kl = key_limit(limit, &w);
            // Any start of the search gives the same limit.
            let guess = |_: f32| limit / (w.weight - limit) + guess_off;
            let elsewhere = exclusive_limit_near(limit, guess, |x| w.score_of_key(x));
            prop_assert_eq!(elsewhere.to_bits(), kl.to_bits());
            let mut keys: Vec<f32> = docs.iter().map(|&(tf, n)| w.key(tf, n)).collect();
            keys.extend(around(kl.max(0.0)));
            keys.extend(around((limit / (w.weight - limit)).max(0.0)));
            if limit.is_nan() {
                // As a NaN floor: nothing is rejected.
                prop_assert_eq!(kl, f32::NEG_INFINITY);
                return Ok(());
            }
            for x in keys {
                prop_assert_eq!(x > kl, w.score_of_key(x) > limit, "key {} limit {} key limit {}", x, limit, kl);
            }
        }
    }

    proptest! {
        /// The galloping search finds the boundary from any hint.
        #[test]
        fn the_boundary_is_found_from_any_hint(lo in 0u32..1000, width in 1u32..100_000, at in 0u32..100_000, hint in 0u32..200_000) {
            let hi = lo + width;
            let boundary = lo + at % width;
            let got = last_failing(lo, hi, hint, |x| x <= boundary);
            prop_assert_eq!(got, boundary);
        }
    }

    proptest! {
        /// A key above a slot's key limit is exactly a key whose score,
        /// summed with the other bounds, beats the floor (keys a few ULPs
        /// either side of the limit and random documents' keys), and the
        /// key-based frequency threshold is the score-based one.
        #[test]
        fn the_slot_key_limit_decides_as_the_sum(
            df in 1u64..5000,
            bounds in proptest::collection::vec(bound_of(), 1..6),
            slot_pick in 0usize..6,
            floor in prop_oneof![8 => 0.0f32..40.0, 1 => Just(0.0f32), 1 => Just(f32::INFINITY), 1 => Just(f32::NAN)],
            min_norm in any::<u8>(),
            docs in proptest::collection::vec((1u32..300, any::<u8>()), 8),
        ) {
            let w = TermWeight::new(10_000, df, 3_000_000, true);
            let slot = slot_pick % bounds.len();
            let kl = slot_key_limit(floor, &bounds, slot, &w);
            if floor.is_nan() {
                prop_assert_eq!(kl, f32::NEG_INFINITY);
                return Ok(());
            }
            let mut keys: Vec<f32> = docs.iter().map(|&(tf, n)| w.key(tf, n)).collect();
            keys.extend(around(kl.max(0.0)));
            for x in keys {
                let beats = sum_with(&bounds, slot, w.score_of_key(x)) > floor;
                prop_assert_eq!(x > kl, beats, "key {} floor {} key limit {}", x, floor, kl);
            }
            let limit = exclusive_limit(floor, |p| sum_with(&bounds, slot, p));
            let by_score = min_tf(limit, |tf| w.score(tf, min_norm));
            prop_assert_eq!(min_tf_of_key(kl, w.key(1, min_norm)), by_score);
        }
    }

    /// A limit keyed on the floor: a floor that becomes larger in the
    /// middle of a window gives a new limit and a new threshold, never the
    /// stale ones.
    #[test]
    fn a_floor_rising_mid_window_rebuilds_both() {
        let w = TermWeight::new(10_000, 300, 3_000_000, true);
        let bounds = [w.weight, 1.5];
        let mut prune = LeadPrune::default();
        let k0 = prune.key_limit(0.0, 7, 0, &bounds, &w);
        let t0 = prune.min_tf(k0, 20, &w);
        assert_eq!(
            k0,
            f32::NEG_INFINITY,
            "a zero floor with a positive bound rejects nothing"
        );
        assert_eq!(t0, 1);
        let floor = 1.5 + w.score(2, 20);
        let k1 = prune.key_limit(floor, 7, 0, &bounds, &w);
        let t1 = prune.min_tf(k1, 20, &w);
        assert!(k1 > 0.0 && t1 > 2, "key limit {k1} threshold {t1}");
        assert!(w.score(t1 - 1, 20) + 1.5 <= floor);
        // Same floor, same window: cached; another window recomputes.
        assert_eq!(
            prune.key_limit(floor, 7, 0, &bounds, &w).to_bits(),
            k1.to_bits()
        );
        let wider = [w.weight, 3.0];
        let k2 = prune.key_limit(floor, 8, 0, &wider, &w);
        assert!(k2 < k1);
        // A window whose bounds are the first one's again gets its limit
        // back, and another slot its own.
        assert_eq!(
            prune.key_limit(floor, 9, 0, &bounds, &w).to_bits(),
            k1.to_bits()
        );
        let other = prune.key_limit(floor, 10, 1, &[1.5, w.weight], &w);
        assert_eq!(
            other.to_bits(),
            slot_key_limit(floor, &[1.5, w.weight], 1, &w).to_bits()
        );
        // A lone clause keeps its limit from window to window while the
        // floor stays, and gets a new one when it rises.
        let lone = [w.weight];
        let l1 = prune.key_limit(1.0, 11, 0, &lone, &w);
        assert_eq!(
            prune.key_limit(1.0, 12, 0, &lone, &w).to_bits(),
            l1.to_bits()
        );
        let l2 = prune.key_limit(2.0, 13, 0, &lone, &w);
        assert!(l2 > l1);
        assert_eq!(l2.to_bits(), key_limit(2.0, &w).to_bits());
    }
}
