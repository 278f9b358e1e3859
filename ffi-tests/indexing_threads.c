/*
 * quarry_indexer_open_with: indexes created on 1 and on 3 indexing threads
 * under a small memory budget (so each thread writes several segments) give
 * the same hits (documents, score bits, totals, stored values) as one built
 * by quarry_indexer_open, on the caller's thread; bad arguments are refused
 * and leave no index.
 *
 * Usage: indexing_threads SCRATCH_DIR
 */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <stdio.h>

#define DOCS 3000
#define TOPK 20

static const char *WORDS[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                              "iota",  "kappa", "lambda", "mu",   "nu",      "xi",   "omicron"};
#define NWORDS (sizeof WORDS / sizeof WORDS[0])

/* Builds DOCS documents into dir on `threads` indexing threads (-1:
 * quarry_indexer_open, the caller's thread). */
static void build(const char *dir, int threads) {
    quarry_schema *schema = ffi_schema();
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    char body[512], title[32];
    int n, w;
    if (threads >= 0)
        OK(quarry_indexer_open_with(dir, strlen(dir), schema, 64 * 1024, (uint32_t)threads, QUARRY_INDEXER_CREATE,
                                    &ix));
    else
        OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_doc_new(&d));
    for (n = 0; n < DOCS; n++) {
        size_t at = 0;
        /* lengths and words vary with n, deterministically */
        for (w = 0; w < 3 + n % 17; w++) {
            const char *word = WORDS[(unsigned)(n * 7 + w * w * 3 + n / 13) % NWORDS];
            at += (size_t)snprintf(body + at, sizeof body - at, "%s ", word);
        }
        snprintf(title, sizeof title, "doc %d", n);
        OK(quarry_doc_clear(d));
        OK(quarry_doc_add_i64(d, S("id"), n));
        OK(quarry_doc_add_text(d, S("title"), title, strlen(title)));
        OK(quarry_doc_add_text(d, S("body"), body, at));
        OK(quarry_doc_add_i64(d, S("year"), 1990 + n % 30));
        OK(quarry_indexer_add_doc(ix, d));
        if (n == DOCS / 2) OK(quarry_indexer_commit(ix));
    }
    quarry_doc_free(d);
    OK(quarry_indexer_commit(ix));
    quarry_indexer_free(ix);
}

/* The two indexes answer `text` (OR of its words) alike. */
static void same_hits(const quarry_searcher *a, const quarry_searcher *b, const char *text) {
    quarry_query *q = ffi_match("body", text, QUARRY_OPERATOR_OR);
    quarry_hits *ha = NULL, *hb = NULL;
    size_t i;
    OK(quarry_searcher_search(a, q, NULL, 0, TOPK, &ha));
    OK(quarry_searcher_search(b, q, NULL, 0, TOPK, &hb));
    CHECK(quarry_hits_len(ha) == quarry_hits_len(hb));
    CHECK(quarry_hits_len(ha) > 0);
    CHECK(quarry_hits_total(ha) == quarry_hits_total(hb));
    for (i = 0; i < quarry_hits_len(ha); i++) {
        uint64_t da = 0, db = 0;
        float sa = 0, sb = 0;
        const char *pa = NULL, *pb = NULL;
        size_t la = 0, lb = 0;
        OK(quarry_hits_doc(ha, i, &da));
        OK(quarry_hits_doc(hb, i, &db));
        CHECK(da == db);
        OK(quarry_hits_score(ha, i, &sa));
        OK(quarry_hits_score(hb, i, &sb));
        CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
        OK(quarry_hits_stored_str(ha, i, S("title"), &pa, &la));
        OK(quarry_hits_stored_str(hb, i, S("title"), &pb, &lb));
        CHECK(la == lb && memcmp(pa, pb, la) == 0);
    }
    quarry_hits_free(ha);
    quarry_hits_free(hb);
    quarry_query_free(q);
}

int main(int argc, char **argv) {
    char one[4096], bad[4096];
    static const int THREADS[] = {1, 3};
    size_t t;
    quarry_searcher *a = NULL;
    quarry_indexer *ix = (quarry_indexer *)&ix;
    quarry_schema *schema = ffi_schema();
    if (argc < 2) return 2;
    ffi_path(one, sizeof one, argv[1], "one");
    ffi_path(bad, sizeof bad, argv[1], "bad");

    /* Refused: too many threads, NULL path or out; nothing is created. */
    EXPECT(quarry_indexer_open_with(bad, strlen(bad), schema, 0, QUARRY_MAX_INDEXING_THREADS + 1, 0, &ix),
           QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("indexing threads");
    CHECK(ix == (quarry_indexer *)&ix);
    EXPECT(quarry_indexer_open_with(bad, strlen(bad), schema, 0, 2, 2, &ix), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("unknown indexer flag");
    EXPECT(quarry_indexer_open_with(NULL, 3, schema, 0, 2, 0, &ix), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_open_with(bad, strlen(bad), schema, 0, 2, 0, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_open_with(bad, strlen(bad), NULL, 0, 2, QUARRY_INDEXER_CREATE, &ix),
           QUARRY_NULL_ARGUMENT);
    CHECK(ix == (quarry_indexer *)&ix);
    EXPECT(quarry_searcher_open(bad, strlen(bad), &a), QUARRY_NO_INDEX);
    /* 0 budget and 0 threads are the defaults; without the flag an
     * existing index is opened, with it refused. */
    OK(quarry_indexer_open_with(bad, strlen(bad), schema, 0, 0, QUARRY_INDEXER_CREATE, &ix));
    OK(quarry_indexer_commit(ix));
    quarry_indexer_free(ix);
    EXPECT(quarry_indexer_open_with(bad, strlen(bad), schema, 0, 2, QUARRY_INDEXER_CREATE, &ix),
           QUARRY_INDEX_EXISTS);
    OK(quarry_indexer_open_with(bad, strlen(bad), NULL, 1 << 20, 2, 0, &ix));
    quarry_indexer_free(ix);
    quarry_schema_free(schema);

    build(one, -1);
    OK(quarry_searcher_open(one, strlen(one), &a));
    CHECK(quarry_searcher_doc_count(a) == DOCS);
    for (t = 0; t < sizeof THREADS / sizeof THREADS[0]; t++) {
        char many[4096], name[16];
        quarry_searcher *b = NULL;
        snprintf(name, sizeof name, "threads-%d", THREADS[t]);
        ffi_path(many, sizeof many, argv[1], name);
        build(many, THREADS[t]);
        OK(quarry_searcher_open(many, strlen(many), &b));
        CHECK(quarry_searcher_doc_count(b) == DOCS);
        same_hits(a, b, "alpha");
        same_hits(a, b, "kappa omicron");
        same_hits(a, b, "beta gamma delta xi");
        quarry_searcher_free(b);
    }
    quarry_searcher_free(a);
    return ffi_finish("indexing_threads");
}
