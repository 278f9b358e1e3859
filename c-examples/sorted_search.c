/*
 * sorted_search: sorted searches over the index that index_and_search
 * built. Prints each hit with its sort values, which is what a host needs
 * to merge sorted results from several indexes (shards).
 *
 *   sorted_search [INDEX_DIR]          (default: ./example-index)
 *
 * 1. "congress", newest first (year descending), then by score;
 * 2. "war peace", by category (A to Z), then year descending.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quarry.h"

static void die(const char *what, quarry_status st) {
    fprintf(stderr, "%s failed: %s: %s\n", what, quarry_status_str(st), quarry_last_error_message());
    exit(1);
}

#define TRY(call)                                         \
    do {                                                  \
        quarry_status st_ = (call);                       \
        if (st_ != QUARRY_OK) die(#call, st_);            \
    } while (0)

#define S(lit) (lit), (sizeof(lit) - 1)

/* Prints hit i's value for sort rule r, whatever its type. */
static void print_sort_value(const quarry_hits *hits, size_t i, size_t r) {
    quarry_value_type ty = QUARRY_VALUE_NONE;
    TRY(quarry_hits_sort_value_type(hits, i, r, &ty));
    if (ty == QUARRY_VALUE_I64) {
        int64_t v;
        TRY(quarry_hits_sort_value_i64(hits, i, r, &v));
        printf("%lld", (long long)v);
    } else if (ty == QUARRY_VALUE_F64) {
        double v;
        TRY(quarry_hits_sort_value_f64(hits, i, r, &v));
        printf("%.4f", v);
    } else if (ty == QUARRY_VALUE_STR) {
        const char *p;
        size_t n;
        TRY(quarry_hits_sort_value_str(hits, i, r, &p, &n));
        printf("\"%.*s\"", (int)n, p);
    } else {
        printf("(none)"); /* documents without a value sort last */
    }
}

static void run(const quarry_searcher *searcher, const char *label, const char *text, const quarry_sort *sort) {
    quarry_query *q = NULL;
    quarry_hits *hits = NULL;
    size_t i, r;
    TRY(quarry_query_match(S("body"), text, strlen(text), QUARRY_OPERATOR_OR, &q));
    TRY(quarry_searcher_search(searcher, q, sort, 0, 8, &hits));
    printf("\n%s: %llu matches\n", label, (unsigned long long)quarry_hits_total(hits));
    for (i = 0; i < quarry_hits_len(hits); i++) {
        const char *title = "";
        size_t title_len = 0;
        int64_t id = 0;
        TRY(quarry_hits_stored_i64(hits, i, S("id"), &id));
        (void)quarry_hits_stored_str(hits, i, S("title"), &title, &title_len);
        printf("  [id %5lld] sort values (", (long long)id);
        for (r = 0; r < quarry_hits_sort_value_count(hits); r++) {
            if (r > 0) printf(", ");
            print_sort_value(hits, i, r);
        }
        printf(")  %.*s\n", (int)title_len, title);
    }
    quarry_hits_free(hits);
    quarry_query_free(q);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "example-index";
    quarry_searcher *searcher = NULL;
    quarry_sort *sort = NULL;

    TRY(quarry_searcher_open(dir, strlen(dir), &searcher));

    TRY(quarry_sort_new(&sort));
    TRY(quarry_sort_add_field(sort, S("year"), QUARRY_SORT_DESC));
    TRY(quarry_sort_add_score(sort, QUARRY_SORT_DESC));
    run(searcher, "body:congress by year desc, score desc", "congress", sort);
    quarry_sort_free(sort);

    TRY(quarry_sort_new(&sort));
    TRY(quarry_sort_add_field(sort, S("category"), QUARRY_SORT_ASC));
    TRY(quarry_sort_add_field(sort, S("year"), QUARRY_SORT_DESC));
    run(searcher, "body:(war OR peace) by category asc, year desc", "war peace", sort);
    quarry_sort_free(sort);

    quarry_searcher_free(searcher);
    return 0;
}
