/*
 * Highlighting through the C API: quarry_hits_highlight's excerpts (the
 * markers around the matched tokens of an english-analysed field, the
 * length limit and the ellipsis, multi-byte text, a document without a
 * match), the bytes living until quarry_hits_free, and its errors; and
 * quarry_hits_highlight_ex's (HTML escaping of the stored text but not of
 * the markers or the ellipsis, a custom ellipsis, string fields, the
 * flags and arguments it refuses).
 *
 * Usage: highlight SCRATCH_DIR
 */
#include "common.h"

static const char *const DOCS[] = {
    "The runner runs. Running is what runners do, and she ran far.",
    "Straße über alles: ÜBER-Läufe laufen über den Fluß.",
    "Nothing to see.",
};
#define NDOCS (sizeof(DOCS) / sizeof(DOCS[0]))

/* The excerpt must equal `want`. */
static void expect_excerpt(quarry_hits *h, size_t index, quarry_query *q, size_t max_len, const char *want) {
    const char *p = NULL;
    size_t n = 0;
    OK(quarry_hits_highlight(h, index, q, S("body"), S("<"), S(">"), max_len, &p, &n));
    if (n != strlen(want) || memcmp(p, want, n) != 0) {
        fprintf(stderr, "excerpt \"%.*s\", expected \"%s\"\n", (int)n, p, want);
        ffi_failures++;
    }
}

/* quarry_hits_highlight_ex's excerpt of `field` must equal `want`. */
static void expect_ex(quarry_hits *h, size_t index, quarry_query *q, const char *field, const char *ellipsis,
                      size_t max_len, quarry_highlight_flags flags, const char *want) {
    const char *p = NULL;
    size_t n = 0;
    OK(quarry_hits_highlight_ex(h, index, q, field, strlen(field), S("<b>"), S("</b>"), ellipsis, strlen(ellipsis),
                                max_len, flags, &p, &n));
    if (n != strlen(want) || memcmp(p, want, n) != 0) {
        fprintf(stderr, "excerpt \"%.*s\", expected \"%s\"\n", (int)n, p, want);
        ffi_failures++;
    }
}

/* The index of the hit whose stored id is `id`. */
static size_t hit_of(quarry_hits *h, int64_t id) {
    size_t i;
    for (i = 0; i < quarry_hits_len(h); i++) {
        int64_t got = -1;
        OK(quarry_hits_stored_i64(h, i, S("id"), &got));
        if (got == id) {
            return i;
        }
    }
    fprintf(stderr, "no hit with id %lld\n", (long long)id);
    exit(1);
}

/* An index at `dir` of ffi_schema, opened: id 0 with a body and a
 * category holding HTML's special chars, id 1 with a long category. */
static quarry_searcher *ffi_special_index(const char *dir) {
    quarry_schema *schema = ffi_schema();
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    quarry_searcher *s = NULL;
    OK(quarry_indexer_create(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_doc_new(&d));
    OK(quarry_doc_add_i64(d, S("id"), 0));
    OK(quarry_doc_add_text(d, S("body"), S("Tom & Jerry: \"<fox>\" isn't 'fox' > cat.")));
    OK(quarry_doc_add_string(d, S("category"), S("R&D <lab>")));
    OK(quarry_indexer_add_doc(ix, d));
    OK(quarry_doc_clear(d));
    OK(quarry_doc_add_i64(d, S("id"), 1));
    OK(quarry_doc_add_text(d, S("body"), S("x")));
    OK(quarry_doc_add_string(d, S("category"), S("New York City Hall")));
    OK(quarry_indexer_add_doc(ix, d));
    OK(quarry_indexer_commit(ix));
    quarry_doc_free(d);
    quarry_indexer_free(ix);
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    return s;
}

int main(int argc, char **argv) {
    char dir[4096];
    quarry_searcher *s = NULL;
    quarry_query *q = NULL;
    quarry_query *all = NULL;
    quarry_hits *h = NULL;
    const char *p = NULL;
    const char *kept = NULL;
    size_t n = 0;
    size_t i;
    if (argc != 2) {
        fprintf(stderr, "usage: highlight SCRATCH_DIR\n");
        return 2;
    }
    ffi_path(dir, sizeof dir, argv[1], "idx");
    s = ffi_index_texts(dir, "english", DOCS, NDOCS);

    q = ffi_match("body", "running", QUARRY_OPERATOR_OR);
    OK(quarry_searcher_search(s, q, NULL, 0, 10, &h));
    CHECK(quarry_hits_len(h) == 1);
    /* Every form that stems to "run"; "runner" and "ran" do not. */
    expect_excerpt(h, 0, q, 200, "The runner <runs>. <Running> is what runners do, and she ran far.");
    /* 40 bytes: the window with both matches, from a word's start to
     * before a space, with the ellipses. */
    expect_excerpt(h, 0, q, 40, "\xe2\x80\xa6runner <runs>. <Running> is what runners do,\xe2\x80\xa6");
    /* The first excerpt's bytes stay valid while more are made. */
    OK(quarry_hits_highlight(h, 0, q, S("body"), S("["), S("]"), 200, &kept, &n));
    for (i = 0; i < 20; i++) {
        OK(quarry_hits_highlight(h, 0, q, S("body"), S("<"), S(">"), 10 + i, &p, &n));
        CHECK(n > 0);
    }
    CHECK(n > 0 && memcmp(kept, "The runner [runs]", 17) == 0);

    /* Errors: outputs untouched. */
    p = NULL;
    EXPECT(quarry_hits_highlight(h, 0, q, S("plain"), S("<"), S(">"), 50, &p, &n), QUARRY_SCHEMA);
    CHECK_MSG("not stored");
    EXPECT(quarry_hits_highlight(h, 0, q, S("id"), S("<"), S(">"), 50, &p, &n), QUARRY_SCHEMA);
    EXPECT(quarry_hits_highlight(h, 0, q, S("nope"), S("<"), S(">"), 50, &p, &n), QUARRY_SCHEMA);
    EXPECT(quarry_hits_highlight(h, 1, q, S("body"), S("<"), S(">"), 50, &p, &n), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_highlight(h, 0, q, S("body"), S("<"), S(">"), 0, &p, &n), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_highlight(h, 0, q, S("body"), "\xff", 1, S(">"), 50, &p, &n), QUARRY_INVALID_UTF8);
    EXPECT(quarry_hits_highlight(h, 0, NULL, S("body"), S("<"), S(">"), 50, &p, &n), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight(NULL, 0, q, S("body"), S("<"), S(">"), 50, &p, &n), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight(h, 0, q, S("body"), S("<"), S(">"), 50, NULL, &n), QUARRY_NULL_ARGUMENT);
    CHECK(p == NULL);
    quarry_hits_free(h);
    quarry_query_free(q);

    /* Multi-byte text, and any query for the highlight: here "über" of
     * every document matched by all. */
    OK(quarry_query_all(&all));
    OK(quarry_searcher_search(s, all, NULL, 0, 10, &h));
    CHECK(quarry_hits_len(h) == 3);
    q = ffi_match("body", "ÜBER", QUARRY_OPERATOR_OR);
    expect_excerpt(h, hit_of(h, 1), q, 200, "Straße <über> alles: <ÜBER>-Läufe laufen <über> den Fluß.");
    /* 12 bytes: from the word's start to before the space. */
    expect_excerpt(h, hit_of(h, 1), q, 12, "\xe2\x80\xa6<über> alles:\xe2\x80\xa6");
    /* No match: the field's start. */
    expect_excerpt(h, hit_of(h, 2), q, 200, "Nothing to see.");
    expect_excerpt(h, hit_of(h, 2), q, 9, "Nothing\xe2\x80\xa6");
    quarry_hits_free(h);
    quarry_query_free(q);
    quarry_searcher_free(s);

    ffi_path(dir, sizeof dir, argv[1], "idx2");
    s = ffi_special_index(dir);
    OK(quarry_searcher_search(s, all, NULL, 0, 10, &h));
    CHECK(quarry_hits_len(h) == 2);
    i = hit_of(h, 0);

    /* Every special char of the stored text escaped, the markers not;
     * flags 0 is the text as stored, as quarry_hits_highlight gives it. */
    q = ffi_term("body", "fox");
    expect_ex(h, i, q, "body", "<i>~</i>", 200, QUARRY_HIGHLIGHT_ESCAPE_HTML,
              "Tom &amp; Jerry: &quot;&lt;<b>fox</b>&gt;&quot; isn&#39;t &#39;<b>fox</b>&#39; &gt; cat.");
    expect_ex(h, i, q, "body", "<i>~</i>", 200, 0, "Tom & Jerry: \"<<b>fox</b>>\" isn't '<b>fox</b>' > cat.");
    OK(quarry_hits_highlight(h, i, q, S("body"), S("<b>"), S("</b>"), 200, &p, &n));
    CHECK(n == strlen("Tom & Jerry: \"<<b>fox</b>>\" isn't '<b>fox</b>' > cat."));
    quarry_query_free(q);
    /* A custom ellipsis, written as given; the limit counts stored bytes
     * (14: "& Jerry:" after the cuts), not escaped ones. */
    q = ffi_term("body", "jerry");
    expect_ex(h, i, q, "body", "<i>~</i>", 14, QUARRY_HIGHLIGHT_ESCAPE_HTML, "<i>~</i>&amp; <b>Jerry</b>:<i>~</i>");
    expect_ex(h, i, q, "body", "", 14, QUARRY_HIGHLIGHT_ESCAPE_HTML, "&amp; <b>Jerry</b>:");
    expect_ex(h, i, q, "body", "...", 14, 0, "...& <b>Jerry</b>:...");
    quarry_query_free(q);

    /* A string field: the whole value marked when a term equals it
     * (unanalysed), cut at the limit like a text. */
    q = ffi_term("category", "R&D <lab>");
    expect_ex(h, i, q, "category", "...", 200, QUARRY_HIGHLIGHT_ESCAPE_HTML, "<b>R&amp;D &lt;lab&gt;</b>");
    expect_ex(h, i, q, "category", "...", 200, 0, "<b>R&D <lab></b>");
    expect_ex(h, i, q, "category", "...", 4, QUARRY_HIGHLIGHT_ESCAPE_HTML, "<b>R&amp;D</b>...");
    quarry_query_free(q);
    q = ffi_term("category", "r&d <lab>");
    expect_ex(h, i, q, "category", "...", 200, 0, "R&D <lab>");
    quarry_query_free(q);
    q = ffi_term("category", "New York City Hall");
    expect_ex(h, hit_of(h, 1), q, "category", "...", 10, 0, "<b>New York C</b>...");
    expect_ex(h, hit_of(h, 1), q, "category", "...", 200, 0, "<b>New York City Hall</b>");
    /* quarry_hits_highlight takes string fields too. */
    OK(quarry_hits_highlight(h, hit_of(h, 1), q, S("category"), S("["), S("]"), 200, &p, &n));
    CHECK(n == 20 && memcmp(p, "[New York City Hall]", 20) == 0);

    /* Errors: outputs untouched. */
    p = NULL;
    n = 0;
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("category"), S("<"), S(">"), S("..."), 50, 2, &p, &n),
           QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("unknown highlight flags 0x2");
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("category"), S("<"), S(">"), S("..."), 50,
                                    QUARRY_HIGHLIGHT_ESCAPE_HTML | 0x80000000u, &p, &n),
           QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("year"), S("<"), S(">"), S("..."), 50, 0, &p, &n), QUARRY_SCHEMA);
    CHECK_MSG("only text and string fields");
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("price"), S("<"), S(">"), S("..."), 50, 0, &p, &n), QUARRY_SCHEMA);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("note"), S("<"), S(">"), S("..."), 50, 0, &p, &n), QUARRY_SCHEMA);
    CHECK_MSG("not stored");
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("title"), S("<"), S(">"), S("..."), 50, 0, &p, &n), QUARRY_NO_VALUE);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), S("<"), S(">"), S("..."), 0, 0, &p, &n),
           QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, 2, q, S("body"), S("<"), S(">"), S("..."), 50, 0, &p, &n),
           QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), S("<"), S(">"), "\xe2\x80", 2, 50, 0, &p, &n),
           QUARRY_INVALID_UTF8);
    CHECK_MSG("ellipsis");
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), S("<"), S(">"), NULL, 0, 50, 0, &p, &n), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("ellipsis is NULL");
    EXPECT(quarry_hits_highlight_ex(NULL, i, q, S("body"), S("<"), S(">"), S("..."), 50, 0, &p, &n),
           QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, NULL, S("body"), S("<"), S(">"), S("..."), 50, 0, &p, &n),
           QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, NULL, 4, S("<"), S(">"), S("..."), 50, 0, &p, &n), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), NULL, 0, S(">"), S("..."), 50, 0, &p, &n),
           QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), S("<"), NULL, 0, S("..."), 50, 0, &p, &n),
           QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), S("<"), S(">"), S("..."), 50, 0, NULL, &n),
           QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_highlight_ex(h, i, q, S("body"), S("<"), S(">"), S("..."), 50, 0, &p, NULL),
           QUARRY_NULL_ARGUMENT);
    CHECK(p == NULL && n == 0);
    quarry_query_free(q);
    quarry_hits_free(h);
    quarry_query_free(all);
    quarry_searcher_free(s);
    return ffi_finish("highlight");
}
