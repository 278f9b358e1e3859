/*
 * The limits every query keeps to, through the C API. Queries nest at
 * most QUARRY_MAX_QUERY_DEPTH levels: chains 10,000 deep built with
 * quarry_query_add_clause (as boolean(must=[q], should=[term]) and as
 * single-MUST booleans) and with quarry_query_boost stop at the limit
 * with QUARRY_INVALID_ARGUMENT naming it, never a crash; the deepest
 * allowed query searches alike on every path, on one thread and on three
 * over four segments; a parsed text that nests too deep is
 * QUARRY_QUERY_SYNTAX. Boosts that would take a score beyond FLT_MAX are
 * refused (at the call when their product alone is, else by the search)
 * instead of giving NaN scores; large boosts within it score finitely.
 *
 * Usage: limits SCRATCH_DIR
 */
#include <float.h>

#include "common.h"

static const char *const TEXTS[] = {
    "the quick brown fox", "a lazy dog sleeps", "quick quick dog", "brown bread and quick jam", "nothing to see",
};
#define NTEXTS (sizeof(TEXTS) / sizeof(TEXTS[0]))

/* 100 documents (ids 0 to 99, TEXTS in turn) in four segments of 25. */
static quarry_searcher *open_index(const char *dir) {
    const char *texts[100];
    size_t i;
    for (i = 0; i < 100; i++) texts[i] = TEXTS[i % NTEXTS];
    return ffi_index_segments(dir, "default", texts, 100, 25);
}

static const quarry_exec_mode MODES[] = {QUARRY_EXEC_EXHAUSTIVE, QUARRY_EXEC_DAAT, QUARRY_EXEC_AUTO};
static const size_t THREADS[] = {1, 3};

#define MAX_HITS 20

typedef struct {
    size_t n;
    uint64_t docs[MAX_HITS];
    uint32_t scores[MAX_HITS];
} page;

/* The first MAX_HITS hits of `q` on every path and thread count, which
 * must agree bit for bit; the exhaustive path's, on one thread. */
static page searched(const char *what, quarry_searcher *s, const quarry_query *q) {
    page want = {0, {0}, {0}};
    size_t m, t, i;
    for (m = 0; m < 3; m++) {
        for (t = 0; t < 2; t++) {
            quarry_hits *h = NULL;
            page got = {0, {0}, {0}};
            OK(quarry_searcher_set_exec_mode(s, MODES[m]));
            OK(quarry_searcher_set_threads(s, THREADS[t]));
            OK(quarry_searcher_search(s, q, NULL, 0, MAX_HITS, &h));
            got.n = quarry_hits_len(h);
            for (i = 0; i < got.n; i++) {
                float score = 0;
                OK(quarry_hits_doc(h, i, &got.docs[i]));
                OK(quarry_hits_score(h, i, &score));
                got.scores[i] = ffi_bits_of(score);
            }
            quarry_hits_free(h);
            if (m == 0 && t == 0) {
                want = got;
            } else if (got.n != want.n || memcmp(got.docs, want.docs, sizeof got.docs) != 0 ||
                       memcmp(got.scores, want.scores, sizeof got.scores) != 0) {
                fprintf(stderr, "%s: mode %u on %zu threads differs from the exhaustive path\n", what,
                        (unsigned)MODES[m], THREADS[t]);
                ffi_failures++;
            }
        }
    }
    return want;
}

/* Every path and thread count refuses `q` with QUARRY_INVALID_ARGUMENT,
 * the message holding `needle`. */
static void refused(quarry_searcher *s, const quarry_query *q, const char *needle) {
    size_t m, t;
    for (m = 0; m < 3; m++) {
        for (t = 0; t < 2; t++) {
            quarry_hits *h = NULL;
            OK(quarry_searcher_set_exec_mode(s, MODES[m]));
            OK(quarry_searcher_set_threads(s, THREADS[t]));
            EXPECT(quarry_searcher_search(s, q, NULL, 0, MAX_HITS, &h), QUARRY_INVALID_ARGUMENT);
            CHECK_MSG(needle);
            CHECK(h == NULL);
        }
    }
}

#define TOO_DEEP "QUARRY_MAX_QUERY_DEPTH (64)"
#define LEVELS 10000

/* How each level of a chain wraps the one below. */
typedef enum { MUST_AND_SHOULD, MUST_ONLY, BOOST } wrap;

/* Tries to wrap a term LEVELS - 1 times as `how` says: every level past
 * the limit must be refused, naming it, and leave the chain as it was.
 * Returns the deepest chain made (QUARRY_MAX_QUERY_DEPTH levels). */
static quarry_query *chain(wrap how) {
    quarry_query *q = ffi_term("body", "quick");
    int level, refusals = 0;
    for (level = 2; level <= LEVELS; level++) {
        quarry_query *next = NULL;
        quarry_status st;
        if (how == BOOST) {
            st = quarry_query_boost(q, 1.0f, &next);
        } else {
            OK(quarry_query_boolean(&next));
            st = quarry_query_add_clause(next, QUARRY_OCCUR_MUST, q);
            if (st == QUARRY_OK && how == MUST_AND_SHOULD) {
                quarry_query *fox = ffi_term("body", "fox");
                OK(quarry_query_add_clause(next, QUARRY_OCCUR_SHOULD, fox));
                quarry_query_free(fox);
            }
        }
        if (st == QUARRY_OK) {
            CHECK(level <= QUARRY_MAX_QUERY_DEPTH);
            quarry_query_free(q);
            q = next;
            continue;
        }
        refusals++;
        CHECK(level > QUARRY_MAX_QUERY_DEPTH && st == QUARRY_INVALID_ARGUMENT);
        CHECK_MSG(TOO_DEEP);
        quarry_query_free(next);
    }
    CHECK(refusals == LEVELS - QUARRY_MAX_QUERY_DEPTH);
    return q;
}

/* "(quick OR " n times, "fox", "^2)" n times: 2n + 1 levels deep. */
static void groups(char *buf, size_t cap, const char *before, int n) {
    int i;
    buf[0] = 0;
    if (strlen(before) + (size_t)n * 13 + 4 > cap) exit(2);
    strcat(buf, before);
    for (i = 0; i < n; i++) strcat(buf, "(quick OR ");
    strcat(buf, "fox");
    for (i = 0; i < n; i++) strcat(buf, "^2)");
}

static void nesting(quarry_searcher *s) {
    quarry_query *plain = ffi_term("body", "quick"), *deepest = NULL, *b = NULL, *out = NULL;
    page term, p;
    char text[1024];
    CHECK(QUARRY_MAX_QUERY_DEPTH == 64);
    term = searched("a term", s, plain);
    CHECK(term.n == MAX_HITS);

    /* The reported shape: every fox document first, then the rest. */
    deepest = chain(MUST_AND_SHOULD);
    p = searched("boolean(must=[q], should=[fox]) 64 deep", s, deepest);
    CHECK(p.n == MAX_HITS && p.docs[0] == 0 && p.docs[1] == 5);
    /* A boolean already at the limit takes no clause, not even itself. */
    EXPECT(quarry_query_add_clause(deepest, QUARRY_OCCUR_SHOULD, deepest), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG(TOO_DEEP);
    EXPECT(quarry_query_add_clause(deepest, QUARRY_OCCUR_SHOULD, plain), QUARRY_OK);
    p = searched("the deepest boolean with one more clause", s, deepest);
    CHECK(p.n == MAX_HITS);
    quarry_query_free(deepest);

    /* Single-MUST booleans and boosts of 1.0 score as the term. */
    deepest = chain(MUST_ONLY);
    p = searched("single-MUST booleans 64 deep", s, deepest);
    CHECK(memcmp(&p, &term, sizeof p) == 0);
    EXPECT(quarry_query_boost(deepest, 2.0f, &out), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG(TOO_DEEP);
    CHECK(out == NULL);
    quarry_query_free(deepest);
    deepest = chain(BOOST);
    p = searched("boosts 64 deep", s, deepest);
    CHECK(memcmp(&p, &term, sizeof p) == 0);
    OK(quarry_query_boolean(&b));
    EXPECT(quarry_query_add_clause(b, QUARRY_OCCUR_MUST, deepest), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG(TOO_DEEP);
    quarry_query_free(b);
    quarry_query_free(deepest);

    /* A parsed query counts as deep as what its text parsed to. */
    groups(text, sizeof text, "dog AND ", 32);
    EXPECT(quarry_query_parse(s, text, strlen(text), S("body"), QUARRY_OPERATOR_OR, &out), QUARRY_QUERY_SYNTAX);
    CHECK_MSG("at byte 8: the query from here nests 65 levels deep");
    groups(text, sizeof text, "dog AND ", 31);
    OK(quarry_query_parse(s, text, strlen(text), S("body"), QUARRY_OPERATOR_OR, &deepest));
    p = searched("a parsed query 64 deep", s, deepest);
    CHECK(p.n == MAX_HITS);
    EXPECT(quarry_query_boost(deepest, 1.0f, &out), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG(TOO_DEEP);
    quarry_query_free(deepest);
    groups(text, sizeof text, "", 31);
    OK(quarry_query_parse(s, text, strlen(text), S("body"), QUARRY_OPERATOR_OR, &deepest));
    OK(quarry_query_boost(deepest, 1.0f, &out));
    EXPECT(quarry_query_boost(out, 1.0f, &b), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG(TOO_DEEP);
    quarry_query_free(out);
    quarry_query_free(deepest);
    quarry_query_free(plain);
}

#define OVERFLOW "beyond the largest f32"

static quarry_query *boosted(const quarry_query *q, float boost) {
    quarry_query *out = NULL;
    OK(quarry_query_boost(q, boost, &out));
    return out;
}

static void boosts(quarry_searcher *s) {
    quarry_query *quick = ffi_term("body", "quick"), *all = NULL, *q = NULL, *b = NULL, *out = NULL;
    quarry_hits *h = NULL;
    const char *ex = NULL;
    size_t ex_len = 0, i;
    page p;
    OK(quarry_query_all(&all));

    /* The report: a term boosted by 3.4e38 gave NaN scores; now the
     * search says why it cannot score it, on every path. */
    q = boosted(quick, 3.4e38f);
    refused(s, q, OVERFLOW);
    OK(quarry_searcher_set_exec_mode(s, QUARRY_EXEC_AUTO));
    OK(quarry_searcher_search(s, quick, NULL, 0, 1, &h));
    EXPECT(quarry_hits_highlight(h, 0, q, S("body"), S("<"), S(">"), 100, &ex, &ex_len), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG(OVERFLOW);
    quarry_hits_free(h);
    quarry_query_free(q);

    /* A constant may be as large, and a sum may reach FLT_MAX. */
    q = boosted(all, 3.4e38f);
    p = searched("all^3.4e38", s, q);
    CHECK(p.n == MAX_HITS);
    for (i = 0; i < p.n; i++) CHECK(p.scores[i] == ffi_bits_of(3.4e38f));
    quarry_query_free(q);
    OK(quarry_query_boolean(&b));
    q = boosted(all, FLT_MAX / 2);
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_SHOULD, q));
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_SHOULD, q));
    quarry_query_free(q);
    p = searched("all^(FLT_MAX/2) twice", s, b);
    for (i = 0; i < p.n; i++) CHECK(p.scores[i] == ffi_bits_of(FLT_MAX));
    /* One more clause and the sum overflows. */
    q = boosted(all, FLT_MAX / 2);
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_SHOULD, q));
    quarry_query_free(q);
    refused(s, b, "a boolean's sum of clause scores inf, " OVERFLOW);
    quarry_query_free(b);

    /* Nested boosts multiply: a product beyond FLT_MAX is refused at once,
     * below it a large boost keeps the term's order. */
    q = boosted(all, 1e20f);
    EXPECT(quarry_query_boost(q, 1e20f, &out), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("beyond the largest float");
    CHECK(out == NULL);
    quarry_query_free(q);
    q = boosted(quick, 1e20f);
    b = boosted(q, 1e16f);
    p = searched("quick^1e20^1e16", s, b);
    {
        page plain = searched("quick", s, quick);
        CHECK(p.n == plain.n && memcmp(p.docs, plain.docs, sizeof p.docs) == 0);
        for (i = 0; i < p.n; i++) CHECK(p.scores[i] != plain.scores[i] && p.scores[i] <= ffi_bits_of(FLT_MAX));
    }
    quarry_query_free(b);
    b = boosted(q, 3.3e18f);
    refused(s, b, "a term's weight inf, " OVERFLOW);
    quarry_query_free(b);
    quarry_query_free(q);

    quarry_query_free(all);
    quarry_query_free(quick);
}

int main(int argc, char **argv) {
    quarry_searcher *s;
    if (argc != 2) return 2;
    s = open_index(argv[1]);
    nesting(s);
    boosts(s);
    quarry_searcher_free(s);
    return ffi_finish("limits");
}
