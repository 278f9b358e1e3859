//! Highlighting: an excerpt of a stored text or string field around the
//! region that best matches a query, its matched terms marked (Lucy's
//! `Highlighter`).
//!
//! - **Terms**: the query is compiled against the searcher's segments, and
//!   the terms of the field are taken from the compiled query: its term
//!   and match terms and the terms its prefixes and dictionary ranges
//!   expand to, but none under a `MustNot` clause. Terms that no document
//!   holds were dropped by compilation and mark nothing, and so does a
//!   range that runs over a sort column instead of the dictionary.
//! - **Matches**: a text is analysed again with the field's analyzer, and
//!   every token whose (lowercased, stemmed: analysed) text is one of the
//!   terms is a match, marked over its byte offsets in the stored text:
//!   under `english`, a query for "running" marks "Runs". A string value
//!   is one token, unanalysed as it is indexed: the whole value (without
//!   the whitespace at its ends, which excerpts never show) is a match
//!   when it equals one of the terms.
//! - **The window**: of the windows at most `max_bytes` long, the one
//!   holding the most distinct terms, then the most matches, then the
//!   earliest. Context around it fills the limit (about a third before,
//!   the rest after); its start moves to the start of a sentence when one
//!   begins in the leading context, else to the start of a word; its end
//!   is cut after a sentence's end ('.', '!', '?') when that keeps half
//!   the limit, else before a space; never inside a char. Whitespace at
//!   either end is trimmed.
//! - **The limit** counts bytes of the stored text: the markers and the
//!   ellipses are not counted, nor is what escaping adds. A value no
//!   longer than the limit is returned whole. A single match longer than
//!   the limit (a long string value, say) is cut at it, its post marker
//!   closing it.
//! - **Cuts**: when the excerpt does not start at the value's start it
//!   begins with the ellipsis (default `…`), and when it does not end at
//!   the value's end it ends with it.
//! - **No match**: the excerpt is the start of the value, chosen as above.
//!   A document with no value of the field has no excerpt (`None`); with
//!   several values (a text field may repeat), the one with the best window
//!   (the first on ties).
//! - **Escaping** ([`Escape`]): by default the stored text is returned as
//!   stored. Under [`Escape::Html`] the pieces of stored text in the
//!   excerpt are HTML-escaped (`&` `<` `>` `"` `'` as `&amp;` `&lt;`
//!   `&gt;` `&quot;` `&#39;`), so the excerpt can go into HTML text or an
//!   attribute value as it is; the markers and the ellipsis are the
//!   caller's, written as given (markup such as `<b>` stays markup).

use rustc_hash::FxHashMap;

use crate::analysis::Scratch;
use crate::error::{Error, Result};
use crate::query::plan::Node;
use crate::query::{Occur, Query};
use crate::schema::{FieldId, FieldType};
use crate::searcher::Searcher;

/// How the stored text in an excerpt is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Escape {
    /// As stored.
    #[default]
    None,
    /// HTML-escaped: `&`, `<`, `>`, `"` and `'` as `&amp;`, `&lt;`,
    /// `&gt;`, `&quot;` and `&#39;`.
    Html,
}

impl Escape {
    /// Appends `text` to `out`, escaped.
    fn push(self, out: &mut String, text: &str) {
        match self {
            Escape::None => out.push_str(text),
            Escape::Html => {
                // Every escaped char is ASCII, so `at` and `i` are char
                // boundaries.
                let mut at = 0;
                for (i, b) in text.bytes().enumerate() {
                    let entity = match b {
                        b'&' => "&amp;",
                        b'<' => "&lt;",
                        b'>' => "&gt;",
                        b'"' => "&quot;",
                        b'\'' => "&#39;",
                        _ => continue,
                    };
                    out.push_str(&text[at..i]);
                    out.push_str(entity);
                    at = i + 1;
                }
                out.push_str(&text[at..]);
            }
        }
    }
}

/// How an excerpt is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HighlightOptions {
    /// Written before each matched token.
    pub pre: String,
    /// Written after each matched token.
    pub post: String,
    /// Written where the excerpt cuts the text, at either end.
    pub ellipsis: String,
    /// The most bytes of the stored text the excerpt holds (markers and
    /// ellipses not counted, nor what escaping adds); at least 1.
    pub max_bytes: usize,
    /// How the stored text is written (the markers and the ellipsis are
    /// written as given).
    pub escape: Escape,
}

impl HighlightOptions {
    /// The default ellipsis, `…` (U+2026).
    pub const DEFAULT_ELLIPSIS: &'static str = "\u{2026}";
}

impl Default for HighlightOptions {
    /// `<b>`, `</b>`, `…`, 200 bytes, not escaped.
    fn default() -> Self {
        HighlightOptions {
            pre: "<b>".into(),
            post: "</b>".into(),
            ellipsis: Self::DEFAULT_ELLIPSIS.into(),
            max_bytes: 200,
            escape: Escape::None,
        }
    }
}

/// One matched token: its byte range in the text and its term.
#[derive(Clone, Copy, Debug)]
struct Match {
    start: usize,
    end: usize,
    term: usize,
}

/// How good a window is: distinct terms, then matches (then the earliest
/// wins, by comparing strictly).
type Quality = (usize, usize);

/// The excerpt of `field` of document `doc` for `query` (see the module
/// docs). Errors: [`Error::Schema`] when the field is not a stored text
/// or string field; [`Error::InvalidArgument`] for a document out of
/// range or a `max_bytes` of 0; the query's own compile errors.
pub(crate) fn highlight(
    searcher: &Searcher,
    query: &Query,
    doc: u64,
    field: FieldId,
    options: &HighlightOptions,
) -> Result<Option<String>> {
    let schema = searcher.schema();
    let def = schema
        .get(field)
        .ok_or_else(|| Error::Schema(format!("field id {} is not in the schema", field.0)))?;
    if !matches!(def.ty, FieldType::Text | FieldType::String) {
        return Err(Error::Schema(format!(
            "field {:?} is {}: only text and string fields can be highlighted",
            def.name,
            def.ty.name()
        )));
    }
    if !def.flags.stored {
        return Err(Error::Schema(format!(
            "field {:?} is not stored, so it cannot be highlighted",
            def.name
        )));
    }
    if options.max_bytes == 0 {
        return Err(Error::InvalidArgument(
            "a highlight needs a length limit of at least 1 byte".into(),
        ));
    }
    let node = searcher.compile(query)?;
    let mut terms = Vec::new();
    query_terms(&node, field, &mut terms);
    let ids: FxHashMap<&[u8], usize> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_slice(), i))
        .collect();
    let stored = searcher.stored(doc)?;
    let mut best: Option<(Quality, &str, Vec<Match>, usize, usize)> = None;
    let mut scratch = Scratch::default();
    for (_, value) in stored.iter().filter(|(f, _)| *f == field) {
        let Some(text) = value.as_str() else { continue };
        let mut matches = Vec::new();
        if def.ty == FieldType::String {
            // One token, the whole value; marked over what excerpts show.
            if let Some(&term) = ids.get(text.as_bytes()) {
                let (start, end) = trim(text, 0, text.len());
                matches.push(Match { start, end, term });
            }
        } else {
            def.analyzer.tokenize(text, &mut scratch, |t| {
                if let Some(&term) = ids.get(t.text.as_bytes()) {
                    matches.push(Match {
                        start: t.start,
                        end: t.end,
                        term,
                    });
                }
            });
        }
        let (quality, lo, hi) = best_window(&matches, terms.len(), options.max_bytes);
        if best.as_ref().is_none_or(|b| quality > b.0) {
            best = Some((quality, text, matches, lo, hi));
        }
    }
    Ok(best.map(|(_, text, matches, lo, hi)| {
        let (start, end) = excerpt_bounds(text, &matches[lo..hi], options.max_bytes);
        render(text, &matches, start, end, options)
    }))
}

/// The distinct terms of `field` that `node` scores or filters by (not
/// under `MustNot`), in first-seen order.
fn query_terms(node: &Node, field: FieldId, out: &mut Vec<Vec<u8>>) {
    let mut add = |key: &[u8]| {
        if !out.iter().any(|k| k == key) {
            out.push(key.to_vec());
        }
    };
    match node {
        Node::Term(t) if t.field == field => add(&t.key),
        Node::Terms(s) if s.field == field => s.keys.iter().for_each(|k| add(k)),
        // A phrase's terms, each marked wherever it occurs (not only
        // inside an occurrence of the phrase).
        Node::Phrase(p) if p.field == field => p.terms.iter().for_each(|t| add(&t.key)),
        Node::Bool(clauses) => {
            for (occur, n) in clauses {
                if *occur != Occur::MustNot {
                    query_terms(n, field, out);
                }
            }
        }
        Node::Term(_)
        | Node::Terms(_)
        | Node::Phrase(_)
        | Node::Empty
        | Node::All(_)
        | Node::Range(_) => {}
    }
}

/// The best run `matches[lo..hi]` (see the module docs) and its quality;
/// `(0, 0)` and an empty run without matches. A run always holds its first
/// match, even one longer than `max_bytes`.
fn best_window(matches: &[Match], num_terms: usize, max_bytes: usize) -> (Quality, usize, usize) {
    let mut counts = vec![0u32; num_terms];
    let (mut distinct, mut j) = (0usize, 0usize);
    let mut best = ((0, 0), 0, 0);
    for i in 0..matches.len() {
        while j < matches.len() && (j == i || matches[j].end - matches[i].start <= max_bytes) {
            let c = &mut counts[matches[j].term];
            distinct += usize::from(*c == 0);
            *c += 1;
            j += 1;
        }
        let q = (distinct, j - i);
        if q > best.0 {
            best = (q, i, j);
        }
        let c = &mut counts[matches[i].term];
        *c -= 1;
        distinct -= usize::from(*c == 0);
    }
    best
}

/// The byte range of the excerpt of `text` around `run` (the best
/// window's matches; none: the text's start), at most `max_bytes` long,
/// on char boundaries.
fn excerpt_bounds(text: &str, run: &[Match], max_bytes: usize) -> (usize, usize) {
    let len = text.len();
    if len <= max_bytes {
        return trim(text, 0, len);
    }
    let (ms, me) = match (run.first(), run.last()) {
        (Some(a), Some(b)) => (a.start, b.end),
        _ => (0, 0),
    };
    // Leading context: about a third of what the run leaves, less when
    // the text ends first.
    let slack = max_bytes.saturating_sub(me - ms);
    let mut start = ms.saturating_sub(slack / 3);
    start = start.min(len.saturating_sub(max_bytes)).min(ms);
    start = floor_boundary(text, start);
    start = snap_start(text, start, ms);
    let limit = floor_boundary(text, (start + max_bytes).min(len));
    let end = if limit == len {
        len
    } else {
        snap_end(text, start, me.min(limit), limit, max_bytes)
    };
    trim(text, start, end)
}

/// Moves `start` forward to the first sentence start in `start..=ms`,
/// else the first word start there, else leaves it.
fn snap_start(text: &str, start: usize, ms: usize) -> usize {
    if start == 0 {
        return 0;
    }
    let b = text.as_bytes();
    let mut word = None;
    for p in start..=ms {
        if !text.is_char_boundary(p) || !b[p - 1].is_ascii_whitespace() {
            continue;
        }
        // After whitespace: a word start; a sentence start when the
        // non-space before the whitespace ends a sentence.
        let before = text[..p].trim_end();
        if before.ends_with(['.', '!', '?']) {
            return p;
        }
        word.get_or_insert(p);
    }
    word.unwrap_or(start)
}

/// Where the excerpt `start..limit` ends: after the last sentence end in
/// `me..=limit` when that keeps half of `max_bytes`, else before the last
/// space there, else at `limit`.
fn snap_end(text: &str, start: usize, me: usize, limit: usize, max_bytes: usize) -> usize {
    let b = text.as_bytes();
    let mut space = None;
    for q in (me..=limit).rev() {
        if q >= b.len() || !b[q].is_ascii_whitespace() {
            continue;
        }
        if text[..q].ends_with(['.', '!', '?']) && q - start >= max_bytes / 2 {
            return q;
        }
        space.get_or_insert(q);
    }
    space.unwrap_or(limit)
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `start..end` without the whitespace at either end.
fn trim(text: &str, start: usize, end: usize) -> (usize, usize) {
    let s = &text[start..end];
    let lead = s.len() - s.trim_start().len();
    let tail = s.trim_end().len();
    (start + lead.min(tail), start + tail)
}

/// The excerpt `text[start..end]` with every match inside it marked (a
/// match cut by the end is marked up to it) and the ellipses, the text
/// escaped as the options say.
fn render(
    text: &str,
    matches: &[Match],
    start: usize,
    end: usize,
    options: &HighlightOptions,
) -> String {
    let mut out = String::with_capacity(end - start + 2 * options.ellipsis.len() + 16);
    if start > 0 {
        out.push_str(&options.ellipsis);
    }
    let mut at = start;
    for m in matches.iter().filter(|m| m.start >= start && m.start < end) {
        let m_end = m.end.min(end);
        options.escape.push(&mut out, &text[at..m.start]);
        out.push_str(&options.pre);
        options.escape.push(&mut out, &text[m.start..m_end]);
        out.push_str(&options.post);
        at = m_end;
    }
    options.escape.push(&mut out, &text[at..end]);
    if end < text.len() {
        out.push_str(&options.ellipsis);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(start: usize, end: usize, term: usize) -> Match {
        Match { start, end, term }
    }

    #[test]
    fn the_window_with_most_distinct_then_most_matches_wins() {
        // Terms 0 and 1: a cluster of two distinct at 100.., three of one
        // term at 0...
        let ms = [
            m(0, 3, 0),
            m(5, 8, 0),
            m(10, 13, 0),
            m(100, 103, 0),
            m(106, 109, 1),
        ];
        assert_eq!(best_window(&ms, 2, 20), ((2, 2), 3, 5));
        // A limit too small for two: the most matches of one term... one
        // each, the earliest.
        assert_eq!(best_window(&ms, 2, 3), ((1, 1), 0, 1));
        assert_eq!(best_window(&[], 2, 3), ((0, 0), 0, 0));
        // A match longer than the limit still makes a window.
        assert_eq!(best_window(&[m(4, 50, 0)], 1, 10), ((1, 1), 0, 1));
    }

    #[test]
    fn excerpts_prefer_sentences_and_words_and_stay_on_char_boundaries() {
        let text = "First one here. Second sentence has the word target in it and more words follow after.";
        let at = text.find("target").unwrap();
        let run = [m(at, at + 6, 0)];
        let (s, e) = excerpt_bounds(text, &run, 40);
        assert!(e - s <= 40);
        let ex = &text[s..e];
        assert!(ex.contains("target"), "{ex:?}");
        // Starts at a word.
        assert!(s == 0 || text.as_bytes()[s - 1] == b' ', "{ex:?}");
        // Ends before a space (no sentence end in reach).
        assert!(e == text.len() || text.as_bytes()[e] == b' ', "{ex:?}");
        // A sentence start in the leading context is taken.
        let text =
            "An opening sentence that runs on for quite a while. Second has the target word.";
        let at = text.find("Second").unwrap();
        let (s, _) = excerpt_bounds(text, &[m(at + 7, at + 10, 0)], 60);
        assert_eq!(s, at);
        // The text's start in reach: the excerpt starts there.
        let (s, _) = excerpt_bounds(text, &[m(3, 10, 0)], 60);
        assert_eq!(s, 0);
        // Multi-byte text: never cut inside a char.
        let text = "ééééé ééééé ééééé cible ééééé ééééé ééééé";
        let at = text.find("cible").unwrap();
        for max in 6..text.len() {
            let (s, e) = excerpt_bounds(text, &[m(at, at + 5, 0)], max);
            assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
            assert!(e - s <= max, "{max}");
            assert!(s <= at && at + 5 <= e, "{max}: {:?}", &text[s..e]);
        }
    }
}
