/*
 * Highlighting through the C API: quarry_hits_highlight's excerpts (the
 * markers around the matched tokens of an english-analysed field, the
 * length limit and the ellipsis, multi-byte text, a document without a
 * match), the bytes living until quarry_hits_free, and its errors.
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
    quarry_query_free(all);
    quarry_searcher_free(s);
    return ffi_finish("highlight");
}
