"""Loads libquarry through cffi in ABI mode (no compiler), declared by
include/quarry_cdef.h alone, and runs an index / search / free cycle.

Usage: python3 cffi_smoke.py QUARRY_CDEF_H LIBQUARRY_SO SCRATCH_DIR

Driven by tests/ffi.rs. Exits non-zero (with a message on stderr) on the
first failed check.
"""

import os
import sys

import cffi


def main():
    cdef_path, lib_path, scratch = sys.argv[1:4]
    ffi = cffi.FFI()
    with open(cdef_path) as f:
        ffi.cdef(f.read())
    lib = ffi.dlopen(lib_path)

    def check(status, what):
        if status != lib.QUARRY_OK:
            msg = ffi.string(lib.quarry_last_error_message()).decode()
            sys.exit(f"{what}: status {status}: {msg}")

    def text(s):
        b = s.encode()
        return ffi.new("char[]", b), len(b)

    assert lib.QUARRY_VERSION_NUMBER == lib.quarry_version_number()
    assert lib.QUARRY_TOTAL_EXACT == 2**64 - 1

    schema = ffi.new("quarry_schema **")
    check(lib.quarry_schema_new(schema), "schema_new")
    for name, ty, flags in [
        ("id", lib.QUARRY_FIELD_I64, lib.QUARRY_FIELD_STORED | lib.QUARRY_FIELD_INDEXED),
        ("body", lib.QUARRY_FIELD_TEXT, lib.QUARRY_FIELD_STORED),
        ("year", lib.QUARRY_FIELD_I64, lib.QUARRY_FIELD_SORTABLE),
    ]:
        check(lib.quarry_schema_add_field(schema[0], *text(name), ty, flags), f"add_field {name}")

    path = os.path.join(scratch, "idx").encode()
    ix = ffi.new("quarry_indexer **")
    check(lib.quarry_indexer_create(path, len(path), schema[0], ix), "indexer_create")
    lib.quarry_schema_free(schema[0])
    doc = ffi.new("quarry_doc **")
    check(lib.quarry_doc_new(doc), "doc_new")
    bodies = ["the quick brown fox", "a lazy dog", "the quick dog jumps"]
    for i, body in enumerate(bodies):
        check(lib.quarry_doc_clear(doc[0]), "doc_clear")
        check(lib.quarry_doc_add_i64(doc[0], *text("id"), i + 1), "add id")
        check(lib.quarry_doc_add_text(doc[0], *text("body"), *text(body)), "add body")
        check(lib.quarry_doc_add_i64(doc[0], *text("year"), 2000 + i), "add year")
        check(lib.quarry_indexer_add_doc(ix[0], doc[0]), "add_doc")
    lib.quarry_doc_free(doc[0])
    check(lib.quarry_indexer_commit(ix[0]), "commit")
    lib.quarry_indexer_free(ix[0])

    s = ffi.new("quarry_searcher **")
    check(lib.quarry_searcher_open(path, len(path), s), "searcher_open")
    assert lib.quarry_searcher_doc_count(s[0]) == 3
    q = ffi.new("quarry_query **")
    check(lib.quarry_query_match(*text("body"), *text("quick"), lib.QUARRY_OPERATOR_OR, q), "query")

    def search(sort):
        hits = ffi.new("quarry_hits **")
        check(lib.quarry_searcher_search(s[0], q[0], sort, 0, 10, hits), "search")
        h = hits[0]
        out = []
        for i in range(lib.quarry_hits_len(h)):
            iv = ffi.new("int64_t *")
            score = ffi.new("float *")
            check(lib.quarry_hits_stored_i64(h, i, *text("id"), iv), "stored id")
            check(lib.quarry_hits_score(h, i, score), "score")
            out.append((iv[0], score[0]))
        assert lib.quarry_hits_total(h) == len(out)
        lib.quarry_hits_free(h)
        return out

    ranked = search(ffi.NULL)
    assert sorted(i for i, _ in ranked) == [1, 3], ranked
    assert all(sc > 0 for _, sc in ranked), ranked

    sort = ffi.new("quarry_sort **")
    check(lib.quarry_sort_new(sort), "sort_new")
    check(lib.quarry_sort_add_field(sort[0], *text("year"), lib.QUARRY_SORT_DESC), "sort_add_field")
    by_year = search(sort[0])
    assert [i for i, _ in by_year] == [3, 1], by_year
    assert all(sc == 0 for _, sc in by_year), by_year
    check(lib.quarry_sort_track_scores(sort[0], True), "track_scores")
    tracked = search(sort[0])
    assert sorted(tracked) == sorted(ranked), (tracked, ranked)
    lib.quarry_sort_free(sort[0])

    # an error carries its status and message
    bad = ffi.new("quarry_query **")
    status = lib.quarry_query_term(*text("nope"), *text("x"), bad)
    assert status == lib.QUARRY_OK, status  # fields are checked by the search
    hits = ffi.new("quarry_hits **")
    status = lib.quarry_searcher_search(s[0], bad[0], ffi.NULL, 0, 10, hits)
    assert status == lib.QUARRY_SCHEMA, status
    lib.quarry_query_free(bad[0])
    assert b"nope" in ffi.string(lib.quarry_last_error_message())

    lib.quarry_query_free(q[0])
    lib.quarry_searcher_free(s[0])
    print("cffi_smoke: all checks passed")


if __name__ == "__main__":
    main()
