//! The corpus: a deterministic synthetic one made from a seed, or a JSONL file.
//!
//! The synthetic corpus is modelled on the "mmlb" corpus of the Lance FTS
//! benchmarks: words drawn from a Zipf distribution over a vocabulary of
//! about 10,000 pronounceable made-up words, long documents (100 to 600
//! tokens), and sortable metadata. Every document is generated from its own
//! RNG seeded by `(seed, index)`, so any document can be regenerated alone
//! and every process that generates the corpus sees the same bytes.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

/// The shape of a synthetic corpus: vocabulary size, Zipf exponent and
/// body length. Two presets, `--corpus-kind standard` and `large-vocab`;
/// `--vocab`, `--zipf` and `--doc-len` override single fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Synth {
    /// Words in the vocabulary (all distinct).
    pub vocab: usize,
    /// The Zipf exponent of word frequencies.
    pub zipf: f64,
    /// Shortest body, in tokens.
    pub min_len: usize,
    /// Longest body, in tokens.
    pub max_len: usize,
}

impl Synth {
    /// The mmlb-like corpus of BENCH.md: 10,000 words, long documents.
    /// With 10,000 words and documents of ~350 tokens, an exponent of 1.0
    /// leaves no word rarer than ~0.35 % document frequency, so the rare
    /// classes (0.02–0.3 %) would be empty; 1.2 gives about 1,300 words of
    /// 1–6 % df, ~5,000 rare words and ~200 common (df >= 10 %) ones.
    pub const STANDARD: Synth = Synth {
        vocab: 10_000,
        zipf: 1.2,
        min_len: 100,
        max_len: 600,
    };
    /// A large vocabulary with a long tail, modelled on real text of ~120k
    /// passages, ~12.7M tokens, ~376k distinct terms of which about half
    /// occur once. Passages of 50–160 tokens (mean 105: 12.7M tokens in
    /// 120k passages). Over 10^6 words, s = 1.0 would give ~820k distinct
    /// terms of which only ~29 % occur once (the vocabulary runs out before
    /// the tail does); s = 1.2 gives ~405k distinct terms, ~54 % of them
    /// once, the closest fit (expected values; the report prints the
    /// measured ones).
    pub const LARGE_VOCAB: Synth = Synth {
        vocab: 1_000_000,
        zipf: 1.2,
        min_len: 50,
        max_len: 160,
    };
    /// Default documents of the large-vocabulary preset.
    pub const LARGE_VOCAB_DOCS: u64 = 120_000;

    /// The preset called `name`.
    pub fn from_kind(name: &str) -> Option<Synth> {
        match name {
            "standard" => Some(Synth::STANDARD),
            "large-vocab" => Some(Synth::LARGE_VOCAB),
            _ => None,
        }
    }

    /// Checks the fields make sense.
    pub fn validate(&self) -> Result<(), String> {
        if self.vocab < 100 {
            return Err(format!(
                "--vocab {} is too small (at least 100)",
                self.vocab
            ));
        }
        if !(self.zipf.is_finite() && self.zipf > 0.0) {
            return Err(format!("--zipf {} must be positive", self.zipf));
        }
        if self.min_len == 0 || self.min_len > self.max_len {
            return Err(format!(
                "--doc-len {}-{}: need 1 <= A <= B",
                self.min_len, self.max_len
            ));
        }
        Ok(())
    }
}

/// Distinct categories.
pub const NUM_CATEGORIES: usize = 50;

/// A small, fast, well-mixed RNG (xoshiro256**), seeded through SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// An RNG for the stream `stream` of `seed`.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut x = seed ^ stream.wrapping_mul(0xd134_2543_de82_ef95);
        let s = [
            splitmix(&mut x),
            splitmix(&mut x),
            splitmix(&mut x),
            splitmix(&mut x),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)`.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (n > 0).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// Vose's alias table: O(1) sampling from a discrete distribution.
#[derive(Clone, Debug)]
pub struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    /// A table for the (unnormalised) weights.
    pub fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let sum: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / sum).collect();
        let mut prob = vec![1.0; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            prob[s] = scaled[s];
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        Alias { prob, alias }
    }

    /// Zipf weights `1 / rank^s` for ranks 1..=n.
    pub fn zipf(n: usize, s: f64) -> Alias {
        let w: Vec<f64> = (1..=n).map(|r| (r as f64).powf(-s)).collect();
        Alias::new(&w)
    }

    /// A sample.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let i = rng.below(self.prob.len());
        if rng.f64() < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }
}

/// One document as both engines receive it.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    /// Stored id.
    pub id: i64,
    /// A few words, stored.
    pub title: String,
    /// The searched text.
    pub body: String,
    /// Sortable integer.
    pub year: i64,
    /// Sortable string.
    pub category: String,
}

/// Where the documents come from.
#[derive(Clone, Debug)]
pub enum CorpusSpec {
    /// Generated from a seed.
    Synthetic {
        /// The seed.
        seed: u64,
        /// Number of documents.
        docs: u64,
        /// Vocabulary, Zipf exponent, lengths.
        synth: Synth,
    },
    /// Read from a JSONL file of `{"id","title","body","year","category"}`.
    Jsonl {
        /// The file.
        path: PathBuf,
        /// Read at most this many documents.
        limit: Option<u64>,
    },
}

impl CorpusSpec {
    /// The arguments that describe this corpus to a child process.
    pub fn to_args(&self) -> Vec<String> {
        match self {
            CorpusSpec::Synthetic { seed, docs, synth } => {
                vec![
                    "--seed".into(),
                    seed.to_string(),
                    "--docs".into(),
                    docs.to_string(),
                    "--vocab".into(),
                    synth.vocab.to_string(),
                    // f64's Display is the shortest string that parses back
                    // to the same value.
                    "--zipf".into(),
                    synth.zipf.to_string(),
                    "--doc-len".into(),
                    format!("{}-{}", synth.min_len, synth.max_len),
                ]
            }
            CorpusSpec::Jsonl { path, limit } => {
                let mut v = vec!["--corpus".into(), path.display().to_string()];
                if let Some(l) = limit {
                    v.push("--docs".into());
                    v.push(l.to_string());
                }
                v
            }
        }
    }

    /// A short human description.
    pub fn describe(&self) -> String {
        match self {
            CorpusSpec::Synthetic { seed, docs, synth } => {
                let kind = if *synth == Synth::LARGE_VOCAB {
                    " (large-vocab)"
                } else {
                    ""
                };
                format!(
                    "synthetic{kind}, seed {seed}, {docs} documents of {}-{} tokens, Zipf s={} over {} words",
                    synth.min_len, synth.max_len, synth.zipf, synth.vocab
                )
            }
            CorpusSpec::Jsonl { path, limit } => match limit {
                Some(l) => format!("JSONL {} (first {l} documents)", path.display()),
                None => format!("JSONL {}", path.display()),
            },
        }
    }

    /// A fingerprint of the documents' content, so an index built from
    /// another version of the generator (or another file) is not reused:
    /// for a synthetic corpus a hash of the vocabulary and the first
    /// documents, for a file its size and modification time.
    pub fn fingerprint(&self) -> String {
        let fnv = |h: u64, bytes: &[u8]| {
            bytes
                .iter()
                .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
        };
        match self {
            CorpusSpec::Synthetic { seed, docs, synth } => {
                let g = Generator::new(*seed, *synth);
                let mut h = 0xcbf2_9ce4_8422_2325u64;
                for w in &g.words {
                    h = fnv(h, w.as_bytes());
                }
                let mut d = Doc::default();
                for i in 0..(*docs).min(16) {
                    g.generate(i, &mut d);
                    h = fnv(h, d.body.as_bytes());
                    h = fnv(h, d.title.as_bytes());
                }
                format!("{h:016x}")
            }
            CorpusSpec::Jsonl { path, .. } => match std::fs::metadata(path) {
                Ok(m) => format!("{} bytes, modified {:?}", m.len(), m.modified().ok()),
                Err(_) => "unreadable".into(),
            },
        }
    }

    /// Calls `f(index, doc)` for every document, in order.
    pub fn for_each(&self, f: impl FnMut(u64, &Doc)) -> Result<u64, String> {
        self.open().for_each(f)
    }

    /// The corpus ready to be read: a synthetic one with its generator
    /// (vocabulary and samplers) built, which takes a second or two for a
    /// large vocabulary, so that indexing can be timed without it.
    pub fn open(&self) -> Opened<'_> {
        Opened {
            spec: self,
            generator: match self {
                CorpusSpec::Synthetic { seed, synth, .. } => Some(Generator::new(*seed, *synth)),
                CorpusSpec::Jsonl { .. } => None,
            },
        }
    }
}

/// A corpus ready to be read (see [`CorpusSpec::open`]).
pub struct Opened<'a> {
    spec: &'a CorpusSpec,
    generator: Option<Generator>,
}

impl Opened<'_> {
    /// Calls `f(index, doc)` for every document, in order.
    pub fn for_each(&self, mut f: impl FnMut(u64, &Doc)) -> Result<u64, String> {
        match self.spec {
            CorpusSpec::Synthetic { docs, .. } => {
                let g = self.generator.as_ref().expect("opened synthetic corpus");
                let mut doc = Doc::default();
                for i in 0..*docs {
                    g.generate(i, &mut doc);
                    f(i, &doc);
                }
                Ok(*docs)
            }
            CorpusSpec::Jsonl { path, limit } => {
                let file =
                    File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
                let mut n = 0u64;
                for (lineno, line) in BufReader::new(file).lines().enumerate() {
                    if limit.is_some_and(|l| n >= l) {
                        break;
                    }
                    let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                    if line.trim().is_empty() {
                        continue;
                    }
                    let doc = parse_jsonl(&line)
                        .map_err(|e| format!("{}:{}: {e}", path.display(), lineno + 1))?;
                    f(n, &doc);
                    n += 1;
                }
                Ok(n)
            }
        }
    }
}

fn parse_jsonl(line: &str) -> Result<Doc, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let s = |k: &str| -> Result<String, String> {
        match v.get(k) {
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            None | Some(serde_json::Value::Null) => Ok(String::new()),
            Some(other) => Err(format!("\"{k}\" is not a string: {other}")),
        }
    };
    let i = |k: &str| -> Result<i64, String> {
        match v.get(k) {
            Some(serde_json::Value::Number(n)) => n
                .as_i64()
                .ok_or_else(|| format!("\"{k}\" is not an integer: {n}")),
            None | Some(serde_json::Value::Null) => Ok(0),
            Some(other) => Err(format!("\"{k}\" is not an integer: {other}")),
        }
    };
    Ok(Doc {
        id: i("id")?,
        title: s("title")?,
        body: s("body")?,
        year: i("year")?,
        category: s("category")?,
    })
}

/// The synthetic corpus generator: vocabulary, categories and samplers.
pub struct Generator {
    seed: u64,
    synth: Synth,
    /// Words by rank (rank 0 is the most frequent).
    pub words: Vec<String>,
    categories: Vec<String>,
    zipf: Alias,
    cat_dist: Alias,
}

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "ch", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "qu", "sh", "sl", "st", "th", "tr",
];
const NUCLEI: &[&str] = &[
    "a", "e", "i", "o", "u", "ai", "ea", "ee", "ie", "oa", "ou", "y",
];
const CODAS: &[&str] = &[
    "", "", "", "", "", "n", "r", "s", "l", "m", "t", "nd", "st", "rk", "ng", "x",
];

fn syllable(rng: &mut Rng, last: bool, out: &mut String) {
    // A leading vowel now and then, like "amber" or "oval".
    if rng.below(6) != 0 || out.is_empty() && rng.below(2) == 0 {
        out.push_str(ONSETS[rng.below(ONSETS.len())]);
    }
    // Plain vowels mostly; codas mostly at the end, so words stay sayable.
    let nucleus = if rng.below(4) == 0 {
        NUCLEI[rng.below(NUCLEI.len())]
    } else {
        NUCLEI[rng.below(5)]
    };
    out.push_str(nucleus);
    if last || rng.below(4) == 0 {
        out.push_str(CODAS[rng.below(CODAS.len())]);
    }
}

fn make_words(rng: &mut Rng, n: usize) -> Vec<String> {
    // Hashes of the words taken (a word is never taken twice; a hash
    // collision only drops a candidate): 8 bytes a word, not a copy of it.
    let mut seen = std::collections::HashSet::with_capacity(n);
    let fnv = |w: &str| {
        w.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    };
    let mut words: Vec<(usize, u64, String)> = Vec::with_capacity(n);
    while words.len() < n {
        // 1 to 4 syllables, mostly 2 or 3.
        let syl = match rng.below(20) {
            0..=2 => 1,
            3..=11 => 2,
            12..=17 => 3,
            _ => 4,
        };
        let mut w = String::new();
        for k in 0..syl {
            syllable(rng, k + 1 == syl, &mut w);
        }
        if w.len() >= 2 && seen.insert(fnv(&w)) {
            words.push((syl, rng.next_u64(), w));
        }
    }
    // Frequent words are short, as in natural language: rank by syllable
    // count, randomly within a count.
    words.sort_unstable_by_key(|(syl, tie, _)| (*syl, *tie));
    words.into_iter().map(|(_, _, w)| w).collect()
}

fn capitalize(w: &str, out: &mut String) {
    let mut cs = w.chars();
    if let Some(c) = cs.next() {
        out.extend(c.to_uppercase());
        out.push_str(cs.as_str());
    }
}

impl Generator {
    /// The generator of `seed` and `synth`.
    pub fn new(seed: u64, synth: Synth) -> Generator {
        let mut rng = Rng::new(seed, u64::MAX);
        let words = make_words(&mut rng, synth.vocab);
        let mut categories: Vec<String> = Vec::with_capacity(NUM_CATEGORIES);
        let mut cat_rng = Rng::new(seed, u64::MAX - 1);
        for w in make_words(&mut cat_rng, NUM_CATEGORIES * 4) {
            if w.len() >= 5 && categories.len() < NUM_CATEGORIES {
                categories.push(w);
            }
        }
        // Skewed, like real categories: a few large ones and a long tail.
        let cat_dist = Alias::zipf(categories.len(), 0.8);
        Generator {
            seed,
            synth,
            words,
            categories,
            zipf: Alias::zipf(synth.vocab, synth.zipf),
            cat_dist,
        }
    }

    /// Fills `doc` with document `i`.
    pub fn generate(&self, i: u64, doc: &mut Doc) {
        let mut rng = Rng::new(self.seed, i);
        doc.id = i as i64;
        doc.year = 1950 + rng.below(75) as i64;
        doc.category.clear();
        doc.category
            .push_str(&self.categories[self.cat_dist.sample(&mut rng)]);
        doc.title.clear();
        let title_len = 2 + rng.below(6);
        for k in 0..title_len {
            if k > 0 {
                doc.title.push(' ');
            }
            capitalize(&self.words[self.zipf.sample(&mut rng)], &mut doc.title);
        }
        doc.body.clear();
        let (lo, hi) = (self.synth.min_len, self.synth.max_len);
        let len = lo + rng.below(hi - lo + 1);
        // Sentences of 5 to 24 words, with commas now and then: the text
        // exercises splitting on punctuation and lowercasing.
        let mut left_in_sentence = 0;
        for k in 0..len {
            let w = &self.words[self.zipf.sample(&mut rng)];
            if left_in_sentence == 0 {
                if k > 0 {
                    doc.body.push_str(". ");
                }
                left_in_sentence = 5 + rng.below(20);
                capitalize(w, &mut doc.body);
            } else {
                if rng.below(12) == 0 {
                    doc.body.push(',');
                }
                doc.body.push(' ');
                doc.body.push_str(w);
            }
            left_in_sentence -= 1;
        }
        doc.body.push('.');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let sy = Synth::STANDARD;
        let g = Generator::new(42, sy);
        let (mut a, mut b) = (Doc::default(), Doc::default());
        g.generate(7, &mut a);
        Generator::new(42, sy).generate(7, &mut b);
        assert_eq!(a.body, b.body);
        let n = quarry::analysis::tokens(&a.body).len();
        assert!((sy.min_len..=sy.max_len).contains(&n), "{n}");
        assert!(
            g.words
                .iter()
                .all(|w| w.bytes().all(|c| c.is_ascii_lowercase()))
        );
    }

    #[test]
    fn large_vocab_words_are_distinct() {
        let mut rng = Rng::new(42, u64::MAX);
        let words = make_words(&mut rng, Synth::LARGE_VOCAB.vocab);
        assert_eq!(words.len(), Synth::LARGE_VOCAB.vocab);
        let set: std::collections::HashSet<&str> = words.iter().map(String::as_str).collect();
        assert_eq!(set.len(), words.len());
        // Each word is one token of at most 40 bytes, so distinct words are
        // distinct terms.
        assert!(
            words
                .iter()
                .all(|w| w.len() <= 40 && quarry::analysis::tokens(w) == vec![w.clone()])
        );
    }

    #[test]
    fn alias_matches_weights() {
        let a = Alias::new(&[1.0, 2.0, 7.0]);
        let mut rng = Rng::new(1, 2);
        let mut c = [0u32; 3];
        for _ in 0..100_000 {
            c[a.sample(&mut rng)] += 1;
        }
        assert!((c[2] as f64 / 100_000.0 - 0.7).abs() < 0.01, "{c:?}");
    }
}
