//! Criterion benchmarks for `quarry::kernels`: one group per kernel, the scalar
//! and AVX2 implementations side by side (AVX2 is skipped when the CPU lacks
//! it). Every benchmark first asserts that each implementation produces the
//! scalar result (count + checksum) before it is timed.
//!
//! Run e.g. `cargo bench --bench kernels -- --warm-up-time 1 --measurement-time 2`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quarry::kernels::Kernels;

/// Deterministic xorshift64* generator (no `rand` dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Strictly ascending list of `n` doc ids with random gaps in `1..=max_gap`.
fn ascending(rng: &mut Rng, n: usize, max_gap: u64) -> Vec<u32> {
    let mut doc = 0u64;
    (0..n)
        .map(|_| {
            doc += rng.range(1, max_gap);
            u32::try_from(doc).expect("doc ids fit in u32")
        })
        .collect()
}

/// `count` distinct sorted doc ids drawn uniformly from `0..domain`.
fn sample(rng: &mut Rng, count: usize, domain: u32) -> Vec<u32> {
    let mut set = std::collections::BTreeSet::new();
    while set.len() < count {
        set.insert((rng.next() % u64::from(domain)) as u32);
    }
    set.into_iter().collect()
}

/// The kernel tables to compare: scalar always, AVX2 when available.
fn implementations() -> Vec<Kernels> {
    let mut all = vec![Kernels::scalar()];
    match Kernels::avx2() {
        Some(k) => all.push(k),
        None => eprintln!("note: AVX2 not available; benchmarking scalar only"),
    }
    all
}

/// A block and a cursor-style query sequence over it: each query's `from` is
/// just past the previous answer, and the answer lies `1..=max_adv` positions
/// ahead (half the targets hit a doc id exactly, half fall between two).
struct FindCase {
    docs: Vec<u32>,
    queries: Vec<(usize, u32)>,
}

fn find_case(rng: &mut Rng, block: usize, min_adv: usize, max_adv: usize) -> FindCase {
    let docs = ascending(rng, block, 16);
    let mut queries = Vec::new();
    // Several passes so each iteration does a few dozen calls even with big gaps.
    while queries.len() < 64 {
        let mut from = 0;
        loop {
            let idx = from + rng.range(min_adv as u64, max_adv as u64) as usize - 1;
            if idx >= docs.len() {
                queries.push((from, u32::MAX)); // runs off the end
                break;
            }
            let target = if idx == 0 || rng.next().is_multiple_of(2) {
                docs[idx]
            } else {
                docs[idx - 1] + 1 // strictly between docs[idx - 1] and docs[idx]
            };
            queries.push((from, target));
            from = idx + 1;
        }
    }
    FindCase { docs, queries }
}

fn run_find(find: impl Fn(&[u32], usize, u32) -> usize, case: &FindCase) -> usize {
    let mut checksum = 0usize;
    for &(from, target) in &case.queries {
        checksum = checksum.wrapping_mul(31).wrapping_add(find(
            black_box(&case.docs),
            black_box(from),
            black_box(target),
        ));
    }
    checksum
}

type FindFn = fn(&[u32], usize, u32) -> usize;

/// Baseline: binary search over `docs[from..]`.
fn binary_search_geq(docs: &[u32], from: usize, target: u32) -> usize {
    if from >= docs.len() {
        return docs.len();
    }
    from + docs[from..].partition_point(|&d| d < target)
}

/// Baseline: plain linear scan.
fn linear_geq(docs: &[u32], from: usize, target: u32) -> usize {
    let mut i = from;
    while i < docs.len() && docs[i] < target {
        i += 1;
    }
    i.min(docs.len())
}

fn bench_find_next_geq(c: &mut Criterion) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut group = c.benchmark_group("find_next_geq");
    for block in [128usize, 256] {
        for (gap_name, min_adv, max_adv) in [("small-gap", 1, 4), ("large-gap", 16, 96)] {
            let case = find_case(&mut rng, block, min_adv, max_adv);
            let expect = run_find(|d, f, t| Kernels::scalar().find_next_geq(d, f, t), &case);
            let param = format!("{gap_name}/{block}");
            group.throughput(Throughput::Elements(case.queries.len() as u64));
            for k in implementations() {
                assert_eq!(run_find(|d, f, t| k.find_next_geq(d, f, t), &case), expect);
                group.bench_with_input(BenchmarkId::new(k.name(), &param), &case, |b, case| {
                    b.iter(|| run_find(|d, f, t| k.find_next_geq(d, f, t), case))
                });
            }
            // Baselines, called through an opaque function pointer like the
            // dispatched kernels so that the call overhead is the same.
            let baselines: [(&str, FindFn); 2] = [
                ("binary-search", binary_search_geq),
                ("naive-linear", linear_geq),
            ];
            for (name, f) in baselines {
                let f = black_box(f);
                assert_eq!(run_find(f, &case), expect, "{name}");
                group.bench_with_input(BenchmarkId::new(name, &param), &case, |b, case| {
                    b.iter(|| run_find(f, case))
                });
            }
        }
    }
    group.finish();
}

/// Intersection inputs: `equal` = lists of equal length over one domain (about
/// a quarter of each list matches); `skew-1:32` = a short list leading lists
/// 32 times longer (routes to galloping).
fn intersection_lists(rng: &mut Rng, count: usize, shape: &str) -> Vec<Vec<u32>> {
    match shape {
        "equal" => (0..count).map(|_| sample(rng, 10_000, 40_000)).collect(),
        "skew-1:32" => {
            let mut lists = vec![sample(rng, 1_000, 64_000)];
            lists.extend((1..count).map(|_| sample(rng, 32_000, 64_000)));
            lists
        }
        _ => unreachable!("unknown shape {shape}"),
    }
}

fn checksum(out: &[u32]) -> (usize, u64) {
    (out.len(), out.iter().map(|&x| u64::from(x)).sum())
}

fn bench_intersections(c: &mut Criterion) {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for (group_name, count) in [
        ("intersect2", 2usize),
        ("intersect3", 3),
        ("intersect_many", 5),
    ] {
        let mut group = c.benchmark_group(group_name);
        for shape in ["equal", "skew-1:32"] {
            let lists = intersection_lists(&mut rng, count, shape);
            let refs: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
            let run = |k: &Kernels, out: &mut Vec<u32>| {
                out.clear();
                match count {
                    2 => k.intersect_into(black_box(refs[0]), black_box(refs[1]), out),
                    3 => k.intersect3_into(
                        black_box(refs[0]),
                        black_box(refs[1]),
                        black_box(refs[2]),
                        out,
                    ),
                    _ => k.intersect_many_into(black_box(&refs), out),
                }
            };
            let mut expect = Vec::new();
            run(&Kernels::scalar(), &mut expect);
            let expect = checksum(&expect);
            assert!(expect.0 > 0, "{group_name}/{shape}: empty intersection");
            let total: usize = refs.iter().map(|l| l.len()).sum();
            group.throughput(Throughput::Elements(total as u64));
            for k in implementations() {
                let mut out = Vec::new();
                run(&k, &mut out);
                assert_eq!(checksum(&out), expect, "{}: {group_name}/{shape}", k.name());
                group.bench_function(BenchmarkId::new(k.name(), shape), |b| {
                    b.iter(|| {
                        run(&k, &mut out);
                        out.len()
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench_find_next_geq, bench_intersections);
criterion_main!(benches);
