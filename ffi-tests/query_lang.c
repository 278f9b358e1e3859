/*
 * The query language through the C API: prefix, range (i64 from the sort
 * column and from the terms, f64, string), match-all and match-none,
 * boosts and parsed queries, each run on every execution path with the
 * same documents and score bits as the exhaustive one; and their errors
 * (bad bounds and boosts, positioned syntax errors, the expansion limit).
 *
 * Usage: query_lang SCRATCH_DIR
 */
#include <math.h>

#include "common.h"

typedef struct {
    int64_t id;
    const char *body;
    int64_t year;
    const char *category;
    double price;
} doc_spec;

static const doc_spec DOCS[] = {
    {1, "the quick brown fox", 2001, "animals", 9.5},
    {2, "the lazy dog", 1999, "animals", 3.25},
    {3, "quick recipes", 2010, "cooking", 12.0},
    {4, "fox history", 1985, "history", 20.0},
    {5, "bake bread quickly", 2010, "cooking", -0.0},
    {6, "zebra", 1950, "zoo", -3.0},
};
#define NDOCS (sizeof(DOCS) / sizeof(DOCS[0]))

static quarry_searcher *open_index(const char *dir) {
    quarry_schema *schema = ffi_schema();
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    quarry_searcher *s = NULL;
    size_t i;
    OK(quarry_indexer_create(dir, strlen(dir), schema, &ix));
    OK(quarry_doc_new(&d));
    for (i = 0; i < NDOCS; i++) {
        const doc_spec *x = &DOCS[i];
        OK(quarry_doc_clear(d));
        OK(quarry_doc_add_i64(d, S("id"), x->id));
        OK(quarry_doc_add_text(d, S("body"), x->body, strlen(x->body)));
        OK(quarry_doc_add_i64(d, S("year"), x->year));
        OK(quarry_doc_add_string(d, S("category"), x->category, strlen(x->category)));
        OK(quarry_doc_add_f64(d, S("price"), x->price));
        OK(quarry_indexer_add_doc(ix, d));
    }
    OK(quarry_indexer_commit(ix));
    quarry_doc_free(d);
    quarry_indexer_free(ix);
    quarry_schema_free(schema);
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    return s;
}

static quarry_query *parsed(quarry_searcher *s, const char *text, quarry_operator op) {
    quarry_query *q = NULL;
    OK(quarry_query_parse(s, text, strlen(text), S("body"), op, &q));
    return q;
}

int main(int argc, char **argv) {
    quarry_searcher *s;
    quarry_query *q = NULL, *b = NULL, *t = NULL;
    quarry_hits *h = NULL;
    float plain = 0, boosted = 0;
    if (argc != 2) return 2;
    s = open_index(argv[1]);

    OK(quarry_query_prefix(S("body"), S("qu"), &q));
    ffi_expect("prefix", s, q, (const int64_t[]){1, 3, 5}, 3, 1.0f);
    OK(quarry_query_prefix(S("category"), S("z"), &q));
    ffi_expect("string prefix", s, q, (const int64_t[]){6}, 1, 1.0f);

    /* year is sortable only (its column), id indexed only (its terms). */
    OK(quarry_query_range_i64(S("year"), 1999, QUARRY_BOUND_INCLUSIVE, 2010, QUARRY_BOUND_EXCLUSIVE, &q));
    ffi_expect("i64 range on a column", s, q, (const int64_t[]){1, 2}, 2, 1.0f);
    OK(quarry_query_range_i64(S("id"), 2, QUARRY_BOUND_EXCLUSIVE, 5, QUARRY_BOUND_INCLUSIVE, &q));
    ffi_expect("i64 range on terms", s, q, (const int64_t[]){3, 4, 5}, 3, 1.0f);
    OK(quarry_query_range_i64(S("year"), 0, QUARRY_BOUND_UNBOUNDED, 1990, QUARRY_BOUND_INCLUSIVE, &q));
    ffi_expect("open i64 range", s, q, (const int64_t[]){4, 6}, 2, 1.0f);
    OK(quarry_query_range_f64(S("price"), 3.25, QUARRY_BOUND_INCLUSIVE, 12.0, QUARRY_BOUND_INCLUSIVE, &q));
    ffi_expect("f64 range", s, q, (const int64_t[]){1, 2, 3}, 3, 1.0f);
    /* Total order: -0.0 is below 0.0. */
    OK(quarry_query_range_f64(S("price"), 0.0, QUARRY_BOUND_INCLUSIVE, INFINITY, QUARRY_BOUND_INCLUSIVE, &q));
    ffi_expect("f64 range from +0", s, q, (const int64_t[]){1, 2, 3, 4}, 4, 1.0f);
    OK(quarry_query_range_str(S("category"), S("b"), QUARRY_BOUND_INCLUSIVE, S("d"), QUARRY_BOUND_EXCLUSIVE, &q));
    ffi_expect("string range", s, q, (const int64_t[]){3, 5}, 2, 1.0f);
    OK(quarry_query_range_str(S("category"), NULL, 0, QUARRY_BOUND_UNBOUNDED, S("animals"), QUARRY_BOUND_INCLUSIVE,
                              &q));
    ffi_expect("string range, open below", s, q, (const int64_t[]){1, 2}, 2, 1.0f);

    OK(quarry_query_all(&q));
    ffi_expect("all", s, q, (const int64_t[]){1, 2, 3, 4, 5, 6}, 6, 1.0f);
    OK(quarry_query_boolean(&b));
    OK(quarry_query_all(&q));
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_MUST, q));
    quarry_query_free(q);
    t = ffi_term("body", "fox");
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_MUST_NOT, t));
    ffi_expect("all but fox", s, b, (const int64_t[]){2, 3, 5, 6}, 4, 1.0f);
    OK(quarry_query_none(&q));
    ffi_expect("none", s, q, NULL, 0, -1.0f);

    /* Boosts: a constant scores its boost; a term's BM25 weight is scaled. */
    OK(quarry_query_all(&q));
    OK(quarry_query_boost(q, 2.5f, &b));
    quarry_query_free(q);
    ffi_expect("boosted all", s, b, (const int64_t[]){1, 2, 3, 4, 5, 6}, 6, 2.5f);
    OK(quarry_searcher_search(s, t, NULL, 0, 1, &h));
    OK(quarry_hits_score(h, 0, &plain));
    quarry_hits_free(h);
    OK(quarry_query_boost(t, 2.0f, &b));
    OK(quarry_searcher_search(s, b, NULL, 0, 1, &h));
    OK(quarry_hits_score(h, 0, &boosted));
    quarry_hits_free(h);
    CHECK(boosted > 1.99f * plain && boosted < 2.01f * plain);
    quarry_query_free(b);
    b = NULL;
    EXPECT(quarry_query_boost(t, NAN, &b), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_boost(t, -1.0f, &b), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_boost(t, INFINITY, &b), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_boost(NULL, 1.0f, &b), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_boost(t, 1.0f, NULL), QUARRY_NULL_ARGUMENT);
    CHECK(b == NULL);
    quarry_query_free(t);

    /* Parsed queries. */
    ffi_expect("parsed: quick -fox", s, parsed(s, "quick -fox", QUARRY_OPERATOR_OR), (const int64_t[]){3}, 1, -1.0f);
    ffi_expect("parsed: ranges and fields", s,
           parsed(s, "year:[2000 TO *] AND category:cooking", QUARRY_OPERATOR_OR), (const int64_t[]){3, 5}, 2, -1.0f);
    ffi_expect("parsed: default AND", s, parsed(s, "the fox", QUARRY_OPERATOR_AND), (const int64_t[]){1}, 1, -1.0f);
    ffi_expect("parsed: prefix and boost", s, parsed(s, "qu*^3 OR zebra", QUARRY_OPERATOR_AND),
           (const int64_t[]){1, 3, 5, 6}, 4, -1.0f);
    q = NULL;
    EXPECT(quarry_query_parse(s, S("body:(quick"), S("body"), QUARRY_OPERATOR_OR, &q), QUARRY_QUERY_SYNTAX);
    CHECK_MSG("at byte 11");
    CHECK_MSG("expected ')'");
    EXPECT(quarry_query_parse(s, S("year:soon"), S("body"), QUARRY_OPERATOR_OR, &q), QUARRY_QUERY_SYNTAX);
    CHECK_MSG("at byte 5");
    EXPECT(quarry_query_parse(s, S("fox"), NULL, 0, QUARRY_OPERATOR_OR, &q), QUARRY_QUERY_SYNTAX);
    CHECK_MSG("no default field");
    EXPECT(quarry_query_parse(s, S("fox"), S("nope"), QUARRY_OPERATOR_OR, &q), QUARRY_SCHEMA);
    EXPECT(quarry_query_parse(s, S("fox"), S("body"), 7, &q), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_parse(NULL, S("fox"), S("body"), QUARRY_OPERATOR_OR, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_parse(s, "\xff", 1, S("body"), QUARRY_OPERATOR_OR, &q), QUARRY_INVALID_UTF8);
    CHECK(q == NULL);
    /* A phrase parses and runs (ffi-tests/phrase.c tests phrases). */
    ffi_expect("parsed: phrase", s, parsed(s, "\"Lazy dog\"~1", QUARRY_OPERATOR_OR), (const int64_t[]){2}, 1, -1.0f);
    ffi_expect("parsed: phrase out of order", s, parsed(s, "\"dog lazy\"", QUARRY_OPERATOR_OR), NULL, 0, -1.0f);

    /* Bad bounds. */
    q = NULL;
    EXPECT(quarry_query_range_i64(S("year"), 1, 7, 2, QUARRY_BOUND_INCLUSIVE, &q), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_range_f64(S("price"), NAN, QUARRY_BOUND_INCLUSIVE, 2, QUARRY_BOUND_INCLUSIVE, &q),
           QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_range_str(S("category"), NULL, 0, QUARRY_BOUND_INCLUSIVE, S("b"), QUARRY_BOUND_INCLUSIVE, &q),
           QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_range_str(S("category"), "\xff", 1, QUARRY_BOUND_INCLUSIVE, S("b"), QUARRY_BOUND_INCLUSIVE,
                                  &q),
           QUARRY_INVALID_UTF8);
    EXPECT(quarry_query_prefix(S("body"), NULL, 0, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_all(NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_none(NULL), QUARRY_NULL_ARGUMENT);
    CHECK(q == NULL);
    /* Type errors show when the search runs. */
    OK(quarry_query_range_f64(S("year"), 1, QUARRY_BOUND_INCLUSIVE, 2, QUARRY_BOUND_INCLUSIVE, &q));
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 5, &h), QUARRY_SCHEMA);
    quarry_query_free(q);
    OK(quarry_query_range_i64(S("body"), 1, QUARRY_BOUND_INCLUSIVE, 2, QUARRY_BOUND_INCLUSIVE, &q));
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 5, &h), QUARRY_SCHEMA);
    quarry_query_free(q);

    /* The expansion limit: "qu" expands to quick and quickly. */
    EXPECT(quarry_searcher_set_max_expansions(s, 0), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_set_max_expansions(NULL, 5), QUARRY_NULL_ARGUMENT);
    OK(quarry_searcher_set_max_expansions(s, 1));
    OK(quarry_query_prefix(S("body"), S("qu"), &q));
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 5, &h), QUARRY_TOO_MANY_TERMS);
    CHECK_MSG("more than 1 terms");
    OK(quarry_searcher_set_max_expansions(s, 2));
    ffi_expect("prefix at the limit", s, q, (const int64_t[]){1, 3, 5}, 3, 1.0f);

    CHECK(strcmp(quarry_status_str(QUARRY_QUERY_SYNTAX), "query syntax error") == 0);
    CHECK(strcmp(quarry_status_str(QUARRY_TOO_MANY_TERMS), "too many terms") == 0);
    quarry_searcher_free(s);
    return ffi_finish("query_lang");
}
