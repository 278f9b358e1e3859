//! SIMD posting-list kernels: "find the next doc id >= target", sorted-list
//! intersection (2-way, 3-way and n-way), positions of keys at or above a
//! threshold, gap decoding by prefix sums, the best score key of a
//! block's impacts, a block's impacts as lanes and the joint bound of two
//! clauses' blocks over the norms their documents share, the documents
//! whose score key beats a limit, and the population count of a bitset.
//!
//! The module is self-contained: plain slices in, results out, `std` only. It
//! depends on nothing else in the crate.
//!
//! # Layout
//!
//! The layout follows the `arch/` tree of BurntSushi's `memchr`:
//!
//! * `scalar` — the portable implementation. It is always
//!   compiled, always tested, and is what every other implementation is checked
//!   against (besides the naive oracles of the test harness).
//! * `generic` — every algorithm that is shared between instruction sets is
//!   written *once* here, over two small traits: `Vector` (an 8-lane `u32`
//!   vector: unaligned load and store, splat, add, inclusive prefix sum,
//!   last-lane broadcast, `>=` mask, "equals any lane of" mask,
//!   compressed store) and `Primitives` (the leaf kernels an algorithm may
//!   call: `find_next_geq`, the galloping membership probe `seek`, and the
//!   equal-length 2-way intersection). The skewed
//!   galloping intersection, the 2-way router, and the 3-way/n-way
//!   intersections only use `Primitives`, so they are shared by the scalar and
//!   the SIMD builds alike. All generic functions are `#[inline(always)]` so that
//!   they are compiled inside the caller's `#[target_feature]` context.
//! * `avx2` (`x86_64` only) — thin instantiations: `impl Vector for __m256i`
//!   plus one `#[target_feature(enable = "avx2,popcnt")] unsafe fn` per kernel that
//!   calls the generic code. These functions are `unsafe` because calling them
//!   on a CPU without AVX2 is undefined behaviour. Four kernels have no
//!   algorithm to share: [`best_impact`], [`frontier`], [`joint_bound`]
//!   and [`keys_above`] are fixed sequences over eight lanes (gathers by
//!   norm byte, multiplies, compares, a division), written out in
//!   intrinsics there, their scalar forms in `scalar`. [`popcount`] is `scalar`'s loop compiled again with
//!   `popcnt` enabled.
//! * `tests` — one harness that runs every implementation available on the
//!   current CPU (scalar always, a portable instantiation of the generic SIMD
//!   algorithms always, AVX2 when detected — skipped, not failed, otherwise)
//!   against naive oracles, with table cases and proptest properties.
//!
//! # Dispatch
//!
//! [`Kernels`] is a table of function pointers, built by
//! [`Kernels::scalar`], [`Kernels::avx2`] (which returns `None` unless
//! `is_x86_feature_detected!` says yes to `avx2` and `popcnt`) or [`Kernels::detect`]
//! (best available, honouring `QUARRY_SIMD`). Its private fields make the
//! invariant "an AVX2 pointer is only ever stored after AVX2 was detected"
//! hold by construction, which is what makes calling through the pointers
//! sound.
//!
//! The free functions ([`find_next_geq`], [`intersect_into`],
//! [`intersect3_into`], [`intersect_many_into`]) go through [`active`], a
//! process-wide [`Kernels`] detected once and cached in a [`OnceLock`]; after
//! the first call the cost of dispatch is one atomic load and one indirect
//! call.
//!
//! # `QUARRY_SIMD`
//!
//! Read once, by [`Kernels::detect`]: `auto` (the default) picks the best
//! implementation the CPU supports, `scalar` forces the portable one. Values
//! are trimmed and compared case-insensitively ([`parse_setting`]); anything
//! else falls back to `auto` here, and makes `Searcher::open` fail (it
//! checks the variable), so a misspelt value is reported, not ignored.

use std::fmt;
use std::sync::OnceLock;

mod generic;
mod scalar;

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests;

/// Signature of a `find_next_geq` kernel (see [`find_next_geq`]).
type FindFn = unsafe fn(&[u32], usize, u32) -> usize;
/// Signature of a 2-way intersection kernel (see [`intersect_into`]).
type Intersect2Fn = unsafe fn(&[u32], &[u32], &mut Vec<u32>);
/// Signature of a 3-way intersection kernel (see [`intersect3_into`]).
type Intersect3Fn = unsafe fn(&[u32], &[u32], &[u32], &mut Vec<u32>);
/// Signature of an n-way intersection kernel (see [`intersect_many_into`]).
type IntersectManyFn = unsafe fn(&[&[u32]], &mut Vec<u32>);
/// Signature of a selection kernel (see [`positions_ge`]).
type PositionsFn = unsafe fn(&[u32], u32, &mut Vec<u32>);
/// Signature of a gap-decoding kernel (see [`strict_prefix_sum`]).
type PrefixSumFn = unsafe fn(&mut [u32], u32);
/// Signature of an impact kernel (see [`best_impact`]).
type BestImpactFn = unsafe fn(&[u8; 16], usize, &[f32; 256]) -> Option<(f32, u8)>;
/// Signature of a frontier-reading kernel (see [`frontier`]).
type FrontierFn = unsafe fn(&[u8; 16], usize, &[f32; 256]) -> Option<Frontier>;
/// Signature of a joint-bound kernel (see [`joint_bound`]).
type JointFn = unsafe fn((&Frontier, f32), (&Frontier, f32), &[f32], (usize, usize)) -> f32;
/// Signature of a population-count kernel (see [`popcount`]).
type PopcountFn = unsafe fn(&[u64]) -> u64;
/// Signature of a key-selection kernel (see [`keys_above`]).
type KeysAboveFn = unsafe fn(&[u32], &[u32], &[u8], &[f32; 256], (f32, u32), &mut Vec<u32>);

/// Name of the environment variable read by [`Kernels::detect`].
pub const SIMD_ENV_VAR: &str = "QUARRY_SIMD";

/// Parses a `QUARRY_SIMD` value: `Some(true)` for `scalar`, `Some(false)`
/// for `auto` (trimmed, any case), `None` for anything else.
pub fn parse_setting(setting: &str) -> Option<bool> {
    let s = setting.trim();
    if s.eq_ignore_ascii_case("scalar") {
        Some(true)
    } else if s.eq_ignore_ascii_case("auto") {
        Some(false)
    } else {
        None
    }
}

/// A table of posting-list kernels for one instruction set.
///
/// Construct with [`Kernels::scalar`], [`Kernels::avx2`] or
/// [`Kernels::detect`]; most code should just use the free functions of this
/// module, which dispatch through the process-wide [`active`] table.
#[derive(Clone, Copy)]
pub struct Kernels {
    name: &'static str,
    // Invariant: every pointer below is safe to call on this CPU. For the
    // scalar table that is trivially true; the AVX2 table is only built by
    // `Kernels::avx2` after `is_x86_feature_detected!` returned true for
    // `avx2` and `popcnt`.
    find_next_geq: FindFn,
    intersect: Intersect2Fn,
    intersect3: Intersect3Fn,
    intersect_many: IntersectManyFn,
    positions_ge: PositionsFn,
    strict_prefix_sum: PrefixSumFn,
    best_impact: BestImpactFn,
    frontier: FrontierFn,
    joint_bound: JointFn,
    keys_above: KeysAboveFn,
    popcount: PopcountFn,
}

impl fmt::Debug for Kernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernels").field("name", &self.name).finish()
    }
}

impl Kernels {
    /// The portable scalar kernels; available on every target.
    pub fn scalar() -> Kernels {
        Kernels {
            name: "scalar",
            find_next_geq: scalar::find_next_geq,
            intersect: scalar::intersect_into,
            intersect3: scalar::intersect3_into,
            intersect_many: scalar::intersect_many_into,
            positions_ge: scalar::positions_ge,
            strict_prefix_sum: scalar::strict_prefix_sum,
            best_impact: scalar::best_impact,
            frontier: scalar::frontier,
            joint_bound: scalar::joint_bound,
            keys_above: scalar::keys_above,
            popcount: scalar::popcount,
        }
    }

    /// The AVX2 kernels, or `None` when the CPU (or target) lacks AVX2 (or
    /// POPCNT, which every AVX2 CPU has).
    pub fn avx2() -> Option<Kernels> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
                return Some(Kernels {
                    name: "avx2",
                    find_next_geq: avx2::find_next_geq,
                    intersect: avx2::intersect_into,
                    intersect3: avx2::intersect3_into,
                    intersect_many: avx2::intersect_many_into,
                    positions_ge: avx2::positions_ge,
                    strict_prefix_sum: avx2::strict_prefix_sum,
                    best_impact: avx2::best_impact,
                    frontier: avx2::frontier,
                    joint_bound: avx2::joint_bound,
                    keys_above: avx2::keys_above,
                    popcount: avx2::popcount,
                });
            }
        }
        None
    }

    /// The best kernels for this CPU, honouring the `QUARRY_SIMD`
    /// environment variable (`auto` | `scalar`; anything else means `auto`).
    pub fn detect() -> Kernels {
        let setting = std::env::var(SIMD_ENV_VAR).ok();
        Kernels::from_setting(setting.as_deref())
    }

    /// Like [`Kernels::detect`], but with the `QUARRY_SIMD` value passed in
    /// (`None` = unset). `scalar` forces the portable kernels; `auto`, unset
    /// and invalid values select the best available implementation.
    pub fn from_setting(setting: Option<&str>) -> Kernels {
        let force_scalar = setting.and_then(parse_setting).unwrap_or(false);
        if force_scalar {
            return Kernels::scalar();
        }
        Kernels::avx2().unwrap_or_else(Kernels::scalar)
    }

    /// Short name of the implementation: `"scalar"` or `"avx2"`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// See the free function [`find_next_geq`].
    #[inline]
    pub fn find_next_geq(&self, docs: &[u32], from: usize, target: u32) -> usize {
        // SAFETY: by the struct invariant the pointer is callable on this CPU
        // (scalar, or AVX2 stored only after runtime detection).
        unsafe { (self.find_next_geq)(docs, from, target) }
    }

    /// See the free function [`intersect_into`].
    #[inline]
    pub fn intersect_into(&self, a: &[u32], b: &[u32], out: &mut Vec<u32>) {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.intersect)(a, b, out) }
    }

    /// See the free function [`intersect3_into`].
    #[inline]
    pub fn intersect3_into(&self, a: &[u32], b: &[u32], c: &[u32], out: &mut Vec<u32>) {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.intersect3)(a, b, c, out) }
    }

    /// See the free function [`intersect_many_into`].
    #[inline]
    pub fn intersect_many_into(&self, lists: &[&[u32]], out: &mut Vec<u32>) {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.intersect_many)(lists, out) }
    }

    /// See the free function [`strict_prefix_sum`].
    #[inline]
    pub fn strict_prefix_sum(&self, vals: &mut [u32], base: u32) {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.strict_prefix_sum)(vals, base) }
    }

    /// See the free function [`positions_ge`].
    #[inline]
    pub fn positions_ge(&self, keys: &[u32], threshold: u32, out: &mut Vec<u32>) {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.positions_ge)(keys, threshold, out) }
    }

    /// See the free function [`best_impact`].
    #[inline]
    pub fn best_impact(
        &self,
        pairs: &[u8; 16],
        count: usize,
        factors: &[f32; 256],
    ) -> Option<(f32, u8)> {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.best_impact)(pairs, count, factors) }
    }

    /// See the free function [`frontier`].
    #[inline]
    pub fn frontier(
        &self,
        pairs: &[u8; 16],
        count: usize,
        factors: &[f32; 256],
    ) -> Option<Frontier> {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.frontier)(pairs, count, factors) }
    }

    /// See the free function [`joint_bound`].
    #[inline]
    pub fn joint_bound(
        &self,
        x: (&Frontier, f32),
        y: (&Frontier, f32),
        bounds: &[f32],
        slots: (usize, usize),
    ) -> f32 {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.joint_bound)(x, y, bounds, slots) }
    }

    /// See the free function [`keys_above`].
    #[inline]
    pub fn keys_above(
        &self,
        (docs, tfs): (&[u32], &[u32]),
        (norms, factors): (&[u8], &[f32; 256]),
        limits: (f32, u32),
        out: &mut Vec<u32>,
    ) {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.keys_above)(docs, tfs, norms, factors, limits, out) }
    }

    /// See the free function [`popcount`].
    #[inline]
    pub fn popcount(&self, words: &[u64]) -> u64 {
        // SAFETY: by the struct invariant the pointer is callable on this CPU.
        unsafe { (self.popcount)(words) }
    }
}

/// The process-wide kernel table, chosen by [`Kernels::detect`] on first use
/// and cached for the life of the process (so `QUARRY_SIMD` is read once).
pub fn active() -> &'static Kernels {
    static ACTIVE: OnceLock<Kernels> = OnceLock::new();
    ACTIVE.get_or_init(Kernels::detect)
}

/// Returns the smallest index `i >= from` with `docs[i] >= target`, or
/// `docs.len()` if there is none (including when `from >= docs.len()`).
///
/// `docs` must be strictly ascending (a decoded posting block, typically up
/// to 256 doc ids). If it is not, the result is an unspecified index in
/// `from..=docs.len()` (or `docs.len()`), but memory safety is never at stake.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
    active().find_next_geq(docs, from, target)
}

/// Appends the union of two strictly ascending lists to `out`, in
/// ascending order and without duplicates. `out` is not cleared first.
/// A scalar merge: it serves sparse windows, where lists are short.
pub fn union_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// Appends the union of two strictly ascending lists with a sum per
/// document to `out`: a document of `a` whose partial sum is `a_sums[i]`
/// and of `b` whose score is `b_scores[j]` gets `a_sums[i] + b_scores[j]`,
/// one of `a` alone keeps `a_sums[i]` (plus +0.0, which changes no
/// non-negative sum), and one of `b` alone gets `absent +
/// b_scores[j]` (`absent`: what a document of no earlier list has summed,
/// 0 or the bounds added in place of lists not read). Adding lists in
/// clause order this way gives each document the bits of the clause-order
/// sum of its scores. `out` is not cleared first.
#[inline]
pub fn union_sum_into(
    (a, a_sums): (&[u32], &[f32]),
    (b, b_scores): (&[u32], &[f32]),
    absent: f32,
    (out, out_sums): (&mut Vec<u32>, &mut Vec<f32>),
) {
    assert!(a.len() == a_sums.len() && b.len() == b_scores.len());
    let (at, cap) = (out.len(), a.len() + b.len());
    out.resize(at + cap, 0);
    out_sums.resize(at + cap, 0.0);
    let (docs, sums) = (&mut out[at..], &mut out_sums[at..]);
    let k = if cap < SPLIT_MERGE {
        union_part(
            ((a, a_sums), (b, b_scores)),
            absent,
            (docs, sums),
            (0, 0, 0),
        )
    } else {
        // Split at the middle document of the longer list: the documents
        // below it and those from it on are two unions, written apart
        // (the first half's room is what it can hold at most) and merged
        // in one loop, then closed up.
        let longer = if a.len() >= b.len() { a } else { b };
        let pivot = longer[longer.len() / 2];
        let (ia, jb) = (
            a.partition_point(|&d| d < pivot),
            b.partition_point(|&d| d < pivot),
        );
        let room = ia + jb;
        let (first, second) = (
            ((&a[..ia], &a_sums[..ia]), (&b[..jb], &b_scores[..jb])),
            ((&a[ia..], &a_sums[ia..]), (&b[jb..], &b_scores[jb..])),
        );
        let (d1, d2) = docs.split_at_mut(room);
        let (s1, s2) = sums.split_at_mut(room);
        let (p1, p2) = merge_sums2(
            (first, (&mut *d1, &mut *s1)),
            (second, (&mut *d2, &mut *s2)),
            absent,
        );
        let (k1, k2) = (
            union_part(first, absent, (d1, s1), p1),
            union_part(second, absent, (d2, s2), p2),
        );
        docs.copy_within(room..room + k2, k1);
        sums.copy_within(room..room + k2, k1);
        k1 + k2
    };
    out.truncate(at + k);
    out_sums.truncate(at + k);
}

/// The fewest documents in two lists for [`union_sum_into`] to merge them
/// as two halves in one loop ([`merge_sums2`]): a merge's steps depend on
/// each other (a load, a compare, the next index), so one merge takes a
/// load's latency a document, and two independent ones in the same loop
/// overlap. Below this, the split's searches and the copy that closes the
/// halves up cost more than they save.
const SPLIT_MERGE: usize = 64;

/// The rest of one union after `at` (how far a merge got in `a`, in `b`
/// and in the output): the merge carried on, then the list left over
/// copied (`b`'s documents summed onto `absent`). Returns how many
/// documents the union has.
fn union_part(
    lists: (Scored<'_>, Scored<'_>),
    absent: f32,
    out: (&mut [u32], &mut [f32]),
    at: (usize, usize, usize),
) -> usize {
    let mut m = Merge::new((lists, out), at);
    m.run(absent);
    let Merge {
        a: (a, a_sums),
        b: (b, b_scores),
        docs,
        sums,
        i: (mut i, mut j, mut k),
    } = m;
    for (&d, &s) in a[i..].iter().zip(&a_sums[i..]) {
        (docs[k], sums[k]) = (d, s);
        (i, k) = (i + 1, k + 1);
    }
    for (&d, &s) in b[j..].iter().zip(&b_scores[j..]) {
        (docs[k], sums[k]) = (d, absent + s);
        (j, k) = (j + 1, k + 1);
    }
    debug_assert!(i == a.len() && j == b.len());
    k
}

/// One input list and its sums or scores.
type Scored<'a> = (&'a [u32], &'a [f32]);
/// One union's two inputs and its output.
type UnionPart<'a, 'b> = ((Scored<'a>, Scored<'a>), (&'b mut [u32], &'b mut [f32]));

/// One union of [`union_sum_into`] being merged: its lists (`a` with
/// sums, `b` with scores), its output, and how far it got in each.
struct Merge<'a, 'b> {
    a: Scored<'a>,
    b: Scored<'a>,
    docs: &'b mut [u32],
    sums: &'b mut [f32],
    /// Positions in `a`, in `b` and in the output.
    i: (usize, usize, usize),
}

impl<'a, 'b> Merge<'a, 'b> {
    /// A merge of `part` from `at`, which must be where an earlier merge
    /// of the same lists stopped (or the start).
    #[inline(always)]
    fn new(
        (((a, a_sums), (b, b_scores)), (docs, sums)): UnionPart<'a, 'b>,
        at: (usize, usize, usize),
    ) -> Self {
        // Equal lengths, said so that the steps' reads need no checks.
        let (a_sums, b_scores) = (&a_sums[..a.len()], &b_scores[..b.len()]);
        let n = a.len() + b.len();
        assert!(docs.len() >= n && sums.len() >= n);
        debug_assert!(at.0 <= a.len() && at.1 <= b.len() && at.2 <= at.0 + at.1);
        Merge {
            a: (a, a_sums),
            b: (b, b_scores),
            docs,
            sums,
            i: at,
        }
    }

    /// Whether neither list has ended.
    #[inline(always)]
    fn live(&self) -> bool {
        self.i.0 < self.a.0.len() && self.i.1 < self.b.0.len()
    }

    /// One document of the union (the merge must be [`Self::live`]): the
    /// lesser of the two lists' next ones, with what it had (its sum in
    /// `a`, or `absent`) plus what `b` gives it (its score, or 0),
    /// selected without a branch. Adding +0.0 changes no sum: sums of
    /// non-negative scores and bounds are never -0.0.
    #[inline(always)]
    fn step(&mut self, absent: f32) {
        let (i, j, k) = self.i;
        let (x, y) = (self.a.0[i], self.b.0[j]);
        let (in_a, in_b) = (x <= y, y <= x);
        let sum = select(in_a, self.a.1[i], absent) + select(in_b, self.b.1[j], 0.0);
        // SAFETY: each step writes slot `k` and moves `i` or `j` (or both)
        // on, so `k <= i + j < a.len() + b.len()` (the merge is live, and
        // started where an earlier one of the same lists stopped), at
        // most the outputs' length (asserted in `new`).
        unsafe {
            *self.docs.get_unchecked_mut(k) = x.min(y);
            *self.sums.get_unchecked_mut(k) = sum;
        }
        self.i = (i + usize::from(in_a), j + usize::from(in_b), k + 1);
    }

    /// Steps until one list ends. Kept apart (and branch-free) so that
    /// its few variables stay in registers: inlined into the window loop
    /// the merge spilled them, about 36 instructions a document.
    #[inline(never)]
    fn run(&mut self, absent: f32) {
        while self.live() {
            self.step(absent);
        }
    }
}

/// Two independent unions merged a step of each per iteration, until
/// either has a list ended: returns how far each got (in its `a`, its
/// `b` and its output). The two chains of dependent steps overlap, so a
/// document costs about half a load's latency.
#[inline(never)]
fn merge_sums2(
    first: UnionPart<'_, '_>,
    second: UnionPart<'_, '_>,
    absent: f32,
) -> ((usize, usize, usize), (usize, usize, usize)) {
    let (mut m1, mut m2) = (Merge::new(first, (0, 0, 0)), Merge::new(second, (0, 0, 0)));
    while m1.live() && m2.live() {
        m1.step(absent);
        m2.step(absent);
    }
    (m1.i, m2.i)
}

/// `if c { x } else { y }` on the bits, told to the compiler as
/// unpredictable so that it compiles to a conditional move: a select of
/// floats becomes a branch on x86 (which has no conditional move for
/// them), and masking the bits by hand was recognised as one, either
/// way a branch mispredicted about as often as a merge switches lists.
#[inline(always)]
fn select(c: bool, x: f32, y: f32) -> f32 {
    f32::from_bits(std::hint::select_unpredictable(c, x.to_bits(), y.to_bits()))
}

/// Appends the intersection of two strictly ascending lists to `out`, in
/// ascending order. `out` is not cleared first.
///
/// Lists of similar length use a block-wise merge (8x8 all-pairs compare with
/// AVX2); when one list is at least 32 times longer than the other, the
/// shorter one leads and gallops through the longer: exponential probes and
/// a binary search bound a window of at most 64 elements, which the
/// [`find_next_geq`] look-ahead (with an 8-lane equality probe under AVX2)
/// finishes. Unsorted input gives an unspecified (but memory-safe) result.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn intersect_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    active().intersect_into(a, b, out)
}

/// Appends the intersection of three strictly ascending lists to `out`, in
/// ascending order (the two shortest lists are intersected first). `out` is
/// not cleared first.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn intersect3_into(a: &[u32], b: &[u32], c: &[u32], out: &mut Vec<u32>) {
    active().intersect3_into(a, b, c, out)
}

/// Appends the intersection of any number of strictly ascending lists to
/// `out`, in ascending order. `out` is not cleared first.
///
/// Lists are processed shortest first, so the shortest list leads and the
/// running result only shrinks. An empty `lists` appends nothing; a single
/// list is copied.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn intersect_many_into(lists: &[&[u32]], out: &mut Vec<u32>) {
    active().intersect_many_into(lists, out)
}

/// Appends to `out`, ascending, every position `i` (as `u32`) with
/// `keys[i] >= threshold`, comparing as unsigned integers. `out` is not
/// cleared first. `keys` may be in any order; it must have fewer than
/// 2^32 elements. Serves the frequency check of a block's candidates: one
/// compare per 8 frequencies, so few survivors cost little.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn positions_ge(keys: &[u32], threshold: u32, out: &mut Vec<u32>) {
    active().positions_ge(keys, threshold, out)
}

/// Decodes gaps stored minus one, in place: `vals[i]` becomes `base +
/// (vals[0] + 1) + ... + (vals[i] + 1)`, in wrapping arithmetic (so a
/// `base` of `u32::MAX` makes the first value `vals[0]` itself). The
/// doc ids of a posting block from its packed gaps, 8 sums at a time.
///
/// Uses the process-wide [`active`] kernels, except for lists shorter
/// than one vector (a posting's few positions), summed in place without
/// the dispatch.
#[inline]
pub fn strict_prefix_sum(vals: &mut [u32], base: u32) {
    if vals.len() < 8 {
        scalar::strict_prefix_sum(vals, base)
    } else {
        active().strict_prefix_sum(vals, base)
    }
}

/// The largest key `tf as f32 * factors[norm]` (in f32, the product
/// [`TermWeight::key`](crate::query::bm25::TermWeight::key) computes)
/// over the first `count` (1 to 8) two-byte pairs `(tf, norm)` of
/// `pairs`, and their least norm byte: a block's stored impacts, read in
/// place. `None` when `count` is out of range or a frequency byte in use
/// has its high bit set (a longer varint: the caller reads those pairs
/// one by one). Bytes past the pairs in use are ignored. A plain
/// maximum: the keys of finite factors are never NaN, and equal keys
/// have equal bits.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn best_impact(pairs: &[u8; 16], count: usize, factors: &[f32; 256]) -> Option<(f32, u8)> {
    active().best_impact(pairs, count, factors)
}

/// Up to eight (frequency, norm byte) pairs of one block's impacts as
/// lanes, with each norm's key factor: what [`joint_bound`] reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frontier {
    /// Each pair's frequency, converted as `u32 as f32` does; 0 in lanes
    /// not in use.
    pub tf: [f32; 8],
    /// Each pair's norm byte; -1 in lanes not in use.
    pub norm: [i32; 8],
    /// Each pair's key factor (`factors[norm]`); 0 in lanes not in use.
    pub factor: [f32; 8],
}

impl Frontier {
    /// No pairs: every lane unused.
    pub const EMPTY: Frontier = Frontier {
        tf: [0.0; 8],
        norm: [-1; 8],
        factor: [0.0; 8],
    };

    /// Sets lane `i` to the pair (`tf`, `norm`) with its key factor
    /// `factor`.
    #[inline]
    pub fn set(&mut self, i: usize, tf: u32, norm: u8, factor: f32) {
        self.tf[i] = tf as f32;
        self.norm[i] = i32::from(norm);
        self.factor[i] = factor;
    }
}

/// The first `count` (1 to 8) two-byte pairs `(tf, norm)` of `pairs` (a
/// block's stored impacts, read in place) as a [`Frontier`], each norm's
/// factor from `factors`. `None` where [`best_impact`] says so: `count`
/// out of range, or a frequency byte in use with its high bit set (the
/// caller reads such pairs one by one).
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn frontier(pairs: &[u8; 16], count: usize, factors: &[f32; 256]) -> Option<Frontier> {
    active().frontier(pairs, count, factors)
}

/// The best score, summed over `bounds` in clause order, that a document
/// matching both of two clauses (slots `sx` and `sy` of `bounds`, whose
/// other entries are the other clauses' bounds) can have, given one block
/// of each, `x` and `y` with their weights: impacts dominate every
/// document of their block (a pair's frequency at least the document's,
/// its norm at most), and the two clauses are of one field, so a document
/// has one norm in both. A document's norm is at least that of both
/// pairs dominating it, so one of the two has the larger norm: for each
/// pair of `x`, its own score (`w - w / (1 + tf * factor)`, as
/// [`TermWeight::score_of_key`](crate::query::bm25::TermWeight::score_of_key)
/// computes it) with `y`'s largest frequency among its pairs of norm at
/// or under the pair's, at the pair's factor; for each pair of `y`, its own
/// score with `x`'s largest frequency among pairs of norm strictly under,
/// at `y`'s pair's factor; a pair the other clause has none for gives
/// nothing, and no pair at all gives `NEG_INFINITY`. Each score is
/// monotone in its frequency and factor and factors fall with the norm,
/// so this bounds every such document bit for bit; over the pairs of a
/// Pareto frontier it is the best such sum at any norm. Where the sum of
/// the two blocks' best scores bounds a window of two common terms
/// (whose blocks each hold a document of a large frequency and one of a
/// short length, rarely the same), this takes each length once.
///
/// `bounds` must be finite, the weights finite and positive, and `sx`,
/// `sy` distinct slots of `bounds`; the result is then never NaN.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn joint_bound(
    x: (&Frontier, f32),
    y: (&Frontier, f32),
    bounds: &[f32],
    slots: (usize, usize),
) -> f32 {
    active().joint_bound(x, y, bounds, slots)
}

/// Appends to `out`, in order, each `docs[i]` whose frequency `tfs[i]` is
/// at least `min_tf` and whose key `tfs[i] as f32 *
/// factors[norms[docs[i]]]` (in f32, as
/// [`TermWeight::key`](crate::query::bm25::TermWeight::key) computes it)
/// is above `limit`, over the first `min(docs.len(), tfs.len())` pairs.
/// `out` is not cleared first. A document outside `norms` panics unless
/// its frequency is under `min_tf`. Thins a decoded block to the
/// documents whose score can still compete: two gathers, a multiply and
/// a compare per 8 documents, whatever is kept. The norm of a document
/// whose frequency is under `min_tf` is not read
/// (a caller's threshold at a block's least norm, under which no key can
/// be above `limit`, spares the reads that miss the cache).
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn keys_above(
    (docs, tfs): (&[u32], &[u32]),
    (norms, factors): (&[u8], &[f32; 256]),
    (limit, min_tf): (f32, u32),
    out: &mut Vec<u32>,
) {
    active().keys_above((docs, tfs), (norms, factors), (limit, min_tf), out)
}

/// The number of bits set in `words`: the documents of a bitset (presence
/// bitmaps combined word by word). One `popcnt` a word where the CPU has
/// it, a shift-and-add sequence of about a dozen instructions otherwise.
///
/// Uses the process-wide [`active`] kernels.
#[inline]
pub fn popcount(words: &[u64]) -> u64 {
    active().popcount(words)
}

/// Asks for the cache line that holds `bytes[at]` ahead of its reading: a
/// hint, never a fault (nothing when `at` is past the end, or off x86-64).
#[inline(always)]
pub fn prefetch(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(byte) = bytes.get(at) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch reads nothing architecturally and never
        // faults; the address is that of a byte of `bytes`.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(byte).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
}
