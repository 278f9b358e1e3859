/*
 * A panic inside the library comes back as QUARRY_INTERNAL with its
 * message, and prints nothing: the driver (tests/ffi.rs) runs this with
 * RUST_BACKTRACE=1 and asserts that stderr stays empty. The library keeps
 * working afterwards, on this thread and others.
 *
 * Usage: panic SCRATCH_DIR
 */
#include "common.h"

#include <pthread.h>

static void *panic_on_a_thread(void *arg) {
    int *ok = (int *)arg;
    *ok = quarry_debug_panic() == QUARRY_INTERNAL &&
          strstr(quarry_last_error_message(), "deliberate panic") != NULL;
    return NULL;
}

int main(int argc, char **argv) {
    quarry_schema *s = NULL;
    pthread_t t;
    int thread_ok = 0, i;
    (void)argc;
    (void)argv;

    for (i = 0; i < 3; i++) {
        CHECK(quarry_debug_panic() == QUARRY_INTERNAL);
        CHECK_MSG("internal error (panic)");
        CHECK_MSG("deliberate panic from quarry_debug_panic");
        CHECK_MSG("debug.rs");
    }
    CHECK(pthread_create(&t, NULL, panic_on_a_thread, &thread_ok) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(thread_ok);

    /* business as usual afterwards */
    OK(quarry_schema_new(&s));
    OK(quarry_schema_add_field(s, S("x"), QUARRY_FIELD_TEXT, 0));
    CHECK(quarry_last_error_message()[0] == '\0');
    quarry_schema_free(s);
    return ffi_finish("panic");
}
