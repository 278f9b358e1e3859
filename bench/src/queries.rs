//! The query classes of BENCH.md, made deterministically from the corpus.
//!
//! Document frequencies come from one pass over the corpus with quarry's
//! analyzer (the same tokens both engines index).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::corpus::{CorpusSpec, Rng};

/// Queries per class.
pub const PER_CLASS: usize = 300;

/// The classes, in the order they run.
pub const CLASSES: &[&str] = &[
    "mid-df-1",
    "mid-df-2",
    "mid-df-3",
    "seq-2",
    "seq-3",
    "seq-5",
    "rare-2",
    "rare-3",
    "rare-common-2",
    "rare-common-3",
    "rare-common-5",
];

/// One class and its queries (space-separated tokens).
#[derive(Clone, Debug)]
pub struct QueryClass {
    /// Class name.
    pub name: String,
    /// Query texts.
    pub queries: Vec<String>,
}

/// Corpus statistics gathered while making queries.
#[derive(Clone, Debug)]
pub struct CorpusStats {
    /// Documents.
    pub docs: u64,
    /// Body tokens.
    pub tokens: u64,
    /// Distinct body terms.
    pub terms: usize,
    /// Terms occurring exactly once in the bodies (hapax legomena).
    pub hapax: usize,
    /// Terms with df in 1–6 %.
    pub mid: usize,
    /// Terms with df in 0.02–0.3 %.
    pub rare: usize,
    /// Terms with df >= 10 %.
    pub common: usize,
}

struct Window {
    doc: u64,
    len: usize,
    /// Position as a fraction of the possible starts.
    at: f64,
    class: usize,
}

/// Makes every class from `corpus`.
pub fn make(corpus: &CorpusSpec, seed: u64) -> Result<(Vec<QueryClass>, CorpusStats), String> {
    // Pick documents for the seq classes up front: twice what is needed, in
    // random order, so short documents can be skipped.
    let n_docs = match corpus {
        CorpusSpec::Synthetic { docs, .. } => *docs,
        CorpusSpec::Jsonl { .. } => {
            let mut n = 0;
            corpus.for_each(|_, _| n += 1)?;
            n
        }
    };
    if n_docs == 0 {
        return Err("the corpus has no documents".into());
    }
    let mut rng = Rng::new(seed, 0x5e9);
    let seq_lens = [2usize, 3, 5];
    let mut windows: Vec<Window> = Vec::new();
    for (class, &len) in seq_lens.iter().enumerate() {
        for _ in 0..2 * PER_CLASS {
            windows.push(Window {
                doc: rng.below(n_docs as usize) as u64,
                len,
                at: rng.f64(),
                class,
            });
        }
    }
    let order: Vec<usize> = (0..windows.len()).collect();
    let mut by_doc = order.clone();
    by_doc.sort_by_key(|&i| windows[i].doc);
    let mut seq_found: Vec<Option<String>> = vec![None; windows.len()];

    // term -> (df, last doc seen + 1, occurrences)
    let mut df: HashMap<String, (u32, u32, u64)> = HashMap::new();
    let mut tokens_total = 0u64;
    let mut scratch = String::new();
    let mut toks: Vec<String> = Vec::new();
    let mut next_window = 0;
    corpus.for_each(|i, doc| {
        let stamp = i as u32 + 1;
        let want_tokens = next_window < by_doc.len() && windows[by_doc[next_window]].doc == i;
        toks.clear();
        quarry::analysis::tokenize(&doc.body, &mut scratch, |t| {
            tokens_total += 1;
            match df.get_mut(t) {
                Some(e) => {
                    e.2 += 1;
                    if e.1 != stamp {
                        e.0 += 1;
                        e.1 = stamp;
                    }
                }
                None => {
                    df.insert(t.to_owned(), (1, stamp, 1));
                }
            }
            if want_tokens {
                toks.push(t.to_owned());
            }
        });
        while next_window < by_doc.len() && windows[by_doc[next_window]].doc == i {
            let w = &windows[by_doc[next_window]];
            if toks.len() >= w.len {
                let starts = toks.len() - w.len + 1;
                let s = ((w.at * starts as f64) as usize).min(starts - 1);
                seq_found[by_doc[next_window]] = Some(toks[s..s + w.len].join(" "));
            }
            next_window += 1;
        }
    })?;

    let n = n_docs as f64;
    let mut terms: Vec<(&str, u32)> = df.iter().map(|(t, e)| (t.as_str(), e.0)).collect();
    terms.sort_unstable();
    let band = |lo: f64, hi: f64| -> Vec<&str> {
        terms
            .iter()
            .filter(|(_, d)| {
                let f = f64::from(*d) / n;
                f >= lo && f <= hi
            })
            .map(|(t, _)| *t)
            .collect()
    };
    let mid = band(0.01, 0.06);
    let rare = band(0.0002, 0.003);
    let common = band(0.10, 1.0);
    let stats = CorpusStats {
        docs: n_docs,
        tokens: tokens_total,
        terms: terms.len(),
        hapax: df.values().filter(|e| e.2 == 1).count(),
        mid: mid.len(),
        rare: rare.len(),
        common: common.len(),
    };

    let mut classes = Vec::new();
    let pick = |rng: &mut Rng, from: &[&str], k: usize, into: &mut Vec<String>| {
        // k distinct terms not already in `into`.
        let mut guard = 0;
        while into.len() < k && guard < 10_000 {
            guard += 1;
            let t = from[rng.below(from.len())];
            if !into.iter().any(|x| x == t) {
                into.push(t.to_owned());
            }
        }
    };
    // PER_CLASS queries of k distinct terms of one band (none when the band
    // has fewer than k terms).
    let from_band = |rng: &mut Rng, band: &[&str], k: usize, qs: &mut Vec<String>| {
        if band.len() >= k {
            for _ in 0..PER_CLASS {
                let mut q = Vec::new();
                pick(rng, band, k, &mut q);
                qs.push(q.join(" "));
            }
        }
    };
    for name in CLASSES {
        let mut qs = Vec::with_capacity(PER_CLASS);
        let mut rng = Rng::new(seed, 0xc1a55 ^ fxhash(name));
        if let Some(k) = name.strip_prefix("mid-df-") {
            let k: usize = k.parse().expect("class arity");
            from_band(&mut rng, &mid, k, &mut qs);
        } else if let Some(k) = name.strip_prefix("rare-common-") {
            let k: usize = k.parse().expect("class arity");
            if !rare.is_empty() && !common.is_empty() && rare.len() + common.len() >= k {
                for _ in 0..PER_CLASS {
                    let mut q = Vec::new();
                    pick(&mut rng, &rare, 1, &mut q);
                    pick(&mut rng, &common, 2, &mut q);
                    while q.len() < k {
                        let from = if rng.below(2) == 0 { &rare } else { &common };
                        let want = q.len() + 1;
                        pick(&mut rng, from, want, &mut q);
                    }
                    rng.shuffle(&mut q);
                    qs.push(q.join(" "));
                }
            }
        } else if let Some(k) = name.strip_prefix("rare-") {
            let k: usize = k.parse().expect("class arity");
            from_band(&mut rng, &rare, k, &mut qs);
        } else if let Some(k) = name.strip_prefix("seq-") {
            let k: usize = k.parse().expect("class arity");
            let class = seq_lens.iter().position(|&l| l == k).expect("seq class");
            qs.extend(
                order
                    .iter()
                    .filter(|&&i| windows[i].class == class)
                    .filter_map(|&i| seq_found[i].clone())
                    .take(PER_CLASS),
            );
        }
        if qs.is_empty() {
            eprintln!("warning: no queries for class {name} (the corpus has no fitting terms)");
        }
        classes.push(QueryClass {
            name: (*name).to_owned(),
            queries: qs,
        });
    }
    Ok((classes, stats))
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Writes `class<TAB>query` lines.
pub fn write_tsv(path: &Path, classes: &[QueryClass]) -> std::io::Result<()> {
    let mut s = String::new();
    for c in classes {
        for q in &c.queries {
            let _ = writeln!(s, "{}\t{}", c.name, q);
        }
    }
    std::fs::write(path, s)
}
