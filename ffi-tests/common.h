/*
 * Helpers shared by the C ffi-tests. Each test program gets a fresh,
 * empty scratch directory as argv[1] from tests/ffi.rs and exits 0 when
 * every check passed. Failures are reported on stderr.
 */
#ifndef QUARRY_FFI_COMMON_H
#define QUARRY_FFI_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quarry.h"

static int ffi_failures = 0;

/* A string literal as the (pointer, length) pair the API takes. */
#define S(lit) (lit), (sizeof(lit) - 1)

/* The call must succeed; otherwise report and stop (later steps need it). */
#define OK(call)                                                                  \
    do {                                                                          \
        quarry_status st_ = (call);                                               \
        if (st_ != QUARRY_OK) {                                                   \
            fprintf(stderr, "%s:%d: %s -> %u (%s): %s\n", __FILE__, __LINE__,     \
                    #call, (unsigned)st_, quarry_status_str(st_),                 \
                    quarry_last_error_message());                                 \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

/* The call must fail with `code` and leave a non-empty last-error message. */
#define EXPECT(call, code)                                                        \
    do {                                                                          \
        quarry_status st_ = (call);                                               \
        if (st_ != (quarry_status)(code)) {                                       \
            fprintf(stderr, "%s:%d: %s -> %u (%s), expected %s: %s\n", __FILE__, \
                    __LINE__, #call, (unsigned)st_, quarry_status_str(st_), #code,\
                    quarry_last_error_message());                                 \
            ffi_failures++;                                                       \
        } else if ((code) != QUARRY_OK && quarry_last_error_message()[0] == 0) {  \
            fprintf(stderr, "%s:%d: %s failed without a message\n", __FILE__,     \
                    __LINE__, #call);                                             \
            ffi_failures++;                                                       \
        }                                                                         \
    } while (0)

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,     \
                    #cond);                                                       \
            ffi_failures++;                                                       \
        }                                                                         \
    } while (0)

/* The last error message must contain `needle`. */
#define CHECK_MSG(needle)                                                         \
    do {                                                                          \
        const char *m_ = quarry_last_error_message();                             \
        if (strstr(m_, (needle)) == NULL) {                                       \
            fprintf(stderr, "%s:%d: last error %s lacks \"%s\"\n", __FILE__,      \
                    __LINE__, m_, (needle));                                      \
            ffi_failures++;                                                       \
        }                                                                         \
    } while (0)

static inline int ffi_finish(const char *name) {
    if (ffi_failures != 0) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, ffi_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* dir + "/" + leaf, in a static buffer per call site's choice. */
static inline void ffi_path(char *buf, size_t cap, const char *dir, const char *leaf) {
    int n = snprintf(buf, cap, "%s/%s", dir, leaf);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "path too long\n");
        exit(2);
    }
}

/* The standard test schema:
 *   id i64 stored indexed, title text stored, body text stored,
 *   year i64 stored sortable, category string stored indexed sortable,
 *   price f64 stored sortable, note string (not stored, not indexed). */
static inline quarry_schema *ffi_schema(void) {
    quarry_schema *s = NULL;
    OK(quarry_schema_new(&s));
    OK(quarry_schema_add_field(s, S("id"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED));
    OK(quarry_schema_add_field(s, S("title"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    OK(quarry_schema_add_field(s, S("body"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    OK(quarry_schema_add_field(s, S("year"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_SORTABLE));
    OK(quarry_schema_add_field(s, S("category"), QUARRY_FIELD_STRING,
                               QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED | QUARRY_FIELD_SORTABLE));
    OK(quarry_schema_add_field(s, S("price"), QUARRY_FIELD_F64, QUARRY_FIELD_STORED | QUARRY_FIELD_SORTABLE));
    OK(quarry_schema_add_field(s, S("note"), QUARRY_FIELD_STRING, 0));
    return s;
}

static inline quarry_query *ffi_match(const char *field, const char *text, quarry_operator op) {
    quarry_query *q = NULL;
    OK(quarry_query_match(field, strlen(field), text, strlen(text), op, &q));
    return q;
}

static inline quarry_query *ffi_term(const char *field, const char *term) {
    quarry_query *q = NULL;
    OK(quarry_query_term(field, strlen(field), term, strlen(term), &q));
    return q;
}

/* An index at `dir` of the `n` texts, opened: per text a document with
 * id (i64, stored, indexed: 0 to n-1), body (text, stored, analysed by
 * `analyzer`) and plain (text, not stored, the default analyzer), both
 * holding the text; a commit (so a segment) after every `per_segment`
 * documents and after the last. */
static inline quarry_searcher *ffi_index_segments(const char *dir, const char *analyzer,
                                                  const char *const *texts, size_t n, size_t per_segment) {
    quarry_schema *schema = NULL;
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    quarry_searcher *s = NULL;
    size_t i;
    OK(quarry_schema_new(&schema));
    OK(quarry_schema_add_field(schema, S("id"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED));
    OK(quarry_schema_add_field(schema, S("body"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    OK(quarry_schema_add_field(schema, S("plain"), QUARRY_FIELD_TEXT, 0));
    OK(quarry_schema_set_analyzer(schema, S("body"), analyzer, strlen(analyzer)));
    OK(quarry_indexer_create(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_doc_new(&d));
    for (i = 0; i < n; i++) {
        OK(quarry_doc_clear(d));
        OK(quarry_doc_add_i64(d, S("id"), (int64_t)i));
        OK(quarry_doc_add_text(d, S("body"), texts[i], strlen(texts[i])));
        OK(quarry_doc_add_text(d, S("plain"), texts[i], strlen(texts[i])));
        OK(quarry_indexer_add_doc(ix, d));
        if ((i + 1) % per_segment == 0 && i + 1 < n) OK(quarry_indexer_commit(ix));
    }
    OK(quarry_indexer_commit(ix));
    quarry_doc_free(d);
    quarry_indexer_free(ix);
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    return s;
}

/* ffi_index_segments in one segment. */
static inline quarry_searcher *ffi_index_texts(const char *dir, const char *analyzer,
                                               const char *const *texts, size_t n) {
    return ffi_index_segments(dir, analyzer, texts, n, n > 0 ? n : 1);
}

static inline uint32_t ffi_bits_of(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* Whether the two pages hold the same documents with the same score bits,
 * in the same order. */
static inline int ffi_same_hits(const quarry_hits *a, const quarry_hits *b) {
    size_t i;
    if (quarry_hits_len(a) != quarry_hits_len(b)) return 0;
    for (i = 0; i < quarry_hits_len(a); i++) {
        uint64_t d1 = 0, d2 = 1;
        float s1 = 0, s2 = 1;
        OK(quarry_hits_doc(a, i, &d1));
        OK(quarry_hits_doc(b, i, &d2));
        OK(quarry_hits_score(a, i, &s1));
        OK(quarry_hits_score(b, i, &s2));
        if (d1 != d2 || memcmp(&s1, &s2, sizeof s1) != 0) return 0;
    }
    return 1;
}

/* The most hits ffi_expect looks at. */
#define FFI_EXPECT_MAX 64

/*
 * Runs `q` on every execution path: each must give the exhaustive path's
 * documents and score bits. The hits must be the documents with ids
 * `ids` (any order when `n` > 1 ties are possible: checked as a set; at
 * most FFI_EXPECT_MAX), each scoring `score` when `score` >= 0, their
 * stored i64 field "id". Frees `q`.
 */
static inline void ffi_expect(const char *what, quarry_searcher *s, quarry_query *q, const int64_t *ids, size_t n,
                   float score) {
    static const quarry_exec_mode MODES[] = {QUARRY_EXEC_EXHAUSTIVE, QUARRY_EXEC_DAAT, QUARRY_EXEC_AUTO};
    uint64_t docs[FFI_EXPECT_MAX];
    uint32_t scores[FFI_EXPECT_MAX];
    size_t m, i, j;
    for (m = 0; m < 3; m++) {
        quarry_hits *h = NULL;
        OK(quarry_searcher_set_exec_mode(s, MODES[m]));
        OK(quarry_searcher_search(s, q, NULL, 0, FFI_EXPECT_MAX, &h));
        if (quarry_hits_len(h) != n || quarry_hits_total(h) != n) {
            fprintf(stderr, "%s: mode %u gave %zu hits, expected %zu\n", what, (unsigned)MODES[m],
                    quarry_hits_len(h), n);
            ffi_failures++;
            quarry_hits_free(h);
            continue;
        }
        for (i = 0; i < n; i++) {
            uint64_t doc = 0;
            float sc = 0;
            int64_t id = -1;
            int found = 0;
            OK(quarry_hits_doc(h, i, &doc));
            OK(quarry_hits_score(h, i, &sc));
            OK(quarry_hits_stored_i64(h, i, S("id"), &id));
            for (j = 0; j < n; j++) found |= ids[j] == id;
            if (!found) {
                fprintf(stderr, "%s: unexpected id %lld\n", what, (long long)id);
                ffi_failures++;
            }
            if (score >= 0 && sc != score) {
                fprintf(stderr, "%s: id %lld scored %g, expected %g\n", what, (long long)id, sc, score);
                ffi_failures++;
            }
            if (m == 0) {
                docs[i] = doc;
                scores[i] = ffi_bits_of(sc);
            } else if (docs[i] != doc || scores[i] != ffi_bits_of(sc)) {
                fprintf(stderr, "%s: mode %u differs from the exhaustive path at hit %zu\n", what,
                        (unsigned)MODES[m], i);
                ffi_failures++;
            }
        }
        quarry_hits_free(h);
    }
    OK(quarry_searcher_set_exec_mode(s, QUARRY_EXEC_AUTO));
    quarry_query_free(q);
}

#endif /* QUARRY_FFI_COMMON_H */
