/*
 * Per-field analyzers through the C API: quarry_schema_set_analyzer and
 * the schema JSON's "analyzer" key, their errors (unknown names, fields
 * that are not text, unknown fields), and searches that analyse queries
 * with the field's persisted analyzer on every execution path.
 *
 * Usage: analyzers SCRATCH_DIR
 */
#include "common.h"

static const char *const DOCS[] = {
    "She runs every morning",
    "The runner ran quickly",
    "Running shoes, on sale",
    "A quiet evening",
};
#define NDOCS (sizeof(DOCS) / sizeof(DOCS[0]))

static uint64_t total_of(quarry_searcher *s, quarry_query *q) {
    static const quarry_exec_mode MODES[] = {QUARRY_EXEC_EXHAUSTIVE, QUARRY_EXEC_DAAT, QUARRY_EXEC_AUTO};
    uint64_t total = 0;
    size_t m;
    for (m = 0; m < 3; m++) {
        quarry_hits *h = NULL;
        OK(quarry_searcher_set_exec_mode(s, MODES[m]));
        OK(quarry_searcher_search(s, q, NULL, 0, 10, &h));
        if (m == 0) {
            total = quarry_hits_total(h);
        } else {
            CHECK(quarry_hits_total(h) == total);
        }
        quarry_hits_free(h);
    }
    quarry_query_free(q);
    return total;
}

int main(int argc, char **argv) {
    char dir[4096];
    quarry_schema *schema = NULL;
    quarry_searcher *s = NULL;
    if (argc != 2) {
        fprintf(stderr, "usage: analyzers SCRATCH_DIR\n");
        return 2;
    }
    ffi_path(dir, sizeof dir, argv[1], "idx");

    /* The errors of quarry_schema_set_analyzer, then a valid name. */
    OK(quarry_schema_new(&schema));
    OK(quarry_schema_add_field(schema, S("id"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED));
    OK(quarry_schema_add_field(schema, S("body"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    EXPECT(quarry_schema_set_analyzer(schema, S("body"), S("klingon")), QUARRY_SCHEMA);
    CHECK_MSG("unknown analyzer \"klingon\"");
    CHECK_MSG("english_stop");
    EXPECT(quarry_schema_set_analyzer(schema, S("id"), S("english")), QUARRY_SCHEMA);
    CHECK_MSG("only text fields have an analyzer");
    EXPECT(quarry_schema_set_analyzer(schema, S("nope"), S("english")), QUARRY_SCHEMA);
    CHECK_MSG("no field named \"nope\"");
    EXPECT(quarry_schema_set_analyzer(NULL, S("body"), S("english")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_schema_set_analyzer(schema, NULL, 4, S("english")), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_schema_set_analyzer(schema, S("body"), NULL, 7), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_schema_set_analyzer(schema, S("body"), "\xff\xfe", 2), QUARRY_INVALID_UTF8);
    OK(quarry_schema_set_analyzer(schema, S("body"), S("english")));
    quarry_schema_free(schema);

    s = ffi_index_texts(dir, "english", DOCS, NDOCS);
    CHECK(total_of(s, ffi_match("body", "running", QUARRY_OPERATOR_OR)) == 2);
    CHECK(total_of(s, ffi_match("plain", "running", QUARRY_OPERATOR_OR)) == 1);
    /* Term queries are not analysed: the index holds the stem. */
    CHECK(total_of(s, ffi_term("body", "running")) == 0);
    CHECK(total_of(s, ffi_term("body", "run")) == 2);
    {
        quarry_query *q = NULL;
        OK(quarry_query_parse(s, S("body:RUNS OR body:evenings"), NULL, 0, QUARRY_OPERATOR_OR, &q));
        CHECK(total_of(s, q) == 3);
    }
    quarry_searcher_free(s);

    /* The JSON form names analyzers too, and refuses unknown ones. */
    {
        quarry_schema *j = NULL;
        static const char ok_json[] = "{\"fields\":[{\"name\":\"t\",\"type\":\"text\",\"analyzer\":\"keyword\"}]}";
        static const char bad_json[] = "{\"fields\":[{\"name\":\"t\",\"type\":\"text\",\"analyzer\":\"Keyword\"}]}";
        OK(quarry_schema_from_json(S(ok_json), &j));
        quarry_schema_free(j);
        j = NULL;
        EXPECT(quarry_schema_from_json(S(bad_json), &j), QUARRY_SCHEMA);
        CHECK_MSG("unknown analyzer \"Keyword\"");
        CHECK(j == NULL);
    }
    return ffi_finish("analyzers");
}
