//! Analysis: text in, tokens out.
//!
//! The default analyzer is exactly: split on every char for which
//! `char::is_alphanumeric` is false, lowercase each char with
//! `char::to_lowercase`, and drop tokens longer than [`MAX_TOKEN_BYTES`]
//! bytes (measured after lowercasing). No stemming, no stop words. A field's
//! length is the number of tokens this produces.

/// Tokens longer than this many bytes (after lowercasing) are dropped.
pub const MAX_TOKEN_BYTES: usize = 40;

/// Calls `emit` once per token of `text`, in order, with a borrowed token.
///
/// `scratch` is reused between tokens so that analysis allocates nothing per
/// token once it has grown.
pub fn tokenize(text: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    scratch.clear();
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            if b.is_ascii_alphanumeric() {
                scratch.push(b.to_ascii_lowercase() as char);
            } else {
                flush(scratch, &mut emit);
            }
        } else {
            // A non-ASCII char: decode it from the (valid UTF-8) str.
            let c = text[i..].chars().next().expect("i is on a char boundary");
            i += c.len_utf8();
            if c.is_alphanumeric() {
                scratch.extend(c.to_lowercase());
            } else {
                flush(scratch, &mut emit);
            }
        }
    }
    flush(scratch, &mut emit);
}

#[inline]
fn flush(scratch: &mut String, emit: &mut impl FnMut(&str)) {
    if !scratch.is_empty() {
        if scratch.len() <= MAX_TOKEN_BYTES {
            emit(scratch);
        }
        scratch.clear();
    }
}

/// The tokens of `text` as owned strings (a convenience for queries and tests).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize(text, &mut String::new(), |t| out.push(t.to_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
