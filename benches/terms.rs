//! Term dictionary lookups: `SegmentReader::term` over keys that are
//! present and keys that are not, seeks to a key's lower bound with a
//! short walk from there (what prefix and range expansion do), and a walk
//! over every term of a field.
//!
//! The segment is a fresh index of 200,000 distinct synthetic words (some
//! sharing long prefixes), or, when `QUARRY_TERMS_INDEX` names an index
//! directory, that index's largest segment (its `body` field). Each
//! benchmark first checks that every present key is found with its
//! ordinal's document frequency and no absent key is, and that a seek
//! to a present key starts at it, so a fast wrong lookup cannot look
//! good. For instruction counts run it under `valgrind --tool=callgrind
//! --toggle-collect='quarry::read::segment::SegmentReader::term'` with
//! `--bench --profile-time 1`, or with a filter that matches no benchmark
//! (`--bench none`): then only those checks run, one lookup of each
//! present and each absent key, and callgrind's inclusive cost of
//! `SegmentReader::term` over its calls is the instructions per lookup.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use quarry::read::{ReadMode, SegmentReader};
use quarry::{Document, FieldFlags, FieldId, FieldType, IndexWriter, Schema, WriterConfig};

/// Distinct words of the synthetic index.
const WORDS: usize = 200_000;
/// Keys looked up per benchmark iteration.
const PROBES: usize = 4096;

fn splitmix(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn synthetic(dir: &Path) {
    let mut schema = Schema::new();
    let body = schema
        .add_field("body", FieldType::Text, FieldFlags::default())
        .expect("field");
    let config = WriterConfig {
        max_docs_per_segment: None,
        merge_factor: 0,
        ..Default::default()
    };
    let mut w = IndexWriter::create(dir, &schema, config).expect("create");
    let mut next = splitmix(7);
    let mut text = String::new();
    for i in 0..WORDS {
        let r = next();
        // A third of the words share a 10-letter stem.
        if r.is_multiple_of(3) {
            text += "interstell";
        }
        for k in 0..3 + (r >> 8) % 8 {
            text.push((b'a' + ((r >> (16 + 4 * k)) % 26) as u8) as char);
        }
        text += &format!("{i:x} ");
        if i % 10 == 9 {
            let mut d = Document::new();
            d.add_str(body, &text);
            w.add_document(&d).expect("add");
            text.clear();
        }
    }
    w.commit().expect("commit");
}

/// The largest segment of the index in `dir`.
fn largest_segment(dir: &Path) -> (SegmentReader, FieldId) {
    let bytes = std::fs::read(
        std::fs::read_dir(dir)
            .expect("index dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "qmf"))
            .max()
            .expect("a manifest"),
    )
    .expect("manifest");
    let m = quarry::format::manifest::Manifest::decode(Path::new("m"), &bytes).expect("manifest");
    let seg = m
        .segments
        .iter()
        .max_by_key(|s| s.file_len)
        .expect("a segment");
    let path = dir.join(quarry::format::manifest::segment_name(seg.id));
    let reader =
        SegmentReader::open(&path, &m.schema, seg.file_len, ReadMode::Mmap).expect("segment");
    (reader, m.schema.field("body").expect("body field"))
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir: PathBuf = match std::env::var_os("QUARRY_TERMS_INDEX") {
        Some(d) => d.into(),
        None => {
            synthetic(tmp.path());
            tmp.path().to_owned()
        }
    };
    let (seg, body) = largest_segment(&dir);
    let n = seg.num_terms(body);
    let mut next = splitmix(11);
    let mut present = Vec::with_capacity(PROBES);
    let mut terms = seg.terms(body);
    let mut i = 0u32;
    let picks: std::collections::BTreeSet<u32> = (0..PROBES)
        .map(|_| (next() % u64::from(n)) as u32)
        .collect();
    while let Some((key, info)) = terms.advance().expect("terms") {
        if picks.contains(&i) {
            present.push((key.to_vec(), info.df));
        }
        i += 1;
    }
    assert_eq!(i, n);
    // Absent keys: each present key with a byte appended.
    let absent: Vec<Vec<u8>> = present
        .iter()
        .map(|(k, _)| [&k[..], b"\x01"].concat())
        .collect();
    for (k, df) in &present {
        assert_eq!(seg.term(body, k).expect("lookup").map(|t| t.df), Some(*df));
    }
    for k in &absent {
        assert!(seg.term(body, k).expect("lookup").is_none());
    }
    for (k, _) in &present {
        let mut t = seg.terms_from_key(body, k).expect("seek");
        assert_eq!(t.advance().expect("walk").map(|(key, _)| key), Some(&k[..]));
    }
    eprintln!(
        "{} terms, terms section {} bytes",
        n,
        seg.section_sizes()
            .iter()
            .find(|s| s.0 == "terms")
            .expect("terms section")
            .1
    );
    let mut g = c.benchmark_group("terms");
    g.throughput(Throughput::Elements(present.len() as u64));
    g.bench_function("lookup present", |b| {
        b.iter(|| {
            for (k, _) in &present {
                black_box(seg.term(body, black_box(k)).expect("lookup"));
            }
        })
    });
    g.bench_function("lookup absent", |b| {
        b.iter(|| {
            for k in &absent {
                black_box(seg.term(body, black_box(k)).expect("lookup"));
            }
        })
    });
    g.bench_function("seek absent, walk 8", |b| {
        b.iter(|| {
            for k in &absent {
                let mut t = seg.terms_from_key(body, black_box(k)).expect("seek");
                for _ in 0..8 {
                    black_box(t.advance().expect("walk"));
                }
            }
        })
    });
    g.throughput(Throughput::Elements(u64::from(n)));
    g.bench_function("walk all", |b| {
        b.iter(|| {
            let mut t = seg.terms(body);
            let mut count = 0u32;
            while let Some((k, _)) = t.advance().expect("terms") {
                black_box(k);
                count += 1;
            }
            assert_eq!(count, n);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
