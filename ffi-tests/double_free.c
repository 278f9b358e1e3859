/*
 * Deliberately frees a handle twice. Not a test of quarry: the driver runs
 * it under AddressSanitizer and valgrind and expects them to report the
 * double free, which proves that the checkers really see the library's
 * allocations (the Rust side is not instrumented; it allocates with the
 * system malloc, which both tools intercept).
 */
#include "quarry.h"

int main(void) {
    quarry_schema *s = 0;
    if (quarry_schema_new(&s) != QUARRY_OK) return 2;
    quarry_schema_free(s);
    quarry_schema_free(s);
    return 0;
}
