//! AVX2 instantiations of the generic kernels (`x86_64` only).
//!
//! This file only contains the `__m256i` implementation of
//! [`Vector`](super::generic::Vector) and one
//! `#[target_feature(enable = "avx2,popcnt")]` entry point per kernel; the
//! algorithms themselves live in `generic.rs`. (POPCNT counts a compressed
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
