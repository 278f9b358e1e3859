//! Highlighting (`Searcher::highlight`): markers exactly around the
//! matched tokens, the field's analyzer deciding what matches, the best
//! window under the length limit, UTF-8 safe cuts with ellipses, and the
//! errors.

use std::path::Path;

use quarry::*;

struct Index {
    _dir: tempfile::TempDir,
    s: Searcher,
    body: FieldId,
    en: FieldId,
    secret: FieldId,
    tag: FieldId,
}

fn index(docs: &[(&str, &str)]) -> Index {
    let dir = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let stored = FieldFlags {
        stored: true,
        ..Default::default()
    };
    let body = schema.add_field("body", FieldType::Text, stored).unwrap();
    let en = schema.add_field("en", FieldType::Text, stored).unwrap();
    schema.set_analyzer(en, Analyzer::English).unwrap();
    let secret = schema
        .add_field("secret", FieldType::Text, FieldFlags::default())
        .unwrap();
    let tag = schema
        .add_field(
            "tag",
            FieldType::String,
            FieldFlags {
                stored: true,
                indexed: true,
                sortable: false,
            },
        )
        .unwrap();
    let mut w = IndexWriter::create(dir.path(), &schema, WriterConfig::default()).unwrap();
    for (b, e) in docs {
        let mut d = Document::new();
        if !b.is_empty() {
            d.add_str(body, b);
        }
        d.add_str(en, e).add_str(secret, b).add_str(tag, "t");
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    let s = Searcher::open(dir.path()).unwrap();
    Index {
        _dir: dir,
        s,
        body,
        en,
        secret,
        tag,
    }
}

fn opts(max_bytes: usize) -> HighlightOptions {
    HighlightOptions {
        pre: "[".into(),
        post: "]".into(),
        ellipsis: "...".into(),
        max_bytes,
    }
}

fn hl(ix: &Index, q: &Query, doc: u64, field: FieldId, max: usize) -> String {
    ix.s.highlight(q, doc, field, &opts(max)).unwrap().unwrap()
}

/// The excerpt without markers and ellipses, which must be a slice of
/// `text` no longer than `max`; and the marked spans in it.
fn unmark(excerpt: &str, text: &str, max: usize) -> (String, Vec<String>) {
    let inner = excerpt.strip_prefix("...").unwrap_or(excerpt);
    let inner = inner.strip_suffix("...").unwrap_or(inner);
    let mut plain = String::new();
    let mut marked = Vec::new();
    let mut rest = inner;
    while let Some(open) = rest.find('[') {
        plain.push_str(&rest[..open]);
        let close = rest[open..].find(']').unwrap() + open;
        marked.push(rest[open + 1..close].to_owned());
        plain.push_str(&rest[open + 1..close]);
        rest = &rest[close + 1..];
    }
    plain.push_str(rest);
    assert!(plain.len() <= max, "{excerpt:?} is over {max} bytes");
    assert!(
        text.contains(&plain),
        "{plain:?} is not a slice of the text"
    );
    // No ellipsis where the excerpt reaches the text's start or end.
    assert!(excerpt.starts_with("...") || text.starts_with(&plain));
    assert!(excerpt.ends_with("...") || text.ends_with(&plain));
    (plain, marked)
}

#[test]
fn markers_sit_exactly_around_the_matched_tokens() {
    let text = "The quick brown fox jumps over the lazy dog; the fox sleeps.";
    let ix = index(&[(text, "x"), ("no match here", "x")]);
    let q = Query::matching(ix.body, "FOX dog", Operator::Or);
    assert_eq!(
        hl(&ix, &q, 0, ix.body, 200),
        "The quick brown [fox] jumps over the lazy [dog]; the [fox] sleeps."
    );
    // Terms under MUST_NOT are not marked; other fields' terms neither.
    let q = Query::Boolean(vec![
        (Occur::Should, Query::term(ix.body, "quick")),
        (Occur::MustNot, Query::term(ix.body, "lazy")),
        (Occur::Should, Query::term(ix.en, "dog")),
    ]);
    assert_eq!(
        hl(&ix, &q, 0, ix.body, 200),
        "The [quick] brown fox jumps over the lazy dog; the fox sleeps."
    );
    // A prefix marks every term it expands to.
    let q = Query::prefix(ix.body, "s");
    assert_eq!(
        hl(&ix, &q, 0, ix.body, 200),
        "The quick brown fox jumps over the lazy dog; the fox [sleeps]."
    );
    // A document the query does not match: the field's start, unmarked.
    let q = Query::matching(ix.body, "fox", Operator::Or);
    assert_eq!(hl(&ix, &q, 1, ix.body, 200), "no match here");
    assert_eq!(hl(&ix, &q, 1, ix.body, 8), "no match...");
}

#[test]
fn the_fields_analyzer_decides_what_matches() {
    let ix = index(&[(
        "",
        "She Runs daily; running is what she RAN for. Runner-up.",
    )]);
    let q = Query::matching(ix.en, "running", Operator::Or);
    assert_eq!(
        hl(&ix, &q, 0, ix.en, 200),
        "She [Runs] daily; [running] is what she RAN for. Runner-up."
    );
    // Parsed queries too: the word is stemmed, the prefix is lowercased
    // and matches the stems.
    let schema = ix.s.schema().clone();
    let q = quarry::query::parser::parse(
        "RUNNER* daily",
        &schema,
        &ParserConfig::new(ix.en, Operator::Or),
    )
    .unwrap();
    assert_eq!(
        hl(&ix, &q, 0, ix.en, 200),
        "She Runs [daily]; running is what she RAN for. [Runner]-up."
    );
    // No value of the field: no excerpt.
    let q = Query::matching(ix.body, "x", Operator::Or);
    assert_eq!(ix.s.highlight(&q, 0, ix.body, &opts(50)).unwrap(), None);
}

#[test]
fn multi_byte_text_is_cut_on_char_boundaries_within_the_limit() {
    let text = "Ünïcode ÄÖÜ straße — ŒUVRE über alles, 日本語の文章 und noch mehr Über-Wörter am Ende. \
                Zweiter Satz mit ÜBER und ﬁn.";
    let ix = index(&[(text, "x")]);
    let q = Query::matching(ix.body, "über", Operator::Or);
    let whole = hl(&ix, &q, 0, ix.body, 1000);
    assert_eq!(whole.matches('[').count(), 3, "{whole}");
    assert!(whole.contains("[über]") && whole.contains("[Über]-") && whole.contains("[ÜBER]"));
    for max in 1..text.len() + 2 {
        let e = hl(&ix, &q, 0, ix.body, max);
        let (_, marked) = unmark(&e, text, max);
        for m in marked {
            // A marked span is a match, or the start of one cut by the end.
            assert!(
                "über".starts_with(&m.to_lowercase()) && !m.is_empty(),
                "{max}: {e:?}"
            );
        }
    }
}

#[test]
fn the_window_with_the_most_distinct_terms_wins() {
    let filler = "Lorem ipsum dolor sit amet. ".repeat(8);
    let text = format!(
        "alpha first. {filler}alpha again here. {filler}Here alpha and beta meet. {filler}beta alone, beta."
    );
    let ix = index(&[(&text, "x")]);
    let q = Query::matching(ix.body, "alpha beta", Operator::Or);
    let e = hl(&ix, &q, 0, ix.body, 60);
    let (plain, marked) = unmark(&e, &text, 60);
    assert_eq!(marked, ["alpha", "beta"], "{e}");
    // It starts at the sentence holding them.
    assert!(plain.starts_with("Here alpha and beta meet."), "{e}");
    assert!(e.starts_with("...") && e.ends_with("..."), "{e}");
    // One term only: the most matches of it in one window.
    let q = Query::matching(ix.body, "beta", Operator::Or);
    let (_, marked) = unmark(&hl(&ix, &q, 0, ix.body, 40), &text, 40);
    assert_eq!(marked, ["beta", "beta"]);
}

#[test]
fn a_field_that_cannot_be_highlighted_is_a_clear_error() {
    let ix = index(&[("some text", "x")]);
    let q = Query::matching(ix.body, "text", Operator::Or);
    let err = |f: FieldId, o: &HighlightOptions| ix.s.highlight(&q, 0, f, o).unwrap_err();
    let e = err(ix.secret, &opts(10));
    assert!(
        matches!(&e, Error::Schema(m) if m.contains("\"secret\" is not stored")),
        "{e}"
    );
    let e = err(ix.tag, &opts(10));
    assert!(
        matches!(&e, Error::Schema(m) if m.contains("only text fields")),
        "{e}"
    );
    let e = err(ix.body, &opts(0));
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let e = ix.s.highlight(&q, 99, ix.body, &opts(10)).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

#[test]
fn the_cli_prints_excerpts_in_text_and_tsv() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let schema = dir.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"fields":[{"name":"body","type":"text","stored":true,"analyzer":"english"},
            {"name":"n","type":"text"}]}"#,
    )
    .unwrap();
    let docs = dir.join("docs.jsonl");
    std::fs::write(
        &docs,
        "{\"body\":\"Cats\\tare running. Dogs run too.\",\"n\":\"x\"}\n{\"body\":\"Nothing here.\",\"n\":\"x\"}\n",
    )
    .unwrap();
    let idx = dir.join("idx");
    let bin = env!("CARGO_BIN_EXE_quarry");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let idx_s = idx.to_str().unwrap();
    let (ok, _, err) = run(&[
        "index",
        idx_s,
        "--input",
        docs.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = run(&[
        "search",
        idx_s,
        "runs",
        "--highlight",
        "body",
        "--format",
        "tsv",
    ]);
    assert!(ok, "{err}");
    let mut lines = out.lines();
    assert!(lines.next().unwrap().ends_with("\ttotal_hits\texcerpt"));
    // The tab inside the text is escaped.
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with("\tCats\\tare <b>running</b>. Dogs <b>run</b> too."),
        "{out}"
    );
    let (ok, out, err) = run(&[
        "search",
        idx_s,
        "running",
        "--highlight",
        "body",
        "--pre",
        "*",
        "--post",
        "*",
        "--highlight-len",
        "20",
    ]);
    assert!(ok, "{err}");
    // The window with both matches (both stem to "run"), cut before a
    // space at the end.
    assert!(
        out.contains("\n       \u{2026}*running*. Dogs *run*\u{2026}\n"),
        "{out}"
    );
    // A field that is not a stored text field is refused up front.
    let (ok, _, err) = run(&["search", idx_s, "x", "--field", "n", "--highlight", "n"]);
    assert!(!ok && err.contains("not a stored text field"), "{err}");
    let _ = Path::new(idx_s);
}
