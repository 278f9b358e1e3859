/*
 * Eight threads search one shared searcher while the main thread adds
 * documents, commits, merges and reopens. The shared searcher's snapshot
 * must never change under the readers (same totals, documents and score
 * bits every time, stored fields readable even after merges delete the
 * files it maps), every reopened searcher must see each commit, and the
 * last-error message must stay per thread.
 *
 * Usage: threads SCRATCH_DIR [ITERATIONS] [COMMITS]
 */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <pthread.h>
#include <time.h>

#define READERS 8
#define BASE_DOCS 300
#define TOPK 10

static const quarry_searcher *shared;
static const quarry_query *query;
static size_t expected_len;
static uint64_t expected_total;
static uint64_t expected_docs[TOPK];
static float expected_scores[TOPK];
static char expected_title[64];
static int iterations = 40;

typedef struct {
    int index;
    int mismatches;
    int errors_ok;
} reader_result;

static void *reader(void *arg) {
    reader_result *r = (reader_result *)arg;
    int it;
    size_t i;
    for (it = 0; it < iterations; it++) {
        quarry_hits *h = NULL;
        const char *p = NULL;
        size_t len = 0;
        if (quarry_searcher_search(shared, query, NULL, 0, TOPK, &h) != QUARRY_OK) {
            r->mismatches++;
            continue;
        }
        if (quarry_hits_total(h) != expected_total || quarry_hits_len(h) != expected_len) r->mismatches++;
        for (i = 0; i < quarry_hits_len(h) && i < expected_len; i++) {
            uint64_t d = 0;
            float s = 0;
            if (quarry_hits_doc(h, i, &d) != QUARRY_OK || d != expected_docs[i]) r->mismatches++;
            if (quarry_hits_score(h, i, &s) != QUARRY_OK || memcmp(&s, &expected_scores[i], sizeof s) != 0)
                r->mismatches++;
        }
        if (quarry_hits_stored_str(h, 0, S("title"), &p, &len) != QUARRY_OK || len != strlen(expected_title) ||
            memcmp(p, expected_title, len) != 0)
            r->mismatches++;
        if (quarry_searcher_doc_count(shared) != BASE_DOCS) r->mismatches++;
        quarry_hits_free(h);
    }
    /* this thread's error message is its own */
    {
        uint64_t d;
        char want[64];
        quarry_hits *h = NULL;
        snprintf(want, sizeof want, "hit index %d out of range", 1000 + r->index);
        if (quarry_searcher_search(shared, query, NULL, 0, 1, &h) == QUARRY_OK &&
            quarry_hits_doc(h, (size_t)(1000 + r->index), &d) == QUARRY_INVALID_ARGUMENT) {
            /* the other threads keep failing and succeeding meanwhile */
            struct timespec pause = {0, 2000000};
            const char *m;
            nanosleep(&pause, NULL);
            m = quarry_last_error_message();
            r->errors_ok = strstr(m, want) != NULL;
        }
        quarry_hits_free(h);
    }
    return NULL;
}

static void add_batch(quarry_indexer *ix, int first, int count) {
    quarry_doc *d = NULL;
    int i;
    char title[64], body[128];
    OK(quarry_doc_new(&d));
    for (i = first; i < first + count; i++) {
        OK(quarry_doc_clear(d));
        snprintf(title, sizeof title, "document %d", i);
        snprintf(body, sizeof body, "alpha w%d w%d %s", i % 7, i % 13, (i % 3 == 0) ? "beta beta" : "gamma");
        OK(quarry_doc_add_i64(d, S("id"), i));
        OK(quarry_doc_add_text(d, S("title"), title, strlen(title)));
        OK(quarry_doc_add_text(d, S("body"), body, strlen(body)));
        OK(quarry_indexer_add_doc(ix, d));
    }
    quarry_doc_free(d);
}

int main(int argc, char **argv) {
    char dir[4096];
    quarry_schema *schema;
    quarry_indexer *ix = NULL;
    quarry_searcher *s0 = NULL, *latest = NULL;
    quarry_query *q;
    quarry_hits *h = NULL;
    pthread_t threads[READERS];
    reader_result results[READERS];
    int commits = 10, c, i;
    size_t k;

    if (argc < 2) {
        fprintf(stderr, "usage: threads SCRATCH_DIR [ITERATIONS] [COMMITS]\n");
        return 2;
    }
    if (argc > 2) iterations = atoi(argv[2]);
    if (argc > 3) commits = atoi(argv[3]);
    ffi_path(dir, sizeof dir, argv[1], "idx");

    schema = ffi_schema();
    OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    add_batch(ix, 0, BASE_DOCS / 2);
    OK(quarry_indexer_commit(ix));
    add_batch(ix, BASE_DOCS / 2, BASE_DOCS / 2); /* two segments */
    OK(quarry_indexer_commit(ix));

    OK(quarry_searcher_open(dir, strlen(dir), &s0));
    q = ffi_match("body", "alpha beta", QUARRY_OPERATOR_OR);
    OK(quarry_searcher_search(s0, q, NULL, 0, TOPK, &h));
    expected_total = quarry_hits_total(h);
    expected_len = quarry_hits_len(h);
    CHECK(expected_total == BASE_DOCS && expected_len == TOPK);
    for (k = 0; k < expected_len; k++) {
        OK(quarry_hits_doc(h, k, &expected_docs[k]));
        OK(quarry_hits_score(h, k, &expected_scores[k]));
    }
    {
        const char *p;
        size_t len;
        OK(quarry_hits_stored_str(h, 0, S("title"), &p, &len));
        CHECK(len < sizeof expected_title);
        memcpy(expected_title, p, len);
        expected_title[len] = 0;
    }
    quarry_hits_free(h);
    {
        /* one search on two threads (a segment each): the same hits */
        quarry_searcher *par = NULL;
        EXPECT(quarry_searcher_set_threads(NULL, 2), QUARRY_NULL_ARGUMENT);
        OK(quarry_searcher_reopen(s0, &par));
        EXPECT(quarry_searcher_set_threads(par, 0), QUARRY_INVALID_ARGUMENT);
        OK(quarry_searcher_set_threads(par, 2));
        OK(quarry_searcher_search(par, q, NULL, 0, TOPK, &h));
        CHECK(quarry_hits_total(h) == expected_total && quarry_hits_len(h) == expected_len);
        for (k = 0; k < expected_len; k++) {
            uint64_t doc;
            float score;
            OK(quarry_hits_doc(h, k, &doc));
            OK(quarry_hits_score(h, k, &score));
            CHECK(doc == expected_docs[k] && memcmp(&score, &expected_scores[k], sizeof score) == 0);
        }
        quarry_hits_free(h);
        quarry_searcher_free(par);
    }
    shared = s0;
    query = q;

    for (i = 0; i < READERS; i++) {
        results[i].index = i;
        results[i].mismatches = 0;
        results[i].errors_ok = 0;
        CHECK(pthread_create(&threads[i], NULL, reader, &results[i]) == 0);
    }

    /* the writer: commit, merge now and then, reopen and check each time */
    OK(quarry_searcher_reopen(s0, &latest));
    for (c = 0; c < commits; c++) {
        quarry_searcher *next = NULL;
        add_batch(ix, 10000 + c * 10, 10);
        OK(quarry_indexer_commit(ix));
        if (c % 3 == 2) OK(quarry_indexer_merge(ix, 1));
        OK(quarry_searcher_reopen(latest, &next));
        CHECK(quarry_searcher_doc_count(next) == (uint64_t)(BASE_DOCS + 10 * (c + 1)));
        OK(quarry_searcher_search(next, q, NULL, 0, 1, &h));
        CHECK(quarry_hits_total(h) == (uint64_t)(BASE_DOCS + 10 * (c + 1)));
        quarry_hits_free(h);
        quarry_searcher_free(latest);
        latest = next;
    }

    for (i = 0; i < READERS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        if (results[i].mismatches != 0) {
            fprintf(stderr, "reader %d: %d mismatches\n", i, results[i].mismatches);
            ffi_failures++;
        }
        if (!results[i].errors_ok) {
            fprintf(stderr, "reader %d: its last-error message was not its own\n", i);
            ffi_failures++;
        }
    }

    quarry_searcher_free(latest);
    quarry_searcher_free(s0);
    quarry_query_free(q);
    quarry_indexer_free(ix);
    return ffi_finish("threads");
}
