/*
 * Phrase queries through the C API: exact and sloppy phrases, analysed
 * like the field, repeated tokens, one token as a term, none as nothing,
 * phrases as boolean clauses and boosted, each on every execution path
 * with the exhaustive path's documents and score bits; and their errors
 * (NULL and non-UTF-8 arguments, a field that is not text, a text field
 * without positions).
 *
 * Usage: phrase SCRATCH_DIR
 */
#include "common.h"

static const char *DOCS[] = {
    "the quick brown fox jumps",              /* 1 */
    "quick the fox brown",                    /* 2 */
    "the brown quick fox",                    /* 3 */
    "fox fox fox",                            /* 4 */
    "a quick brown dog and a quick brown fox", /* 5 */
    "the lazy dog",                           /* 6 */
};
#define NDOCS (sizeof(DOCS) / sizeof(DOCS[0]))

static quarry_searcher *open_index(const char *dir) {
    quarry_schema *schema = NULL;
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    quarry_searcher *s = NULL;
    size_t i;
    OK(quarry_schema_new(&schema));
    OK(quarry_schema_add_field(schema, S("id"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED));
    OK(quarry_schema_add_field(schema, S("body"), QUARRY_FIELD_TEXT, 0));
    OK(quarry_schema_add_field(schema, S("flat"), QUARRY_FIELD_TEXT, QUARRY_FIELD_NO_POSITIONS));
    OK(quarry_indexer_create(dir, strlen(dir), schema, &ix));
    OK(quarry_doc_new(&d));
    for (i = 0; i < NDOCS; i++) {
        OK(quarry_doc_clear(d));
        OK(quarry_doc_add_i64(d, S("id"), (int64_t)i + 1));
        OK(quarry_doc_add_text(d, S("body"), DOCS[i], strlen(DOCS[i])));
        OK(quarry_doc_add_text(d, S("flat"), DOCS[i], strlen(DOCS[i])));
        OK(quarry_indexer_add_doc(ix, d));
    }
    OK(quarry_indexer_commit(ix));
    quarry_doc_free(d);
    quarry_indexer_free(ix);
    quarry_schema_free(schema);
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    return s;
}

static quarry_query *phrase(const char *field, const char *text, uint32_t slop) {
    quarry_query *q = NULL;
    OK(quarry_query_phrase(field, strlen(field), text, strlen(text), slop, &q));
    return q;
}

/* A boolean of two clauses (which it frees). */
static quarry_query *two(quarry_occur oa, quarry_query *a, quarry_occur ob, quarry_query *b) {
    quarry_query *q = NULL;
    OK(quarry_query_boolean(&q));
    OK(quarry_query_add_clause(q, oa, a));
    OK(quarry_query_add_clause(q, ob, b));
    quarry_query_free(a);
    quarry_query_free(b);
    return q;
}

static float top_score(quarry_searcher *s, quarry_query *q) {
    quarry_hits *h = NULL;
    float sc = -1;
    OK(quarry_searcher_search(s, q, NULL, 0, 1, &h));
    if (quarry_hits_len(h) == 1) OK(quarry_hits_score(h, 0, &sc));
    quarry_hits_free(h);
    quarry_query_free(q);
    return sc;
}

int main(int argc, char **argv) {
    quarry_searcher *s;
    quarry_query *q = NULL, *b = NULL;
    quarry_hits *h = NULL;
    if (argc < 2) {
        fprintf(stderr, "usage: phrase SCRATCH_DIR\n");
        return 2;
    }
    s = open_index(argv[1]);

    ffi_expect("exact", s, phrase("body", "quick brown", 0), (const int64_t[]){1, 5}, 2, -1.0f);
    ffi_expect("analysed", s, phrase("body", "Quick, BROWN!", 0), (const int64_t[]){1, 5}, 2, -1.0f);
    ffi_expect("three tokens", s, phrase("body", "quick brown fox", 0), (const int64_t[]){1, 5}, 2, -1.0f);
    ffi_expect("slop 1: a gap", s, phrase("body", "brown fox", 1), (const int64_t[]){1, 3, 5}, 3, -1.0f);
    ffi_expect("slop 1: not a swap", s, phrase("body", "quick brown", 1), (const int64_t[]){1, 5}, 2, -1.0f);
    /* Doc 3 holds them swapped, doc 2 two apart. */
    ffi_expect("slop 2: a swap", s, phrase("body", "quick brown", 2), (const int64_t[]){1, 2, 3, 5}, 4, -1.0f);
    ffi_expect("repeated", s, phrase("body", "fox fox", 0), (const int64_t[]){4}, 1, -1.0f);
    ffi_expect("absent token", s, phrase("body", "quick zebra", 5), NULL, 0, -1.0f);
    ffi_expect("no token", s, phrase("body", " ;; ", 0), NULL, 0, -1.0f);
    /* Doc 5 holds "quick brown" twice: it ranks first. */
    OK(quarry_searcher_search(s, (q = phrase("body", "quick brown", 0)), NULL, 0, 1, &h));
    {
        int64_t id = 0;
        OK(quarry_hits_stored_i64(h, 0, S("id"), &id));
        CHECK(id == 5);
    }
    quarry_hits_free(h);
    quarry_query_free(q);
    /* One token is the term query, score for score. */
    CHECK(top_score(s, phrase("body", "lazy", 3)) == top_score(s, ffi_term("body", "lazy")));
    CHECK(top_score(s, phrase("body", "lazy", 0)) > 0);

    /* As a boolean clause, and boosted. */
    ffi_expect("must phrase, must not dog", s,
               two(QUARRY_OCCUR_MUST, phrase("body", "quick brown", 0), QUARRY_OCCUR_MUST_NOT, ffi_term("body", "dog")),
               (const int64_t[]){1}, 1, -1.0f);
    ffi_expect("should phrases", s,
               two(QUARRY_OCCUR_SHOULD, phrase("body", "the fox", 2), QUARRY_OCCUR_SHOULD, phrase("body", "lazy dog", 0)),
               (const int64_t[]){1, 2, 3, 6}, 4, -1.0f);
    ffi_expect("filter phrase", s,
               two(QUARRY_OCCUR_FILTER, phrase("body", "brown fox", 1), QUARRY_OCCUR_MUST, ffi_term("body", "the")),
               (const int64_t[]){1, 3}, 2, -1.0f);
    q = phrase("body", "quick brown", 0);
    OK(quarry_query_boost(q, 2.0f, &b));
    quarry_query_free(q);
    ffi_expect("boosted", s, b, (const int64_t[]){1, 5}, 2, -1.0f);

    /* Errors. */
    q = NULL;
    EXPECT(quarry_query_phrase(NULL, 0, S("a b"), 0, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_phrase(S("body"), NULL, 0, 0, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_phrase(S("body"), S("a b"), 0, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_phrase(S("body"), "\xff", 1, 0, &q), QUARRY_INVALID_UTF8);
    CHECK(q == NULL);
    q = phrase("flat", "quick brown", 0);
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 5, &h), QUARRY_UNSUPPORTED);
    CHECK_MSG("\"flat\"");
    CHECK_MSG("positions");
    quarry_query_free(q);
    q = phrase("id", "quick brown", 0);
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 5, &h), QUARRY_SCHEMA);
    quarry_query_free(q);
    q = phrase("nope", "quick brown", 0);
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 5, &h), QUARRY_SCHEMA);
    quarry_query_free(q);

    quarry_searcher_free(s);
    return ffi_finish("phrase");
}
