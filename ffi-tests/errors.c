/*
 * Every error path of the C API: NULL for each pointer argument of each
 * function, invalid UTF-8, out-of-range enum and flag values, schema
 * mismatches, out-of-range indexes, missing values, a locked index, a
 * missing index, an existing index, and a corrupt segment file. Failing
 * calls must leave their out-parameters untouched and set a message.
 *
 * Usage: errors SCRATCH_DIR
 */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <dirent.h>

/* A recognisable value for out-parameters that must not be written. */
static long double sentinel_object;
#define SENTINEL ((void *)&sentinel_object)

static const char BAD_UTF8[] = "ab\xff"; /* 3 bytes, invalid */
#define BAD BAD_UTF8, 3

static void build_index(const char *dir) {
    quarry_schema *schema = ffi_schema();
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_doc_new(&d));
    OK(quarry_doc_add_i64(d, S("id"), 1));
    OK(quarry_doc_add_text(d, S("title"), S("first")));
    OK(quarry_doc_add_text(d, S("body"), S("alpha beta")));
    OK(quarry_doc_add_i64(d, S("year"), 2000));
    OK(quarry_indexer_add_doc(ix, d));
    OK(quarry_doc_clear(d));
    OK(quarry_doc_add_i64(d, S("id"), 2));
    OK(quarry_doc_add_text(d, S("body"), S("alpha gamma")));
    OK(quarry_doc_add_string(d, S("category"), S("c")));
    OK(quarry_indexer_add_doc(ix, d));
    quarry_doc_free(d);
    OK(quarry_indexer_commit(ix));
    quarry_indexer_free(ix);
}

static void schema_errors(void) {
    quarry_schema *s = SENTINEL, *ok = NULL;
    EXPECT(quarry_schema_new(NULL), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("out is NULL");
    EXPECT(quarry_schema_from_json(NULL, 2, &s), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_schema_from_json(S("{}"), NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_schema_from_json(BAD, &s), QUARRY_INVALID_UTF8);
    EXPECT(quarry_schema_from_json(S("{\"fields\":"), &s), QUARRY_SCHEMA);
    EXPECT(quarry_schema_from_json(S("{\"fields\":[{\"name\":\"x\",\"type\":\"blob\"}]}"), &s), QUARRY_SCHEMA);
    /* a text field is always indexed: "indexed": false is refused, not ignored */
    EXPECT(quarry_schema_from_json(S("{\"fields\":[{\"name\":\"x\",\"type\":\"text\",\"indexed\":false}]}"), &s),
           QUARRY_SCHEMA);
    CHECK_MSG("always indexed");
    CHECK(s == SENTINEL);

    OK(quarry_schema_new(&ok));
    EXPECT(quarry_schema_add_field(NULL, S("x"), QUARRY_FIELD_TEXT, 0), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("schema is NULL");
    EXPECT(quarry_schema_add_field(ok, NULL, 1, QUARRY_FIELD_TEXT, 0), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("name is NULL");
    EXPECT(quarry_schema_add_field(ok, BAD, QUARRY_FIELD_TEXT, 0), QUARRY_INVALID_UTF8);
    EXPECT(quarry_schema_add_field(ok, S("x"), 0, 0), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_schema_add_field(ok, S("x"), 5, 0), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_schema_add_field(ok, S("x"), 0xFFFFFFFFu, 0), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_schema_add_field(ok, S("x"), QUARRY_FIELD_TEXT, 16), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_schema_add_field(ok, S("x"), QUARRY_FIELD_TEXT, 0x80000000u), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_schema_add_field(ok, S(""), QUARRY_FIELD_TEXT, 0), QUARRY_SCHEMA);
    EXPECT(quarry_schema_add_field(ok, S("t"), QUARRY_FIELD_TEXT, QUARRY_FIELD_SORTABLE), QUARRY_SCHEMA);
    EXPECT(quarry_schema_add_field(ok, S("f"), QUARRY_FIELD_F64, QUARRY_FIELD_INDEXED), QUARRY_SCHEMA);
    EXPECT(quarry_schema_add_field(ok, S("n"), QUARRY_FIELD_I64, QUARRY_FIELD_NO_POSITIONS), QUARRY_SCHEMA);
    CHECK_MSG("only text fields have positions");
    OK(quarry_schema_add_field(ok, S("n"), QUARRY_FIELD_TEXT, QUARRY_FIELD_NO_POSITIONS));
    OK(quarry_schema_add_field(ok, S("x"), QUARRY_FIELD_TEXT, 0));
    EXPECT(quarry_schema_add_field(ok, S("x"), QUARRY_FIELD_STRING, 0), QUARRY_SCHEMA);
    CHECK_MSG("duplicate");
    quarry_schema_free(ok);
    quarry_schema_free(NULL);
}

static void doc_errors(void) {
    quarry_doc *d = NULL;
    EXPECT(quarry_doc_new(NULL), QUARRY_NULL_ARGUMENT);
    OK(quarry_doc_new(&d));
    EXPECT(quarry_doc_add_text(NULL, S("f"), S("v")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_text(d, NULL, 1, S("v")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_text(d, S("f"), NULL, 1), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("value is NULL");
    EXPECT(quarry_doc_add_text(d, BAD, S("v")), QUARRY_INVALID_UTF8);
    EXPECT(quarry_doc_add_text(d, S("f"), BAD), QUARRY_INVALID_UTF8);
    EXPECT(quarry_doc_add_string(NULL, S("f"), S("v")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_string(d, NULL, 1, S("v")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_string(d, S("f"), NULL, 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_string(d, BAD, S("v")), QUARRY_INVALID_UTF8);
    EXPECT(quarry_doc_add_string(d, S("f"), BAD), QUARRY_INVALID_UTF8);
    EXPECT(quarry_doc_add_i64(NULL, S("f"), 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_i64(d, NULL, 1, 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_i64(d, BAD, 1), QUARRY_INVALID_UTF8);
    EXPECT(quarry_doc_add_f64(NULL, S("f"), 1.0), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_f64(d, NULL, 1, 1.0), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_doc_add_f64(d, BAD, 1.0), QUARRY_INVALID_UTF8);
    EXPECT(quarry_doc_clear(NULL), QUARRY_NULL_ARGUMENT);
    quarry_doc_free(d);
    quarry_doc_free(NULL);
}

static void indexer_errors(const char *dir, const char *scratch) {
    quarry_schema *schema = ffi_schema();
    quarry_indexer *ix = NULL, *second = SENTINEL;
    quarry_doc *d = NULL;
    char fresh[4096];
    char with_nul[] = "a\0b";

    ffi_path(fresh, sizeof fresh, scratch, "never-created");
    EXPECT(quarry_indexer_open(NULL, 3, schema, &second), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_open(dir, strlen(dir), schema, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_open(dir, 0, schema, &second), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_indexer_open(with_nul, 3, schema, &second), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_indexer_open(fresh, strlen(fresh), NULL, &second), QUARRY_NO_INDEX);
    EXPECT(quarry_indexer_create(NULL, 3, schema, &second), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_create(fresh, strlen(fresh), NULL, &second), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_create(fresh, strlen(fresh), schema, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_create(dir, strlen(dir), schema, &second), QUARRY_INDEX_EXISTS);
    {
        /* a different schema for an existing index */
        quarry_schema *other = NULL;
        OK(quarry_schema_new(&other));
        OK(quarry_schema_add_field(other, S("only"), QUARRY_FIELD_TEXT, 0));
        EXPECT(quarry_indexer_open(dir, strlen(dir), other, &second), QUARRY_SCHEMA);
        quarry_schema_free(other);
    }
    CHECK(second == SENTINEL);

    /* one writer at a time: a second indexer on the same directory is locked out */
    OK(quarry_indexer_open(dir, strlen(dir), NULL, &ix));
    EXPECT(quarry_indexer_open(dir, strlen(dir), NULL, &second), QUARRY_LOCKED);
    CHECK_MSG("locked");
    EXPECT(quarry_indexer_open(dir, strlen(dir), schema, &second), QUARRY_LOCKED);
    /* an existing index is an existing index, locked or not */
    EXPECT(quarry_indexer_create(dir, strlen(dir), schema, &second), QUARRY_INDEX_EXISTS);
    CHECK_MSG("exists");
    CHECK(second == SENTINEL);

    OK(quarry_doc_new(&d));
    EXPECT(quarry_indexer_add_doc(NULL, d), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_add_doc(ix, NULL), QUARRY_NULL_ARGUMENT);
    OK(quarry_doc_add_text(d, S("nope"), S("x")));
    EXPECT(quarry_indexer_add_doc(ix, d), QUARRY_SCHEMA);
    CHECK_MSG("nope");
    OK(quarry_doc_clear(d));
    OK(quarry_doc_add_string(d, S("title"), S("wrong adder")));
    EXPECT(quarry_indexer_add_doc(ix, d), QUARRY_SCHEMA);
    CHECK_MSG("quarry_doc_add_text");
    OK(quarry_doc_clear(d));
    OK(quarry_doc_add_text(d, S("id"), S("12")));
    EXPECT(quarry_indexer_add_doc(ix, d), QUARRY_SCHEMA);
    OK(quarry_doc_clear(d));
    OK(quarry_doc_add_f64(d, S("year"), 1.5));
    EXPECT(quarry_indexer_add_doc(ix, d), QUARRY_SCHEMA);
    OK(quarry_doc_clear(d));
    OK(quarry_doc_add_i64(d, S("id"), 1));
    OK(quarry_doc_add_i64(d, S("id"), 2));
    EXPECT(quarry_indexer_add_doc(ix, d), QUARRY_SCHEMA); /* two values for a non-text field */
    quarry_doc_free(d);

    EXPECT(quarry_indexer_delete_term_string(NULL, S("category"), S("c")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_delete_term_string(ix, NULL, 1, S("c")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_delete_term_string(ix, S("category"), NULL, 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_delete_term_string(ix, BAD, S("c")), QUARRY_INVALID_UTF8);
    EXPECT(quarry_indexer_delete_term_string(ix, S("category"), BAD), QUARRY_INVALID_UTF8);
    EXPECT(quarry_indexer_delete_term_string(ix, S("nope"), S("c")), QUARRY_SCHEMA);
    EXPECT(quarry_indexer_delete_term_string(ix, S("body"), S("alpha")), QUARRY_SCHEMA); /* text field */
    EXPECT(quarry_indexer_delete_term_string(ix, S("id"), S("1")), QUARRY_SCHEMA);
    EXPECT(quarry_indexer_delete_term_i64(NULL, S("id"), 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_delete_term_i64(ix, NULL, 1, 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_delete_term_i64(ix, BAD, 1), QUARRY_INVALID_UTF8);
    EXPECT(quarry_indexer_delete_term_i64(ix, S("year"), 2000), QUARRY_SCHEMA); /* not indexed */
    EXPECT(quarry_indexer_commit(NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_merge(NULL, 1), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_indexer_merge(ix, 0), QUARRY_INVALID_ARGUMENT);
    /* nothing above changed the index */
    OK(quarry_indexer_commit(ix));
    quarry_indexer_free(ix);
    quarry_indexer_free(NULL);

    /* the lock went with the indexer */
    OK(quarry_indexer_open(dir, strlen(dir), schema, &ix));
    quarry_indexer_free(ix);
    quarry_schema_free(schema);
}

static void query_and_sort_errors(void) {
    quarry_query *q = SENTINEL, *b = NULL, *t = NULL;
    quarry_sort *s = SENTINEL, *ok = NULL;

    EXPECT(quarry_query_term(NULL, 1, S("x"), &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_term(S("f"), NULL, 1, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_term(S("f"), S("x"), NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_term(BAD, S("x"), &q), QUARRY_INVALID_UTF8);
    EXPECT(quarry_query_term(S("f"), BAD, &q), QUARRY_INVALID_UTF8);
    EXPECT(quarry_query_term_i64(NULL, 1, 5, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_term_i64(S("f"), 5, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_term_i64(BAD, 5, &q), QUARRY_INVALID_UTF8);
    EXPECT(quarry_query_match(NULL, 1, S("x"), QUARRY_OPERATOR_AND, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_match(S("f"), NULL, 1, QUARRY_OPERATOR_AND, &q), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_match(S("f"), S("x"), QUARRY_OPERATOR_AND, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_query_match(BAD, S("x"), QUARRY_OPERATOR_OR, &q), QUARRY_INVALID_UTF8);
    EXPECT(quarry_query_match(S("f"), BAD, QUARRY_OPERATOR_OR, &q), QUARRY_INVALID_UTF8);
    EXPECT(quarry_query_match(S("f"), S("x"), 0, &q), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_match(S("f"), S("x"), 3, &q), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("operator");
    EXPECT(quarry_query_boolean(NULL), QUARRY_NULL_ARGUMENT);
    CHECK(q == SENTINEL);

    OK(quarry_query_boolean(&b));
    t = ffi_term("body", "alpha");
    EXPECT(quarry_query_add_clause(NULL, QUARRY_OCCUR_MUST, t), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("boolean is NULL");
    EXPECT(quarry_query_add_clause(b, QUARRY_OCCUR_MUST, NULL), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("clause is NULL");
    EXPECT(quarry_query_add_clause(b, 0, t), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_query_add_clause(b, 5, t), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("occur");
    EXPECT(quarry_query_add_clause(t, QUARRY_OCCUR_MUST, b), QUARRY_INVALID_ARGUMENT); /* not a boolean */
    quarry_query_free(t);
    quarry_query_free(b);
    quarry_query_free(NULL);

    EXPECT(quarry_sort_new(NULL), QUARRY_NULL_ARGUMENT);
    CHECK(s == SENTINEL);
    OK(quarry_sort_new(&ok));
    EXPECT(quarry_sort_add_score(NULL, QUARRY_SORT_DESC), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_sort_add_score(ok, 0), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_sort_add_score(ok, 3), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("order");
    EXPECT(quarry_sort_add_doc(NULL, QUARRY_SORT_ASC), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_sort_add_doc(ok, 7), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_sort_add_field(NULL, S("year"), QUARRY_SORT_ASC), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_sort_add_field(ok, NULL, 1, QUARRY_SORT_ASC), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_sort_add_field(ok, BAD, QUARRY_SORT_ASC), QUARRY_INVALID_UTF8);
    EXPECT(quarry_sort_add_field(ok, S("year"), 0), QUARRY_INVALID_ARGUMENT);
    quarry_sort_free(ok);
    quarry_sort_free(NULL);
}

static void searcher_errors(const char *dir, const char *scratch) {
    quarry_searcher *s = NULL, *out = SENTINEL;
    quarry_query *q = ffi_match("body", "alpha", QUARRY_OPERATOR_OR);
    quarry_hits *h = SENTINEL;
    quarry_sort *sort = NULL;
    char empty[4096];

    ffi_path(empty, sizeof empty, scratch, "no-such-index");
    EXPECT(quarry_searcher_open(NULL, 2, &out), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_open(dir, strlen(dir), NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_open(dir, 0, &out), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_open(empty, strlen(empty), &out), QUARRY_NO_INDEX);
    EXPECT(quarry_searcher_open(scratch, strlen(scratch), &out), QUARRY_NO_INDEX); /* a dir without an index */
    CHECK(out == SENTINEL);

    OK(quarry_searcher_open(dir, strlen(dir), &s));
    EXPECT(quarry_searcher_reopen(NULL, &out), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_reopen(s, NULL), QUARRY_NULL_ARGUMENT);
    CHECK(quarry_searcher_doc_count(NULL) == 0);
    CHECK_MSG("searcher is NULL");
    CHECK(quarry_searcher_generation(NULL) == 0);
    CHECK_MSG("searcher is NULL");
    EXPECT(quarry_searcher_set_exec_mode(NULL, QUARRY_EXEC_AUTO), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_set_exec_mode(s, 0), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_set_exec_mode(s, 4), QUARRY_INVALID_ARGUMENT);
    CHECK(quarry_searcher_exec_mode(NULL) == 0);
    CHECK_MSG("searcher is NULL");
    CHECK(quarry_searcher_exec_mode(s) != 0);
    {
        quarry_switch sw = 77;
        EXPECT(quarry_searcher_set_path(NULL, QUARRY_PATH_TERM_TOPK, QUARRY_SWITCH_OFF), QUARRY_NULL_ARGUMENT);
        CHECK_MSG("searcher is NULL");
        EXPECT(quarry_searcher_set_path(s, 0, QUARRY_SWITCH_OFF), QUARRY_INVALID_ARGUMENT);
        CHECK_MSG("unknown fast path 0");
        EXPECT(quarry_searcher_set_path(s, 4, QUARRY_SWITCH_OFF), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_searcher_set_path(s, QUARRY_PATH_BULK_AND, 0), QUARRY_INVALID_ARGUMENT);
        CHECK_MSG("unknown switch value 0");
        EXPECT(quarry_searcher_set_path(s, QUARRY_PATH_BULK_AND, 3), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_searcher_path(NULL, QUARRY_PATH_TERM_TOPK, &sw), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_searcher_path(s, QUARRY_PATH_TERM_TOPK, NULL), QUARRY_NULL_ARGUMENT);
        CHECK_MSG("out is NULL");
        EXPECT(quarry_searcher_path(s, 0, &sw), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_searcher_path(s, 4, &sw), QUARRY_INVALID_ARGUMENT);
        CHECK(sw == 77);
        /* a rejected value leaves the switch as it was */
        OK(quarry_searcher_set_path(s, QUARRY_PATH_BULK_AND, QUARRY_SWITCH_OFF));
        EXPECT(quarry_searcher_set_path(s, QUARRY_PATH_BULK_AND, 0xffffffffu), QUARRY_INVALID_ARGUMENT);
        OK(quarry_searcher_path(s, QUARRY_PATH_BULK_AND, &sw));
        CHECK(sw == QUARRY_SWITCH_OFF);
        OK(quarry_searcher_set_path(s, QUARRY_PATH_BULK_AND, QUARRY_SWITCH_AUTO));
        OK(quarry_searcher_path(s, QUARRY_PATH_BULK_AND, &sw));
        CHECK(sw == QUARRY_SWITCH_AUTO);
    }

    EXPECT(quarry_searcher_search(NULL, q, NULL, 0, 10, &h), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_search(s, NULL, NULL, 0, 10, &h), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("query is NULL");
    EXPECT(quarry_searcher_search(s, q, NULL, 0, 10, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_search_flags(NULL, q, NULL, 0, 10, 0, &h), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_search_flags(s, q, NULL, 0, 10, 0, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_search_flags(s, q, NULL, 0, 10, 2, &h), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_search_flags(s, q, NULL, 0, 10, 0x80000000u, &h), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("unknown search flags");
    EXPECT(quarry_searcher_search_total(NULL, q, NULL, 0, 10, QUARRY_TOTAL_DEFAULT, &h), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("searcher is NULL");
    EXPECT(quarry_searcher_search_total(s, NULL, NULL, 0, 10, QUARRY_TOTAL_DEFAULT, &h), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("query is NULL");
    EXPECT(quarry_searcher_search_total(s, q, NULL, 0, 10, QUARRY_TOTAL_EXACT, NULL), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("out is NULL");
    /* a NULL pointer is reported before a bad flag, as before */
    EXPECT(quarry_searcher_search_flags(s, q, NULL, 0, 10, 2, NULL), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("out is NULL");
    {
        quarry_query *bad = ffi_match("nope", "alpha", QUARRY_OPERATOR_OR);
        EXPECT(quarry_searcher_search(s, bad, NULL, 0, 10, &h), QUARRY_SCHEMA);
        CHECK_MSG("nope");
        EXPECT(quarry_searcher_search_total(s, bad, NULL, 0, 10, QUARRY_TOTAL_LOWER_BOUND, &h), QUARRY_SCHEMA);
        CHECK_MSG("nope");
        quarry_query_free(bad);
        bad = ffi_term("id", "1"); /* string term on an i64 field */
        EXPECT(quarry_searcher_search(s, bad, NULL, 0, 10, &h), QUARRY_SCHEMA);
        CHECK_MSG("quarry_query_term_i64");
        quarry_query_free(bad);
        OK(quarry_query_term_i64(S("body"), 1, &bad)); /* i64 term on a text field */
        EXPECT(quarry_searcher_search(s, bad, NULL, 0, 10, &h), QUARRY_SCHEMA);
        quarry_query_free(bad);
        /* an unknown field deep inside a boolean */
        OK(quarry_query_boolean(&bad));
        OK(quarry_query_add_clause(bad, QUARRY_OCCUR_SHOULD, q));
        {
            quarry_query *inner = ffi_term("missing", "x");
            OK(quarry_query_add_clause(bad, QUARRY_OCCUR_MUST_NOT, inner));
            quarry_query_free(inner);
        }
        EXPECT(quarry_searcher_search(s, bad, NULL, 0, 10, &h), QUARRY_SCHEMA);
        quarry_query_free(bad);
    }
    OK(quarry_sort_new(&sort));
    OK(quarry_sort_add_field(sort, S("nope"), QUARRY_SORT_ASC));
    EXPECT(quarry_searcher_search(s, q, sort, 0, 10, &h), QUARRY_SCHEMA);
    quarry_sort_free(sort);
    OK(quarry_sort_new(&sort));
    OK(quarry_sort_add_field(sort, S("title"), QUARRY_SORT_ASC)); /* not sortable */
    EXPECT(quarry_searcher_search(s, q, sort, 0, 10, &h), QUARRY_SCHEMA);
    CHECK_MSG("sortable");
    quarry_sort_free(sort);
    CHECK(h == SENTINEL);

    /* hits getters */
    {
        quarry_hits *hits = NULL;
        uint64_t doc = 77;
        float score = 7.0f;
        const char *p = SENTINEL;
        size_t len = 77;
        int64_t iv = 77;
        double fv = 77.0;
        quarry_value_type ty = 77;

        OK(quarry_sort_new(&sort));
        OK(quarry_sort_add_field(sort, S("category"), QUARRY_SORT_ASC));
        OK(quarry_sort_add_score(sort, QUARRY_SORT_DESC));
        OK(quarry_searcher_search(s, q, sort, 0, 10, &hits));
        quarry_sort_free(sort);
        CHECK(quarry_hits_len(hits) == 2); /* id 2 (category c) then id 1 (none) */

        CHECK(quarry_hits_len(NULL) == 0);
        CHECK_MSG("hits is NULL");
        CHECK(quarry_hits_total(NULL) == 0);
        CHECK_MSG("hits is NULL");
        CHECK(!quarry_hits_total_is_exact(NULL));
        CHECK_MSG("hits is NULL");
        CHECK(quarry_hits_sort_value_count(NULL) == 0);
        CHECK_MSG("hits is NULL");

        EXPECT(quarry_hits_doc(NULL, 0, &doc), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_doc(hits, 0, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_doc(hits, 2, &doc), QUARRY_INVALID_ARGUMENT);
        CHECK_MSG("out of range");
        EXPECT(quarry_hits_doc(hits, (size_t)-1, &doc), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_hits_score(NULL, 0, &score), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_score(hits, 0, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_score(hits, 9, &score), QUARRY_INVALID_ARGUMENT);

        EXPECT(quarry_hits_stored_str(NULL, 0, S("title"), &p, &len), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_str(hits, 0, NULL, 1, &p, &len), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_str(hits, 0, S("title"), NULL, &len), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_str(hits, 0, S("title"), &p, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_str(hits, 0, BAD, &p, &len), QUARRY_INVALID_UTF8);
        EXPECT(quarry_hits_stored_str(hits, 5, S("title"), &p, &len), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_hits_stored_str(hits, 0, S("nope"), &p, &len), QUARRY_SCHEMA);
        EXPECT(quarry_hits_stored_str(hits, 0, S("note"), &p, &len), QUARRY_SCHEMA); /* not stored */
        CHECK_MSG("not stored");
        EXPECT(quarry_hits_stored_str(hits, 0, S("id"), &p, &len), QUARRY_SCHEMA); /* an i64 */
        CHECK_MSG("quarry_hits_stored_i64");
        EXPECT(quarry_hits_stored_str(hits, 0, S("title"), &p, &len), QUARRY_NO_VALUE); /* id 2 has no title */
        EXPECT(quarry_hits_stored_i64(NULL, 0, S("id"), &iv), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_i64(hits, 0, NULL, 1, &iv), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_i64(hits, 0, S("id"), NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_i64(hits, 0, BAD, &iv), QUARRY_INVALID_UTF8);
        EXPECT(quarry_hits_stored_i64(hits, 0, S("body"), &iv), QUARRY_SCHEMA);
        EXPECT(quarry_hits_stored_i64(hits, 0, S("year"), &iv), QUARRY_NO_VALUE);
        EXPECT(quarry_hits_stored_f64(NULL, 0, S("price"), &fv), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_f64(hits, 0, NULL, 1, &fv), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_f64(hits, 0, S("price"), NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_stored_f64(hits, 0, BAD, &fv), QUARRY_INVALID_UTF8);
        EXPECT(quarry_hits_stored_f64(hits, 0, S("id"), &fv), QUARRY_SCHEMA);
        EXPECT(quarry_hits_stored_f64(hits, 0, S("price"), &fv), QUARRY_NO_VALUE);
        /* a getter of the wrong type is a schema error whether or not the
           document has a value (id 2 has no year, price or title) */
        EXPECT(quarry_hits_stored_f64(hits, 0, S("year"), &fv), QUARRY_SCHEMA);
        CHECK_MSG("quarry_hits_stored_i64");
        EXPECT(quarry_hits_stored_i64(hits, 0, S("price"), &iv), QUARRY_SCHEMA);
        CHECK_MSG("quarry_hits_stored_f64");
        EXPECT(quarry_hits_stored_str(hits, 0, S("year"), &p, &len), QUARRY_SCHEMA);
        EXPECT(quarry_hits_stored_i64(hits, 0, S("title"), &iv), QUARRY_SCHEMA);
        CHECK_MSG("quarry_hits_stored_str");
        EXPECT(quarry_hits_stored_f64(hits, 1, S("id"), &fv), QUARRY_SCHEMA); /* with a value */

        EXPECT(quarry_hits_sort_value_type(NULL, 0, 0, &ty), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_type(hits, 0, 0, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_type(hits, 0, 2, &ty), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_hits_sort_value_type(hits, 3, 0, &ty), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_hits_sort_value_i64(NULL, 0, 0, &iv), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_i64(hits, 0, 0, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_i64(hits, 0, 0, &iv), QUARRY_INVALID_ARGUMENT); /* a string */
        EXPECT(quarry_hits_sort_value_i64(hits, 0, 9, &iv), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_hits_sort_value_f64(NULL, 0, 1, &fv), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_f64(hits, 0, 1, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_f64(hits, 0, 0, &fv), QUARRY_INVALID_ARGUMENT);
        /* the rule's type decides, with or without a value (id 1 has no category) */
        EXPECT(quarry_hits_sort_value_f64(hits, 1, 0, &fv), QUARRY_INVALID_ARGUMENT);
        CHECK_MSG("quarry_hits_sort_value_str");
        EXPECT(quarry_hits_sort_value_i64(hits, 1, 0, &iv), QUARRY_INVALID_ARGUMENT);
        EXPECT(quarry_hits_sort_value_str(NULL, 0, 0, &p, &len), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_str(hits, 0, 0, NULL, &len), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_str(hits, 0, 0, &p, NULL), QUARRY_NULL_ARGUMENT);
        EXPECT(quarry_hits_sort_value_str(hits, 0, 1, &p, &len), QUARRY_INVALID_ARGUMENT); /* an f64 */
        EXPECT(quarry_hits_sort_value_str(hits, 1, 0, &p, &len), QUARRY_NO_VALUE);

        /* nothing was written by the failing getters */
        CHECK(doc == 77 && score == 7.0f && p == SENTINEL && len == 77 && iv == 77 && fv == 77.0 && ty == 77);
        quarry_hits_free(hits);
        quarry_hits_free(NULL);
    }

    quarry_query_free(q);
    quarry_searcher_free(s);
    quarry_searcher_free(NULL);
}

/* Flips one byte in the middle of the first segment file. */
static void corrupt_a_segment(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    FILE *f;
    long size;
    int c, done = 0;
    CHECK(d != NULL);
    if (d == NULL) return;
    while (!done && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "seg-", 4) != 0 || n < 4 || strcmp(e->d_name + n - 4, ".qsg") != 0) continue;
        ffi_path(path, sizeof path, dir, e->d_name);
        f = fopen(path, "r+b");
        CHECK(f != NULL);
        if (f == NULL) break;
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fseek(f, size / 2, SEEK_SET);
        c = fgetc(f);
        fseek(f, size / 2, SEEK_SET);
        fputc(c ^ 0x5a, f);
        fclose(f);
        done = 1;
    }
    closedir(d);
    CHECK(done);
}

int main(int argc, char **argv) {
    char dir[4096];
    quarry_searcher *s = SENTINEL;
    if (argc < 2) {
        fprintf(stderr, "usage: errors SCRATCH_DIR\n");
        return 2;
    }
    ffi_path(dir, sizeof dir, argv[1], "idx");
    build_index(dir);

    schema_errors();
    doc_errors();
    indexer_errors(dir, argv[1]);
    query_and_sort_errors();
    searcher_errors(dir, argv[1]);

    /* the last-error message follows the last call on this thread */
    EXPECT(quarry_schema_new(NULL), QUARRY_NULL_ARGUMENT);
    CHECK(quarry_last_error_message()[0] != '\0');
    CHECK(strcmp(quarry_status_str(QUARRY_OK), "ok") == 0); /* does not reset the message */
    CHECK(quarry_last_error_message()[0] != '\0');
    {
        quarry_sort *ok = NULL;
        OK(quarry_sort_new(&ok));
        CHECK(quarry_last_error_message()[0] == '\0');
        quarry_sort_free(ok);
    }
    {
        /* free-then-report: functions that return no status leave the
           message of the last failure alone when they succeed */
        quarry_sort *sort = NULL;
        quarry_schema *schema = NULL;
        quarry_searcher *live = NULL;
        OK(quarry_sort_new(&sort));
        OK(quarry_schema_new(&schema));
        OK(quarry_searcher_open(dir, strlen(dir), &live));
        EXPECT(quarry_sort_add_score(sort, 99), QUARRY_INVALID_ARGUMENT);
        CHECK_MSG("unknown sort order");
        quarry_sort_free(sort);
        quarry_schema_free(schema);
        quarry_schema_free(NULL);
        CHECK(quarry_searcher_doc_count(live) == 2);
        CHECK(quarry_searcher_generation(live) > 0);
        CHECK(quarry_searcher_exec_mode(live) == QUARRY_EXEC_AUTO);
        quarry_searcher_free(live);
        CHECK_MSG("unknown sort order");
        /* ... and replace it when they fail */
        CHECK(quarry_searcher_doc_count(NULL) == 0);
        CHECK_MSG("searcher is NULL");
    }
    CHECK(strcmp(quarry_status_str(9999), "unknown status code") == 0);
    CHECK(strcmp(quarry_status_str(QUARRY_LOCKED), quarry_status_str(QUARRY_CORRUPT)) != 0);

    /* a damaged segment file is reported, not trusted */
    corrupt_a_segment(dir);
    EXPECT(quarry_searcher_open(dir, strlen(dir), &s), QUARRY_CORRUPT);
    CHECK_MSG("checksum");
    CHECK(s == SENTINEL);

    return ffi_finish("errors");
}
