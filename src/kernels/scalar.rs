//! Portable scalar kernels. Always compiled, always tested; the reference the
//! SIMD kernels are checked against and the fallback on every other CPU.

use super::Frontier;
use super::generic::{self, Primitives};

/// Marker type plugging the scalar leaf kernels into the shared algorithms of
/// `generic` (galloping, routing, 3-way and n-way intersection).
pub(super) struct Scalar;

impl Primitives for Scalar {
    #[inline(always)]
    unsafe fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
        find_next_geq(docs, from, target)
    }

    #[inline(always)]
    unsafe fn seek(docs: &[u32], from: usize, target: u32) -> (usize, bool) {
        let i = find_next_geq(docs, from, target);
        (i, i < docs.len() && docs[i] == target)
    }

    #[inline(always)]
    unsafe fn intersect_merge(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
        merge_into(a, b, out)
    }
}

/// Scalar `find_next_geq` (contract of [`super::find_next_geq`]).
///
/// Skips whole 32- then 8-element groups whose last element is below
/// `target`, then scans linearly inside the group that holds the answer. This
/// mirrors the look-ahead of the SIMD version; see the measurements on
/// `generic::find_next_geq` for why a grouped scan beats binary search here.
pub(super) fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
    const GROUP: usize = generic::LANES;
    let n = docs.len();
    let mut i = from;
    if i >= n {
        return n;
    }
    while i + generic::SKIP <= n && docs[i + generic::SKIP - 1] < target {
        i += generic::SKIP;
    }
    while i + GROUP <= n && docs[i + GROUP - 1] < target {
        i += GROUP;
    }
    while i < n && docs[i] < target {
        i += 1;
    }
    i
}

/// Branch-free scalar merge: appends `a ∩ b` to `out`.
///
/// Each step writes the current candidate unconditionally and advances the
/// output cursor by `(x == y)`, so the only branch is the loop condition.
pub(super) fn merge_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    let start = out.len();
    let room = a.len().min(b.len());
    if room == 0 {
        return;
    }
    out.resize(start + room, 0);
    let buf = &mut out[start..];
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        // `k` only grows together with both `i` and `j`, so `k < room` here.
        buf[k] = x;
        k += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.truncate(start + k);
}

/// Scalar 2-way intersection: merge, or galloping at >= 32x skew.
pub(super) fn intersect_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    // SAFETY: the scalar primitives need no instruction-set extension.
    unsafe { generic::intersect2::<Scalar>(a, b, out) }
}

/// Scalar 3-way intersection.
pub(super) fn intersect3_into(a: &[u32], b: &[u32], c: &[u32], out: &mut Vec<u32>) {
    // SAFETY: the scalar primitives need no instruction-set extension.
    unsafe { generic::intersect3::<Scalar>(a, b, c, out) }
}

/// Scalar n-way intersection.
pub(super) fn intersect_many_into(lists: &[&[u32]], out: &mut Vec<u32>) {
    // SAFETY: the scalar primitives need no instruction-set extension.
    unsafe { generic::intersect_many::<Scalar>(lists, out) }
}

/// Scalar positions of keys at or above a threshold (contract of
/// [`super::positions_ge`]).
pub(super) fn positions_ge(keys: &[u32], threshold: u32, out: &mut Vec<u32>) {
    out.extend(
        keys.iter()
            .enumerate()
            .filter(|&(_, &k)| k >= threshold)
            .map(|(i, _)| i as u32),
    );
}

/// Scalar prefix sums of gaps stored minus one (contract of
/// [`super::strict_prefix_sum`]).
pub(super) fn strict_prefix_sum(vals: &mut [u32], base: u32) {
    let mut last = base;
    for v in vals {
        last = last.wrapping_add(*v).wrapping_add(1);
        *v = last;
    }
}

/// Bits set in `words` (contract of [`super::popcount`]); always inlined
/// so that the AVX2 build compiles it with `popcnt`.
#[inline(always)]
pub(super) fn popcount(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// Scalar best key of a block's impact pairs (contract of
/// [`super::best_impact`]).
pub(super) fn best_impact(
    pairs: &[u8; 16],
    count: usize,
    factors: &[f32; 256],
) -> Option<(f32, u8)> {
    if count == 0 || count > 8 {
        return None;
    }
    let (mut best, mut least, mut high) = (f32::NEG_INFINITY, u8::MAX, 0u8);
    for p in pairs[..2 * count].chunks_exact(2) {
        high |= p[0];
        let key = f32::from(p[0]) * factors[usize::from(p[1])];
        best = if key > best { key } else { best };
        least = least.min(p[1]);
    }
    (high < 0x80).then_some((best, least))
}

/// Scalar reading of a block's impact pairs as lanes (contract of
/// [`super::frontier`]).
pub(super) fn frontier(pairs: &[u8; 16], count: usize, factors: &[f32; 256]) -> Option<Frontier> {
    if count == 0 || count > 8 {
        return None;
    }
    let mut f = Frontier::EMPTY;
    for (i, p) in pairs[..2 * count].chunks_exact(2).enumerate() {
        if p[0] >= 0x80 {
            return None;
        }
        f.set(i, u32::from(p[0]), p[1], factors[usize::from(p[1])]);
    }
    Some(f)
}

/// Scalar joint bound of two clauses' blocks (contract of
/// [`super::joint_bound`]): per lane of each side, the other side's best
/// frequency under its norm, both scores and the clause-order sum.
pub(super) fn joint_bound(
    (x, wx): (&Frontier, f32),
    (y, wy): (&Frontier, f32),
    bounds: &[f32],
    (sx, sy): (usize, usize),
) -> f32 {
    let score = |w: f32, tf: f32, factor: f32| w - w / (1.0 + tf * factor);
    let best_tf = |q: &Frontier, at: i32, strict: bool| {
        (q.tf.iter().zip(&q.norm))
            .filter(|&(_, &n)| if strict { n < at } else { n <= at })
            .fold(0.0f32, |t, (&tf, _)| t.max(tf))
    };
    let sum = |at_x: f32, at_y: f32| {
        bounds.iter().enumerate().fold(0.0f32, |s, (k, &c)| {
            s + if k == sx {
                at_x
            } else if k == sy {
                at_y
            } else {
                c
            }
        })
    };
    let mut best = f32::NEG_INFINITY;
    for l in 0..8 {
        let t = best_tf(y, x.norm[l], false);
        if t > 0.0 {
            let f = x.factor[l];
            best = best.max(sum(score(wx, x.tf[l], f), score(wy, t, f)));
        }
        let t = best_tf(x, y.norm[l], true);
        if t > 0.0 {
            let f = y.factor[l];
            best = best.max(sum(score(wx, t, f), score(wy, y.tf[l], f)));
        }
    }
    best
}

/// Scalar selection of documents by score key (contract of
/// [`super::keys_above`]).
pub(super) fn keys_above(
    docs: &[u32],
    tfs: &[u32],
    norms: &[u8],
    factors: &[f32; 256],
    (limit, min_tf): (f32, u32),
    out: &mut Vec<u32>,
) {
    for (&d, &tf) in docs.iter().zip(tfs) {
        if tf >= min_tf && tf as f32 * factors[usize::from(norms[d as usize])] > limit {
            out.push(d);
        }
    }
}
