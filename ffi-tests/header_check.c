/*
 * Compiled as C99, C11, C++11 and C++17 with -Wall -Wextra -pedantic
 * -Werror by tests/ffi.rs, then linked and run: the header must stand on
 * its own and its version macros must match the library.
 */
#include "quarry.h"
#include "quarry.h" /* the include guard works */

int main(void) {
    quarry_status st = QUARRY_OK;
    quarry_schema *schema = NULL;
    quarry_field_type ty = QUARRY_FIELD_TEXT;
    quarry_field_flags flags = QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED | QUARRY_FIELD_SORTABLE;
    quarry_operator op = QUARRY_OPERATOR_AND;
    quarry_occur occur = QUARRY_OCCUR_FILTER;
    quarry_sort_order order = QUARRY_SORT_DESC;
    quarry_exec_mode mode = QUARRY_EXEC_DAAT;
    quarry_value_type vt = QUARRY_VALUE_F64;
    quarry_path path = QUARRY_PATH_BLOCK_MAX_OR;
    quarry_switch sw = QUARRY_SWITCH_OFF;
    uint64_t totals[3] = {QUARRY_TOTAL_EXACT, QUARRY_TOTAL_LOWER_BOUND, QUARRY_TOTAL_DEFAULT};
    size_t n = sizeof(quarry_status);
    (void)flags;
    (void)op;
    (void)occur;
    (void)order;
    (void)mode;
    (void)vt;
    (void)path;
    (void)sw;
    if (totals[0] != UINT64_MAX || totals[1] != 0 || totals[2] != 1000) return 4;
    if (quarry_version_number() != QUARRY_VERSION_NUMBER) return 1;
    st = quarry_schema_new(&schema);
    if (st != QUARRY_OK) return 2;
    st = quarry_schema_add_field(schema, "f", 1, ty, QUARRY_FIELD_STORED);
    quarry_schema_free(schema);
    return st == QUARRY_OK && n == 4 ? 0 : 3;
}
