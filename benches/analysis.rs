//! Analysis throughput: `Analyzer::tokenize` of every analyzer over the
//! bodies of `data/sample.jsonl` (4.3 MB of English prose), one scratch
//! reused across texts as the writer reuses it. Each benchmark first checks
//! its token count against `Analyzer::tokens`, so a fast wrong tokenizer
//! cannot look good.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use quarry::Analyzer;
use quarry::analysis::Scratch;

fn bodies() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.jsonl");
    std::fs::read_to_string(path)
        .expect("data/sample.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["body"].as_str().expect("a body").to_owned()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let texts = bodies();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut g = c.benchmark_group("tokenize");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    for a in Analyzer::ALL {
        let mut scratch = Scratch::default();
        let run = |scratch: &mut Scratch| {
            let mut n = 0usize;
            for t in &texts {
                a.tokenize(t, scratch, |tok| {
                    black_box(tok.text);
                    n += 1;
                });
            }
            n
        };
        let expected: usize = texts.iter().map(|t| a.tokens(t).len()).sum();
        assert_eq!(run(&mut scratch), expected, "{}", a.name());
        g.bench_function(a.name(), |b| b.iter(|| black_box(run(&mut scratch))));
    }
    // The `default` analyzer through the `analysis::tokenize` wrapper
    // (a `String` scratch), as the bench crate calls it.
    let mut scratch = String::new();
    g.bench_function("default-wrapper", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for t in &texts {
                quarry::analysis::tokenize(t, &mut scratch, |tok| {
                    black_box(tok);
                    n += 1;
                });
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
