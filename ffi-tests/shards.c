/*
 * Shards through the C API: one corpus split into two indexes by
 * document order, against one index holding the same documents.
 *
 * - quarry_searcher_open_many gives the single index's hits (documents,
 *   score bits, totals), in score order and sorted, with paging, and
 *   names each hit's shard and shard document;
 * - statistics exported per shard, sent as bytes, merged, and imported by
 *   each shard's searcher; the shards' pages merged by quarry_hits_merge
 *   give the multi searcher's page, merge keys ascending, stored values
 *   read through the right shard;
 * - NULL handles, bad blobs, mismatched schemas and shards, and bad merge
 *   input return their documented codes.
 *
 * Usage: shards SCRATCH_DIR
 */
#include "common.h"

#include <stdint.h>

#define NDOCS 45
#define SPLIT 20
#define PAGE 64

static const char *const WORDS[] = {"river", "stone", "light", "wind", "salt", "iron", "moss"};

/* Document i's body: a deterministic mix of WORDS, some common, some rare. */
static void body_of(int i, char *buf, size_t cap) {
    size_t n = 0;
    int w;
    buf[0] = 0;
    for (w = 0; w < 1 + i % 6; w++) {
        const char *word = WORDS[(i * 7 + w * w * 3) % (w < 2 ? 7 : 3)];
        int k = snprintf(buf + n, cap - n, "%s%s", n ? " " : "", word);
        if (k < 0 || (size_t)k >= cap - n) {
            exit(2);
        }
        n += (size_t)k;
    }
}

/* Writes documents [from, to) into a new index at dir (one commit per
 * `per` documents), with the standard test schema or, when `other`, one
 * without the category field. */
static void write_index(const char *dir, int from, int to, int per, int other) {
    quarry_schema *schema = NULL;
    quarry_indexer *ix = NULL;
    quarry_doc *d = NULL;
    char body[256];
    int i;
    if (other) {
        OK(quarry_schema_new(&schema));
        OK(quarry_schema_add_field(schema, S("id"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED));
        OK(quarry_schema_add_field(schema, S("body"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    } else {
        schema = ffi_schema();
    }
    OK(quarry_indexer_create(dir, strlen(dir), schema, &ix));
    quarry_schema_free(schema);
    OK(quarry_doc_new(&d));
    for (i = from; i < to; i++) {
        OK(quarry_doc_clear(d));
        body_of(i, body, sizeof body);
        OK(quarry_doc_add_i64(d, S("id"), i));
        OK(quarry_doc_add_text(d, S("body"), body, strlen(body)));
        if (!other) {
            OK(quarry_doc_add_i64(d, S("year"), 1990 + i % 7));
        }
        OK(quarry_indexer_add_doc(ix, d));
        if ((i + 1) % per == 0) {
            OK(quarry_indexer_commit(ix));
        }
    }
    OK(quarry_indexer_commit(ix));
    quarry_doc_free(d);
    quarry_indexer_free(ix);
}

static quarry_searcher *open_one(const char *dir) {
    quarry_searcher *s = NULL;
    OK(quarry_searcher_open(dir, strlen(dir), &s));
    return s;
}

/* The two searches must give the same documents, score bits, totals. */
static void same_hits(const char *what, const quarry_hits *a, const quarry_hits *b) {
    if (!ffi_same_hits(a, b) || quarry_hits_total(a) != quarry_hits_total(b) ||
        quarry_hits_total_is_exact(a) != quarry_hits_total_is_exact(b)) {
        fprintf(stderr, "%s: %zu hits of %llu differ from %zu of %llu\n", what, quarry_hits_len(a),
                (unsigned long long)quarry_hits_total(a), quarry_hits_len(b),
                (unsigned long long)quarry_hits_total(b));
        ffi_failures++;
    }
}

/* Each hit's shard and shard document agree with its document number,
 * and its stored id is its document's (ids are document numbers here). */
static void check_shards(const char *what, quarry_hits *h) {
    size_t i;
    for (i = 0; i < quarry_hits_len(h); i++) {
        uint64_t doc = 0, sdoc = 0;
        uint32_t shard = 99;
        int64_t id = -1;
        OK(quarry_hits_doc(h, i, &doc));
        OK(quarry_hits_shard(h, i, &shard));
        OK(quarry_hits_shard_doc(h, i, &sdoc));
        OK(quarry_hits_stored_i64(h, i, S("id"), &id));
        if (shard != (uint32_t)(doc >= SPLIT) || sdoc != (doc >= SPLIT ? doc - SPLIT : doc) || id != (int64_t)doc) {
            fprintf(stderr, "%s: hit %zu doc %llu shard %u shard doc %llu id %lld\n", what, i,
                    (unsigned long long)doc, shard, (unsigned long long)sdoc, (long long)id);
            ffi_failures++;
        }
    }
}

/* Merge keys ascend along the hits. */
static void check_keys_ascend(const char *what, quarry_hits *h) {
    const uint8_t *prev = NULL;
    size_t prev_len = 0, i;
    for (i = 0; i < quarry_hits_len(h); i++) {
        const uint8_t *k = NULL;
        size_t n = 0;
        OK(quarry_hits_merge_key(h, i, &k, &n));
        if (prev != NULL) {
            size_t m = n < prev_len ? n : prev_len;
            int c = memcmp(prev, k, m);
            if (c > 0 || (c == 0 && prev_len >= n)) {
                fprintf(stderr, "%s: merge key %zu does not follow key %zu\n", what, i, i - 1);
                ffi_failures++;
            }
        }
        prev = k;
        prev_len = n;
    }
}

/* CRC-32 (IEEE), to forge an intact blob of another version. */
static uint32_t crc32(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (b = 0; b < 8; b++) {
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        }
    }
    return ~c;
}

int main(int argc, char **argv) {
    char single_dir[4096], dir0[4096], dir1[4096], other_dir[4096];
    const char *paths[3];
    size_t lens[3];
    quarry_searcher *single = NULL, *multi = NULL, *s0 = NULL, *s1 = NULL, *i0 = NULL, *i1 = NULL;
    quarry_searcher *bad = NULL;
    quarry_query *q = NULL, *unknown = NULL;
    quarry_sort *by_year = NULL;
    quarry_stats *st0 = NULL, *st1 = NULL, *merged = NULL, *back = NULL, *out_stats = NULL;
    quarry_hits *one = NULL, *many = NULL, *p0 = NULL, *p1 = NULL, *m = NULL, *off = NULL;
    quarry_hits *out_hits = NULL;
    const quarry_stats *stats_parts[2];
    const quarry_hits *hit_parts[2];
    const quarry_query *qs[1];
    const uint8_t *bytes = NULL;
    uint8_t *copy = NULL;
    size_t len = 0, i;
    uint32_t shard = 0;
    uint64_t doc = 0;
    const quarry_sort *sorts[2];
    int round;
    if (argc != 2) {
        fprintf(stderr, "usage: shards SCRATCH_DIR\n");
        return 2;
    }
    ffi_path(single_dir, sizeof single_dir, argv[1], "single");
    ffi_path(dir0, sizeof dir0, argv[1], "shard0");
    ffi_path(dir1, sizeof dir1, argv[1], "shard1");
    ffi_path(other_dir, sizeof other_dir, argv[1], "other");
    /* The same segments: commits every 8 documents and at the split. */
    write_index(dir0, 0, SPLIT, 8, 0);
    write_index(dir1, SPLIT, NDOCS, 8, 0);
    {
        quarry_schema *schema = ffi_schema();
        quarry_indexer *ix = NULL;
        quarry_doc *d = NULL;
        char body[256];
        int k;
        OK(quarry_indexer_create(single_dir, strlen(single_dir), schema, &ix));
        quarry_schema_free(schema);
        OK(quarry_doc_new(&d));
        for (k = 0; k < NDOCS; k++) {
            OK(quarry_doc_clear(d));
            body_of(k, body, sizeof body);
            OK(quarry_doc_add_i64(d, S("id"), k));
            OK(quarry_doc_add_text(d, S("body"), body, strlen(body)));
            OK(quarry_doc_add_i64(d, S("year"), 1990 + k % 7));
            OK(quarry_indexer_add_doc(ix, d));
            if ((k + 1) % 8 == 0 || k + 1 == SPLIT) {
                OK(quarry_indexer_commit(ix));
            }
        }
        OK(quarry_indexer_commit(ix));
        quarry_doc_free(d);
        quarry_indexer_free(ix);
    }
    write_index(other_dir, 0, 5, 8, 1);

    single = open_one(single_dir);
    s0 = open_one(dir0);
    s1 = open_one(dir1);
    paths[0] = dir0;
    paths[1] = dir1;
    paths[2] = other_dir;
    lens[0] = strlen(dir0);
    lens[1] = strlen(dir1);
    lens[2] = strlen(other_dir);
    OK(quarry_searcher_open_many(paths, lens, 2, 0, &multi));
    CHECK(quarry_searcher_shard_count(multi) == 2);
    CHECK(quarry_searcher_shard_count(single) == 1);
    CHECK(quarry_searcher_doc_count(multi) == NDOCS);

    q = ffi_match("body", "river salt moss", QUARRY_OPERATOR_OR);
    unknown = ffi_match("body", "unexported", QUARRY_OPERATOR_OR);
    OK(quarry_sort_new(&by_year));
    OK(quarry_sort_add_field(by_year, S("year"), QUARRY_SORT_DESC));
    OK(quarry_sort_add_score(by_year, QUARRY_SORT_DESC));
    sorts[0] = NULL;
    sorts[1] = by_year;

    /* The statistics of each shard, through their bytes. */
    qs[0] = q;
    OK(quarry_searcher_export_stats(s0, qs, 1, &st0));
    OK(quarry_searcher_export_stats(s1, qs, 1, &st1));
    OK(quarry_stats_bytes(st0, &bytes, &len));
    CHECK(len > 12 && memcmp(bytes, "QSTS", 4) == 0);
    OK(quarry_stats_from_bytes(bytes, len, &back));
    stats_parts[0] = back;
    stats_parts[1] = st1;
    OK(quarry_stats_merge(stats_parts, 2, &merged));
    CHECK(quarry_stats_shard_count(merged) == 2);
    CHECK(quarry_stats_doc_count(merged) == NDOCS);
    CHECK(quarry_stats_doc_count(st0) == SPLIT);
    OK(quarry_searcher_with_stats(s0, merged, 0, &i0));
    OK(quarry_searcher_with_stats(s1, merged, 1, &i1));

    for (round = 0; round < 2; round++) {
        const quarry_sort *sort = sorts[round];
        const char *what = round == 0 ? "score order" : "by year";
        /* The whole result, then a page of it. */
        OK(quarry_searcher_search(single, q, sort, 0, PAGE, &one));
        OK(quarry_searcher_search(multi, q, sort, 0, PAGE, &many));
        CHECK(quarry_hits_len(one) > 10);
        same_hits(what, many, one);
        check_shards(what, many);
        check_keys_ascend(what, many);
        quarry_hits_free(one);
        quarry_hits_free(many);

        OK(quarry_searcher_search(multi, q, sort, 3, 7, &many));
        OK(quarry_searcher_search(i0, q, sort, 0, 10, &p0));
        OK(quarry_searcher_search(i1, q, sort, 0, 10, &p1));
        for (i = 0; i < quarry_hits_len(p1); i++) {
            OK(quarry_hits_shard(p1, i, &shard));
            CHECK(shard == 1);
        }
        hit_parts[0] = p0;
        hit_parts[1] = p1;
        OK(quarry_hits_merge(hit_parts, 2, 3, 7, &m));
        same_hits(what, m, many);
        check_shards(what, m);
        check_keys_ascend(what, m);
        /* A merged page is not merged again from its offset. */
        hit_parts[0] = m;
        EXPECT(quarry_hits_merge(hit_parts, 1, 0, 7, &out_hits), QUARRY_INVALID_ARGUMENT);
        CHECK_MSG("offset");
        quarry_hits_free(m);
        quarry_hits_free(many);
        quarry_hits_free(p0);
        quarry_hits_free(p1);
    }

    /* Merge errors: a part searched with an offset, parts of other sorts,
     * NULLs, no parts, one document twice. Outputs untouched. */
    OK(quarry_searcher_search(i0, q, NULL, 0, 10, &p0));
    OK(quarry_searcher_search(i1, q, NULL, 2, 10, &off));
    OK(quarry_searcher_search(i1, q, by_year, 0, 10, &p1));
    hit_parts[0] = p0;
    hit_parts[1] = off;
    EXPECT(quarry_hits_merge(hit_parts, 2, 0, 10, &out_hits), QUARRY_INVALID_ARGUMENT);
    hit_parts[1] = p1;
    EXPECT(quarry_hits_merge(hit_parts, 2, 0, 10, &out_hits), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("sort");
    hit_parts[1] = p0;
    EXPECT(quarry_hits_merge(hit_parts, 2, 0, 10, &out_hits), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("two parts");
    hit_parts[1] = NULL;
    EXPECT(quarry_hits_merge(hit_parts, 2, 0, 10, &out_hits), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_merge(NULL, 1, 0, 10, &out_hits), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_merge(hit_parts, 0, 0, 10, &out_hits), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_merge(hit_parts, 1, 0, 10, NULL), QUARRY_NULL_ARGUMENT);
    CHECK(out_hits == NULL);
    quarry_hits_free(off);
    quarry_hits_free(p1);

    /* Accessors: NULLs and indexes out of range. */
    EXPECT(quarry_hits_shard(NULL, 0, &shard), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_shard(p0, 0, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_shard(p0, 1000, &shard), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_shard_doc(NULL, 0, &doc), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_shard_doc(p0, 1000, &doc), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_hits_merge_key(NULL, 0, &bytes, &len), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_merge_key(p0, 0, NULL, &len), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_hits_merge_key(p0, 1000, &bytes, &len), QUARRY_INVALID_ARGUMENT);
    CHECK(quarry_searcher_shard_count(NULL) == 0);
    CHECK(quarry_stats_doc_count(NULL) == 0);
    CHECK(quarry_stats_shard_count(NULL) == 0);
    quarry_hits_free(p0);

    /* A query whose statistics were not exported. */
    EXPECT(quarry_searcher_search(i0, unknown, NULL, 0, 10, &out_hits), QUARRY_INVALID_ARGUMENT);
    CHECK_MSG("unexported");

    /* open_many: NULLs, no path, a shard of another schema. */
    EXPECT(quarry_searcher_open_many(NULL, lens, 2, 0, &bad), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_open_many(paths, NULL, 2, 0, &bad), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_open_many(paths, lens, 2, 0, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_open_many(paths, lens, 0, 0, &bad), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_open_many(paths, lens, 2, 0x80, &bad), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_open_many(paths, lens, 3, 0, &bad), QUARRY_SCHEMA);
    CHECK_MSG("shard 2");
    paths[2] = NULL;
    EXPECT(quarry_searcher_open_many(paths, lens, 3, 0, &bad), QUARRY_NULL_ARGUMENT);
    CHECK_MSG("paths[2]");
    CHECK(bad == NULL);

    /* Statistics: NULLs, damaged and foreign blobs, wrong shards. */
    EXPECT(quarry_searcher_export_stats(NULL, qs, 1, &out_stats), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_export_stats(s0, NULL, 1, &out_stats), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_export_stats(s0, qs, 1, NULL), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_export_stats(i0, qs, 1, &out_stats), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_stats_from_bytes(NULL, 4, &out_stats), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_stats_bytes(NULL, &bytes, &len), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_stats_bytes(st0, NULL, &len), QUARRY_NULL_ARGUMENT);
    OK(quarry_stats_bytes(st0, &bytes, &len));
    copy = malloc(len);
    if (copy == NULL) {
        return 2;
    }
    memcpy(copy, bytes, len);
    for (i = 0; i < len; i += 3) {
        EXPECT(quarry_stats_from_bytes(copy, i, &out_stats), QUARRY_CORRUPT);
    }
    copy[len / 2] ^= 0x10;
    EXPECT(quarry_stats_from_bytes(copy, len, &out_stats), QUARRY_CORRUPT);
    CHECK_MSG("checksum");
    copy[len / 2] ^= 0x10;
    copy[4] = 9;
    {
        uint32_t c = crc32(copy, len - 4);
        copy[len - 4] = (uint8_t)c;
        copy[len - 3] = (uint8_t)(c >> 8);
        copy[len - 2] = (uint8_t)(c >> 16);
        copy[len - 1] = (uint8_t)(c >> 24);
    }
    EXPECT(quarry_stats_from_bytes(copy, len, &out_stats), QUARRY_UNSUPPORTED_VERSION);
    free(copy);
    stats_parts[1] = NULL;
    EXPECT(quarry_stats_merge(stats_parts, 2, &out_stats), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_stats_merge(stats_parts, 0, &out_stats), QUARRY_INVALID_ARGUMENT);
    CHECK(out_stats == NULL);
    {
        quarry_stats *other_q = NULL;
        qs[0] = unknown;
        OK(quarry_searcher_export_stats(s1, qs, 1, &other_q));
        stats_parts[1] = other_q;
        EXPECT(quarry_stats_merge(stats_parts, 2, &out_stats), QUARRY_INVALID_ARGUMENT);
        quarry_stats_free(other_q);
    }
    EXPECT(quarry_searcher_with_stats(s0, merged, 2, &bad), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_with_stats(s0, merged, 1, &bad), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_with_stats(multi, merged, 0, &bad), QUARRY_INVALID_ARGUMENT);
    EXPECT(quarry_searcher_with_stats(s0, NULL, 0, &bad), QUARRY_NULL_ARGUMENT);
    EXPECT(quarry_searcher_with_stats(NULL, merged, 0, &bad), QUARRY_NULL_ARGUMENT);
    {
        quarry_searcher *o = open_one(other_dir);
        EXPECT(quarry_searcher_with_stats(o, merged, 0, &bad), QUARRY_SCHEMA);
        quarry_searcher_free(o);
    }
    CHECK(bad == NULL);

    /* Reopening keeps the statistics and the shards. */
    {
        quarry_searcher *r = NULL;
        OK(quarry_searcher_reopen(i1, &r));
        OK(quarry_searcher_search(r, q, NULL, 0, 10, &p1));
        OK(quarry_searcher_search(i1, q, NULL, 0, 10, &p0));
        same_hits("reopened", p1, p0);
        quarry_hits_free(p0);
        quarry_hits_free(p1);
        quarry_searcher_free(r);
        OK(quarry_searcher_reopen(multi, &r));
        CHECK(quarry_searcher_shard_count(r) == 2);
        quarry_searcher_free(r);
    }

    quarry_stats_free(NULL);
    quarry_stats_free(st0);
    quarry_stats_free(st1);
    quarry_stats_free(back);
    quarry_stats_free(merged);
    quarry_sort_free(by_year);
    quarry_query_free(q);
    quarry_query_free(unknown);
    quarry_searcher_free(i0);
    quarry_searcher_free(i1);
    quarry_searcher_free(s0);
    quarry_searcher_free(s1);
    quarry_searcher_free(multi);
    quarry_searcher_free(single);
    return ffi_finish("shards");
}
