//! AVX2 instantiations of the generic kernels (`x86_64` only).
//!
//! This file only contains the `__m256i` implementation of
//! [`Vector`](super::generic::Vector) and one
//! `#[target_feature(enable = "avx2,popcnt")]` entry point per kernel; the
//! algorithms themselves live in `generic.rs`, except the eight fixed
//! lanes of [`best_impact`], [`frontier`], [`joint_bound`] and
//! [`keys_above`], which have none to share. (POPCNT counts a compressed
//! store's lanes; every AVX2 CPU has it, but it is detected all the same.)
//! The entry points are `unsafe fn`s: they may only be called once
//! `is_x86_feature_detected!` returned true for `avx2` and `popcnt`, which
//! `Kernels::avx2` guarantees before storing them.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_castsi256_ps, _mm256_cmpeq_epi32,
    _mm256_cmpgt_epi32, _mm256_loadu_si256, _mm256_movemask_ps, _mm256_or_si256,
    _mm256_permute2x128_si256, _mm256_permutevar8x32_epi32, _mm256_set1_epi32, _mm256_setr_epi32,
    _mm256_shuffle_epi32, _mm256_slli_si256, _mm256_srlv_epi32, _mm256_storeu_si256,
    _mm256_xor_si256,
};

use super::Frontier;
use super::generic::{self, COMPRESS_NIBBLES, Primitives, Vector};

/// XOR-ing both operands with this bias maps unsigned order onto signed order,
/// so the signed `_mm256_cmpgt_epi32` compares the full `u32` range correctly.
const SIGN_BIAS: i32 = i32::MIN; // 0x8000_0000

impl Vector for __m256i {
    #[inline(always)]
    unsafe fn load_unaligned(ptr: *const u32) -> Self {
        // SAFETY: the caller guarantees AVX2 and that `ptr` is valid for
        // reading 8 u32s (32 bytes); `loadu` has no alignment requirement.
        unsafe { _mm256_loadu_si256(ptr.cast::<__m256i>()) }
    }

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: the caller guarantees AVX2. (`as i32` is a bit-cast.)
        unsafe { _mm256_set1_epi32(x as i32) }
    }

    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        // SAFETY: the caller guarantees AVX2; this intrinsic touches no memory.
        unsafe { _mm256_add_epi32(self, other) }
    }

    #[inline(always)]
    unsafe fn prefix_sum(self) -> Self {
        // SAFETY: the caller guarantees AVX2; these intrinsics touch no memory.
        unsafe {
            // Within each 128-bit half: add the lanes shifted by one, then
            // by two (a byte shift per half).
            let x = _mm256_add_epi32(self, _mm256_slli_si256::<4>(self));
            let x = _mm256_add_epi32(x, _mm256_slli_si256::<8>(x));
            // The low half's total (its lane 3) into every lane of the high
            // half: broadcast it within the low half, then move the low half
            // up with zeros below.
            let low_total = _mm256_shuffle_epi32::<0xFF>(x);
            _mm256_add_epi32(x, _mm256_permute2x128_si256::<0x08>(low_total, low_total))
        }
    }

    #[inline(always)]
    unsafe fn broadcast_last(self) -> Self {
        // SAFETY: the caller guarantees AVX2; these intrinsics touch no memory.
        unsafe { _mm256_permutevar8x32_epi32(self, _mm256_set1_epi32(7)) }
    }

    #[inline(always)]
    unsafe fn store_unaligned(self, ptr: *mut u32) {
        // SAFETY: the caller guarantees AVX2 and that `ptr` is valid for
        // writing 8 u32s (32 bytes); `storeu` has no alignment requirement.
        unsafe { _mm256_storeu_si256(ptr.cast::<__m256i>(), self) }
    }

    #[inline(always)]
    unsafe fn ge_mask(self, threshold: Self) -> u32 {
        // SAFETY: the caller guarantees AVX2; these intrinsics touch no memory.
        unsafe {
            let bias = _mm256_set1_epi32(SIGN_BIAS);
            let x = _mm256_xor_si256(self, bias);
            let t = _mm256_xor_si256(threshold, bias);
            // lanes where t > x, i.e. x < target; invert for x >= target.
            let lt = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(t, x)));
            !(lt as u32) & 0xFF
        }
    }

    #[inline(always)]
    unsafe fn eq_mask(self, other: Self) -> u32 {
        // SAFETY: the caller guarantees AVX2; these intrinsics touch no memory.
        unsafe { _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(self, other))) as u32 }
    }

    #[inline(always)]
    unsafe fn eq_any_mask(self, other: Self) -> u32 {
        // SAFETY: the caller guarantees AVX2; these intrinsics touch no memory.
        unsafe {
            // All 8 rotations of `other`: 4 in-lane rotations of it and of its
            // 128-bit-halves-swapped copy (1 cross-lane permute in total).
            let swapped = _mm256_permute2x128_si256::<0x01>(other, other);
            let e0 = _mm256_cmpeq_epi32(self, other);
            let e1 = _mm256_cmpeq_epi32(self, _mm256_shuffle_epi32::<0x39>(other));
            let e2 = _mm256_cmpeq_epi32(self, _mm256_shuffle_epi32::<0x4E>(other));
            let e3 = _mm256_cmpeq_epi32(self, _mm256_shuffle_epi32::<0x93>(other));
            let e4 = _mm256_cmpeq_epi32(self, swapped);
            let e5 = _mm256_cmpeq_epi32(self, _mm256_shuffle_epi32::<0x39>(swapped));
            let e6 = _mm256_cmpeq_epi32(self, _mm256_shuffle_epi32::<0x4E>(swapped));
            let e7 = _mm256_cmpeq_epi32(self, _mm256_shuffle_epi32::<0x93>(swapped));
            let any = _mm256_or_si256(
                _mm256_or_si256(_mm256_or_si256(e0, e1), _mm256_or_si256(e2, e3)),
                _mm256_or_si256(_mm256_or_si256(e4, e5), _mm256_or_si256(e6, e7)),
            );
            _mm256_movemask_ps(_mm256_castsi256_ps(any)) as u32
        }
    }

    #[inline(always)]
    unsafe fn store_compressed(self, mask: u32, dst: *mut u32) -> usize {
        // SAFETY: the caller guarantees AVX2, `mask < 256` (so the table index
        // is in bounds) and that `dst` is valid for writing 8 u32s (32 bytes);
        // `storeu` has no alignment requirement.
        unsafe {
            let packed = COMPRESS_NIBBLES[mask as usize];
            let shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
            let idx = _mm256_and_si256(
                _mm256_srlv_epi32(_mm256_set1_epi32(packed as i32), shifts),
                _mm256_set1_epi32(7),
            );
            let compressed = _mm256_permutevar8x32_epi32(self, idx);
            _mm256_storeu_si256(dst.cast::<__m256i>(), compressed);
        }
        mask.count_ones() as usize
    }
}

/// Marker type plugging the AVX2 leaf kernels into the shared algorithms.
struct Avx2;

impl Primitives for Avx2 {
    #[inline(always)]
    unsafe fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
        // SAFETY: the caller guarantees AVX2, the only requirement of the
        // `__m256i` instantiation.
        unsafe { generic::find_next_geq::<__m256i>(docs, from, target) }
    }

    #[inline(always)]
    unsafe fn seek(docs: &[u32], from: usize, target: u32) -> (usize, bool) {
        // SAFETY: the caller guarantees AVX2, the only requirement of the
        // `__m256i` instantiation.
        unsafe { generic::seek::<__m256i>(docs, from, target) }
    }

    #[inline(always)]
    unsafe fn intersect_merge(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
        // SAFETY: the caller guarantees AVX2, the only requirement of the
        // `__m256i` instantiation.
        unsafe { generic::intersect_blocks::<__m256i>(a, b, out) }
    }
}

/// AVX2 `find_next_geq` (contract of [`super::find_next_geq`]).
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
    // SAFETY: AVX2 and POPCNT are available per this function's contract.
    unsafe { <Avx2 as Primitives>::find_next_geq(docs, from, target) }
}

/// AVX2 2-way intersection (contract of [`super::intersect_into`]).
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn intersect_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    // SAFETY: AVX2 and POPCNT are available per this function's contract.
    unsafe { generic::intersect2::<Avx2>(a, b, out) }
}

/// AVX2 3-way intersection (contract of [`super::intersect3_into`]).
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn intersect3_into(a: &[u32], b: &[u32], c: &[u32], out: &mut Vec<u32>) {
    // SAFETY: AVX2 and POPCNT are available per this function's contract.
    unsafe { generic::intersect3::<Avx2>(a, b, c, out) }
}

/// AVX2 n-way intersection (contract of [`super::intersect_many_into`]).
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn intersect_many_into(lists: &[&[u32]], out: &mut Vec<u32>) {
    // SAFETY: AVX2 and POPCNT are available per this function's contract.
    unsafe { generic::intersect_many::<Avx2>(lists, out) }
}

/// AVX2 positions of keys at or above a threshold (contract of
/// [`super::positions_ge`]).
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn positions_ge(keys: &[u32], threshold: u32, out: &mut Vec<u32>) {
    // SAFETY: AVX2 and POPCNT are available per this function's contract.
    unsafe { generic::positions_ge::<__m256i>(keys, threshold, out) }
}

/// AVX2 prefix sums of gaps stored minus one (contract of
/// [`super::strict_prefix_sum`]).
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn strict_prefix_sum(vals: &mut [u32], base: u32) {
    // SAFETY: AVX2 and POPCNT are available per this function's contract.
    unsafe { generic::strict_prefix_sum::<__m256i>(vals, base) }
}

/// Bits set in `words` (contract of [`super::popcount`]): the scalar
/// loop, compiled with `popcnt`.
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn popcount(words: &[u64]) -> u64 {
    super::scalar::popcount(words)
}

/// The 16 bytes of eight two-byte impact pairs `(tf, norm)` in one
/// register, and the mask of the 16-bit lanes in use (all ones below
/// `count`); `None` when a frequency byte in use has its high bit set (a
/// longer varint). Shared by [`best_impact`] and [`frontier`].
///
/// # Safety
///
/// The CPU must support AVX2 (and the SSE4.1 it implies).
#[inline(always)]
unsafe fn short_pairs(
    pairs: &[u8; 16],
    count: usize,
) -> Option<(std::arch::x86_64::__m128i, std::arch::x86_64::__m128i)> {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpgt_epi16, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_set1_epi16, _mm_setr_epi16,
    };
    // SAFETY: SSE2 is available per this function's contract; the load
    // reads the 16 bytes of `pairs`.
    unsafe {
        let v = _mm_loadu_si128(pairs.as_ptr().cast::<__m128i>());
        let lane = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
        let used = _mm_cmpgt_epi16(_mm_set1_epi16(count as i16), lane);
        // A frequency byte (the low byte of a lane) with its high bit set.
        (_mm_movemask_epi8(_mm_and_si128(v, used)) & 0x5555 == 0).then_some((v, used))
    }
}

/// AVX2 best key of a block's impact pairs (contract of
/// [`super::best_impact`]): the eight pairs' frequencies and norms split
/// from one 16-byte load, the factors gathered by norm, one multiply, a
/// horizontal max, and the least norm by `minpos`.
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn best_impact(
    pairs: &[u8; 16],
    count: usize,
    factors: &[f32; 256],
) -> Option<(f32, u8)> {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_andnot_si128, _mm_cvtss_f32, _mm_extract_epi16, _mm_max_ps, _mm_max_ss,
        _mm_minpos_epu16, _mm_movehl_ps, _mm_or_si128, _mm_set1_epi16, _mm_shuffle_ps,
        _mm_srli_epi16, _mm256_blendv_ps, _mm256_castps256_ps128, _mm256_cvtepi16_epi32,
        _mm256_cvtepi32_ps, _mm256_cvtepu16_epi32, _mm256_extractf128_ps, _mm256_i32gather_ps,
        _mm256_mul_ps, _mm256_set1_ps,
    };
    if count == 0 || count > 8 {
        return None;
    }
    // SAFETY: AVX2 (and the SSE4.1 it implies) is available per this
    // function's contract; the load reads the 16 bytes of `pairs`; every
    // gathered index is a norm byte zero-extended (0..=255), in bounds of
    // the 256 factors.
    unsafe {
        let (v, used) = short_pairs(pairs, count)?;
        let tfs = _mm_and_si128(v, _mm_set1_epi16(0xff));
        let norms = _mm_srli_epi16::<8>(v);
        let factor = _mm256_i32gather_ps::<4>(factors.as_ptr(), _mm256_cvtepu16_epi32(norms));
        let keys = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(tfs)), factor);
        let in_use = std::arch::x86_64::_mm256_castsi256_ps(_mm256_cvtepi16_epi32(used));
        let keys = _mm256_blendv_ps(_mm256_set1_ps(f32::NEG_INFINITY), keys, in_use);
        let m = _mm_max_ps(
            _mm256_castps256_ps128(keys),
            _mm256_extractf128_ps::<1>(keys),
        );
        let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        let m = _mm_max_ss(m, _mm_shuffle_ps::<1>(m, m));
        // Lanes not in use read as the largest norm.
        let norms = _mm_or_si128(norms, _mm_andnot_si128(used, _mm_set1_epi16(0xff)));
        let least = _mm_extract_epi16::<0>(_mm_minpos_epu16(norms)) as u8;
        Some((_mm_cvtss_f32(m), least))
    }
}

/// AVX2 reading of a block's impact pairs as lanes (contract of
/// [`super::frontier`]): the eight pairs' frequencies and norms split from
/// one 16-byte load, as [`best_impact`] splits them, the factors gathered
/// by norm, and the lanes past `count` set to the unused pair.
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn frontier(
    pairs: &[u8; 16],
    count: usize,
    factors: &[f32; 256],
) -> Option<Frontier> {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_set1_epi16, _mm_srli_epi16, _mm256_and_ps, _mm256_blendv_epi8,
        _mm256_castsi256_ps, _mm256_cvtepi16_epi32, _mm256_cvtepi32_ps, _mm256_cvtepu16_epi32,
        _mm256_i32gather_ps, _mm256_storeu_ps,
    };
    if count == 0 || count > 8 {
        return None;
    }
    let mut f = Frontier::EMPTY;
    // SAFETY: AVX2 (and the SSE4.1 it implies) is available per this
    // function's contract; the load reads the 16 bytes of `pairs`; every
    // gathered index is a norm byte zero-extended (0..=255), in bounds of
    // the 256 factors; the stores write the eight lanes of `f`'s arrays.
    unsafe {
        let (v, used) = short_pairs(pairs, count)?;
        let used = _mm256_cvtepi16_epi32(used);
        let tfs = _mm256_cvtepu16_epi32(_mm_and_si128(v, _mm_set1_epi16(0xff)));
        let norms = _mm256_cvtepu16_epi32(_mm_srli_epi16::<8>(v));
        let factor = _mm256_i32gather_ps::<4>(factors.as_ptr(), norms);
        let in_use = _mm256_castsi256_ps(used);
        let tf = _mm256_and_ps(_mm256_cvtepi32_ps(tfs), in_use);
        _mm256_storeu_ps(f.tf.as_mut_ptr(), tf);
        _mm256_storeu_ps(f.factor.as_mut_ptr(), _mm256_and_ps(factor, in_use));
        let norm = _mm256_blendv_epi8(_mm256_set1_epi32(-1), norms, used);
        _mm256_storeu_si256(f.norm.as_mut_ptr().cast::<__m256i>(), norm);
    }
    Some(f)
}

/// AVX2 joint bound of two clauses' blocks (contract of
/// [`super::joint_bound`]): each side's eight pairs in lanes, the other
/// side's best frequency under each lane's norm by eight compares and
/// masked maxima, both scores (one division per side), the clause-order
/// sums and a horizontal max.
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn joint_bound(
    (x, wx): (&Frontier, f32),
    (y, wy): (&Frontier, f32),
    bounds: &[f32],
    (sx, sy): (usize, usize),
) -> f32 {
    use std::arch::x86_64::{
        __m256, _CMP_GT_OQ, _mm_cvtss_f32, _mm_max_ps, _mm_max_ss, _mm_movehl_ps, _mm_shuffle_ps,
        _mm256_add_ps, _mm256_and_ps, _mm256_blendv_ps, _mm256_castps256_ps128, _mm256_cmp_ps,
        _mm256_div_ps, _mm256_extractf128_ps, _mm256_loadu_ps, _mm256_max_ps, _mm256_mul_ps,
        _mm256_set1_ps, _mm256_setzero_ps, _mm256_sub_ps,
    };
    // SAFETY: AVX2 is available per this function's contract; every load
    // reads eight lanes of a `Frontier`'s arrays.
    unsafe {
        let score = |w: __m256, tf: __m256, factor: __m256| {
            let one = _mm256_set1_ps(1.0);
            _mm256_sub_ps(
                w,
                _mm256_div_ps(w, _mm256_add_ps(one, _mm256_mul_ps(tf, factor))),
            )
        };
        // `q`'s largest frequency at norms under (`strict`) or at most
        // each lane's norm of `p`; 0 where it has none.
        let best_tf = |p: &Frontier, q: &Frontier, strict: bool| {
            let at = _mm256_loadu_si256(p.norm.as_ptr().cast::<__m256i>());
            let mut t = _mm256_setzero_ps();
            for k in 0..8 {
                let n = _mm256_set1_epi32(q.norm[k]);
                let ok = if strict {
                    _mm256_cmpgt_epi32(at, n)
                } else {
                    _mm256_xor_si256(_mm256_cmpgt_epi32(n, at), _mm256_set1_epi32(-1))
                };
                let tf = _mm256_and_ps(_mm256_castsi256_ps(ok), _mm256_set1_ps(q.tf[k]));
                t = _mm256_max_ps(t, tf);
            }
            t
        };
        let (wx, wy) = (_mm256_set1_ps(wx), _mm256_set1_ps(wy));
        let none = _mm256_set1_ps(f32::NEG_INFINITY);
        let zero = _mm256_setzero_ps();
        let (fx, fy) = (
            _mm256_loadu_ps(x.factor.as_ptr()),
            _mm256_loadu_ps(y.factor.as_ptr()),
        );
        // Lanes of `x`: its own score, and `y`'s at its norm.
        let ty = best_tf(x, y, false);
        let (x_own, y_at_x) = (
            score(wx, _mm256_loadu_ps(x.tf.as_ptr()), fx),
            score(wy, ty, fx),
        );
        // Lanes of `y`: `x`'s under its norm, and its own score.
        let tx = best_tf(y, x, true);
        let (x_at_y, y_own) = (
            score(wx, tx, fy),
            score(wy, _mm256_loadu_ps(y.tf.as_ptr()), fy),
        );
        let (mut sum_x, mut sum_y) = (zero, zero);
        for (k, &c) in bounds.iter().enumerate() {
            let c = _mm256_set1_ps(c);
            let (ax, ay) = if k == sx {
                (x_own, x_at_y)
            } else if k == sy {
                (y_at_x, y_own)
            } else {
                (c, c)
            };
            sum_x = _mm256_add_ps(sum_x, ax);
            sum_y = _mm256_add_ps(sum_y, ay);
        }
        let sum_x = _mm256_blendv_ps(none, sum_x, _mm256_cmp_ps::<_CMP_GT_OQ>(ty, zero));
        let sum_y = _mm256_blendv_ps(none, sum_y, _mm256_cmp_ps::<_CMP_GT_OQ>(tx, zero));
        let m = _mm256_max_ps(sum_x, sum_y);
        let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
        let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        let m = _mm_max_ss(m, _mm_shuffle_ps::<1>(m, m));
        _mm_cvtss_f32(m)
    }
}

/// AVX2 selection of documents by score key (contract of
/// [`super::keys_above`]): per 8 documents, their norm bytes gathered
/// (4 bytes at each, the low one kept) for the lanes whose frequency is
/// at least `min_tf` (a masked gather: the others read nothing), their
/// factors gathered by norm, the frequencies converted exactly as `u32 as
/// f32` does, one multiply, one compare, and a compressed store of the
/// documents kept; a group none of whose frequencies reaches `min_tf`
/// skips the gathers (mid-df-1 lower-bound: 13.21M -> 13.00M
/// instructions over its 300 queries). Groups with a document within 4
/// bytes of the end of `norms` (or past it) go to the scalar loop, which
/// checks each.
///
/// # Safety
///
/// The CPU must support AVX2 and POPCNT (`is_x86_feature_detected!` for both).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn keys_above(
    docs: &[u32],
    tfs: &[u32],
    norms: &[u8],
    factors: &[f32; 256],
    (limit, min_tf): (f32, u32),
    out: &mut Vec<u32>,
) {
    use std::arch::x86_64::{
        _CMP_GT_OQ, _mm256_add_ps, _mm256_cmp_ps, _mm256_cvtepi32_ps, _mm256_i32gather_ps,
        _mm256_mask_i32gather_epi32, _mm256_max_epu32, _mm256_mul_ps, _mm256_set1_ps,
        _mm256_setzero_si256, _mm256_srli_epi32,
    };
    let n = docs.len().min(tfs.len());
    out.reserve(n + 8);
    let (dp, tp, dst) = (docs.as_ptr(), tfs.as_ptr(), out.as_mut_ptr());
    let mut len = out.len();
    let mut i = 0;
    // A document at most `last` has 4 readable norm bytes from it.
    if let Some(last) = norms
        .len()
        .checked_sub(4)
        .and_then(|l| u32::try_from(l).ok())
    {
        // SAFETY: AVX2 is available per this function's contract. Each
        // group's loads read `docs[i..i + 8]` and `tfs[i..i + 8]`, in
        // bounds as `i + 8 <= n`. The norm gather reads 4 bytes at
        // `norms + d` only for groups whose every `d <= last` (checked
        // just before, unsigned), so within `norms`; its scale of 1 takes
        // `d` as a signed offset, and `d <= last < isize::MAX` here since
        // `norms.len()` is (lanes masked out read nothing, and get norm
        // 0). Factor indices are a byte (0..=255), in
        // bounds of the 256. At most `i` documents were written before a
        // store at `len`, so it ends by `start + i + 8 <= start + n + 8`,
        // within the capacity reserved; `store_compressed` gets a mask
        // below 256 and initialises the `count_ones` lanes `len` grows by.
        unsafe {
            let (bound, lim) = (_mm256_set1_epi32(last as i32), _mm256_set1_ps(limit));
            let (low, byte) = (_mm256_set1_epi32(0xffff), _mm256_set1_epi32(0xff));
            let two16 = _mm256_set1_ps(65536.0);
            let least = _mm256_set1_epi32(min_tf as i32);
            while i + 8 <= n {
                let d = _mm256_loadu_si256(dp.add(i).cast::<__m256i>());
                if _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                    _mm256_max_epu32(d, bound),
                    bound,
                ))) != 0xff
                {
                    break;
                }
                let t = _mm256_loadu_si256(tp.add(i).cast::<__m256i>());
                // Lanes with `tf >= min_tf` (unsigned): all ones.
                let counted = _mm256_cmpeq_epi32(_mm256_max_epu32(t, least), t);
                let some = _mm256_movemask_ps(_mm256_castsi256_ps(counted));
                if some == 0 {
                    i += 8;
                    continue;
                }
                let norm = _mm256_and_si256(
                    _mm256_mask_i32gather_epi32::<1>(
                        _mm256_setzero_si256(),
                        norms.as_ptr().cast::<i32>(),
                        d,
                        counted,
                    ),
                    byte,
                );
                let factor = _mm256_i32gather_ps::<4>(factors.as_ptr(), norm);
                // u32 to f32 rounded once: the high and low halves convert
                // exactly, and their sum rounds as the whole would.
                let hi = _mm256_cvtepi32_ps(_mm256_srli_epi32::<16>(t));
                let lo = _mm256_cvtepi32_ps(_mm256_and_si256(t, low));
                let tf = _mm256_add_ps(_mm256_mul_ps(hi, two16), lo);
                let keep = _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_mul_ps(tf, factor), lim);
                let mask = (_mm256_movemask_ps(keep) & some) as u32;
                len += d.store_compressed(mask, dst.add(len));
                i += 8;
            }
            out.set_len(len);
        }
    }
    super::scalar::keys_above(
        &docs[i..n],
        &tfs[i..n],
        norms,
        factors,
        (limit, min_tf),
        out,
    );
}
