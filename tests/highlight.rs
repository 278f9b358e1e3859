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
    ws: FieldId,
    n: FieldId,
}

/// Documents of (body, en); each has the tag "t".
fn index(docs: &[(&str, &str)]) -> Index {
    let docs: Vec<_> = docs.iter().map(|&(b, e)| (b, e, Some("t"))).collect();
    index_tagged(&docs)
}

/// Documents of (body, en, tag): body (stored text, default analyzer),
/// en (stored, english), secret (not stored, body's text), tag (stored,
/// indexed string), ws (stored, whitespace analyzer, body's text), n
/// (stored i64).
fn index_tagged(docs: &[(&str, &str, Option<&str>)]) -> Index {
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
    let ws = schema.add_field("ws", FieldType::Text, stored).unwrap();
    schema.set_analyzer(ws, Analyzer::Whitespace).unwrap();
    let n = schema.add_field("n", FieldType::I64, stored).unwrap();
    let mut w = IndexWriter::create(dir.path(), &schema, WriterConfig::default()).unwrap();
    for &(b, e, tag_value) in docs {
        let mut d = Document::new();
        if !b.is_empty() {
            d.add_str(body, b).add_str(ws, b);
        }
        d.add_str(en, e).add_str(secret, b).add_i64(n, 7);
        if let Some(t) = tag_value {
            d.add_str(tag, t);
        }
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
        ws,
        n,
    }
}

fn opts(max_bytes: usize) -> HighlightOptions {
    HighlightOptions {
        pre: "[".into(),
        post: "]".into(),
        ellipsis: "...".into(),
        max_bytes,
        escape: Escape::None,
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
    let e = err(ix.n, &opts(10));
    assert!(
        matches!(&e, Error::Schema(m)
            if m == "field \"n\" is i64: only text and string fields can be highlighted"),
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
    assert!(
        !ok && err.contains("not a stored text or string field"),
        "{err}"
    );
    let _ = Path::new(idx_s);
}

fn html(pre: &str, post: &str, ellipsis: &str, max_bytes: usize) -> HighlightOptions {
    HighlightOptions {
        pre: pre.into(),
        post: post.into(),
        ellipsis: ellipsis.into(),
        max_bytes,
        escape: Escape::Html,
    }
}

fn excerpt(ix: &Index, q: &Query, doc: u64, field: FieldId, o: &HighlightOptions) -> String {
    ix.s.highlight(q, doc, field, o).unwrap().unwrap()
}

#[test]
fn html_escaping_covers_the_stored_text_and_leaves_markers_and_ellipses_alone() {
    let text = "Tom & Jerry: \"<fox>\" isn't 'fox' > cat.";
    let ix = index(&[(text, "x")]);
    // Every special char in the context around the matches.
    let q = Query::term(ix.body, "fox");
    let o = html("<b>", "</b>", "<i>\u{2026}</i>", 200);
    assert_eq!(
        excerpt(&ix, &q, 0, ix.body, &o),
        "Tom &amp; Jerry: &quot;&lt;<b>fox</b>&gt;&quot; isn&#39;t &#39;<b>fox</b>&#39; &gt; cat."
    );
    // Every special char inside matches (the whitespace analyzer keeps
    // them in its tokens).
    let q = Query::Boolean(
        ["&", "\"<fox>\"", "isn't", ">"]
            .iter()
            .map(|t| (Occur::Should, Query::term(ix.ws, t)))
            .collect(),
    );
    assert_eq!(
        excerpt(&ix, &q, 0, ix.ws, &o),
        "Tom <b>&amp;</b> Jerry: <b>&quot;&lt;fox&gt;&quot;</b> <b>isn&#39;t</b> &#39;fox&#39; \
         <b>&gt;</b> cat."
    );
    // The markers and the ellipsis are written as given, specials and all.
    let o = html("<mark class=\"m\">", "</mark>", "<i>\u{2026}</i>", 14);
    let q = Query::term(ix.body, "jerry");
    assert_eq!(
        excerpt(&ix, &q, 0, ix.body, &o),
        "<i>\u{2026}</i>&amp; <mark class=\"m\">Jerry</mark>:<i>\u{2026}</i>"
    );
    // Escape::None (the default) leaves the text as stored.
    assert_eq!(HighlightOptions::default().escape, Escape::None);
    let q = Query::term(ix.body, "fox");
    assert_eq!(
        hl(&ix, &q, 0, ix.body, 200),
        "Tom & Jerry: \"<[fox]>\" isn't '[fox]' > cat."
    );
}

#[test]
fn the_limit_counts_stored_bytes_not_escaped_ones() {
    let text = "<&> fox \"'\"";
    assert_eq!(text.len(), 11);
    let ix = index(&[(text, "x")]);
    let q = Query::term(ix.body, "fox");
    // 11 bytes of stored text fit 11, however long their escapes are.
    assert_eq!(
        excerpt(&ix, &q, 0, ix.body, &html("[", "]", "...", 11)),
        "&lt;&amp;&gt; [fox] &quot;&#39;&quot;"
    );
    // One byte less cuts the text, at the word before the match.
    assert_eq!(
        excerpt(&ix, &q, 0, ix.body, &html("[", "]", "...", 10)),
        "...[fox] &quot;&#39;&quot;"
    );
    // At every limit the escaped excerpt is the plain one escaped: the
    // same cuts.
    let text = "A&B <fox> said \"it's\" & ran; x<y>z 'fox' & \"more\" > less, fox&co.";
    let ix = index(&[(text, "x")]);
    let q = Query::term(ix.body, "fox");
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    for max in 1..text.len() + 2 {
        let plain = hl(&ix, &q, 0, ix.body, max);
        unmark(&plain, text, max);
        let escaped = excerpt(&ix, &q, 0, ix.body, &html("[", "]", "...", max));
        assert_eq!(escaped, escape(&plain), "{max}");
    }
}

#[test]
fn a_string_value_is_one_token_marked_whole_when_a_term_equals_it() {
    let ix = index_tagged(&[
        ("b", "x", Some("green")),
        ("b", "x", Some("New York City Hall")),
        ("b", "x", Some("Ünïcode Straße")),
        ("b", "x", Some("<R&D> \"Bob's\"")),
        ("b", "x", None),
    ]);
    let t = |v: &str| Query::term(ix.tag, v);
    assert_eq!(hl(&ix, &t("green"), 0, ix.tag, 200), "[green]");
    // Unanalysed: another case is another term, so no match, and the
    // value comes unmarked (its start, under the limit).
    assert_eq!(hl(&ix, &t("Green"), 0, ix.tag, 200), "green");
    let hall = t("New York City Hall");
    assert_eq!(hl(&ix, &hall, 1, ix.tag, 200), "[New York City Hall]");
    assert_eq!(
        hl(&ix, &t("new york"), 1, ix.tag, 200),
        "New York City Hall"
    );
    // Prefix and range expansions mark what they expand to; MUST_NOT
    // terms and other fields' terms do not.
    assert_eq!(
        hl(&ix, &Query::prefix(ix.tag, "gr"), 0, ix.tag, 200),
        "[green]"
    );
    let range = Query::Range {
        field: ix.tag,
        lower: Bound::Included(Value::Str("a".into())),
        upper: Bound::Excluded(Value::Str("h".into())),
    };
    assert_eq!(hl(&ix, &range, 0, ix.tag, 200), "[green]");
    let q = Query::Boolean(vec![
        (Occur::Must, Query::All),
        (Occur::MustNot, t("green")),
        (Occur::Should, Query::term(ix.body, "green")),
    ]);
    assert_eq!(hl(&ix, &q, 0, ix.tag, 200), "green");
    // A match longer than the limit is cut at it, never inside a char,
    // with the ellipsis; without a match the cut is before a space.
    assert_eq!(hl(&ix, &hall, 1, ix.tag, 10), "[New York C]...");
    assert_eq!(hl(&ix, &t("nope"), 1, ix.tag, 10), "New York...");
    let uni = t("Ünïcode Straße");
    assert_eq!(hl(&ix, &uni, 2, ix.tag, 17), "[Ünïcode Straße]");
    assert_eq!(hl(&ix, &uni, 2, ix.tag, 16), "[Ünïcode Straß]...");
    assert_eq!(hl(&ix, &uni, 2, ix.tag, 15), "[Ünïcode Stra]...");
    // Escaped like a text.
    let q = t("<R&D> \"Bob's\"");
    assert_eq!(
        excerpt(&ix, &q, 3, ix.tag, &html("<b>", "</b>", "\u{2026}", 200)),
        "<b>&lt;R&amp;D&gt; &quot;Bob&#39;s&quot;</b>"
    );
    assert_eq!(
        excerpt(&ix, &q, 3, ix.tag, &html("<b>", "</b>", "\u{2026}", 6)),
        "<b>&lt;R&amp;D&gt;</b>\u{2026}"
    );
    // No value: no excerpt.
    assert_eq!(
        ix.s.highlight(&t("green"), 4, ix.tag, &opts(10)).unwrap(),
        None
    );
}
