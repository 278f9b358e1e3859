//! BM25 with corpus-wide statistics.
//!
//! k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5)), and a term
//! scores `idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`,
//! evaluated in the monotone form `w - w / (1 + tf * inv[norm])` with
//! `w = idf * (k1 + 1)` and `inv[norm] = 1 / (k1 * (1 - b + b * dl / avgdl))`
//! precomputed per norm byte. `w` and each `inv` entry are computed in f64
//! and rounded to f32 once; the score itself is evaluated in f32. N counts every document of the snapshot
//! (deleted ones too, until a merge removes them), n every document holding
//! the term, and avgdl is the field's total tokens over N. `dl` is the
//! length decoded from the norm byte.

use std::sync::Arc;

use crate::format::norms::length_table;

/// k1.
pub const K1: f64 = 1.2;
/// b.
pub const B: f64 = 0.75;

/// Inverse document frequency, in f64.
pub fn idf(doc_count: u64, doc_freq: u64) -> f64 {
    let n = doc_count as f64;
    let df = doc_freq as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// One term's scoring constants.
#[derive(Clone, Debug)]
pub struct TermWeight {
    /// idf * (k1 + 1), computed in f64 and rounded to f32.
    pub weight: f32,
    /// Per norm byte: 1 / (k1 * (1 - b + b * dl / avgdl)), computed in f64
    /// and rounded to f32 ([`length_factors`]; shared by a field's terms).
    pub inv: Arc<[f32; 256]>,
}

/// The per-norm-byte factors `1 / (k1 * (1 - b + b * dl / avgdl))` of a
/// field holding `total_tokens` tokens over `doc_count` documents, each
/// computed in f64 and rounded to f32 once. `has_norms` is false for fields
/// without length norms, which score as if every document had the average
/// length.
pub fn length_factors(doc_count: u64, total_tokens: u64, has_norms: bool) -> [f32; 256] {
    let avgdl = if doc_count == 0 {
        1.0
    } else {
        total_tokens as f64 / doc_count as f64
    };
    let (k1, b) = (K1, B);
    let table = length_table();
    std::array::from_fn(|i| {
        if has_norms && avgdl > 0.0 {
            (1.0 / (k1 * ((1.0 - b) + b * f64::from(table[i]) / avgdl))) as f32
        } else {
            (1.0 / k1) as f32
        }
    })
}

impl TermWeight {
    /// Weights for a term with `doc_freq` in a snapshot of `doc_count`
    /// documents whose field holds `total_tokens` tokens. `has_norms` is
    /// false for fields without length norms (string, i64), which score as
    /// if every document had the average length.
    pub fn new(doc_count: u64, doc_freq: u64, total_tokens: u64, has_norms: bool) -> TermWeight {
        let inv = Arc::new(length_factors(doc_count, total_tokens, has_norms));
        TermWeight::with_factors(doc_count, doc_freq, inv)
    }

    /// Weights for a term with `doc_freq` in a snapshot of `doc_count`
    /// documents, with its field's [`length_factors`] already computed.
    pub fn with_factors(doc_count: u64, doc_freq: u64, inv: Arc<[f32; 256]>) -> TermWeight {
        TermWeight::boosted(doc_count, doc_freq, inv, 1.0)
    }

    /// [`Self::with_factors`] with the weight multiplied by `boost`:
    /// `idf * (k1 + 1) * boost` in f64, rounded to f32 once (a boost of 1.0
    /// gives the same bits as no boost).
    pub fn boosted(doc_count: u64, doc_freq: u64, inv: Arc<[f32; 256]>, boost: f64) -> TermWeight {
        TermWeight::from_idf(idf(doc_count, doc_freq), inv, boost)
    }

    /// Weights for a phrase (or any term-like clause) whose idf is `idf`,
    /// computed in f64: `idf * (k1 + 1) * boost`, rounded to f32 once.
    pub fn from_idf(idf: f64, inv: Arc<[f32; 256]>, boost: f64) -> TermWeight {
        let weight = (idf * (K1 + 1.0) * boost) as f32;
        TermWeight { weight, inv }
    }

    /// The score of a document with term frequency `tf` and norm byte `norm`.
    #[inline(always)]
    pub fn score(&self, tf: u32, norm: u8) -> f32 {
        self.score_of_key(self.key(tf, norm))
    }

    /// The score of `doc`, of term frequency `tf`, in a field whose norm
    /// bytes are `norms` (norm 0 for every document of a field without).
    #[inline(always)]
    pub fn score_doc(&self, tf: u32, doc: u32, norms: Option<&[u8]>) -> f32 {
        self.score(tf, norms.map_or(0, |v| v[doc as usize]))
    }

    /// The part of the score that depends on the document, `tf * inv[norm]`
    /// in f32: the score is [`Self::score_of_key`] of it, a non-decreasing
    /// function (each of its f32 steps, `1 + x`, `w / y` and `w - z`, rounds
    /// monotonically), so the largest key among some (tf, norm) pairs
    /// gives their largest score, bit for bit, for one division.
    #[inline(always)]
    pub fn key(&self, tf: u32, norm: u8) -> f32 {
        tf as f32 * self.inv[norm as usize]
    }

    /// The score of a document whose [`Self::key`] is `x`.
    #[inline(always)]
    pub fn score_of_key(&self, x: f32) -> f32 {
        let w = self.weight;
        w - w / (1.0 + x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_formula() {
        let tw = TermWeight::new(1000, 10, 50_000, true);
        for (tf, norm) in [(1u32, 10u8), (3, 40), (10, 100), (1, 0)] {
            let dl = f64::from(crate::format::norms::norm_to_length(norm));
            let idf = (1.0 + (1000.0 - 10.0 + 0.5) / (10.0 + 0.5f64)).ln();
            let tf64 = f64::from(tf);
            let want = idf * 2.2 * tf64 / (tf64 + 1.2 * (0.25 + 0.75 * dl / 50.0));
            let got = f64::from(tw.score(tf, norm));
            assert!((got - want).abs() / want < 1e-5, "{got} vs {want}");
        }
    }

    #[test]
    fn monotone_in_tf_and_length() {
        let tw = TermWeight::new(100, 7, 3000, true);
        for norm in 0..=255u8 {
            for tf in 1..200 {
                assert!(tw.score(tf + 1, norm) >= tw.score(tf, norm));
                if norm < 255 {
                    assert!(tw.score(tf, norm) >= tw.score(tf, norm + 1));
                }
            }
        }
    }

    proptest::proptest! {
        /// The score of the best key is the best score, bit for bit, so a
        /// bound may compare keys and divide once.
        #[test]
        fn the_best_key_gives_the_best_score(
            docs in 1u64..1_000_000,
            df_seed in proptest::prelude::any::<u64>(),
            avg in 1u64..400,
            pairs in proptest::collection::vec((1u32..100_000, proptest::prelude::any::<u8>()), 1..9),
        ) {
            let tw = TermWeight::new(docs, 1 + df_seed % docs, docs * avg, true);
            let best = pairs.iter().map(|&(tf, norm)| tw.score(tf, norm)).fold(f32::NEG_INFINITY, f32::max);
            let best_key = pairs.iter().map(|&(tf, norm)| tw.key(tf, norm)).fold(f32::NEG_INFINITY, f32::max);
            proptest::prop_assert_eq!(tw.score_of_key(best_key).to_bits(), best.to_bits());
        }
    }
}
