//! Block decode of posting lists: doc ids alone, and term frequencies.
//!
//! Three densities (delta widths of about 1, 6 and 12 bits). Each benchmark
//! first decodes the whole list and checks it against what was encoded, so
//! a fast wrong decoder cannot look good.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use quarry::format::postings::{BLOCK_LEN, Postings, encode};

/// Blocks per list.
const BLOCKS: usize = 512;

struct List {
    name: &'static str,
    docs: Vec<u32>,
    tfs: Vec<u32>,
    region: Vec<u8>,
    max_doc: u32,
}

fn make(name: &'static str, mean_gap: u64, seed: u64) -> List {
    // SplitMix64: deterministic, no extra dependency.
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let n = BLOCKS * BLOCK_LEN;
    let mut docs = Vec::with_capacity(n);
    let mut tfs = Vec::with_capacity(n);
    let mut d = 0u64;
    for _ in 0..n {
        d += 1 + next() % (2 * mean_gap - 1);
        docs.push(d as u32);
        // Mostly 1, sometimes more, like real term frequencies.
        let r = next() % 100;
        tfs.push(if r < 70 {
            1
        } else if r < 95 {
            2 + (r % 3) as u32
        } else {
            5 + (r % 20) as u32
        });
    }
    let max_doc = d as u32 + 1;
    let mut region = Vec::new();
    let factors =
        quarry::query::bm25::length_factors(docs.len() as u64, 300 * docs.len() as u64, true);
    encode(
        &docs,
        &tfs,
        max_doc,
        |doc| (doc % 200) as u8,
        &factors,
        &mut region,
    )
    .expect("encode");
    List {
        name,
        docs,
        tfs,
        region,
        max_doc,
    }
}

fn decode_docs_all(p: &Postings, d: &mut [u32; BLOCK_LEN], t: &mut [u32; BLOCK_LEN]) -> u64 {
    let mut sum = 0u64;
    for b in 0..p.num_blocks() {
        let n = p.decode_docs(b, d, t).expect("decode docs");
        sum = sum.wrapping_add(u64::from(d[n - 1]));
    }
    sum
}

fn decode_tfs_all(p: &Postings, t: &mut [u32; BLOCK_LEN]) -> u64 {
    let mut sum = 0u64;
    for b in 0..p.num_blocks() {
        p.decode_tfs(b, t).expect("decode tfs");
        sum = sum.wrapping_add(u64::from(t[0]) + u64::from(t[BLOCK_LEN - 1]));
    }
    sum
}

fn bench(c: &mut Criterion) {
    let lists = [
        make("dense", 1, 1),
        make("mid", 32, 2),
        make("sparse", 2048, 3),
    ];
    let mut g = c.benchmark_group("block_decode");
    for l in &lists {
        let p = Postings::parse(&l.region, l.docs.len() as u32, l.max_doc).expect("parse");
        assert_eq!(p.num_blocks(), BLOCKS);
        // Correctness first: the whole list decodes to what was encoded.
        let (mut docs, mut tfs) = (Vec::new(), Vec::new());
        p.decode_all(&mut docs, &mut tfs).expect("decode_all");
        assert_eq!(docs, l.docs, "{}: doc ids", l.name);
        assert_eq!(tfs, l.tfs, "{}: term frequencies", l.name);
        let (mut d, mut t) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        let want_docs: u64 = l
            .docs
            .chunks(BLOCK_LEN)
            .map(|c| u64::from(c[BLOCK_LEN - 1]))
            .sum();
        assert_eq!(decode_docs_all(&p, &mut d, &mut t), want_docs);
        let want_tfs: u64 = l
            .tfs
            .chunks(BLOCK_LEN)
            .map(|c| u64::from(c[0]) + u64::from(c[BLOCK_LEN - 1]))
            .sum();
        assert_eq!(decode_tfs_all(&p, &mut t), want_tfs);

        g.throughput(Throughput::Elements(l.docs.len() as u64));
        g.bench_function(format!("docs/{}", l.name), |b| {
            b.iter(|| decode_docs_all(black_box(&p), &mut d, &mut t))
        });
        g.bench_function(format!("tfs/{}", l.name), |b| {
            b.iter(|| decode_tfs_all(black_box(&p), &mut t))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
