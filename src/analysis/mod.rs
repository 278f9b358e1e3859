//! Analysis: text in, tokens out.
//!
//! An [`Analyzer`] is a small pipeline: a tokenizer (how text splits into
//! tokens), then filters (lowercasing, a length cap, stop words, a
//! stemmer). Each text field names its analyzer in the schema, and the name
//! is persisted with the schema in the manifest, so queries are analysed
//! exactly like the documents they search. The analyzers:
//!
//! - `default`: split on every char for which `char::is_alphanumeric` is
//!   false, lowercase each char with `char::to_lowercase`, drop tokens
//!   longer than [`MAX_TOKEN_BYTES`] bytes (measured after lowercasing). No
//!   stemming, no stop words. An index without analyzer names (format
//!   versions 1 and 2) is `default` everywhere.
//! - `english`: `default`, then the Snowball English stemmer (`running`,
//!   `runs` and `run` are all `run`).
//! - `english_stop`: `english` with Lucene's 33 English stop words
//!   ([`ENGLISH_STOP_WORDS`]) removed before stemming.
//! - `whitespace`: split on `char::is_whitespace` only, no lowercasing
//!   (like Lucene's `WhitespaceAnalyzer` and tantivy's whitespace
//!   tokenizer: case and punctuation are kept), tokens longer than
//!   [`MAX_KEYWORD_BYTES`] dropped.
//! - `keyword`: the whole value as one token, not lowercased; a value
//!   longer than [`MAX_KEYWORD_BYTES`] bytes (or an empty one) gives no
//!   token.
//!
//! Every token carries its byte offsets in the source text and its
//! position. Positions count the tokens of the text from 0, and a removed
//! stop word leaves a gap, as in Lucene: in "quick the fox" under
//! `english_stop`, `quick` is at 0 and `fox` at 2, so the phrase "quick
//! fox" does not match across the removed word. A token dropped for its
//! length leaves no gap (so `default` positions are the token count, as
//! before analyzers were named). A field's length (its BM25 norm) is the
//! number of tokens emitted.

use std::borrow::Cow;

use frostem::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

/// Tokens longer than this many bytes (after lowercasing) are dropped by
/// the `default` and `english` analyzers.
pub const MAX_TOKEN_BYTES: usize = 40;

/// Tokens longer than this many bytes are dropped by the `whitespace` and
/// `keyword` analyzers (whose tokens are whole words with punctuation, or
/// whole values).
pub const MAX_KEYWORD_BYTES: usize = 255;

/// The stop words of `english_stop`: Lucene's `EnglishAnalyzer` default set.
pub const ENGLISH_STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// The longest of [`ENGLISH_STOP_WORDS`], in bytes.
const MAX_STOP_WORD_BYTES: usize = 5;

/// Whether `tok` is one of [`ENGLISH_STOP_WORDS`] (most tokens are longer
/// than any, and are passed by their length).
fn is_stop_word(tok: &str) -> bool {
    tok.len() <= MAX_STOP_WORD_BYTES && ENGLISH_STOP_WORDS.binary_search(&tok).is_ok()
}

/// A named analyzer (see the module docs for what each does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Analyzer {
    /// Split on non-alphanumerics, lowercase, drop tokens over 40 bytes.
    #[default]
    Default,
    /// `Default`, then the Snowball English stemmer.
    English,
    /// `English` with English stop words removed (leaving position gaps).
    EnglishStop,
    /// Split on whitespace only; case kept.
    Whitespace,
    /// The whole value as one token; case kept.
    Keyword,
}

/// The most stems a [`Scratch`] remembers; past it, it forgets them all
/// and starts again (a few MB at most). English prose of a few MB has some
/// 20,000 distinct words (`data/sample.jsonl`: 18,496).
const MAX_STEMS: usize = 1 << 16;

/// What [`Analyzer::tokenize`] reuses between tokens and calls: the token
/// being built, and the stems of the tokens seen (bounded by
/// [`MAX_STEMS`]), so the stemmer runs, and its string is allocated, once
/// per distinct token rather than per token.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    token: String,
    /// Token to stem (`None`: the stem is the token).
    stems: FxHashMap<Box<str>, Option<Box<str>>>,
}

/// One token: its text (borrowed until the next token), where it is in the
/// source text, and its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The token as indexed (lowercased, stemmed, as the analyzer does).
    pub text: &'a str,
    /// Byte offset of its first char in the source text.
    pub start: usize,
    /// Byte offset just past its last char in the source text.
    pub end: usize,
    /// Its position in the text, counted from 0 (removed stop words leave
    /// gaps).
    pub position: u32,
}

/// How text splits into tokens.
#[derive(Clone, Copy)]
enum Split {
    /// Runs of `char::is_alphanumeric` chars.
    Alphanumeric,
    /// Runs of chars that are not `char::is_whitespace`.
    Whitespace,
    /// The whole text.
    Whole,
}

/// An analyzer as its stages.
#[derive(Clone, Copy)]
struct Pipeline {
    split: Split,
    lowercase: bool,
    max_bytes: usize,
    stop_words: bool,
    stem: bool,
}

impl Analyzer {
    /// Every analyzer, in the order their names are listed in errors.
    pub const ALL: [Analyzer; 5] = [
        Analyzer::Default,
        Analyzer::English,
        Analyzer::EnglishStop,
        Analyzer::Whitespace,
        Analyzer::Keyword,
    ];

    /// The name used in schema JSON, the manifest and the C API.
    pub fn name(self) -> &'static str {
        match self {
            Analyzer::Default => "default",
            Analyzer::English => "english",
            Analyzer::EnglishStop => "english_stop",
            Analyzer::Whitespace => "whitespace",
            Analyzer::Keyword => "keyword",
        }
    }

    /// The analyzer called `name` ([`Analyzer::name`]), if any.
    pub fn from_name(name: &str) -> Option<Analyzer> {
        Analyzer::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The analyzer called `name`, or an [`Error::Schema`] listing the
    /// known names.
    pub fn by_name(name: &str) -> Result<Analyzer> {
        Analyzer::from_name(name).ok_or_else(|| {
            Error::Schema(format!(
                "unknown analyzer {name:?} (known: {})",
                Analyzer::ALL.map(Analyzer::name).join(", ")
            ))
        })
    }

    fn pipeline(self) -> Pipeline {
        let default = Pipeline {
            split: Split::Alphanumeric,
            lowercase: true,
            max_bytes: MAX_TOKEN_BYTES,
            stop_words: false,
            stem: false,
        };
        let keep_case = Pipeline {
            lowercase: false,
            max_bytes: MAX_KEYWORD_BYTES,
            ..default
        };
        match self {
            Analyzer::Default => default,
            Analyzer::English => Pipeline {
                stem: true,
                ..default
            },
            Analyzer::EnglishStop => Pipeline {
                stem: true,
                stop_words: true,
                ..default
            },
            Analyzer::Whitespace => Pipeline {
                split: Split::Whitespace,
                ..keep_case
            },
            Analyzer::Keyword => Pipeline {
                split: Split::Whole,
                ..keep_case
            },
        }
    }

    /// Whether the analyzer removes tokens and leaves their positions as
    /// gaps (so a document's positions may reach past its length).
    pub fn leaves_gaps(self) -> bool {
        self.pipeline().stop_words
    }

    /// Whether the analyzer lowercases its tokens.
    pub fn lowercases(self) -> bool {
        self.pipeline().lowercase
    }

    /// A prefix query's text as this analyzer's tokens would spell it:
    /// lowercased when the analyzer lowercases, never split, stopped or
    /// stemmed (a stemmed prefix would miss the words it begins).
    pub fn normalize_prefix(self, text: &str) -> String {
        if self.lowercases() {
            text.to_lowercase()
        } else {
            text.to_owned()
        }
    }

    /// Calls `emit` once per token of `text`, in order, and returns the
    /// positions the text used (one past the last token's position, plus
    /// the gaps of trailing stop words), which is where a following value
    /// of the same field starts.
    ///
    /// The one entry point of both indexing and query analysis. `scratch`
    /// is reused between tokens and calls, so analysis allocates nothing
    /// per token once it has grown (the stemmer runs once per distinct
    /// token, its stem kept in `scratch`).
    pub fn tokenize(
        self,
        text: &str,
        scratch: &mut Scratch,
        mut emit: impl FnMut(Token<'_>),
    ) -> u32 {
        let p = self.pipeline();
        let stemmer = p.stem.then(|| Stemmer::new(Algorithm::English));
        let stems = &mut scratch.stems;
        let mut position = 0u32;
        let mut filter = |tok: &str, start: usize, end: usize| {
            if tok.len() > p.max_bytes {
                return;
            }
            let at = position;
            position = position.saturating_add(1);
            if p.stop_words && is_stop_word(tok) {
                return;
            }
            let text = match &stemmer {
                Some(s) => stem(s, stems, tok),
                None => tok,
            };
            emit(Token {
                text,
                start,
                end,
                position: at,
            });
        };
        let buf = &mut scratch.token;
        match p.split {
            Split::Alphanumeric => split(
                text,
                buf,
                p.lowercase,
                |b| b.is_ascii_alphanumeric(),
                char::is_alphanumeric,
                &mut filter,
            ),
            Split::Whitespace => split(
                text,
                buf,
                p.lowercase,
                |b| !char::from(b).is_whitespace(),
                |c| !c.is_whitespace(),
                &mut filter,
            ),
            Split::Whole if text.is_empty() => {}
            Split::Whole if p.lowercase => {
                buf.clear();
                buf.extend(text.chars().flat_map(char::to_lowercase));
                filter(buf, 0, text.len());
            }
            Split::Whole => filter(text, 0, text.len()),
        }
        position
    }

    /// The tokens of `text` as owned strings, each with its position
    /// (gaps of removed stop words kept): how queries are analysed, the
    /// same as the field's documents.
    pub fn tokens_at(self, text: &str) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        self.tokenize(text, &mut Scratch::default(), |t| {
            out.push((t.text.to_owned(), t.position))
        });
        out
    }

    /// The tokens of `text` as owned strings (a convenience for queries and
    /// tests).
    pub fn tokens(self, text: &str) -> Vec<String> {
        self.tokens_at(text).into_iter().map(|(t, _)| t).collect()
    }
}

/// The stem of `tok`, from `stems` or else by `stemmer` (then kept).
fn stem<'a>(
    stemmer: &Stemmer,
    stems: &'a mut FxHashMap<Box<str>, Option<Box<str>>>,
    tok: &'a str,
) -> &'a str {
    if !stems.contains_key(tok) {
        if stems.len() >= MAX_STEMS {
            stems.clear();
        }
        let stem = match stemmer.stem(tok) {
            Cow::Borrowed(_) => None,
            Cow::Owned(s) => Some(s.into_boxed_str()),
        };
        stems.insert(tok.into(), stem);
    }
    match &stems[tok] {
        Some(s) => s,
        None => tok,
    }
}

/// [`Analyzer::tokenize`] of the `default` analyzer, each token's text
/// only (the `default` analyzer needs only the token buffer).
pub fn tokenize(text: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
    let mut s = Scratch {
        token: std::mem::take(scratch),
        stems: FxHashMap::default(),
    };
    Analyzer::Default.tokenize(text, &mut s, |t| emit(t.text));
    *scratch = s.token;
}

/// [`Analyzer::tokens`] of the `default` analyzer.
pub fn tokens(text: &str) -> Vec<String> {
    Analyzer::Default.tokens(text)
}

/// Splits `text` into runs of chars inside a token (`ascii_in` for ASCII
/// bytes, `char_in` for the other chars) and calls `token(text, start,
/// end)` for each: lowercased into `scratch`, or borrowed from `text` when
/// nothing changes it.
#[inline(always)]
fn split(
    text: &str,
    scratch: &mut String,
    lowercase: bool,
    ascii_in: impl Fn(u8) -> bool,
    char_in: impl Fn(char) -> bool,
    token: &mut impl FnMut(&str, usize, usize),
) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut start = None;
    scratch.clear();
    let mut end_token = |start: &mut Option<usize>, scratch: &mut String, end: usize| {
        if let Some(s) = start.take() {
            if lowercase {
                token(scratch, s, end);
                scratch.clear();
            } else {
                token(&text[s..end], s, end);
            }
        }
    };
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if ascii_in(b) {
                start.get_or_insert(i);
                if lowercase {
                    scratch.push(char::from(b.to_ascii_lowercase()));
                }
            } else {
                end_token(&mut start, scratch, i);
            }
            i += 1;
        } else {
            // A non-ASCII char: decode it from the (valid UTF-8) str.
            let c = text[i..].chars().next().expect("i is on a char boundary");
            if char_in(c) {
                start.get_or_insert(i);
                if lowercase {
                    scratch.extend(c.to_lowercase());
                }
            } else {
                end_token(&mut start, scratch, i);
            }
            i += c.len_utf8();
        }
    }
    end_token(&mut start, scratch, bytes.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token with its offsets and position.
    fn spans(a: Analyzer, text: &str) -> Vec<(String, usize, usize, u32)> {
        let mut out = Vec::new();
        a.tokenize(text, &mut Scratch::default(), |t| {
            out.push((t.text.to_owned(), t.start, t.end, t.position))
        });
        out
    }

    #[test]
    fn splits_lowercases_and_drops_long_tokens() {
        assert_eq!(tokens("Hello, World! x2y"), vec!["hello", "world", "x2y"]);
        assert_eq!(tokens("  "), Vec::<String>::new());
        assert_eq!(tokens("Ünïcode—dash"), vec!["ünïcode", "dash"]);
        let long = "a".repeat(41);
        let edge = "b".repeat(40);
        assert_eq!(
            tokens(&format!("{long} {edge} c")),
            vec![edge.clone(), "c".into()]
        );
        // Lowercasing can lengthen a token: İ lowercases to two chars.
        assert_eq!(tokens("İ"), vec!["i\u{307}"]);
        // Digits of other scripts are alphanumeric; punctuation of other scripts is not.
        assert_eq!(tokens("٣٤«ab»"), vec!["٣٤", "ab"]);
    }

    #[test]
    fn agrees_with_a_char_by_char_reference() {
        fn reference(text: &str) -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|t| !t.is_empty())
                .map(|t| t.chars().flat_map(char::to_lowercase).collect::<String>())
                .filter(|t| t.len() <= MAX_TOKEN_BYTES)
                .collect()
        }
        for text in [
            "The quick brown fox — jumped over 12 lazy dogs.",
            "ÀÉÎÕÜ straße ΣΊΣΥΦΟΣ ǅungla",
            "a\u{0}b\tc\nd",
            "x".repeat(80).as_str(),
        ] {
            assert_eq!(tokens(text), reference(text), "{text:?}");
        }
    }

    #[test]
    fn offsets_point_at_the_source_and_positions_count_tokens() {
        let text = "Ünï, İx  straße! ".to_owned() + &"z".repeat(41) + " end";
        let got = spans(Analyzer::Default, &text);
        for (tok, s, e, _) in &got {
            // The source slice lowercases to the token.
            assert_eq!(&text[*s..*e].to_lowercase(), tok);
        }
        let positions: Vec<u32> = got.iter().map(|t| t.3).collect();
        // The over-long token leaves no gap.
        assert_eq!(positions, [0, 1, 2, 3]);
        assert_eq!(got[1], ("i\u{307}x".into(), 7, 10, 1));
        assert_eq!(
            Analyzer::Default.tokenize(&text, &mut Scratch::default(), |_| {}),
            4
        );
    }

    #[test]
    fn english_stems_and_english_stop_leaves_gaps() {
        assert_eq!(
            Analyzer::English.tokens("Running runs RUN ponies' Generously"),
            ["run", "run", "run", "poni", "generous"]
        );
        // The stop list is sorted, for the binary search, and its longest
        // word is the length bound.
        assert!(ENGLISH_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            ENGLISH_STOP_WORDS.iter().map(|w| w.len()).max(),
            Some(MAX_STOP_WORD_BYTES)
        );
        assert!(ENGLISH_STOP_WORDS.iter().all(|w| is_stop_word(w)));
        assert!(!is_stop_word("these ") && !is_stop_word("fox"));
        let got = spans(Analyzer::EnglishStop, "The quick foxes and THE dogs");
        assert_eq!(
            got,
            [
                ("quick".into(), 4, 9, 1),
                ("fox".into(), 10, 15, 2),
                ("dog".into(), 24, 28, 5),
            ]
        );
        // Trailing stop words count in the positions used.
        assert_eq!(
            Analyzer::EnglishStop.tokenize("fox of the", &mut Scratch::default(), |_| {}),
            3
        );
        // Without the stop list, stop words are kept (and stemmed).
        assert_eq!(Analyzer::English.tokens("this is"), ["this", "is"]);
    }

    #[test]
    fn remembered_stems_are_the_stemmers_across_a_full_memory() {
        let stemmer = Stemmer::new(Algorithm::English);
        let words = [
            "running",
            "runs",
            "ponies",
            "the",
            "generously",
            "connection",
        ];
        let mut scratch = Scratch::default();
        // More distinct tokens than the memory holds, twice over, so it is
        // forgotten and filled again; each token as the stemmer makes it.
        for round in 0..2 {
            for i in 0..MAX_STEMS + 100 {
                let text = format!("{} w{i}ing {}", words[i % 6], words[(i + round) % 6]);
                let mut got = Vec::new();
                Analyzer::English.tokenize(&text, &mut scratch, |t| got.push(t.text.to_owned()));
                let want: Vec<String> = text
                    .split(' ')
                    .map(|w| stemmer.stem(w).into_owned())
                    .collect();
                assert_eq!(got, want);
                assert!(scratch.stems.len() <= MAX_STEMS);
            }
        }
    }

    #[test]
    fn whitespace_keeps_case_and_punctuation() {
        let got = spans(
            Analyzer::Whitespace,
            " Hello,\u{a0}World!\u{b}x\u{3000}Ünï ",
        );
        assert_eq!(
            got,
            [
                ("Hello,".into(), 1, 7, 0),
                ("World!".into(), 9, 15, 1),
                ("x".into(), 16, 17, 2),
                ("Ünï".into(), 20, 25, 3),
            ]
        );
        let long = "w".repeat(MAX_KEYWORD_BYTES + 1);
        assert_eq!(Analyzer::Whitespace.tokens(&format!("{long} ok")), ["ok"]);
    }

    #[test]
    fn keyword_is_the_whole_value() {
        assert_eq!(
            spans(Analyzer::Keyword, "New York, NY"),
            [("New York, NY".into(), 0, 12, 0)]
        );
        assert!(Analyzer::Keyword.tokens("").is_empty());
        let edge = "é".repeat(MAX_KEYWORD_BYTES / 2);
        assert_eq!(Analyzer::Keyword.tokens(&edge), vec![edge.clone()]);
        assert!(Analyzer::Keyword.tokens(&(edge + "xy")).is_empty());
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for a in Analyzer::ALL {
            assert_eq!(Analyzer::from_name(a.name()), Some(a));
            assert_eq!(Analyzer::by_name(a.name()).unwrap(), a);
        }
        let e = Analyzer::by_name("English").unwrap_err();
        assert!(
            matches!(&e, Error::Schema(m) if m.contains("\"English\"") && m.contains("english_stop")),
            "{e}"
        );
        assert_eq!(Analyzer::Whitespace.normalize_prefix("AbC"), "AbC");
        assert_eq!(Analyzer::English.normalize_prefix("RunN"), "runn");
    }
}
