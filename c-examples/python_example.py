"""Index and search with quarry from Python, through ctypes (no build step).

    python3 python_example.py [LIBQUARRY [DATA.jsonl [INDEX_DIR]]]

Defaults: ../target/release/libquarry.so.0, ../data/sample.jsonl and
./example-index-py. `make run-python` builds the library and runs this.

Every quarry function returns a status code (0 = OK) and writes its
results through pointers; `call` below turns a failure into an exception
carrying quarry's message. Handles are freed with their quarry_*_free
function; stored strings are borrowed from the hits object and copied
into Python strings before it is freed.
"""

import ctypes
import json
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_float, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

FIELD_TEXT, FIELD_STRING, FIELD_I64 = 1, 2, 3
STORED, INDEXED, SORTABLE = 1, 2, 4
OPERATOR_AND, OPERATOR_OR = 1, 2
SORT_DESC = 2


class QuarryError(Exception):
    pass


class Quarry:
    """A thin wrapper: declares the signatures it uses, raises on errors."""

    SIGNATURES = {
        "quarry_status_str": (c_char_p, [c_uint32]),
        "quarry_last_error_message": (c_char_p, []),
        "quarry_version_string": (c_char_p, []),
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
        "quarry_query_free": (None, [c_void_p]),
        "quarry_sort_new": (c_uint32, [POINTER(c_void_p)]),
        "quarry_sort_add_field": (c_uint32, [c_void_p, c_char_p, c_size_t, c_uint32]),
        "quarry_sort_add_score": (c_uint32, [c_void_p, c_uint32]),
        "quarry_sort_free": (None, [c_void_p]),
        "quarry_searcher_open": (c_uint32, [c_char_p, c_size_t, POINTER(c_void_p)]),
        "quarry_searcher_doc_count": (c_uint64, [c_void_p]),
        "quarry_searcher_search": (c_uint32, [c_void_p, c_void_p, c_void_p, c_size_t, c_size_t, POINTER(c_void_p)]),
        "quarry_searcher_free": (None, [c_void_p]),
        "quarry_hits_len": (c_size_t, [c_void_p]),
        "quarry_hits_total": (c_uint64, [c_void_p]),
        "quarry_hits_score": (c_uint32, [c_void_p, c_size_t, POINTER(c_float)]),
        "quarry_hits_stored_str": (c_uint32, [c_void_p, c_size_t, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t)]),
        "quarry_hits_stored_i64": (c_uint32, [c_void_p, c_size_t, c_char_p, c_size_t, POINTER(c_int64)]),
        "quarry_hits_free": (None, [c_void_p]),
    }

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in self.SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.restype = restype
            fn.argtypes = argtypes

    def call(self, name, *args):
        status = getattr(self.lib, name)(*args)
        if status != 0:
            raise QuarryError(
                f"{name}: {self.lib.quarry_status_str(status).decode()}: "
                f"{self.lib.quarry_last_error_message().decode()}"
            )

    def __getattr__(self, name):
        return getattr(self.lib, name)


def utf8(s):
    b = s.encode("utf-8")
    return b, len(b)


def build_index(q, data, index_dir, limit=1000):
    schema = c_void_p()
    q.call("quarry_schema_new", byref(schema))
    for name, ty, flags in [
        ("id", FIELD_I64, STORED | INDEXED),
        ("title", FIELD_TEXT, STORED),
        ("body", FIELD_TEXT, STORED),
        ("year", FIELD_I64, STORED | SORTABLE),
        ("category", FIELD_STRING, STORED | INDEXED | SORTABLE),
    ]:
        q.call("quarry_schema_add_field", schema, *utf8(name), ty, flags)
    indexer = c_void_p()
    try:
        q.call("quarry_indexer_open", *utf8(index_dir), schema, byref(indexer))
    finally:
        q.quarry_schema_free(schema)
    doc = c_void_p()
    q.call("quarry_doc_new", byref(doc))
    count = 0
    try:
        with open(data, encoding="utf-8") as f:
            for line in f:
                if count == limit:
                    break
                rec = json.loads(line)
                q.call("quarry_doc_clear", doc)
                q.call("quarry_doc_add_i64", doc, *utf8("id"), rec["id"])
                q.call("quarry_doc_add_text", doc, *utf8("title"), *utf8(rec["title"]))
                q.call("quarry_doc_add_text", doc, *utf8("body"), *utf8(rec["body"]))
                q.call("quarry_doc_add_i64", doc, *utf8("year"), rec["year"])
                q.call("quarry_doc_add_string", doc, *utf8("category"), *utf8(rec["category"]))
                q.call("quarry_indexer_delete_term_i64", indexer, *utf8("id"), rec["id"])  # update = delete + add
                q.call("quarry_indexer_add_doc", indexer, doc)
                count += 1
        q.call("quarry_indexer_commit", indexer)
    finally:
        q.quarry_doc_free(doc)
        q.quarry_indexer_free(indexer)  # discards anything uncommitted, releases the lock
    return count


def search(q, searcher, text, op=OPERATOR_OR, sort=None, limit=5):
    query, hits = c_void_p(), c_void_p()
    q.call("quarry_query_match", *utf8("body"), *utf8(text), op, byref(query))
    try:
        q.call("quarry_searcher_search", searcher, query, sort, 0, limit, byref(hits))
    finally:
        q.quarry_query_free(query)
    try:
        results = []
        for i in range(q.quarry_hits_len(hits)):
            score, ident, ptr, n = c_float(), c_int64(), c_void_p(), c_size_t()
            q.call("quarry_hits_score", hits, i, byref(score))
            q.call("quarry_hits_stored_i64", hits, i, *utf8("id"), byref(ident))
            q.call("quarry_hits_stored_str", hits, i, *utf8("title"), byref(ptr), byref(n))
            title = ctypes.string_at(ptr, n.value).decode("utf-8")  # copy before hits is freed
            results.append((ident.value, score.value, title))
        return q.quarry_hits_total(hits), results
    finally:
        q.quarry_hits_free(hits)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    lib = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "target", "release", "libquarry.so.0")
    data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "data", "sample.jsonl")
    index_dir = sys.argv[3] if len(sys.argv) > 3 else "example-index-py"

    q = Quarry(lib)
    print(f"quarry {q.quarry_version_string().decode()}")
    print(f"indexed {build_index(q, data, index_dir)} documents into {index_dir}")

    searcher = c_void_p()
    q.call("quarry_searcher_open", *utf8(index_dir), byref(searcher))
    try:
        print(f"searching {q.quarry_searcher_doc_count(searcher)} documents")
        for text, op in [("dear sister", OPERATOR_AND), ("marriage happiness", OPERATOR_OR)]:
            total, hits = search(q, searcher, text, op)
            print(f"\nbody:({text}) [{'AND' if op == OPERATOR_AND else 'OR'}]: {total} matches")
            for ident, score, title in hits:
                print(f"  [id {ident}] {score:.3f}  {title}")

        sort = c_void_p()
        q.call("quarry_sort_new", byref(sort))
        try:
            q.call("quarry_sort_add_field", sort, *utf8("year"), SORT_DESC)
            q.call("quarry_sort_add_score", sort, SORT_DESC)
            total, hits = search(q, searcher, "letter", sort=sort)
        finally:
            q.quarry_sort_free(sort)
        print(f"\nbody:letter, newest first: {total} matches")
        for ident, score, title in hits:
            print(f"  [id {ident}] {score:.3f}  {title}")
    finally:
        q.quarry_searcher_free(searcher)


if __name__ == "__main__":
    try:
        main()
    except QuarryError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
