/*
 * The environment switches of quarry_searcher_open: a value a variable
 * does not accept is an error that names the variable and the values it
 * accepts, not a silent "auto".
 *
 * Usage: env_switches SCRATCH_DIR [VAR]
 *   without VAR the searcher must open; with VAR (set by the caller to an
 *   unknown value) the open must fail with QUARRY_INVALID_ARGUMENT and a
 *   message naming VAR.
 */
#include "common.h"

int main(int argc, char **argv) {
    char dir[4096];
    quarry_schema *schema;
    quarry_indexer *ix = NULL;
    quarry_searcher *s = NULL;
    if (argc < 2) {
        fprintf(stderr, "usage: env_switches SCRATCH_DIR [VAR]\n");
        return 2;
    }
    ffi_path(dir, sizeof dir, argv[1], "idx");
    schema = ffi_schema();
    OK(quarry_indexer_create(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_indexer_commit(ix));
    quarry_indexer_free(ix);

    if (argc == 2) {
        OK(quarry_searcher_open(dir, strlen(dir), &s));
        CHECK(s != NULL);
        quarry_searcher_free(s);
    } else {
        EXPECT(quarry_searcher_open(dir, strlen(dir), &s), QUARRY_INVALID_ARGUMENT);
        CHECK(s == NULL);
        CHECK_MSG(argv[2]);
        CHECK_MSG("(accepted: ");
        printf("%s\n", quarry_last_error_message());
    }
    return ffi_finish("env_switches");
}
