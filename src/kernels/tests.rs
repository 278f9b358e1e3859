//! One harness for every implementation available on this CPU: scalar and the
//! portable instantiation of the generic SIMD algorithms always, AVX2 when the
//! CPU has it (skipped — with a note on stderr — otherwise). Every case is
//! checked against naive oracles.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::{Frontier, Kernels, generic};

/// Every implementation that can run here.
fn implementations() -> Vec<Kernels> {
    let mut all = vec![Kernels::scalar(), generic::portable::kernels()];
    match Kernels::avx2() {
        Some(k) => all.push(k),
        None => eprintln!("note: AVX2 not available on this CPU; skipping the avx2 kernels"),
    }
    all
}

fn oracle_find(docs: &[u32], from: usize, target: u32) -> usize {
    (from..docs.len())
        .find(|&i| docs[i] >= target)
        .unwrap_or(docs.len())
}

fn oracle_intersect(lists: &[&[u32]]) -> Vec<u32> {
    let Some((first, rest)) = lists.split_first() else {
        return Vec::new();
    };
    let sets: Vec<BTreeSet<u32>> = rest.iter().map(|l| l.iter().copied().collect()).collect();
    first
        .iter()
        .copied()
        .filter(|x| sets.iter().all(|s| s.contains(x)))
        .collect()
}

fn check_find(impls: &[Kernels], docs: &[u32], from: usize, target: u32) {
    let want = oracle_find(docs, from, target);
    for k in impls {
        let got = k.find_next_geq(docs, from, target);
        assert_eq!(
            got,
            want,
            "{}: find_next_geq(len={}, from={from}, target={target})",
            k.name(),
            docs.len()
        );
    }
}

/// Checks 2-way (both argument orders), 3-way (when 3 lists) and n-way, each
/// appending to a non-empty `out` to verify nothing is cleared.
fn check_intersections(impls: &[Kernels], lists: &[&[u32]]) {
    let want = oracle_intersect(lists);
    let prefix = [7u32, 3, 9];
    let expect: Vec<u32> = prefix.iter().copied().chain(want.iter().copied()).collect();
    for k in impls {
        let mut out = prefix.to_vec();
        k.intersect_many_into(lists, &mut out);
        assert_eq!(
            out,
            expect,
            "{}: intersect_many_into, {} lists",
            k.name(),
            lists.len()
        );
        if let [a, b] = lists {
            for (x, y) in [(a, b), (b, a)] {
                let mut out = prefix.to_vec();
                k.intersect_into(x, y, &mut out);
                assert_eq!(
                    out,
                    expect,
                    "{}: intersect_into(len {}, len {})",
                    k.name(),
                    x.len(),
                    y.len()
                );
            }
        }
        if let [a, b, c] = lists {
            for (x, y, z) in [(a, b, c), (c, a, b), (b, c, a)] {
                let mut out = prefix.to_vec();
                k.intersect3_into(x, y, z, &mut out);
                assert_eq!(out, expect, "{}: intersect3_into", k.name());
            }
        }
    }
}

/// Strictly ascending list of `n` values starting at `start` with stride `step`.
fn ramp(start: u32, step: u32, n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| start + i * step).collect()
}

// ---------------------------------------------------------------- dispatch

#[test]
fn dispatch_names_and_selection() {
    assert_eq!(Kernels::scalar().name(), "scalar");
    assert_eq!(Kernels::from_setting(Some("scalar")).name(), "scalar");
    assert_eq!(Kernels::from_setting(Some(" SCALAR ")).name(), "scalar");
    let auto = Kernels::from_setting(None).name();
    assert_eq!(Kernels::from_setting(Some("auto")).name(), auto);
    assert_eq!(Kernels::from_setting(Some("bogus")).name(), auto);
    assert_eq!(Kernels::from_setting(Some("")).name(), auto);
    #[cfg(target_arch = "x86_64")]
    {
        let has_avx2 =
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt");
        assert_eq!(Kernels::avx2().is_some(), has_avx2);
        assert_eq!(auto, if has_avx2 { "avx2" } else { "scalar" });
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert!(Kernels::avx2().is_none());
    // The process-wide table is one of the two, and the free functions use it.
    assert!(["scalar", "avx2"].contains(&super::active().name()));
    assert_eq!(super::find_next_geq(&[1, 5, 9], 0, 6), 2);
    let mut out = Vec::new();
    super::intersect_into(&[1, 5, 9], &[5, 9, 11], &mut out);
    super::intersect3_into(&[1, 5, 9], &[5, 9, 11], &[9], &mut out);
    super::intersect_many_into(&[&[2, 4], &[4], &[0, 4, 8], &[4, 5]], &mut out);
    assert_eq!(out, [5, 9, 9, 4]);
    assert!(format!("{:?}", Kernels::scalar()).contains("scalar"));
}

#[test]
fn compress_table_is_consistent() {
    for (mask, &packed) in generic::COMPRESS_NIBBLES.iter().enumerate() {
        let lanes: Vec<u32> = (0..8).filter(|l| mask & (1 << l) != 0).collect();
        for (k, lane) in lanes.iter().enumerate() {
            assert_eq!((packed >> (4 * k)) & 0xF, *lane, "mask {mask:#010b}");
        }
    }
}

// ---------------------------------------------------------- find_next_geq

#[test]
fn find_edge_cases() {
    let impls = implementations();
    for target in [0, 1, 5, u32::MAX] {
        for from in [0, 1, 2] {
            check_find(&impls, &[], from, target);
        }
    }
    for target in [0, 4, 5, 6, u32::MAX] {
        for from in [0, 1, 7] {
            check_find(&impls, &[5], from, target);
            check_find(&impls, &[0], from, target);
            check_find(&impls, &[u32::MAX], from, target);
        }
    }
    // Values straddling the sign bit and the ends of the u32 range.
    let mixed = [
        0,
        1,
        0x7FFF_FFFE,
        0x7FFF_FFFF,
        0x8000_0000,
        0x8000_0001,
        u32::MAX - 1,
        u32::MAX,
    ];
    for n in 1..=mixed.len() {
        let docs = &mixed[mixed.len() - n..];
        for from in 0..=n + 1 {
            for &t in &mixed {
                check_find(&impls, docs, from, t);
                check_find(&impls, docs, from, t.wrapping_add(1));
            }
        }
    }
}

#[test]
fn find_every_length_position_and_from() {
    let impls = implementations();
    // Three bases: low, around the sign bit, and touching u32::MAX.
    for n in 1..=300usize {
        let bases = [1u32, 0x8000_0000 - 300, u32::MAX - 3 * (n as u32 - 1)];
        for base in bases {
            let docs = ramp(base, 3, n);
            let froms = [0, 1, 7, 8, 9, n / 2, n.saturating_sub(9), n - 1, n, n + 3];
            for &from in &froms {
                check_find(&impls, &docs, from, 0);
                check_find(&impls, &docs, from, u32::MAX);
                for &d in &docs {
                    check_find(&impls, &docs, from, d); // all-equal targets
                    check_find(&impls, &docs, from, d.wrapping_add(1));
                }
            }
        }
    }
}

#[test]
fn find_every_from_small_blocks() {
    let impls = implementations();
    for n in 1..=40usize {
        let docs = ramp(10, 2, n);
        for from in 0..=n {
            for target in 0..(10 + 2 * n as u32 + 2) {
                check_find(&impls, &docs, from, target);
            }
        }
    }
}

// ---------------------------------------------------------- intersections

#[test]
fn intersect_edge_cases() {
    let impls = implementations();
    let empty: &[u32] = &[];
    let one: &[u32] = &[5];
    let ends: &[u32] = &[0, u32::MAX];
    let signs: &[u32] = &[0x7FFF_FFFF, 0x8000_0000, u32::MAX];
    for (a, b) in [
        (empty, empty),
        (empty, one),
        (one, one),
        (one, ends),
        (ends, ends),
        (ends, signs),
        (signs, signs),
    ] {
        check_intersections(&impls, &[a, b]);
        check_intersections(&impls, &[a, b, ends]);
    }
    check_intersections(&impls, &[]);
    check_intersections(&impls, &[signs]);
    check_intersections(&impls, &[empty]);
    check_intersections(&impls, &[signs, signs, signs, signs, ends]);
    check_intersections(&impls, &[signs, signs, empty, signs]);
}

#[test]
fn intersect_every_length() {
    let impls = implementations();
    for n in 1..=300usize {
        let a = ramp(0, 1, n); // dense
        let evens = ramp(0, 2, n);
        let odds = ramp(1, 2, n);
        let shifted = ramp(n as u32 / 2, 1, n);
        let sparse = ramp(0, 7, n);
        let high = ramp(u32::MAX - (n as u32 - 1), 1, n);
        let high_odd = ramp(u32::MAX - 2 * (n as u32 - 1), 2, n);
        check_intersections(&impls, &[&a, &a]); // all equal
        check_intersections(&impls, &[&a, &evens]);
        check_intersections(&impls, &[&evens, &odds]); // disjoint, interleaved
        check_intersections(&impls, &[&a, &shifted]);
        check_intersections(&impls, &[&sparse, &a]);
        check_intersections(&impls, &[&high, &high_odd]);
        check_intersections(&impls, &[&a, &evens, &shifted]);
        check_intersections(&impls, &[&a, &evens, &sparse, &shifted]);
        // Short prefix against the long lists: crosses the 32x skew threshold.
        let short = &evens[..n.div_ceil(33)];
        check_intersections(&impls, &[short, &a]);
        check_intersections(&impls, &[short, &a, &evens]);
    }
}

#[test]
fn intersect_skewed_gallop() {
    let impls = implementations();
    let large = ramp(0, 3, 20_000);
    for n in [1, 2, 7, 8, 9, 31, 100, 600, 700] {
        // Hits: multiples of 3 up to the end; misses in between; beyond the end.
        let small: Vec<u32> = (0..n as u32).map(|i| i * 97).collect();
        check_intersections(&impls, &[&small, &large]);
        let beyond: Vec<u32> = (0..n as u32).map(|i| 59_990 + i * 5).collect();
        check_intersections(&impls, &[&beyond, &large]);
        check_intersections(&impls, &[&small, &large, &beyond]);
    }
    check_intersections(&impls, &[&[u32::MAX], &large]);
    check_intersections(&impls, &[&[0], &large]);
}

// -------------------------------------------------------------- proptest

fn sorted_list(max_len: usize) -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        prop::collection::btree_set(0u32..1_000, 0..max_len),
        prop::collection::btree_set(any::<u32>(), 0..max_len),
        prop::collection::btree_set((u32::MAX - 1_000)..=u32::MAX, 0..max_len),
        prop::collection::btree_set(0x7FFF_FE00u32..0x8000_0200, 0..max_len),
    ]
    .prop_map(|s| s.into_iter().collect())
}

/// Dense lists over one shared small domain, so intersections are non-trivial.
fn overlapping_lists(count: usize, max_len: usize) -> impl Strategy<Value = Vec<Vec<u32>>> {
    (0u32..2, 1u32..2_000).prop_flat_map(move |(high, domain)| {
        let offset = if high == 1 { u32::MAX - domain } else { 0 };
        prop::collection::vec(
            prop::collection::btree_set(0..=domain, 0..max_len)
                .prop_map(move |s| s.into_iter().map(|x| x + offset).collect::<Vec<u32>>()),
            count,
        )
    })
}

proptest! {
    #[test]
    fn prop_find_next_geq(docs in sorted_list(300), from in 0usize..320, target in any::<u32>(), pick in any::<prop::sample::Index>()) {
        let impls = implementations();
        check_find(&impls, &docs, from, target);
        if !docs.is_empty() {
            let d = docs[pick.index(docs.len())];
            check_find(&impls, &docs, from, d);
            check_find(&impls, &docs, from, d.wrapping_add(1));
        }
    }

    #[test]
    fn prop_union(lists in overlapping_lists(2, 400), prefix in 0u32..5) {
        let mut out = vec![prefix];
        super::union_into(&lists[0], &lists[1], &mut out);
        let mut want: Vec<u32> = lists[0].iter().chain(&lists[1]).copied().collect();
        want.sort_unstable();
        want.dedup();
        want.insert(0, prefix);
        prop_assert_eq!(out, want);
    }

    #[test]
    fn prop_union_sum(lists in overlapping_lists(3, 300), seed in any::<u64>(), bounds in prop::collection::vec(0.0f32..4.0, 3)) {
        // Clause order: a bound (as a list not read adds), list 0, a
        // bound, list 1, list 2, a bound.
        let mut rng = seed;
        let mut score = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 40) as f32 / (1u64 << 20) as f32
        };
        let scores: Vec<Vec<f32>> = lists.iter().map(|l| l.iter().map(|_| score()).collect()).collect();
        enum Step { Bound(f32), List(usize) }
        let steps = [Step::Bound(bounds[0]), Step::List(0), Step::Bound(bounds[1]), Step::List(1), Step::List(2), Step::Bound(bounds[2])];
        let (mut docs, mut sums, mut absent) = (Vec::new(), Vec::new(), 0.0f32);
        for step in &steps {
            match *step {
                Step::Bound(c) => {
                    sums.iter_mut().for_each(|s| *s += c);
                    absent += c;
                }
                Step::List(l) => {
                    let (mut d2, mut s2) = (Vec::new(), Vec::new());
                    super::union_sum_into((&docs, &sums), (&lists[l], &scores[l]), absent, (&mut d2, &mut s2));
                    (docs, sums) = (d2, s2);
                }
            }
        }
        let mut want: Vec<u32> = lists.iter().flatten().copied().collect();
        want.sort_unstable();
        want.dedup();
        prop_assert_eq!(&docs, &want);
        for (&d, &got) in docs.iter().zip(&sums) {
            let mut sum = 0.0f32;
            for step in &steps {
                match *step {
                    Step::Bound(c) => sum += c,
                    Step::List(l) => if let Ok(k) = lists[l].binary_search(&d) { sum += scores[l][k] },
                }
            }
            prop_assert_eq!(got.to_bits(), sum.to_bits(), "doc {}", d);
        }
    }

    #[test]
    fn prop_intersect2(a in sorted_list(300), b in sorted_list(300)) {
        check_intersections(&implementations(), &[&a, &b]);
    }

    #[test]
    fn prop_intersect2_overlapping(lists in overlapping_lists(2, 400)) {
        check_intersections(&implementations(), &[&lists[0], &lists[1]]);
    }

    #[test]
    fn prop_intersect2_skewed(small in prop::collection::btree_set(0u32..40_000, 0..40), large in prop::collection::btree_set(0u32..40_000, 1_000..3_000)) {
        let small: Vec<u32> = small.into_iter().collect();
        let large: Vec<u32> = large.into_iter().collect();
        check_intersections(&implementations(), &[&small, &large]);
    }

    #[test]
    fn prop_intersect3(lists in overlapping_lists(3, 300)) {
        check_intersections(&implementations(), &[&lists[0], &lists[1], &lists[2]]);
    }

    #[test]
    fn prop_intersect_many(lists in (0usize..7).prop_flat_map(|n| overlapping_lists(n, 300))) {
        let refs: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
        check_intersections(&implementations(), &refs);
    }

    /// Unsorted input must never be unsound (results are unspecified).
    #[test]
    fn prop_unsorted_input_is_memory_safe(a in prop::collection::vec(0u32..16, 0..200), b in prop::collection::vec(0u32..16, 0..200), from in 0usize..210, target in 0u32..20) {
        for k in implementations() {
            let idx = k.find_next_geq(&a, from, target);
            prop_assert!(idx <= a.len().max(from));
            let mut out = Vec::new();
            k.intersect_into(&a, &b, &mut out);
            k.intersect3_into(&a, &b, &a, &mut out);
            k.intersect_many_into(&[&a, &b, &b], &mut out);
            prop_assert!(out.iter().all(|x| a.contains(x)));
        }
    }
}

fn check_positions(impls: &[Kernels], keys: &[u32], threshold: u32) {
    let prefix = [9u32, 1];
    let want: Vec<u32> = prefix
        .iter()
        .copied()
        .chain((0..keys.len() as u32).filter(|&i| keys[i as usize] >= threshold))
        .collect();
    for k in impls {
        let mut out = prefix.to_vec();
        k.positions_ge(keys, threshold, &mut out);
        assert_eq!(
            out,
            want,
            "{}: positions_ge(len={}, threshold={threshold})",
            k.name(),
            keys.len()
        );
    }
}

#[test]
fn positions_every_length_and_unsigned_edges() {
    let impls = implementations();
    for n in 0..40usize {
        let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        for t in [0, 1, u32::MAX / 2, u32::MAX / 2 + 1, u32::MAX] {
            check_positions(&impls, &keys, t);
        }
    }
    check_positions(
        &impls,
        &[u32::MAX, 0, 0x8000_0000, 0x7fff_ffff, 3, 3, 3, 3, 4],
        3,
    );
}

proptest! {
    #[test]
    fn prop_positions_ge(keys in proptest::collection::vec(0u32..12, 0..300), threshold in 0u32..14) {
        check_positions(&implementations(), &keys, threshold);
    }
}

fn check_prefix_sum(impls: &[Kernels], vals: &[u32], base: u32) {
    let mut want = vals.to_vec();
    let mut last = base;
    for v in &mut want {
        last = last.wrapping_add(*v).wrapping_add(1);
        *v = last;
    }
    for k in impls {
        let mut got = vals.to_vec();
        k.strict_prefix_sum(&mut got, base);
        assert_eq!(
            got,
            want,
            "{}: strict_prefix_sum(len={}, base={base})",
            k.name(),
            vals.len()
        );
    }
}

#[test]
fn prefix_sums_every_length_base_and_wrap() {
    let impls = implementations();
    for n in 0..40usize {
        let vals: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) >> 7)
            .collect();
        for base in [0, 1, 1000, u32::MAX, u32::MAX - 5] {
            check_prefix_sum(&impls, &vals, base);
        }
    }
    // A block of 128 whose sums wrap past u32::MAX.
    check_prefix_sum(&impls, &[u32::MAX / 64; 128], 7);
}

proptest! {
    #[test]
    fn prop_strict_prefix_sum(vals in proptest::collection::vec(0u32..1 << 20, 0..300), base in proptest::num::u32::ANY) {
        check_prefix_sum(&implementations(), &vals, base);
    }
}

/// The best key of the first `count` pairs, each product taken alone
/// and the largest kept, or `None` where the contract says so.
fn oracle_best_impact(pairs: &[u8; 16], count: usize, factors: &[f32; 256]) -> Option<(f32, u8)> {
    if !(1..=8).contains(&count) || pairs[..2 * count].iter().step_by(2).any(|&tf| tf >= 0x80) {
        return None;
    }
    let used = pairs[..2 * count].chunks_exact(2);
    let best = used
        .clone()
        .map(|p| f32::from(p[0]) * factors[usize::from(p[1])])
        .fold(f32::NEG_INFINITY, f32::max);
    Some((best, used.map(|p| p[1]).min().expect("count >= 1")))
}

fn check_best_impact(impls: &[Kernels], pairs: &[u8; 16], count: usize, factors: &[f32; 256]) {
    let want = oracle_best_impact(pairs, count, factors).map(|(k, n)| (k.to_bits(), n));
    for k in impls {
        let got = k
            .best_impact(pairs, count, factors)
            .map(|(k, n)| (k.to_bits(), n));
        assert_eq!(got, want, "{}: best_impact({pairs:?}, {count})", k.name());
    }
}

/// BM25-like factors: decreasing in the norm byte, none equal.
fn length_like_factors() -> [f32; 256] {
    std::array::from_fn(|n| 1.0 / (0.3 + n as f32 * 0.11))
}

#[test]
fn impact_pairs_are_read_only_in_use() {
    let impls = implementations();
    let factors = length_like_factors();
    // Pairs in use whose best key is not the first, the last or the one
    // of the least norm; then garbage that would win (a large frequency,
    // the least norm) or would refuse (a high bit), past `count`.
    let mut pairs = [3u8, 40, 9, 90, 2, 10, 7, 60, 0xff, 0, 0x90, 0, 1, 1, 200, 0];
    for count in 0..=9 {
        check_best_impact(&impls, &pairs, count, &factors);
        check_frontier(&impls, &pairs, count, &factors);
    }
    // A high bit in a frequency in use refuses; in a norm it is a norm.
    pairs[2] = 0x80;
    check_best_impact(&impls, &pairs, 3, &factors);
    check_frontier(&impls, &pairs, 3, &factors);
    pairs[2] = 9;
    pairs[3] = 0xff;
    check_best_impact(&impls, &pairs, 3, &factors);
    check_frontier(&impls, &pairs, 3, &factors);
    // Ties between keys of different pairs, and the all-equal case.
    let tied = [2u8, 10, 2, 10, 1, 0, 2, 10, 2, 10, 2, 10, 2, 10, 2, 10];
    let flat = [1.0f32; 256];
    for count in 1..=8 {
        check_best_impact(&impls, &tied, count, &factors);
        check_best_impact(&impls, &tied, count, &flat);
    }
}

proptest! {
    #[test]
    fn prop_impact_pairs(
        pairs in proptest::array::uniform16(any::<u8>()),
        count in 0usize..10,
        scale in 1e-6f32..1e6,
        wobble in proptest::collection::vec(0.5f32..2.0, 256),
    ) {
        let impls = implementations();
        let factors: [f32; 256] = std::array::from_fn(|n| scale * wobble[n]);
        check_best_impact(&impls, &pairs, count, &factors);
        check_frontier(&impls, &pairs, count, &factors);
        // Frequencies under 0x80, so that the kernels answer.
        let mut low = pairs;
        for tf in low.iter_mut().step_by(2) {
            *tf &= 0x7f;
        }
        check_best_impact(&impls, &low, count, &factors);
        check_frontier(&impls, &low, count, &factors);
    }
}

/// Checks every implementation against the definition, with no
/// frequency threshold and with a few, one of them the least frequency
/// whose key at the least factor in use is above the limit (under which
/// the answer must be the same as with none).
fn check_keys_above(
    impls: &[Kernels],
    (docs, tfs): (&[u32], &[u32]),
    norms: &[u8],
    factors: &[f32; 256],
    limit: f32,
) {
    let n = docs.len().min(tfs.len());
    let factor = |i: usize| factors[usize::from(norms[docs[i] as usize])];
    let best = (0..n).map(factor).fold(f32::NEG_INFINITY, f32::max);
    let implied = (0..=64u32)
        .find(|&tf| tf as f32 * best > limit)
        .unwrap_or(0);
    for min_tf in [0, 1, 2, 5, implied] {
        let want: Vec<u32> = [5u32, 1]
            .into_iter()
            .chain((0..n).filter_map(|i| {
                let key = tfs[i] as f32 * factor(i);
                (tfs[i] >= min_tf && key > limit).then_some(docs[i])
            }))
            .collect();
        for k in impls {
            let mut got = vec![5u32, 1];
            k.keys_above((docs, tfs), (norms, factors), (limit, min_tf), &mut got);
            assert_eq!(
                got,
                want,
                "{}: keys_above(n={n}, limit={limit}, min_tf={min_tf})",
                k.name()
            );
        }
        if min_tf == implied && implied > 0 {
            let mut none = vec![5u32, 1];
            impls[0].keys_above((docs, tfs), (norms, factors), (limit, 0), &mut none);
            assert_eq!(
                none, want,
                "a threshold implied by the limit changes nothing"
            );
        }
    }
}

#[test]
fn keys_above_selects_by_the_product_of_frequency_and_factor() {
    let impls = implementations();
    let factors = length_like_factors();
    let norms: Vec<u8> = (0..300u32).map(|d| (d * 37 % 251) as u8).collect();
    let docs: Vec<u32> = (0..300).step_by(3).collect();
    let tfs: Vec<u32> = (0..docs.len() as u32).map(|i| 1 + i * 7 % 13).collect();
    for limit in [
        f32::NEG_INFINITY,
        0.0,
        1.0,
        3.5,
        10.0,
        f32::INFINITY,
        f32::NAN,
    ] {
        for n in [0, 1, 7, 8, 9, 33, docs.len()] {
            check_keys_above(&impls, (&docs[..n], &tfs), &norms, &factors, limit);
        }
    }
    // The limit at a key exactly: not above it. Documents at the very end
    // of the norms (the vector loop must not read past them), frequencies
    // that f32 rounds (2^24 + 1, u32::MAX) or that are huge.
    let key = |i: usize| tfs[i] as f32 * factors[usize::from(norms[docs[i] as usize])];
    check_keys_above(&impls, (&docs, &tfs), &norms, &factors, key(40));
    let tail: Vec<u32> = (284..300).collect();
    let big = [
        1 << 24 | 1,
        u32::MAX,
        1 << 31,
        3,
        1 << 30,
        9,
        2,
        1,
        7,
        8,
        0,
        1,
        2,
        3,
        4,
        5,
    ];
    for limit in [0.5, 2.0, 1e7, 1e9] {
        check_keys_above(&impls, (&tail, &big), &norms, &factors, limit);
        check_keys_above(&impls, (&tail, &big), &norms[..300], &[1.0; 256], limit);
    }
}

proptest! {
    #[test]
    fn prop_keys_above(
        gaps in proptest::collection::vec(1u32..9, 0..100),
        tfs in proptest::collection::vec(proptest::num::u32::ANY, 100),
        norms in proptest::collection::vec(any::<u8>(), 1..1000),
        limit in -1.0f32..50.0,
        small in any::<bool>(),
    ) {
        let impls = implementations();
        let factors = length_like_factors();
        // Ascending documents inside the norms.
        let mut d = 0u32;
        let docs: Vec<u32> = gaps
            .iter()
            .map(|g| { d += g; d })
            .filter(|&d| (d as usize) < norms.len())
            .collect();
        let tfs: Vec<u32> = tfs.iter().map(|&t| if small { t % 20 } else { t }).collect();
        check_keys_above(&impls, (&docs, &tfs), &norms, &factors, limit);
    }
}

proptest! {
    #[test]
    fn prop_popcount(words in proptest::collection::vec(any::<u64>(), 0..300)) {
        let want: u64 = words
            .iter()
            .map(|&w| (0..64).filter(|b| w >> b & 1 == 1).count() as u64)
            .sum();
        for k in implementations() {
            prop_assert_eq!(k.popcount(&words), want, "{}", k.name());
        }
    }
}

/// Pairs `(tf, norm)` as the definition reads them: the lanes in use.
fn pairs_of(f: &Frontier) -> Vec<(u32, i32)> {
    (f.tf.iter().zip(&f.norm))
        .filter(|&(_, &n)| n >= 0)
        .map(|(&tf, &n)| (tf as u32, n))
        .collect()
}

/// The frontier of the first `count` two-byte pairs, or `None` where the
/// contract says so.
fn oracle_frontier(pairs: &[u8; 16], count: usize, factors: &[f32; 256]) -> Option<Frontier> {
    if !(1..=8).contains(&count) || pairs[..2 * count].iter().step_by(2).any(|&tf| tf >= 0x80) {
        return None;
    }
    let mut f = Frontier::EMPTY;
    for (i, p) in pairs[..2 * count].chunks_exact(2).enumerate() {
        f.tf[i] = f32::from(p[0]);
        f.norm[i] = i32::from(p[1]);
        f.factor[i] = factors[usize::from(p[1])];
    }
    Some(f)
}

fn check_frontier(impls: &[Kernels], pairs: &[u8; 16], count: usize, factors: &[f32; 256]) {
    let want = oracle_frontier(pairs, count, factors);
    for k in impls {
        let got = k.frontier(pairs, count, factors);
        assert_eq!(got, want, "{}: frontier({pairs:?}, {count})", k.name());
    }
}

/// The clause-order sum over `bounds` with slots `sx` and `sy` replaced.
fn slot_sum(bounds: &[f32], (sx, sy): (usize, usize), at_x: f32, at_y: f32) -> f32 {
    (bounds.iter().enumerate()).fold(0.0f32, |s, (k, &c)| {
        s + if k == sx {
            at_x
        } else if k == sy {
            at_y
        } else {
            c
        }
    })
}

fn score(w: f32, tf: u32, factor: f32) -> f32 {
    w - w / (1.0 + tf as f32 * factor)
}

/// A joint bound's inputs, as pairs with signed norms (as
/// [`Frontier`] holds them), for the two oracles below.
struct Joint<'a> {
    x: (&'a [(u32, i32)], f32),
    y: (&'a [(u32, i32)], f32),
    factors: &'a [f32; 256],
    bounds: &'a [f32],
    slots: (usize, usize),
}

impl Joint<'_> {
    /// The clause-order sum of frequencies `tx` and `ty` scored at norm
    /// `n`'s factor beside the other bounds.
    fn at(&self, tx: u32, ty: u32, n: i32) -> f32 {
        let f = self.factors[n as usize];
        slot_sum(
            self.bounds,
            self.slots,
            score(self.x.1, tx, f),
            score(self.y.1, ty, f),
        )
    }

    /// The definition: at every norm byte a document may have, each
    /// clause's largest frequency among its pairs of norm at most that,
    /// scored at the norm's factor, summed in clause order; the best such
    /// sum over the norms where both clauses have a pair (`NEG_INFINITY`
    /// when none).
    fn definition(&self) -> f32 {
        let best = |q: &[(u32, i32)], n: i32| q.iter().filter(|p| p.1 <= n).map(|p| p.0).max();
        let mut out = f32::NEG_INFINITY;
        for n in 0..256i32 {
            if let (Some(tx), Some(ty)) = (best(self.x.0, n), best(self.y.0, n)) {
                out = out.max(self.at(tx, ty, n));
            }
        }
        out
    }

    /// The best clause-order sum of any document both frontiers dominate:
    /// a frequency of each clause at most that of one of its pairs, a norm
    /// at least both pairs' norms.
    fn best_dominated(&self) -> f32 {
        let mut out = f32::NEG_INFINITY;
        for &(tx, nx) in self.x.0 {
            for &(ty, ny) in self.y.0 {
                for n in nx.max(ny)..256 {
                    out = out.max(self.at(tx, ty, n));
                }
            }
        }
        out
    }
}

/// Lanes of `pairs` (at most 8) with factors from `factors`.
fn lanes(pairs: &[(u32, u8)], factors: &[f32; 256]) -> Frontier {
    let mut f = Frontier::EMPTY;
    for (i, &(tf, norm)) in pairs.iter().enumerate() {
        f.set(i, tf, norm, factors[usize::from(norm)]);
    }
    f
}

/// Every implementation gives the same bits; the bound is at least the
/// score of every document both sides dominate and at most the
/// definition's value, which it equals on Pareto frontiers.
fn check_joint(
    impls: &[Kernels],
    (x, wx): (&[(u32, u8)], f32),
    (y, wy): (&[(u32, u8)], f32),
    factors: &[f32; 256],
    bounds: &[f32],
    slots: (usize, usize),
) {
    let (fx, fy) = (lanes(x, factors), lanes(y, factors));
    let (px, py) = (pairs_of(&fx), pairs_of(&fy));
    let got: Vec<u32> = (impls.iter())
        .map(|k| k.joint_bound((&fx, wx), (&fy, wy), bounds, slots).to_bits())
        .collect();
    let g = f32::from_bits(got[0]);
    let what = format!("joint_bound({x:?}, {y:?}, {bounds:?}, {slots:?})");
    assert!(got.iter().all(|&b| b == got[0]), "{what}: {got:?}");
    let oracle = Joint {
        x: (&px, wx),
        y: (&py, wy),
        factors,
        bounds,
        slots,
    };
    let docs = oracle.best_dominated();
    assert!(g >= docs, "{what}: {g} under a document's {docs}");
    let def = oracle.definition();
    assert!(g <= def, "{what}: {g} over the definition's {def}");
    let frontier = |p: &[(u32, i32)]| {
        p.iter().all(|a| {
            p.iter()
                .all(|b| a == b || (a.0 < b.0) == (a.1 < b.1) && a.1 != b.1)
        })
    };
    if frontier(&px) && frontier(&py) {
        assert_eq!(g.to_bits(), def.to_bits(), "{what}: {g} against {def}");
    }
}

#[test]
fn joint_bound_takes_each_norm_once() {
    let impls = implementations();
    let factors = length_like_factors();
    // The lead's best pair is short and rare, the other's long and
    // frequent: the sum of their bests is no document's.
    let x = [(9, 60), (2, 4)];
    let y = [(12, 70), (1, 2)];
    let (fx, fy) = (lanes(&x, &factors), lanes(&y, &factors));
    let joint = Kernels::scalar().joint_bound((&fx, 1.5), (&fy, 0.7), &[0.0, 0.0], (0, 1));
    let sum = score(1.5, 9, factors[60]).max(score(1.5, 2, factors[4]))
        + score(0.7, 12, factors[70]).max(score(0.7, 1, factors[2]));
    assert!(joint < sum, "{joint} not under {sum}");
    for (bounds, slots) in [
        (&[0.0, 0.0][..], (0, 1)),
        (&[0.0, 0.0], (1, 0)),
        (&[0.3, 0.0, 0.0], (1, 2)),
        (&[0.0, 0.25, 0.0, 1e-3], (2, 0)),
    ] {
        check_joint(&impls, (&x, 1.5), (&y, 0.7), &factors, bounds, slots);
    }
    // Equal norms on both sides, no pair of one side at or under any of
    // the other's, and a side with none at all.
    type Pairs = &'static [(u32, u8)];
    let cases: [(Pairs, Pairs); 4] = [
        (&[(3, 10)], &[(5, 10)]),
        (&[(3, 10)], &[(5, 20)]),
        (&[(3, 30)], &[(5, 20)]),
        (&[], &[(5, 20)]),
    ];
    for (a, b) in cases {
        check_joint(&impls, (a, 1.0), (b, 1.0), &factors, &[0.0, 0.0], (0, 1));
    }
    let none =
        Kernels::scalar().joint_bound((&Frontier::EMPTY, 1.0), (&fy, 1.0), &[0.0; 2], (0, 1));
    assert_eq!(none, f32::NEG_INFINITY);
    // Equal factors for different norms (a field without norms).
    let flat = [0.8f32; 256];
    check_joint(&impls, (&x, 1.5), (&y, 0.7), &flat, &[0.0, 0.0], (0, 1));
}

proptest! {
    #[test]
    fn prop_joint_bound(
        x in proptest::collection::vec((1u32..300, any::<u8>()), 0..=8),
        y in proptest::collection::vec((1u32..300, any::<u8>()), 0..=8),
        weights in (1e-3f32..20.0, 1e-3f32..20.0),
        falls in proptest::collection::vec(0.9f32..=1.0, 256),
        others in proptest::collection::vec(0.0f32..5.0, 0..3),
        order in any::<bool>(),
    ) {
        let impls = implementations();
        // Factors that never rise with the norm, some equal.
        let mut factors = [0f32; 256];
        let mut f = 2.5f32;
        for (n, &d) in falls.iter().enumerate() {
            factors[n] = f;
            f *= d;
        }
        let mut bounds = others.clone();
        bounds.extend([0.0, 0.0]);
        let n = bounds.len();
        let slots = if order { (n - 1, n - 2) } else { (0, n - 1) };
        check_joint(&impls, (&x, weights.0), (&y, weights.1), &factors, &bounds, slots);
        // The same pairs made Pareto frontiers.
        let front = |p: &[(u32, u8)]| {
            let mut p = p.to_vec();
            p.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut least = u16::MAX;
            p.retain(|q| {
                let keep = u16::from(q.1) < least;
                least = least.min(u16::from(q.1));
                keep
            });
            p
        };
        check_joint(&impls, (&front(&x), weights.0), (&front(&y), weights.1), &factors, &bounds, slots);
    }
}
