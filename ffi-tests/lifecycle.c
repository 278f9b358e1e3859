/*
 * The whole lifecycle through the C API: schema -> indexer -> documents ->
 * commit -> searcher -> AND / OR / boolean / term queries -> hits with
 * stored fields, totals, sorting and sort values -> deletes, reopen, merge
 * -> every execution path returning identical results -> counting modes
 * (exact, lower-bound, at least N) and the per-path kill switches on an
 * index with many matches -> free.
 *
 * Usage: lifecycle SCRATCH_DIR
 * When QUARRY_EXEC is set in the environment, a newly opened searcher must
 * report that mode, and likewise the path switches QUARRY_TERM_TOPK,
 * QUARRY_BLOCK_MAX_OR and QUARRY_BULK_AND (the driver runs this program with
 * and without them).
 */
#include "common.h"

typedef struct {
    int64_t id;
    const char *title;
    const char *body;
    int64_t year; /* 0 = none */
    const char *category; /* NULL = none */
    double price; /* negative = none */
} doc_spec;

static const doc_spec DOCS[] = {
    {1, "The quick brown fox", "the quick brown fox jumps over the lazy dog", 2001, "animals", 9.5},
    {2, "Lazy dogs", "the lazy dog sleeps all day", 1999, "animals", 3.25},
    {3, "Quick recipes", "quick and easy recipes for busy people", 2010, "cooking", 12.0},
    {4, "Fox hunting history", "a history of the fox hunt in england", 1985, "history", 20.0},
    {5, "Brown bread", "how to bake brown bread quickly", 2010, "cooking", -1.0},
    {6, "Caf\xc3\xa9 cr\xc3\xa8me", "zebra", 0, NULL, -1.0},
};
#define NDOCS (sizeof(DOCS) / sizeof(DOCS[0]))

/* Every word in the corpus that the "all documents" query uses. */
static const char ALL_WORDS[] = "the quick brown lazy recipes history bread zebra";

static void add_docs(quarry_indexer *ix) {
    quarry_doc *d = NULL;
    size_t i;
    OK(quarry_doc_new(&d));
    for (i = 0; i < NDOCS; i++) {
        const doc_spec *s = &DOCS[i];
        OK(quarry_doc_clear(d));
        OK(quarry_doc_add_i64(d, S("id"), s->id));
        OK(quarry_doc_add_text(d, S("title"), s->title, strlen(s->title)));
        OK(quarry_doc_add_text(d, S("body"), s->body, strlen(s->body)));
        if (s->year != 0) OK(quarry_doc_add_i64(d, S("year"), s->year));
        if (s->category != NULL) OK(quarry_doc_add_string(d, S("category"), s->category, strlen(s->category)));
        if (s->price >= 0) OK(quarry_doc_add_f64(d, S("price"), s->price));
        OK(quarry_doc_add_string(d, S("note"), S("not stored")));
        OK(quarry_indexer_add_doc(ix, d));
    }
    quarry_doc_free(d);
}

static quarry_hits *run(const quarry_searcher *s, const quarry_query *q, const quarry_sort *sort, size_t offset,
                        size_t limit) {
    quarry_hits *h = NULL;
    OK(quarry_searcher_search(s, q, sort, offset, limit, &h));
    return h;
}

static int64_t hit_id(const quarry_hits *h, size_t i) {
    int64_t id = -1;
    OK(quarry_hits_stored_i64(h, i, S("id"), &id));
    return id;
}

/* The hits must be exactly `ids` (by stored id, in order) out of `total`. */
static void expect_ids(const char *what, const quarry_hits *h, const int64_t *ids, size_t n, uint64_t total) {
    size_t i;
    int same = quarry_hits_len(h) == n && quarry_hits_total(h) == total && quarry_hits_total_is_exact(h);
    for (i = 0; same && i < n; i++) same = hit_id(h, i) == ids[i];
    if (!same) {
        fprintf(stderr, "%s: got total %llu, ids", what, (unsigned long long)quarry_hits_total(h));
        for (i = 0; i < quarry_hits_len(h); i++) fprintf(stderr, " %lld", (long long)hit_id(h, i));
        fprintf(stderr, "; expected total %llu, ids", (unsigned long long)total);
        for (i = 0; i < n; i++) fprintf(stderr, " %lld", (long long)ids[i]);
        fprintf(stderr, "\n");
        ffi_failures++;
    }
}

static int str_eq(const char *p, size_t len, const char *want) {
    return len == strlen(want) && memcmp(p, want, len) == 0;
}

static void check_stored(const quarry_searcher *s) {
    quarry_query *q = ffi_match("body", "fox", QUARRY_OPERATOR_OR);
    quarry_hits *h = run(s, q, NULL, 0, 10);
    const char *p = NULL;
    size_t len = 0;
    double price = 0;
    int64_t year = 0;
    uint64_t doc = 0;
    float score = 0;
    CHECK(quarry_hits_len(h) == 2);
    /* doc 1 ("the quick brown fox ...") and doc 4 ("... the fox hunt ..."):
     * each has fox once; doc 4's body is shorter, so it scores higher. */
    CHECK(hit_id(h, 0) == 4 && hit_id(h, 1) == 1);
    OK(quarry_hits_stored_str(h, 1, S("title"), &p, &len));
    CHECK(str_eq(p, len, "The quick brown fox"));
    OK(quarry_hits_stored_str(h, 1, S("category"), &p, &len));
    CHECK(str_eq(p, len, "animals"));
    OK(quarry_hits_stored_f64(h, 1, S("price"), &price));
    CHECK(price == 9.5);
    OK(quarry_hits_stored_i64(h, 1, S("year"), &year));
    CHECK(year == 2001);
    OK(quarry_hits_doc(h, 1, &doc));
    CHECK(doc == 0); /* the first document added */
    OK(quarry_hits_score(h, 0, &score));
    CHECK(score > 0.0f);
    CHECK(quarry_hits_sort_value_count(h) == 0);
    quarry_hits_free(h);
    quarry_query_free(q);

    /* Unicode survives storage and analysis lowercases it. */
    q = ffi_match("title", "CAF\xc3\x89", QUARRY_OPERATOR_OR);
    h = run(s, q, NULL, 0, 10);
    CHECK(quarry_hits_len(h) == 1);
    OK(quarry_hits_stored_str(h, 0, S("title"), &p, &len));
    CHECK(str_eq(p, len, "Caf\xc3\xa9 cr\xc3\xa8me"));
    EXPECT(quarry_hits_stored_i64(h, 0, S("year"), &year), QUARRY_NO_VALUE);
    EXPECT(quarry_hits_stored_f64(h, 0, S("price"), &price), QUARRY_NO_VALUE);
    quarry_hits_free(h);
    quarry_query_free(q);
}

static void check_queries(const quarry_searcher *s) {
    quarry_query *q, *b, *c;
    quarry_hits *h;

    q = ffi_match("body", "quick fox", QUARRY_OPERATOR_AND);
    h = run(s, q, NULL, 0, 10);
    {
        const int64_t ids[] = {1};
        expect_ids("quick AND fox", h, ids, 1, 1);
    }
    quarry_hits_free(h);
    quarry_query_free(q);

    q = ffi_match("body", "quick fox", QUARRY_OPERATOR_OR);
    h = run(s, q, NULL, 0, 10);
    CHECK(quarry_hits_total(h) == 3);
    CHECK(quarry_hits_len(h) == 3 && hit_id(h, 0) == 1); /* the only one with both */
    quarry_hits_free(h);
    /* limit and offset page through the same order */
    h = run(s, q, NULL, 1, 1);
    CHECK(quarry_hits_len(h) == 1 && quarry_hits_total(h) == 3);
    quarry_hits_free(h);
    h = run(s, q, NULL, 0, 0);
    CHECK(quarry_hits_len(h) == 0 && quarry_hits_total(h) == 3);
    quarry_hits_free(h);
    /* extreme paging values are fine: no overflow, no huge allocation */
    h = run(s, q, NULL, 0, SIZE_MAX);
    CHECK(quarry_hits_len(h) == 3 && quarry_hits_total(h) == 3);
    quarry_hits_free(h);
    h = run(s, q, NULL, SIZE_MAX, SIZE_MAX);
    CHECK(quarry_hits_len(h) == 0 && quarry_hits_total(h) == 3);
    quarry_hits_free(h);
    quarry_query_free(q);

    /* brown AND NOT category:cooking */
    OK(quarry_query_boolean(&b));
    c = ffi_match("body", "brown", QUARRY_OPERATOR_OR);
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_MUST, c));
    quarry_query_free(c); /* add_clause copied it */
    c = ffi_term("category", "cooking");
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_MUST_NOT, c));
    quarry_query_free(c);
    h = run(s, b, NULL, 0, 10);
    {
        const int64_t ids[] = {1};
        expect_ids("brown -cooking", h, ids, 1, 1);
    }
    quarry_hits_free(h);
    quarry_query_free(b);

    /* lazy OR fox, filtered to category:animals */
    OK(quarry_query_boolean(&b));
    c = ffi_term("body", "lazy");
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_SHOULD, c));
    quarry_query_free(c);
    c = ffi_term("body", "fox");
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_SHOULD, c));
    quarry_query_free(c);
    h = run(s, b, NULL, 0, 10);
    CHECK(quarry_hits_total(h) == 3 && hit_id(h, 0) == 1);
    quarry_hits_free(h);
    c = ffi_term("category", "animals");
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_FILTER, c));
    quarry_query_free(c);
    h = run(s, b, NULL, 0, 10);
    {
        const int64_t ids[] = {1, 2};
        expect_ids("(lazy fox) +filter(animals)", h, ids, 2, 2);
    }
    quarry_hits_free(h);
    /* a boolean added to itself nests a copy of its current state */
    OK(quarry_query_add_clause(b, QUARRY_OCCUR_MUST, b));
    h = run(s, b, NULL, 0, 10);
    CHECK(quarry_hits_total(h) == 2);
    quarry_hits_free(h);
    quarry_query_free(b);

    /* i64 term and string term */
    OK(quarry_query_term_i64(S("id"), 3, &q));
    h = run(s, q, NULL, 0, 10);
    {
        const int64_t ids[] = {3};
        expect_ids("id:3", h, ids, 1, 1);
    }
    quarry_hits_free(h);
    quarry_query_free(q);
    q = ffi_term("category", "cooking");
    h = run(s, q, NULL, 0, 10);
    CHECK(quarry_hits_total(h) == 2);
    quarry_hits_free(h);
    quarry_query_free(q);

    /* an empty boolean matches nothing */
    OK(quarry_query_boolean(&b));
    h = run(s, b, NULL, 0, 10);
    CHECK(quarry_hits_total(h) == 0 && quarry_hits_len(h) == 0);
    quarry_hits_free(h);
    quarry_query_free(b);
}

static void check_sorting(const quarry_searcher *s) {
    quarry_query *all = ffi_match("body", ALL_WORDS, QUARRY_OPERATOR_OR);
    quarry_sort *sort = NULL;
    quarry_hits *h;
    quarry_value_type ty = 99;
    int64_t iv = 0;
    double fv = 0;
    float score = 0;
    const char *p = NULL;
    size_t len = 0, i;

    /* year descending, then document number: missing years sort last */
    OK(quarry_sort_new(&sort));
    OK(quarry_sort_add_field(sort, S("year"), QUARRY_SORT_DESC));
    OK(quarry_sort_add_doc(sort, QUARRY_SORT_ASC));
    h = run(s, all, sort, 0, 10);
    {
        const int64_t ids[] = {3, 5, 1, 2, 4, 6};
        expect_ids("year desc, doc asc", h, ids, 6, 6);
    }
    CHECK(quarry_hits_sort_value_count(h) == 2);
    OK(quarry_hits_sort_value_type(h, 0, 0, &ty));
    CHECK(ty == QUARRY_VALUE_I64);
    OK(quarry_hits_sort_value_i64(h, 0, 0, &iv));
    CHECK(iv == 2010);
    OK(quarry_hits_sort_value_type(h, 5, 0, &ty));
    CHECK(ty == QUARRY_VALUE_NONE);
    EXPECT(quarry_hits_sort_value_i64(h, 5, 0, &iv), QUARRY_NO_VALUE);
    OK(quarry_hits_sort_value_type(h, 2, 1, &ty));
    CHECK(ty == QUARRY_VALUE_I64);

    /* the same hits when the total may be a lower bound */
    {
        quarry_hits *lb = NULL;
        OK(quarry_searcher_search_flags(s, all, sort, 0, 10, QUARRY_SEARCH_TOTAL_LOWER_BOUND, &lb));
        CHECK(quarry_hits_len(lb) == quarry_hits_len(h));
        for (i = 0; i < quarry_hits_len(lb) && i < quarry_hits_len(h); i++) CHECK(hit_id(lb, i) == hit_id(h, i));
        CHECK(quarry_hits_total(lb) <= 6);
        CHECK(!quarry_hits_total_is_exact(lb) || quarry_hits_total(lb) == 6);
        quarry_hits_free(lb);
    }
    quarry_hits_free(h);

    /* paging through a sorted result */
    h = run(s, all, sort, 1, 2);
    {
        const int64_t ids[] = {5, 1};
        expect_ids("year desc, page 2", h, ids, 2, 6);
    }
    quarry_hits_free(h);
    quarry_sort_free(sort);

    /* category ascending, then year descending */
    OK(quarry_sort_new(&sort));
    OK(quarry_sort_add_field(sort, S("category"), QUARRY_SORT_ASC));
    OK(quarry_sort_add_field(sort, S("year"), QUARRY_SORT_DESC));
    h = run(s, all, sort, 0, 10);
    {
        const int64_t ids[] = {1, 2, 3, 5, 4, 6};
        expect_ids("category asc, year desc", h, ids, 6, 6);
    }
    OK(quarry_hits_sort_value_type(h, 0, 0, &ty));
    CHECK(ty == QUARRY_VALUE_STR);
    OK(quarry_hits_sort_value_str(h, 0, 0, &p, &len));
    CHECK(str_eq(p, len, "animals"));
    OK(quarry_hits_sort_value_str(h, 4, 0, &p, &len));
    CHECK(str_eq(p, len, "history"));
    /* no score rule: no scores, unless the spec asks for them */
    for (i = 0; i < quarry_hits_len(h); i++) {
        OK(quarry_hits_score(h, i, &score));
        CHECK(score == 0.0f);
    }
    EXPECT(quarry_sort_track_scores(NULL, true), QUARRY_NULL_ARGUMENT);
    OK(quarry_sort_track_scores(sort, true));
    {
        quarry_hits *tracked = run(s, all, sort, 0, 10);
        quarry_hits *ranked = run(s, all, NULL, 0, 10);
        size_t j;
        CHECK(quarry_hits_len(tracked) == quarry_hits_len(h) && quarry_hits_len(ranked) == 6);
        for (i = 0; i < quarry_hits_len(tracked) && i < quarry_hits_len(h); i++) {
            float got = 0, want = -1;
            CHECK(hit_id(tracked, i) == hit_id(h, i)); /* the same order */
            OK(quarry_hits_score(tracked, i, &got));
            for (j = 0; j < quarry_hits_len(ranked); j++)
                if (hit_id(ranked, j) == hit_id(tracked, i)) OK(quarry_hits_score(ranked, j, &want));
            CHECK(got > 0.0f && memcmp(&got, &want, sizeof got) == 0); /* the same bits */
        }
        quarry_hits_free(ranked);
        quarry_hits_free(tracked);
    }
    OK(quarry_sort_track_scores(sort, false));
    {
        quarry_hits *untracked = run(s, all, sort, 0, 10);
        OK(quarry_hits_score(untracked, 0, &score));
        CHECK(score == 0.0f);
        quarry_hits_free(untracked);
    }
    quarry_hits_free(h);
    quarry_sort_free(sort);

    /* price ascending (f64), score descending */
    OK(quarry_sort_new(&sort));
    OK(quarry_sort_add_field(sort, S("price"), QUARRY_SORT_ASC));
    OK(quarry_sort_add_score(sort, QUARRY_SORT_DESC));
    h = run(s, all, sort, 0, 10);
    {
        /* ids 5 and 6 have no price: they come last, ordered by score */
        const int64_t ids[] = {2, 1, 3, 4};
        float s4 = 0, s5 = 0;
        CHECK(quarry_hits_len(h) == 6);
        for (i = 0; i < 4 && i < quarry_hits_len(h); i++) CHECK(hit_id(h, i) == ids[i]);
        CHECK(hit_id(h, 4) + hit_id(h, 5) == 11);
        OK(quarry_hits_score(h, 4, &s4));
        OK(quarry_hits_score(h, 5, &s5));
        CHECK(s4 >= s5);
        OK(quarry_hits_sort_value_type(h, 4, 0, &ty));
        CHECK(ty == QUARRY_VALUE_NONE);
    }
    OK(quarry_hits_sort_value_f64(h, 0, 0, &fv));
    CHECK(fv == 3.25);
    for (i = 0; i < quarry_hits_len(h); i++) {
        OK(quarry_hits_score(h, i, &score));
        OK(quarry_hits_sort_value_type(h, i, 1, &ty));
        CHECK(ty == QUARRY_VALUE_F64);
        OK(quarry_hits_sort_value_f64(h, i, 1, &fv));
        CHECK(fv == (double)score);
    }
    quarry_hits_free(h);
    quarry_sort_free(sort);

    /* an empty sort spec and a score-only spec sort like NULL */
    OK(quarry_sort_new(&sort));
    h = run(s, all, sort, 0, 10);
    {
        quarry_hits *plain = run(s, all, NULL, 0, 10);
        CHECK(quarry_hits_len(h) == quarry_hits_len(plain));
        for (i = 0; i < quarry_hits_len(h) && i < quarry_hits_len(plain); i++) CHECK(hit_id(h, i) == hit_id(plain, i));
        quarry_hits_free(plain);
    }
    quarry_hits_free(h);
    quarry_sort_free(sort);
    quarry_query_free(all);
}

/* Searches under every execution mode must agree bit for bit. */
static void check_exec_modes(const char *dir) {
    const quarry_exec_mode modes[] = {QUARRY_EXEC_AUTO, QUARRY_EXEC_EXHAUSTIVE, QUARRY_EXEC_DAAT};
    const char *texts[] = {"quick fox", "the lazy dog", ALL_WORDS, "brown"};
    quarry_searcher *s[3];
    size_t m, t, i;
    for (m = 0; m < 3; m++) {
        OK(quarry_searcher_open(dir, strlen(dir), &s[m]));
        OK(quarry_searcher_set_exec_mode(s[m], modes[m]));
        CHECK(quarry_searcher_exec_mode(s[m]) == modes[m]);
    }
    for (t = 0; t < 4; t++) {
        int op;
        for (op = 1; op <= 2; op++) {
            quarry_query *q = ffi_match("body", texts[t], (quarry_operator)op);
            quarry_hits *base = run(s[0], q, NULL, 0, 10);
            for (m = 1; m < 3; m++) {
                quarry_hits *h = run(s[m], q, NULL, 0, 10);
                CHECK(quarry_hits_total(h) == quarry_hits_total(base));
                CHECK(quarry_hits_len(h) == quarry_hits_len(base));
                for (i = 0; i < quarry_hits_len(h) && i < quarry_hits_len(base); i++) {
                    uint64_t d1, d2;
                    float s1, s2;
                    OK(quarry_hits_doc(base, i, &d1));
                    OK(quarry_hits_doc(h, i, &d2));
                    OK(quarry_hits_score(base, i, &s1));
                    OK(quarry_hits_score(h, i, &s2));
                    CHECK(d1 == d2);
                    CHECK(memcmp(&s1, &s2, sizeof s1) == 0);
                }
                quarry_hits_free(h);
            }
            quarry_hits_free(base);
            quarry_query_free(q);
        }
    }
    for (m = 0; m < 3; m++) quarry_searcher_free(s[m]);
}

/* An index where skipping pays: BIG_DOCS documents, all with "alpha", the
 * even ones with "beta"; the first 20 hold both four times in a short body,
 * so they fill any page of 10 and every later block is beaten. */
#define BIG_DOCS 3000

static void build_big_index(const char *dir) {
    quarry_schema *schema = ffi_schema();
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    char body[256];
    int i, j;
    OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_doc_new(&d));
    for (i = 0; i < BIG_DOCS; i++) {
        int tf = i < 20 ? 4 : 1;
        size_t n = 0;
        body[0] = '\0';
        for (j = 0; j < tf; j++) n += (size_t)sprintf(body + n, "alpha ");
        if (i % 2 == 0)
            for (j = 0; j < tf; j++) n += (size_t)sprintf(body + n, "beta ");
        if (i >= 20)
            for (j = 0; j < 1 + i % 7; j++) n += (size_t)sprintf(body + n, "filler ");
        OK(quarry_doc_clear(d));
        OK(quarry_doc_add_i64(d, S("id"), i));
        OK(quarry_doc_add_text(d, S("body"), body, n));
        OK(quarry_indexer_add_doc(ix, d));
    }
    quarry_doc_free(d);
    OK(quarry_indexer_commit(ix));
    quarry_indexer_free(ix);
}

static quarry_hits *run_total(const quarry_searcher *s, const quarry_query *q, uint64_t total) {
    quarry_hits *h = NULL;
    OK(quarry_searcher_search_total(s, q, NULL, 0, 10, total, &h));
    return h;
}

/* Counting modes and kill switches. The searchers are set to
 * QUARRY_EXEC_AUTO explicitly, so the fast paths run even when the driver
 * sets QUARRY_EXEC in the environment. */
static void check_totals_and_paths(const char *scratch) {
    static const struct {
        const char *text;
        quarry_operator op;
        quarry_path path; /* the fast path that runs the query */
        uint64_t matches;
    } cases[] = {
        {"alpha", QUARRY_OPERATOR_OR, QUARRY_PATH_TERM_TOPK, BIG_DOCS},
        {"alpha beta", QUARRY_OPERATOR_OR, QUARRY_PATH_BLOCK_MAX_OR, BIG_DOCS},
        {"alpha beta", QUARRY_OPERATOR_AND, QUARRY_PATH_BULK_AND, BIG_DOCS / 2},
    };
    static const quarry_path paths[] = {QUARRY_PATH_TERM_TOPK, QUARRY_PATH_BLOCK_MAX_OR, QUARRY_PATH_BULK_AND};
    char dir[4096];
    quarry_searcher *s = NULL;
    size_t c, p;
    ffi_path(dir, sizeof dir, scratch, "big-idx");
    build_big_index(dir);
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    OK(quarry_searcher_set_exec_mode(s, QUARRY_EXEC_AUTO));
    for (p = 0; p < 3; p++) OK(quarry_searcher_set_path(s, paths[p], QUARRY_SWITCH_AUTO));

    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        quarry_query *q = ffi_match("body", cases[c].text, cases[c].op);
        uint64_t n = cases[c].matches;
        quarry_hits *plain = run(s, q, NULL, 0, 10);
        quarry_hits *exact = run_total(s, q, QUARRY_TOTAL_EXACT);
        quarry_hits *lower = run_total(s, q, QUARRY_TOTAL_LOWER_BOUND);
        quarry_hits *dflt = run_total(s, q, QUARRY_TOTAL_DEFAULT);
        quarry_hits *five = run_total(s, q, 5);
        quarry_hits *flagged = NULL;
        quarry_searcher *off = NULL;
        quarry_switch got = 0;

        /* exact: every match, as quarry_searcher_search counts */
        CHECK(quarry_hits_total(plain) == n && quarry_hits_total_is_exact(plain));
        CHECK(quarry_hits_total(exact) == n && quarry_hits_total_is_exact(exact));
        /* lower bound: the later blocks are skipped uncounted, and it says so */
        CHECK(quarry_hits_total(lower) < n && !quarry_hits_total_is_exact(lower));
        CHECK(quarry_hits_total(lower) >= 10);
        OK(quarry_searcher_search_flags(s, q, NULL, 0, 10, QUARRY_SEARCH_TOTAL_LOWER_BOUND, &flagged));
        CHECK(quarry_hits_total(flagged) == quarry_hits_total(lower));
        CHECK(quarry_hits_total_is_exact(flagged) == quarry_hits_total_is_exact(lower));
        /* at least N: exact up to N matches, then a flagged lower bound */
        CHECK(quarry_hits_total(dflt) >= QUARRY_TOTAL_DEFAULT && quarry_hits_total(dflt) <= n);
        CHECK(quarry_hits_total_is_exact(dflt) == (quarry_hits_total(dflt) == n));
        CHECK(quarry_hits_total(five) >= 5 && quarry_hits_total(five) < n);
        CHECK(!quarry_hits_total_is_exact(five));
        /* the hits never depend on the counting mode */
        CHECK(ffi_same_hits(plain, exact) && ffi_same_hits(plain, lower) && ffi_same_hits(plain, dflt));
        CHECK(ffi_same_hits(plain, five) && ffi_same_hits(plain, flagged));
        CHECK(quarry_hits_len(plain) == 10);

        /* the query's path switched off: the same hits, document at a time,
         * which counts every match even when it need not (that is how the
         * switch is seen to act) */
        OK(quarry_searcher_reopen(s, &off));
        OK(quarry_searcher_set_path(off, cases[c].path, QUARRY_SWITCH_OFF));
        OK(quarry_searcher_path(off, cases[c].path, &got));
        CHECK(got == QUARRY_SWITCH_OFF);
        OK(quarry_searcher_path(s, cases[c].path, &got));
        CHECK(got == QUARRY_SWITCH_AUTO); /* other handles are unchanged */
        {
            quarry_hits *h = run_total(off, q, QUARRY_TOTAL_LOWER_BOUND);
            CHECK(ffi_same_hits(plain, h));
            CHECK(quarry_hits_total(h) == n && quarry_hits_total_is_exact(h));
            quarry_hits_free(h);
            h = run(off, q, NULL, 0, 10);
            CHECK(ffi_same_hits(plain, h) && quarry_hits_total(h) == n);
            quarry_hits_free(h);
        }
        /* every switch off: still the same hits; a reopened handle keeps them */
        for (p = 0; p < 3; p++) OK(quarry_searcher_set_path(off, paths[p], QUARRY_SWITCH_OFF));
        {
            quarry_searcher *again = NULL;
            quarry_hits *h;
            OK(quarry_searcher_reopen(off, &again));
            for (p = 0; p < 3; p++) {
                got = 0;
                OK(quarry_searcher_path(again, paths[p], &got));
                CHECK(got == QUARRY_SWITCH_OFF);
            }
            h = run_total(again, q, QUARRY_TOTAL_DEFAULT);
            CHECK(ffi_same_hits(plain, h) && quarry_hits_total(h) == n && quarry_hits_total_is_exact(h));
            quarry_hits_free(h);
            quarry_searcher_free(again);
        }
        /* and back on: the fast path runs again */
        OK(quarry_searcher_set_path(off, cases[c].path, QUARRY_SWITCH_AUTO));
        {
            quarry_hits *h = run_total(off, q, QUARRY_TOTAL_LOWER_BOUND);
            CHECK(ffi_same_hits(plain, h) && !quarry_hits_total_is_exact(h));
            quarry_hits_free(h);
        }
        quarry_searcher_free(off);

        quarry_hits_free(plain);
        quarry_hits_free(exact);
        quarry_hits_free(lower);
        quarry_hits_free(dflt);
        quarry_hits_free(five);
        quarry_hits_free(flagged);
        quarry_query_free(q);
    }
    quarry_searcher_free(s);
}

static void check_env_exec_mode(quarry_searcher *s) {
    const char *env = getenv("QUARRY_EXEC");
    quarry_exec_mode want = QUARRY_EXEC_AUTO;
    if (env != NULL && strcmp(env, "exhaustive") == 0) want = QUARRY_EXEC_EXHAUSTIVE;
    if (env != NULL && strcmp(env, "daat") == 0) want = QUARRY_EXEC_DAAT;
    CHECK(quarry_searcher_exec_mode(s) == want);
}

/* QUARRY_TERM_TOPK, QUARRY_BLOCK_MAX_OR and QUARRY_BULK_AND=off in the
 * environment switch the path off on a newly opened searcher. */
static void check_env_paths(const quarry_searcher *s) {
    static const struct {
        const char *var;
        quarry_path path;
    } vars[] = {
        {"QUARRY_TERM_TOPK", QUARRY_PATH_TERM_TOPK},
        {"QUARRY_BLOCK_MAX_OR", QUARRY_PATH_BLOCK_MAX_OR},
        {"QUARRY_BULK_AND", QUARRY_PATH_BULK_AND},
    };
    size_t i;
    for (i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *env = getenv(vars[i].var);
        quarry_switch got = 0;
        OK(quarry_searcher_path(s, vars[i].path, &got));
        CHECK(got == (env != NULL && strcmp(env, "off") == 0 ? QUARRY_SWITCH_OFF : QUARRY_SWITCH_AUTO));
    }
}

int main(int argc, char **argv) {
    char dir[4096];
    quarry_schema *schema;
    quarry_indexer *ix = NULL;
    quarry_searcher *s = NULL, *s2 = NULL;
    quarry_query *q;
    quarry_hits *h;
    const char *p;
    size_t len;

    if (argc < 2) {
        fprintf(stderr, "usage: lifecycle SCRATCH_DIR\n");
        return 2;
    }
    ffi_path(dir, sizeof dir, argv[1], "idx");

    /* header and library agree */
    CHECK(quarry_version_number() == QUARRY_VERSION_NUMBER);
    CHECK(strcmp(quarry_version_string(), QUARRY_VERSION_STRING) == 0);
    CHECK(QUARRY_VERSION_NUMBER == QUARRY_VERSION_MAJOR * 1000000 + QUARRY_VERSION_MINOR * 1000 + QUARRY_VERSION_PATCH);

    schema = ffi_schema();
    OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    add_docs(ix);
    OK(quarry_indexer_commit(ix));

    OK(quarry_searcher_open(dir, strlen(dir), &s));
    CHECK(quarry_searcher_doc_count(s) == NDOCS);
    check_env_exec_mode(s);
    check_env_paths(s);
    check_stored(s);
    check_queries(s);
    check_sorting(s);
    check_exec_modes(dir);
    check_totals_and_paths(argv[1]);

    /* hits outlive their searcher */
    q = ffi_match("body", "zebra", QUARRY_OPERATOR_OR);
    h = run(s, q, NULL, 0, 10);
    quarry_query_free(q);

    /* deletes by i64 and string terms, visible after commit + reopen */
    OK(quarry_indexer_delete_term_i64(ix, S("id"), 2));
    OK(quarry_indexer_delete_term_string(ix, S("category"), S("history")));
    OK(quarry_indexer_commit(ix));
    CHECK(quarry_searcher_doc_count(s) == NDOCS); /* the old snapshot is unchanged */
    OK(quarry_searcher_reopen(s, &s2));
    CHECK(quarry_searcher_doc_count(s2) == NDOCS - 2);
    CHECK(quarry_searcher_generation(s2) > quarry_searcher_generation(s));
    quarry_searcher_free(s);
    OK(quarry_hits_stored_str(h, 0, S("body"), &p, &len));
    CHECK(str_eq(p, len, "zebra"));
    quarry_hits_free(h);

    /* a second commit on top, then merge down to one segment */
    {
        quarry_doc *d;
        OK(quarry_doc_new(&d));
        OK(quarry_doc_add_i64(d, S("id"), 7));
        OK(quarry_doc_add_text(d, S("body"), S("a second quick segment")));
        OK(quarry_indexer_add_doc(ix, d));
        quarry_doc_free(d);
    }
    OK(quarry_indexer_commit(ix));
    OK(quarry_indexer_merge(ix, 1));
    OK(quarry_searcher_reopen(s2, &s));
    CHECK(quarry_searcher_doc_count(s) == NDOCS - 1);
    q = ffi_match("body", "quick", QUARRY_OPERATOR_OR);
    h = run(s, q, NULL, 0, 10);
    CHECK(quarry_hits_total(h) == 3); /* ids 1, 3, 7 */
    quarry_hits_free(h);
    quarry_query_free(q);
    quarry_searcher_free(s2);
    quarry_searcher_free(s);

    /* freeing the indexer discards uncommitted work and releases the lock */
    {
        quarry_doc *d;
        OK(quarry_doc_new(&d));
        OK(quarry_doc_add_i64(d, S("id"), 8));
        OK(quarry_indexer_add_doc(ix, d));
        OK(quarry_indexer_delete_term_i64(ix, S("id"), 1));
        quarry_doc_free(d);
    }
    quarry_indexer_free(ix);
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    CHECK(quarry_searcher_doc_count(s) == NDOCS - 1);
    quarry_searcher_free(s);

    /* reopen the index for writing: without a schema, and with the same one */
    OK(quarry_indexer_open(dir, strlen(dir), NULL, &ix));
    quarry_indexer_free(ix);
    OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    quarry_indexer_free(ix);
    quarry_schema_free(schema);

    /* a schema from JSON works the same way */
    {
        static const char json[] =
            "{\"fields\":[{\"name\":\"t\",\"type\":\"text\",\"stored\":true},"
            "{\"name\":\"n\",\"type\":\"i64\",\"indexed\":true}]}";
        char dir2[4096];
        quarry_doc *d;
        ffi_path(dir2, sizeof dir2, argv[1], "json-idx");
        OK(quarry_schema_from_json(S(json), &schema));
        OK(quarry_indexer_create(dir2, strlen(dir2), schema, &ix));
        quarry_schema_free(schema);
        OK(quarry_doc_new(&d));
        OK(quarry_doc_add_text(d, S("t"), S("hello")));
        OK(quarry_doc_add_text(d, S("t"), S("world")));
        OK(quarry_doc_add_i64(d, S("n"), -5));
        OK(quarry_indexer_add_doc(ix, d));
        quarry_doc_free(d);
        OK(quarry_indexer_commit(ix));
        quarry_indexer_free(ix);
        OK(quarry_searcher_open(dir2, strlen(dir2), &s));
        OK(quarry_query_term_i64(S("n"), -5, &q));
        h = run(s, q, NULL, 0, 1);
        CHECK(quarry_hits_total(h) == 1);
        OK(quarry_hits_stored_str(h, 0, S("t"), &p, &len));
        CHECK(str_eq(p, len, "hello")); /* the first of several values */
        quarry_hits_free(h);
        quarry_query_free(q);
        q = ffi_match("t", "world", QUARRY_OPERATOR_AND);
        h = run(s, q, NULL, 0, 1);
        CHECK(quarry_hits_total(h) == 1);
        quarry_hits_free(h);
        quarry_query_free(q);
        quarry_searcher_free(s);
    }

    /* after all these successes the last error is empty */
    CHECK(quarry_last_error_message()[0] == '\0');
    return ffi_finish("lifecycle");
}
