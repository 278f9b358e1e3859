"""Loads libquarry with ctypes and runs a full index / search / free cycle.

Usage: python3 ctypes_smoke.py LIBQUARRY_SO SCRATCH_DIR

Driven by tests/ffi.rs. Exits non-zero (with a message on stderr) on the
first failed check.
"""

import ctypes
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_double, c_float, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

OK = 0
NULL_ARGUMENT = 1
INVALID_UTF8 = 3
SCHEMA = 4
LOCKED = 8
FIELD_TEXT, FIELD_STRING, FIELD_I64 = 1, 2, 3
STORED, INDEXED, SORTABLE = 1, 2, 4
OPERATOR_AND, OPERATOR_OR = 1, 2
OCCUR_MUST, OCCUR_MUST_NOT = 1, 3
SORT_DESC = 2


def load(path):
    lib = ctypes.CDLL(path)
    sigs = {
        "quarry_status_str": (c_char_p, [c_uint32]),
        "quarry_last_error_message": (c_char_p, []),
        "quarry_version_string": (c_char_p, []),
        "quarry_version_number": (c_uint32, []),
        "quarry_schema_new": (c_uint32, [POINTER(c_void_p)]),
        "quarry_schema_add_field": (c_uint32, [c_void_p, c_char_p, c_size_t, c_uint32, c_uint32]),
        "quarry_schema_free": (None, [c_void_p]),
        "quarry_indexer_open": (c_uint32, [c_char_p, c_size_t, c_void_p, POINTER(c_void_p)]),
        "quarry_indexer_add_doc": (c_uint32, [c_void_p, c_void_p]),
        "quarry_indexer_delete_term_i64": (c_uint32, [c_void_p, c_char_p, c_size_t, c_int64]),
        "quarry_indexer_commit": (c_uint32, [c_void_p]),
        "quarry_indexer_free": (None, [c_void_p]),
        "quarry_doc_new": (c_uint32, [POINTER(c_void_p)]),
        "quarry_doc_add_text": (c_uint32, [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t]),
        "quarry_doc_add_string": (c_uint32, [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t]),
        "quarry_doc_add_i64": (c_uint32, [c_void_p, c_char_p, c_size_t, c_int64]),
        "quarry_doc_clear": (c_uint32, [c_void_p]),
        "quarry_doc_free": (None, [c_void_p]),
        "quarry_query_match": (c_uint32, [c_char_p, c_size_t, c_char_p, c_size_t, c_uint32, POINTER(c_void_p)]),
        "quarry_query_term": (c_uint32, [c_char_p, c_size_t, c_char_p, c_size_t, POINTER(c_void_p)]),
        "quarry_query_boolean": (c_uint32, [POINTER(c_void_p)]),
        "quarry_query_add_clause": (c_uint32, [c_void_p, c_uint32, c_void_p]),
        "quarry_query_free": (None, [c_void_p]),
        "quarry_sort_new": (c_uint32, [POINTER(c_void_p)]),
        "quarry_sort_add_field": (c_uint32, [c_void_p, c_char_p, c_size_t, c_uint32]),
        "quarry_sort_free": (None, [c_void_p]),
        "quarry_searcher_open": (c_uint32, [c_char_p, c_size_t, POINTER(c_void_p)]),
        "quarry_searcher_reopen": (c_uint32, [c_void_p, POINTER(c_void_p)]),
        "quarry_searcher_doc_count": (c_uint64, [c_void_p]),
        "quarry_searcher_search": (
            c_uint32,
            [c_void_p, c_void_p, c_void_p, c_size_t, c_size_t, POINTER(c_void_p)],
        ),
        "quarry_searcher_free": (None, [c_void_p]),
        "quarry_hits_len": (c_size_t, [c_void_p]),
        "quarry_hits_total": (c_uint64, [c_void_p]),
        "quarry_hits_score": (c_uint32, [c_void_p, c_size_t, POINTER(c_float)]),
        "quarry_hits_stored_str": (
            c_uint32,
            [c_void_p, c_size_t, c_char_p, c_size_t, POINTER(ctypes.c_void_p), POINTER(c_size_t)],
        ),
        "quarry_hits_stored_i64": (c_uint32, [c_void_p, c_size_t, c_char_p, c_size_t, POINTER(c_int64)]),
        "quarry_hits_sort_value_i64": (c_uint32, [c_void_p, c_size_t, c_size_t, POINTER(c_int64)]),
        "quarry_hits_free": (None, [c_void_p]),
        "quarry_debug_panic": (c_uint32, []),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


class QuarryError(Exception):
    pass


def main():
    lib_path, scratch = sys.argv[1], sys.argv[2]
    q = load(lib_path)

    def check(status, what):
        if status != OK:
            raise QuarryError(
                f"{what}: {q.quarry_status_str(status).decode()}: {q.quarry_last_error_message().decode()}"
            )

    def expect(cond, what):
        if not cond:
            raise QuarryError(what)

    def b(s):
        data = s.encode("utf-8")
        return data, len(data)

    expect(q.quarry_version_string().decode().count(".") == 2, "version string")
    expect(q.quarry_version_number() == 1000, "version number 0.1.0")

    schema = c_void_p()
    check(q.quarry_schema_new(byref(schema)), "schema_new")
    for name, ty, flags in [
        ("id", FIELD_I64, STORED | INDEXED),
        ("title", FIELD_TEXT, STORED),
        ("year", FIELD_I64, STORED | SORTABLE),
        ("tag", FIELD_STRING, STORED | INDEXED),
    ]:
        check(q.quarry_schema_add_field(schema, *b(name), ty, flags), f"add_field {name}")

    index_dir = os.path.join(scratch, "py-index")
    ix = c_void_p()
    check(q.quarry_indexer_open(*b(index_dir), schema, byref(ix)), "indexer_open")
    q.quarry_schema_free(schema)

    other = c_void_p()
    expect(q.quarry_indexer_open(*b(index_dir), None, byref(other)) == LOCKED, "second writer is locked out")
    expect(other.value is None, "out-param untouched on error")

    books = [
        (1, "Pride and Prejudice", 1813, "novel"),
        (2, "Sense and Sensibility", 1811, "novel"),
        (3, "The Prince", 1532, "essay"),
        (4, "Prejudice in the modern world \u00e9t\u00e9", 2001, "essay"),
    ]
    doc = c_void_p()
    check(q.quarry_doc_new(byref(doc)), "doc_new")
    for ident, title, year, tag in books:
        check(q.quarry_doc_clear(doc), "doc_clear")
        check(q.quarry_doc_add_i64(doc, *b("id"), ident), "add id")
        check(q.quarry_doc_add_text(doc, *b("title"), *b(title)), "add title")
        check(q.quarry_doc_add_i64(doc, *b("year"), year), "add year")
        check(q.quarry_doc_add_string(doc, *b("tag"), *b(tag)), "add tag")
        check(q.quarry_indexer_add_doc(ix, doc), "add_doc")
    expect(q.quarry_doc_add_text(doc, *b("title"), b"\xff\xfe", 2) == INVALID_UTF8, "bad UTF-8 is refused")
    q.quarry_doc_free(doc)
    check(q.quarry_indexer_commit(ix), "commit")

    searcher = c_void_p()
    check(q.quarry_searcher_open(*b(index_dir), byref(searcher)), "searcher_open")
    expect(q.quarry_searcher_doc_count(searcher) == 4, "doc count")

    def search(query, sort=None, limit=10):
        hits = c_void_p()
        check(q.quarry_searcher_search(searcher, query, sort, 0, limit, byref(hits)), "search")
        return hits

    def stored_title(hits, i):
        ptr, n = c_void_p(), c_size_t()
        check(q.quarry_hits_stored_str(hits, i, *b("title"), byref(ptr), byref(n)), "stored title")
        return ctypes.string_at(ptr, n.value).decode("utf-8")

    def stored_id(hits, i):
        v = c_int64()
        check(q.quarry_hits_stored_i64(hits, i, *b("id"), byref(v)), "stored id")
        return v.value

    # OR and AND match queries
    query = c_void_p()
    check(q.quarry_query_match(*b("title"), *b("pride prejudice"), OPERATOR_OR, byref(query)), "match OR")
    hits = search(query)
    expect(q.quarry_hits_total(hits) == 2, "OR total")
    expect(stored_title(hits, 0) == "Pride and Prejudice", "OR best hit")
    score = c_float()
    check(q.quarry_hits_score(hits, 0, byref(score)), "score")
    expect(score.value > 0, "positive score")
    q.quarry_hits_free(hits)
    q.quarry_query_free(query)

    check(q.quarry_query_match(*b("title"), *b("PRIDE Prejudice"), OPERATOR_AND, byref(query)), "match AND")
    hits = search(query)
    expect(q.quarry_hits_total(hits) == 1 and stored_id(hits, 0) == 1, "AND")
    q.quarry_hits_free(hits)
    q.quarry_query_free(query)

    # boolean: prejudice, but not essays; Unicode round trip
    boolean, clause = c_void_p(), c_void_p()
    check(q.quarry_query_boolean(byref(boolean)), "boolean")
    check(q.quarry_query_match(*b("title"), *b("prejudice"), OPERATOR_OR, byref(clause)), "clause")
    check(q.quarry_query_add_clause(boolean, OCCUR_MUST, clause), "add must")
    q.quarry_query_free(clause)
    check(q.quarry_query_term(*b("tag"), *b("essay"), byref(clause)), "term")
    hits = search(clause)
    expect(q.quarry_hits_total(hits) == 2, "term on string field")
    q.quarry_hits_free(hits)
    check(q.quarry_query_add_clause(boolean, OCCUR_MUST_NOT, clause), "add must_not")
    q.quarry_query_free(clause)
    hits = search(boolean)
    expect(q.quarry_hits_total(hits) == 1 and stored_id(hits, 0) == 1, "boolean")
    q.quarry_hits_free(hits)
    q.quarry_query_free(boolean)

    check(q.quarry_query_match(*b("title"), *b("\u00c9T\u00c9"), OPERATOR_OR, byref(query)), "unicode")
    hits = search(query)
    expect(stored_title(hits, 0) == "Prejudice in the modern world \u00e9t\u00e9", "unicode round trip")
    q.quarry_hits_free(hits)
    q.quarry_query_free(query)

    # sorted by year descending, with sort values
    sort = c_void_p()
    check(q.quarry_sort_new(byref(sort)), "sort_new")
    check(q.quarry_sort_add_field(sort, *b("year"), SORT_DESC), "sort year")
    check(q.quarry_query_match(*b("title"), *b("pride prejudice prince sensibility"), OPERATOR_OR, byref(query)), "all")
    hits = search(query, sort)
    ids = [stored_id(hits, i) for i in range(q.quarry_hits_len(hits))]
    expect(ids == [4, 1, 2, 3], f"year desc order, got {ids}")
    year = c_int64()
    check(q.quarry_hits_sort_value_i64(hits, 0, 0, byref(year)), "sort value")
    expect(year.value == 2001, "sort value of the first hit")
    q.quarry_hits_free(hits)
    q.quarry_sort_free(sort)

    # errors come back as codes with messages
    expect(q.quarry_searcher_search(searcher, None, None, 0, 10, byref(hits)) == NULL_ARGUMENT, "NULL query")
    expect(b"query is NULL" in q.quarry_last_error_message(), "NULL message")
    bad = c_void_p()
    check(q.quarry_query_match(*b("nope"), *b("x"), OPERATOR_OR, byref(bad)), "bad query")
    expect(q.quarry_searcher_search(searcher, bad, None, 0, 10, byref(hits)) == SCHEMA, "unknown field")
    q.quarry_query_free(bad)
    expect(q.quarry_debug_panic() == 12, "panic becomes QUARRY_INTERNAL")

    # delete, commit, reopen
    check(q.quarry_indexer_delete_term_i64(ix, *b("id"), 3), "delete")
    check(q.quarry_indexer_commit(ix), "commit 2")
    fresh = c_void_p()
    check(q.quarry_searcher_reopen(searcher, byref(fresh)), "reopen")
    expect(q.quarry_searcher_doc_count(fresh) == 3, "deleted")
    expect(q.quarry_searcher_doc_count(searcher) == 4, "old snapshot kept")
    hits = search(query)
    q.quarry_searcher_free(searcher)
    q.quarry_searcher_free(fresh)
    expect(stored_title(hits, 0) != "", "hits outlive the searcher")
    q.quarry_hits_free(hits)
    q.quarry_query_free(query)
    q.quarry_indexer_free(ix)
    print("ctypes_smoke: all checks passed")


if __name__ == "__main__":
    try:
        main()
    except QuarryError as e:
        print(f"ctypes_smoke: {e}", file=sys.stderr)
        sys.exit(1)
