//! Heap insert into the top-k queue (`quarry::collect::TopDocs`).
//!
//! Random scores (most offers are rejected at the floor once the queue is
//! full) and ascending scores (every offer enters: the worst case). Each
//! benchmark first checks the queue against sort-and-truncate.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quarry::collect::TopDocs;

const N: usize = 100_000;

fn scores_random(seed: u64) -> Vec<f32> {
    let mut x = seed;
    (0..N)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Coarse values, so ties (broken by doc number) happen too.
            (x % 50_000) as f32 / 1000.0
        })
        .collect()
}

fn run(scores: &[f32], k: usize) -> Vec<(f32, u32)> {
    let mut q = TopDocs::new(k);
    for (doc, &s) in scores.iter().enumerate() {
        q.offer(s, doc as u32);
    }
    q.into_sorted()
}

fn expected(scores: &[f32], k: usize) -> Vec<(f32, u32)> {
    let mut all: Vec<(f32, u32)> = scores
        .iter()
        .enumerate()
        .map(|(d, &s)| (s, d as u32))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    all.truncate(k);
    all
}

fn bench(c: &mut Criterion) {
    let random = scores_random(0x2545_f491_4f6c_dd1d);
    let ascending: Vec<f32> = (0..N).map(|i| i as f32 / 16.0).collect();
    let mut g = c.benchmark_group("topdocs_offer");
    g.throughput(Throughput::Elements(N as u64));
    for (name, scores) in [("random", &random), ("ascending", &ascending)] {
        for k in [10usize, 100, 1000] {
            // Correctness first.
            let got = run(scores, k);
            assert_eq!(got, expected(scores, k), "{name}, k={k}");
            let checksum: u64 = got.iter().map(|&(_, d)| u64::from(d)).sum();
            g.bench_with_input(BenchmarkId::new(name, k), &k, |b, &k| {
                b.iter(|| {
                    let r = run(black_box(scores), k);
                    debug_assert_eq!(r.iter().map(|&(_, d)| u64::from(d)).sum::<u64>(), checksum);
                    r
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
