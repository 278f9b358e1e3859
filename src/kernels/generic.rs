//! Algorithms written once and instantiated per instruction set.
//!
//! Two layers:
//!
//! * [`Vector`] abstracts an 8-lane `u32` vector. [`find_next_geq`] and
//!   [`intersect_blocks`] are written against it; `avx2.rs` instantiates them
//!   with `__m256i` (and the tests with a portable `[u32; 8]`).
//! * [`Primitives`] abstracts the two leaf kernels (`find_next_geq` and the
//!   equal-length 2-way intersection). The router [`intersect2`], the skewed
//!   [`intersect_gallop`], [`intersect3`] and [`intersect_many`] are written
//!   against it and shared by every implementation, scalar included.
//!
//! Everything here is `#[inline(always)]` so that it is compiled inside the
//! caller's `#[target_feature]` function, where the vector intrinsics inline.

/// Number of `u32` lanes in a [`Vector`].
pub(super) const LANES: usize = 8;

/// When the longer list is at least this many times longer than the shorter
/// one, [`intersect2`] gallops (shorter list leads, `find_next_geq` into the
/// longer) instead of merging block-wise.
pub(super) const GALLOP_SKEW: usize = 32;

/// First-level look-ahead stride of `find_next_geq`: whole 32-element spans
/// whose last element is below the target are skipped before the 8-lane
/// groups are examined.
pub(super) const SKIP: usize = 4 * LANES;

/// An 8-lane vector of `u32`.
///
/// All methods are `unsafe` because an implementation may require an
/// instruction-set extension; the generic code is only sound when called from
/// a context where that extension is known to be available.
pub(super) trait Vector: Copy {
    /// Loads 8 consecutive `u32`s from `ptr` (no alignment required).
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set, and `ptr` must be
    /// valid for reading `LANES` `u32`s.
    unsafe fn load_unaligned(ptr: *const u32) -> Self;

    /// Broadcasts `x` to every lane.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn splat(x: u32) -> Self;

    /// Lane-wise wrapping addition.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn add(self, other: Self) -> Self;

    /// The inclusive prefix sums of the lanes (wrapping): lane `i` of the
    /// result is the sum of lanes `0..=i`.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn prefix_sum(self) -> Self;

    /// The last lane in every lane.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn broadcast_last(self) -> Self;

    /// Stores the 8 lanes at `ptr` (no alignment required).
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set, and `ptr` must be
    /// valid for writing `LANES` `u32`s.
    unsafe fn store_unaligned(self, ptr: *mut u32);

    /// Bit `i` of the result is set iff lane `i` of `self` is `>=` lane `i` of
    /// `threshold`, comparing as *unsigned* 32-bit integers. Bits 8.. are 0.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn ge_mask(self, threshold: Self) -> u32;

    /// Bit `i` of the result is set iff lane `i` of `self` equals lane `i` of
    /// `other`. Bits 8.. are 0.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn eq_mask(self, other: Self) -> u32;

    /// Bit `i` of the result is set iff lane `i` of `self` equals *some* lane
    /// of `other` (all-pairs compare). Bits 8.. are 0.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set.
    unsafe fn eq_any_mask(self, other: Self) -> u32;

    /// Writes the lanes of `self` selected by `mask` (bits 0..8), in lane
    /// order, to `dst[0..count]` and returns `count = mask.count_ones()`.
    /// It may write anything to `dst[count..LANES]`.
    ///
    /// # Safety
    ///
    /// The CPU must support this vector's instruction set, `mask < 256`, and
    /// `dst` must be valid for writing `LANES` `u32`s.
    unsafe fn store_compressed(self, mask: u32, dst: *mut u32) -> usize;
}

/// The leaf kernels that the shared intersection algorithms are built from.
pub(super) trait Primitives {
    /// Same contract as [`super::find_next_geq`].
    ///
    /// # Safety
    ///
    /// The CPU must support the implementation's instruction set.
    unsafe fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize;

    /// Membership probe for galloping: returns `(next, found)` where `found`
    /// says whether `target` occurs in `docs[from..]`, and `next` is a resume
    /// point for the next (larger) target: `from <= next`, every element of
    /// `docs[from..next]` is `< target`, and `next == docs.len()` only if no
    /// element of `docs[from..]` is `>= target`.
    ///
    /// # Safety
    ///
    /// The CPU must support the implementation's instruction set.
    unsafe fn seek(docs: &[u32], from: usize, target: u32) -> (usize, bool);

    /// Appends `a ∩ b` to `out`; efficient when the lengths are similar.
    ///
    /// # Safety
    ///
    /// The CPU must support the implementation's instruction set.
    unsafe fn intersect_merge(a: &[u32], b: &[u32], out: &mut Vec<u32>);
}

/// Lane numbers, loaded as a vector: compressed by a mask, they are the
/// selected lanes' positions within a group.
static LANE_INDEX: [u32; LANES] = [0, 1, 2, 3, 4, 5, 6, 7];

/// Appends to `out`, ascending, every position `i` with `keys[i] >=
/// threshold` (unsigned): a compare and a compressed store per 8 keys, so
/// the cost does not depend on how many are kept (contract of
/// [`super::positions_ge`]).
///
/// # Safety
///
/// The CPU must support `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn positions_ge<V: Vector>(keys: &[u32], threshold: u32, out: &mut Vec<u32>) {
    let n = keys.len();
    debug_assert!(u32::try_from(n).is_ok());
    // Room for every position plus one group's full-width store.
    out.reserve(n + LANES);
    let (kp, dst) = (keys.as_ptr(), out.as_mut_ptr());
    let mut len = out.len();
    let mut i = 0;
    // SAFETY: `i + LANES <= n` keeps each group's load in bounds and
    // LANE_INDEX holds LANES u32s; at most `i` positions were written before
    // a store at `len`, so it ends by `start + i + LANES <= start + n +
    // LANES`, within the capacity reserved; each store initialises the
    // `c <= LANES` elements `len` then grows by, and the tail writes one
    // element at `len <= start + n`; `ge_mask` returns a mask < 256. The
    // caller guarantees `V`'s instruction set.
    unsafe {
        let t = V::splat(threshold);
        // The group's positions, `i..i + LANES`, kept as a vector: the
        // selected ones are stored as they are, with no loop over them.
        let mut at = V::load_unaligned(LANE_INDEX.as_ptr());
        let step = V::splat(LANES as u32);
        while i + LANES <= n {
            let mask = V::load_unaligned(kp.add(i)).ge_mask(t);
            len += at.store_compressed(mask, dst.add(len));
            at = at.add(step);
            i += LANES;
        }
        while i < n {
            *dst.add(len) = i as u32;
            len += usize::from(*kp.add(i) >= threshold);
            i += 1;
        }
        out.set_len(len);
    }
}

/// Turns gaps stored minus one into the ascending values they encode, in
/// place: `vals[i] = base + (vals[0] + 1) + ... + (vals[i] + 1)`, wrapping
/// (contract of [`super::strict_prefix_sum`]): 8 lanes at a time, each
/// group's sums carried into the next by its last lane.
///
/// # Safety
///
/// The CPU must support `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn strict_prefix_sum<V: Vector>(vals: &mut [u32], base: u32) {
    let n = vals.len();
    let p = vals.as_mut_ptr();
    let mut i = 0;
    // SAFETY: `i + LANES <= n` keeps each group's load and store within
    // `vals`; the caller guarantees `V`'s instruction set.
    unsafe {
        let one = V::splat(1);
        let mut carry = V::splat(base);
        while i + LANES <= n {
            let v = V::load_unaligned(p.add(i)).add(one).prefix_sum().add(carry);
            v.store_unaligned(p.add(i));
            carry = v.broadcast_last();
            i += LANES;
        }
    }
    // The tail (none in a full block), from the last group's last sum.
    let last = if i == 0 { base } else { vals[i - 1] };
    super::scalar::strict_prefix_sum(&mut vals[i..], last);
}

/// Compressed-store lookup table: for each 8-bit mask, the indices of its set
/// bits packed as nibbles (lowest nibble = first selected lane). 1 KiB.
pub(super) static COMPRESS_NIBBLES: [u32; 256] = compress_table();

const fn compress_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut packed = 0u32;
        let mut count = 0;
        let mut lane = 0;
        while lane < LANES {
            if mask & (1 << lane) != 0 {
                packed |= (lane as u32) << (4 * count);
                count += 1;
            }
            lane += 1;
        }
        table[mask] = packed;
        mask += 1;
    }
    table
}

/// Vectorised `find_next_geq` (contract of [`super::find_next_geq`]).
///
/// A scalar look-ahead skips whole 8-lane groups whose last element is below
/// `target` (one load + compare per group, well predicted); the group that
/// contains the answer is then resolved with one vector compare + movemask +
/// trailing-zero count instead of an unpredictable scalar loop. A tail of
/// fewer than 8 elements is handled with an overlapping load of the last 8
/// elements, masked so that lanes before `from` cannot match. A first-level
/// look-ahead skips whole 32-element spans ([`SKIP`]) for large jumps.
///
/// Linear/SIMD scan vs binary search (criterion, `benches/kernels.rs`, a
/// cursor walking 128/256-element blocks, ns per call incl. the dispatch
/// call, on a shared 2-core Zen-class x86_64, so ±30% noise):
///
/// | answer is … ahead     | AVX2 scan | scalar grouped scan | binary search | naive linear |
/// |-----------------------|-----------|---------------------|---------------|--------------|
/// | 1..=4 elements        | 1.6–2.4   | 2.0–2.3             | 4.3–4.9       | 1.8–2.5      |
/// | 16..=96 elements      | 2.8–3.4   | 3.7–4.2             | 4.1–5.3       | 12–24        |
///
/// Binary search loses at both gap sizes: it pays ~log2(len) dependent,
/// poorly predicted steps even when the answer is next door, which is the
/// common case in a posting-list cursor. A plain linear scan is only good for
/// tiny gaps. Long jumps over arbitrarily long lists are bounded by galloping
/// first (see `gallop_seek`), so this kernel only ever scans short windows.
///
/// # Safety
///
/// The CPU must support `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn find_next_geq<V: Vector>(docs: &[u32], from: usize, target: u32) -> usize {
    let n = docs.len();
    let i = from;
    if i >= n {
        return n;
    }
    if i + LANES <= n && docs[i + LANES - 1] >= target {
        // SAFETY: `i + LANES <= n`, so `docs[i..i + LANES]` is readable;
        // the caller guarantees `V`'s instruction set is available.
        let mask = unsafe { V::load_unaligned(docs.as_ptr().add(i)).ge_mask(V::splat(target)) };
        // Lane 7 is set (docs[i + 7] >= target), so `mask != 0`.
        return i + mask.trailing_zeros() as usize;
    }
    // Further on: a binary search whose steps are conditional moves, so
    // that how far the target lies costs no misprediction.
    i + docs[i..].partition_point(|&d| d < target)
}

/// Vectorised [`Primitives::seek`].
///
/// Same look-ahead as [`find_next_geq`], but the group holding the answer is
/// probed with an equality compare and the *group start* is returned as the
/// resume point. The exact index never feeds back into the caller's loop, so
/// the galloping loop's carried dependency is resolved by (predicted)
/// branches instead of a load → compare → movemask → tzcnt latency chain.
/// Measured (1:32 skew, noisy shared machine): with the exact index fed back,
/// AVX2 galloping ran 2x slower than scalar; with this probe it is within
/// roughly 0.6x–1.6x of scalar time across runs, i.e. about on par — the
/// galloping path is bound by the exponential/binary probes, not the scan.
///
/// # Safety
///
/// The CPU must support `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn seek<V: Vector>(docs: &[u32], from: usize, target: u32) -> (usize, bool) {
    let n = docs.len();
    let mut i = from;
    if i >= n {
        return (n, false);
    }
    while i + SKIP <= n && docs[i + SKIP - 1] < target {
        i += SKIP;
    }
    while i + LANES <= n {
        if docs[i + LANES - 1] >= target {
            // SAFETY: `i + LANES <= n`, so `docs[i..i + LANES]` is readable;
            // the caller guarantees `V`'s instruction set is available.
            let mask = unsafe { V::load_unaligned(docs.as_ptr().add(i)).eq_mask(V::splat(target)) };
            return (i, mask != 0);
        }
        i += LANES;
    }
    // SAFETY: forwarded from this function's contract.
    let k = unsafe { find_next_geq::<V>(docs, i, target) };
    (k, k < n && docs[k] == target)
}

/// Block-wise 2-way intersection (Schlegel/Lemire style): compare 8 elements
/// of `a` against 8 elements of `b` all-pairs, compress-store the matches,
/// advance whichever block has the smaller maximum (both on a tie). The
/// tail (fewer than 8 left in one list) is one padded vector compared
/// against the other list ([`intersect_tail`]).
///
/// # Safety
///
/// The CPU must support `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn intersect_blocks<V: Vector>(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    let (mut i, mut j) = (0, 0);
    let (an, bn) = (a.len(), b.len());
    // Each step consumes at least LANES elements and emits at most LANES,
    // and a step runs only while both lists have LANES left: a step starts
    // with at most `an + bn - 2 * LANES` elements emitted, so this one
    // reservation leaves room for every LANES-wide store, whatever the
    // input's order.
    out.reserve(an + bn);
    if an >= LANES && bn >= LANES {
        let (a_last, b_last) = (an - LANES, bn - LANES);
        let (ap, bp) = (a.as_ptr(), b.as_ptr());
        let mut len = out.len();
        let dst = out.as_mut_ptr();
        // SAFETY: `i <= an - LANES` and `j <= bn - LANES` make the loads of
        // LANES elements at `i` and `j` (and so their last elements) in
        // bounds; by the count above `len + LANES` stays within the
        // capacity reserved, so each LANES-wide store at `dst + len` is in
        // bounds, and `len` only grows by the `count <= LANES` elements a
        // store initialises, so `set_len(len)` covers initialised memory;
        // the mask from `eq_any_mask` is < 256. The caller guarantees `V`'s
        // instruction set is available.
        unsafe {
            while i <= a_last && j <= b_last {
                let va = V::load_unaligned(ap.add(i));
                let vb = V::load_unaligned(bp.add(j));
                let a_max = *ap.add(i + LANES - 1);
                let b_max = *bp.add(j + LANES - 1);
                let mask = va.eq_any_mask(vb);
                // Stored unconditionally: whether a step matches is
                // unpredictable, and a mispredicted branch costs more.
                len += va.store_compressed(mask, dst.add(len));
                i += LANES * usize::from(a_max <= b_max);
                j += LANES * usize::from(b_max <= a_max);
            }
            out.set_len(len);
        }
    }
    // Fewer than LANES left on one side.
    let (short, long, k) = if an - i < LANES {
        (&a[i..], b, j)
    } else {
        (&b[j..], a, i)
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { intersect_tail::<V>(short, long, k, out) }
}

/// The tail of [`intersect_blocks`]: the 0 to 7 elements of `short` are
/// looked up in `long[k..]` as one vector, padded with copies of its last
/// element, against `long` LANES at a time until a group reaches the last
/// of them. Only `short`'s lanes are stored, once, so matches found twice
/// (the last group may overlap the one before) are stored once. Elements
/// of `long` before `k` are below every element of `short` (the merge
/// passed them), so the overlap cannot match anything new.
///
/// # Safety
///
/// The CPU must support `V`'s instruction set.
#[inline(always)]
unsafe fn intersect_tail<V: Vector>(short: &[u32], long: &[u32], k: usize, out: &mut Vec<u32>) {
    let m = short.len();
    let (Some(&last), true) = (short.last(), m < LANES) else {
        return;
    };
    let n = long.len();
    if n < LANES {
        // Too short for a vector: probe one by one.
        let mut k = k;
        for &x in short {
            // SAFETY: forwarded from this function's contract.
            k = unsafe { find_next_geq::<V>(long, k, x) };
            if k == n {
                break;
            }
            if long[k] == x {
                out.push(x);
            }
        }
        return;
    }
    let mut padded = [last; LANES];
    padded[..m].copy_from_slice(short);
    let mut p = k.min(n);
    let mut hits = 0u32;
    // SAFETY: `padded` holds LANES elements; every load of `long` starts at
    // most at `n - LANES`; `reserve(LANES)` makes the LANES-wide store at
    // `out.len()` in bounds, and `set_len` adds only the `count` elements
    // it initialised (the mask keeps lanes below `m <= LANES`, < 256). The
    // caller guarantees `V`'s instruction set is available.
    unsafe {
        let vs = V::load_unaligned(padded.as_ptr());
        loop {
            let at = p.min(n - LANES);
            hits |= vs.eq_any_mask(V::load_unaligned(long.as_ptr().add(at)));
            if at == n - LANES || long[at + LANES - 1] >= last {
                break;
            }
            p = at + LANES;
        }
        hits &= (1u32 << m) - 1;
        if hits != 0 {
            out.reserve(LANES);
            let len = out.len();
            let count = vs.store_compressed(hits, out.as_mut_ptr().add(len));
            out.set_len(len + count);
        }
    }
}

/// [`Primitives::seek`] for an arbitrarily long `docs`: exponential probes
/// bound the answer, a binary search narrows the window to at most 64
/// elements, and `P::seek` finishes inside the window.
///
/// # Safety
///
/// The CPU must support `P`'s instruction set.
#[inline(always)]
unsafe fn gallop_seek<P: Primitives>(docs: &[u32], from: usize, target: u32) -> (usize, bool) {
    let n = docs.len();
    if from >= n {
        return (n, false);
    }
    // Invariant: docs[from..lo] < target, and (hi == n or docs[hi - 1] >= target).
    let mut lo = from;
    let mut step = 32;
    let mut hi;
    loop {
        hi = lo.saturating_add(step);
        if hi >= n {
            hi = n;
            break;
        }
        if docs[hi - 1] >= target {
            break;
        }
        lo = hi;
        step = step.saturating_mul(2);
    }
    while hi - lo > 64 {
        let mid = lo + (hi - lo) / 2;
        if docs[mid - 1] < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // SAFETY: forwarded from this function's contract.
    let (next, found) = unsafe { P::seek(&docs[..hi], lo, target) };
    // `P::seek` may return `hi` only if docs[lo..hi] < target, which (by the
    // invariant) means hi == n or lo == hi; either way a valid resume point.
    (next, found)
}

/// Skewed 2-way intersection: every element of `small` gallops forward
/// through `large` (which must be the longer list).
///
/// # Safety
///
/// The CPU must support `P`'s instruction set.
#[inline(always)]
pub(super) unsafe fn intersect_gallop<P: Primitives>(
    small: &[u32],
    large: &[u32],
    out: &mut Vec<u32>,
) {
    let mut j = 0;
    for &x in small {
        // SAFETY: forwarded from this function's contract.
        let (next, found) = unsafe { gallop_seek::<P>(large, j, x) };
        if found {
            out.push(x);
        } else if next == large.len() {
            break;
        }
        j = next;
    }
}

/// 2-way router: nothing for empty or non-overlapping ranges, galloping when
/// one list is at least [`GALLOP_SKEW`] times longer, else
/// `P::intersect_merge`.
///
/// # Safety
///
/// The CPU must support `P`'s instruction set.
#[inline(always)]
pub(super) unsafe fn intersect2<P: Primitives>(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (Some(&s_first), Some(&s_last)) = (small.first(), small.last()) else {
        return;
    };
    let (Some(&l_first), Some(&l_last)) = (large.first(), large.last()) else {
        return;
    };
    if s_last < l_first || l_last < s_first {
        return;
    }
    // SAFETY: forwarded from this function's contract.
    unsafe {
        if large.len() / GALLOP_SKEW >= small.len() {
            intersect_gallop::<P>(small, large, out);
        } else {
            P::intersect_merge(a, b, out);
        }
    }
}

/// 3-way intersection: the two shortest lists first, then the (small)
/// intermediate result against the longest one.
///
/// # Safety
///
/// The CPU must support `P`'s instruction set.
#[inline(always)]
pub(super) unsafe fn intersect3<P: Primitives>(
    a: &[u32],
    b: &[u32],
    c: &[u32],
    out: &mut Vec<u32>,
) {
    let mut lists = [a, b, c];
    lists.sort_unstable_by_key(|l| l.len());
    if lists[0].is_empty() {
        return;
    }
    let mut tmp = Vec::with_capacity(lists[0].len());
    // SAFETY: forwarded from this function's contract.
    unsafe {
        intersect2::<P>(lists[0], lists[1], &mut tmp);
        intersect2::<P>(&tmp, lists[2], out);
    }
}

/// n-way intersection: lists sorted by length so the shortest leads; the
/// running result is intersected with each next list, stopping early once it
/// is empty. No lists → nothing appended; one list → copied.
///
/// # Safety
///
/// The CPU must support `P`'s instruction set.
#[inline(always)]
pub(super) unsafe fn intersect_many<P: Primitives>(lists: &[&[u32]], out: &mut Vec<u32>) {
    match lists {
        [] => return,
        [only] => {
            out.extend_from_slice(only);
            return;
        }
        [a, b] => {
            // SAFETY: forwarded from this function's contract.
            unsafe { intersect2::<P>(a, b, out) };
            return;
        }
        _ => {}
    }
    let mut order: Vec<&[u32]> = lists.to_vec();
    order.sort_unstable_by_key(|l| l.len());
    let (last, middle) = order[1..].split_last().expect("at least 3 lists");
    let mut cur = Vec::with_capacity(order[0].len());
    let mut next = Vec::with_capacity(order[0].len());
    // SAFETY: forwarded from this function's contract.
    unsafe {
        intersect2::<P>(order[0], middle[0], &mut cur);
        for list in &middle[1..] {
            if cur.is_empty() {
                return;
            }
            next.clear();
            intersect2::<P>(&cur, list, &mut next);
            std::mem::swap(&mut cur, &mut next);
        }
        intersect2::<P>(&cur, last, out);
    }
}

/// A portable `[u32; 8]` instantiation of the generic SIMD algorithms, used by
/// the test harness to check them on any CPU.
#[cfg(test)]
pub(super) mod portable {
    use super::{LANES, Primitives, Vector};

    impl Vector for [u32; LANES] {
        unsafe fn load_unaligned(ptr: *const u32) -> Self {
            // SAFETY: the caller guarantees `ptr` is valid for reading LANES
            // u32s; `read_unaligned` has no alignment requirement.
            unsafe { ptr.cast::<[u32; LANES]>().read_unaligned() }
        }

        unsafe fn splat(x: u32) -> Self {
            [x; LANES]
        }

        unsafe fn add(self, other: Self) -> Self {
            std::array::from_fn(|i| self[i].wrapping_add(other[i]))
        }

        unsafe fn prefix_sum(self) -> Self {
            let mut sum = 0u32;
            self.map(|x| {
                sum = sum.wrapping_add(x);
                sum
            })
        }

        unsafe fn broadcast_last(self) -> Self {
            [self[LANES - 1]; LANES]
        }

        unsafe fn store_unaligned(self, ptr: *mut u32) {
            // SAFETY: the caller guarantees `ptr` is valid for writing LANES
            // u32s; `write_unaligned` has no alignment requirement.
            unsafe { ptr.cast::<[u32; LANES]>().write_unaligned(self) }
        }

        unsafe fn ge_mask(self, threshold: Self) -> u32 {
            (0..LANES).fold(0, |m, i| m | (u32::from(self[i] >= threshold[i]) << i))
        }

        unsafe fn eq_mask(self, other: Self) -> u32 {
            (0..LANES).fold(0, |m, i| m | (u32::from(self[i] == other[i]) << i))
        }

        unsafe fn eq_any_mask(self, other: Self) -> u32 {
            (0..LANES).fold(0, |m, i| m | (u32::from(other.contains(&self[i])) << i))
        }

        unsafe fn store_compressed(self, mask: u32, dst: *mut u32) -> usize {
            let mut count = 0;
            for (i, &x) in self.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    // SAFETY: `count < LANES` and the caller guarantees `dst`
                    // is valid for writing LANES u32s.
                    unsafe { dst.add(count).write(x) };
                    count += 1;
                }
            }
            count
        }
    }

    /// Marker for the portable instantiation.
    pub(in super::super) struct Portable;

    impl Primitives for Portable {
        unsafe fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
            // SAFETY: the `[u32; 8]` vector needs no instruction-set extension.
            unsafe { super::find_next_geq::<[u32; LANES]>(docs, from, target) }
        }

        unsafe fn seek(docs: &[u32], from: usize, target: u32) -> (usize, bool) {
            // SAFETY: the `[u32; 8]` vector needs no instruction-set extension.
            unsafe { super::seek::<[u32; LANES]>(docs, from, target) }
        }

        unsafe fn intersect_merge(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
            // SAFETY: the `[u32; 8]` vector needs no instruction-set extension.
            unsafe { super::intersect_blocks::<[u32; LANES]>(a, b, out) }
        }
    }

    /// Builds a kernel table from the portable instantiation.
    pub(in super::super) fn kernels() -> super::super::Kernels {
        // SAFETY (of the table invariant): none of these functions needs an
        // instruction-set extension.
        super::super::Kernels {
            name: "generic-portable",
            find_next_geq: <Portable as Primitives>::find_next_geq,
            intersect: super::intersect2::<Portable>,
            intersect3: super::intersect3::<Portable>,
            intersect_many: super::intersect_many::<Portable>,
            positions_ge: super::positions_ge::<[u32; LANES]>,
            strict_prefix_sum: super::strict_prefix_sum::<[u32; LANES]>,
            best_impact: super::super::scalar::best_impact,
            frontier: super::super::scalar::frontier,
            joint_bound: super::super::scalar::joint_bound,
            keys_above: super::super::scalar::keys_above,
            popcount: super::super::scalar::popcount,
        }
    }
}
