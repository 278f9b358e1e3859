"""Schemas, documents and the indexer: fields and their checks, analyzers,
documents from mappings, commits, deletes, merges, the lock."""

from __future__ import annotations

import json
import os
import unittest

import quarry
from quarry import Query

from common import ROOT, TempDirCase, build_corpus, build_index, corpus_schema, ids, sample_docs, sample_schema


def count(index: str, query: Query) -> int:
    with quarry.Searcher(index) as s, s.search(query, total="exact") as hits:
        return hits.total


class Schemas(TempDirCase):
    def test_fields_as_given(self) -> None:
        s = corpus_schema()
        self.assertEqual([f.name for f in s.fields], ["id", "body", "year", "cat", "price", "note"])
        self.assertEqual(s.field("cat"), quarry.Field("cat", quarry.FieldType.STRING, True, True, True))
        self.assertFalse(s.field("note").positions)  # type: ignore[union-attr]
        self.assertIsNone(s.field("nope"))
        self.assertEqual(s.types()["price"], quarry.FieldType.F64)

    def test_from_json(self) -> None:
        text = (ROOT / "data" / "schema.json").read_text()
        for source in (text, text.encode(), json.loads(text)):
            s = quarry.Schema.from_json(source)
            self.assertEqual(
                s.types(),
                {
                    "id": quarry.FieldType.I64,
                    "title": quarry.FieldType.TEXT,
                    "body": quarry.FieldType.TEXT,
                    "year": quarry.FieldType.I64,
                    "category": quarry.FieldType.STRING,
                },
            )
        s.add_field("extra", "f64", sortable=True)
        self.assertEqual(s.fields[-1].name, "extra")
        with quarry.Indexer(self.path("i"), s) as ix:
            ix.add({"id": 1, "title": "t", "body": "b", "year": 1, "category": "c", "extra": 2})
        self.assertEqual(count(self.path("i"), Query.range("extra", 2.0, 2.0)), 1)

    def test_bad_schemas(self) -> None:
        for source in (
            "{",
            '{"fields": [{"name": "x", "type": "blob"}]}',
            '{"fields": [{"name": "t", "type": "text", "indexed": false}]}',
        ):
            with self.assertRaises(quarry.SchemaError) as e:
                quarry.Schema.from_json(source)
            self.assertTrue(e.exception.message)
        s = quarry.Schema().add_field("a", "text")
        bad = [
            ("a", "i64", {}),  # duplicate
            ("", "i64", {}),  # empty name
            ("x" * 256, "i64", {}),  # too long
            ("t", "text", {"sortable": True}),
            ("f", "f64", {"indexed": True}),
            ("n", "i64", {"positions": False}),
            ("s", "string", {"analyzer": "english"}),  # not a text field
            ("u", "text", {"analyzer": "klingon"}),
        ]
        for name, ty, kw in bad:
            with self.assertRaises(quarry.SchemaError, msg=name[:10]):
                s.add_field(name, ty, **kw)  # type: ignore[arg-type]
        # each failure left the schema as it was, in Python and in C
        self.assertEqual([f.name for f in s.fields], ["a"])
        s.add_field("s", "string", stored=True)
        with quarry.Indexer(self.path("i"), s) as ix:
            ix.add({"a": "x", "s": "y"})
        with quarry.Searcher(self.path("i")) as searcher, searcher.search(Query.term("a", "x")) as hits:
            self.assertEqual(hits[0].stored("s"), "y")
        with self.assertRaises(quarry.InvalidArgumentError):
            s.add_field("z", "blob")  # type: ignore[arg-type]
        with self.assertRaises(quarry.SchemaError):
            quarry.Indexer(self.path("empty"), quarry.Schema())  # no fields

    def test_analyzers_are_kept_by_the_index(self) -> None:
        s = (
            quarry.Schema()
            .add_field("plain", "text", stored=True)
            .add_field("stem", "text", analyzer="english")
        )
        index = self.path("a")
        with quarry.Indexer(index, s) as ix:
            ix.add({"plain": "Running runs", "stem": "Running runs"})
        self.assertEqual(count(index, Query.match("stem", "run")), 1)
        self.assertEqual(count(index, Query.match("plain", "run")), 0)
        self.assertEqual(count(index, Query.match("plain", "RUNNING")), 1)
        self.assertEqual(count(index, Query.phrase("stem", "run running")), 1)
        self.assertEqual(quarry.ANALYZERS, ("default", "english", "english_stop", "whitespace", "keyword"))


class Documents(TempDirCase):
    def test_mapping_values_by_schema_type(self) -> None:
        index = self.path("i")
        with corpus_schema() as schema, quarry.Indexer(index, schema) as ix:
            ix.add({"id": 1, "body": ["first value", "second value"], "price": 3, "cat": "x", "year": None})
        with quarry.Searcher(index) as s, s.search(Query.match("body", "second")) as hits:
            h = hits[0]
            self.assertEqual(h.stored("body"), "first value")  # the first of several
            self.assertEqual(h.stored("price"), 3.0)
            self.assertIsInstance(h.stored("price"), float)
            self.assertIsNone(h.stored("year"))

    def test_mapping_without_a_schema(self) -> None:
        index = self.path("i")
        build_corpus(index)
        with quarry.Indexer(index) as ix:
            ix.add({"id": 20, "price": 1.5, "year": 3})  # ints and floats need no schema
            with self.assertRaises(TypeError) as e:
                ix.add({"id": 21, "body": "text or string?"})
            self.assertIn("Schema", str(e.exception))
            ix.add(quarry.Doc().add_i64("id", 21).add_text("body", "explicit adder"))
        self.assertEqual(count(index, Query.range("id", 20, 21)), 2)

    def test_values_that_do_not_fit(self) -> None:
        index = self.path("i")
        with corpus_schema() as schema, quarry.Indexer(index, schema) as ix:
            with self.assertRaises(quarry.SchemaError):
                ix.add({"id": 1, "unknown": "x"})
            with self.assertRaises(quarry.SchemaError):
                ix.add(quarry.Doc().add_text("cat", "a text value for a string field"))
            with self.assertRaises(quarry.SchemaError):
                ix.add(quarry.Doc().add_i64("id", 1).add_i64("id", 2))  # two values
            with self.assertRaises(TypeError):
                ix.add({"id": "7"})
            with self.assertRaises(TypeError):
                ix.add({"id": True})
            with self.assertRaises(quarry.InvalidArgumentError):
                ix.add({"id": 2**63})
            with self.assertRaises(TypeError):
                ix.add(["not", "a", "mapping"])  # type: ignore[arg-type]
            ix.add({"id": -(2**63), "price": float("inf")})
        with quarry.Searcher(index) as s, s.search(Query.all()) as hits:
            self.assertEqual([h["id"] for h in hits], [-(2**63)])  # only the one that fit
            self.assertEqual(hits[0].stored("price"), float("inf"))

    def test_doc_reuse_and_clear(self) -> None:
        index = self.path("i")
        with corpus_schema() as schema, quarry.Indexer(index, schema) as ix:
            doc = quarry.Doc()
            for i in range(3):
                ix.add(doc.clear().add_i64("id", i).add_text("body", f"doc number {i}"))
            ix.add(quarry.Doc({"id": 10, "body": "from a mapping"}, schema))
        with quarry.Searcher(index) as s, s.search(Query.match("body", "doc number"), sort="doc") as hits:
            self.assertEqual(ids(hits), [0, 1, 2])
        self.assertEqual(count(index, Query.term("id", 10)), 1)


class Indexers(TempDirCase):
    def test_context_manager_commits_on_success(self) -> None:
        index = self.path("i")
        build_corpus(index)
        self.assertEqual(count(index, Query.all()), 8)

    def test_context_manager_discards_on_error(self) -> None:
        index = self.path("i")
        build_corpus(index)
        with self.assertRaises(RuntimeError):
            with quarry.Indexer(index) as ix:
                ix.add({"id": 100})
                raise RuntimeError("stop")
        self.assertEqual(count(index, Query.all()), 8)
        self.assertTrue(ix.closed)

    def test_close_discards_uncommitted_work(self) -> None:
        index = self.path("i")
        build_corpus(index)
        ix = quarry.Indexer(index)
        ix.add({"id": 100})
        ix.commit()
        ix.add({"id": 101})
        ix.close()
        self.assertEqual(count(index, Query.all()), 9)

    def test_one_writer_at_a_time(self) -> None:
        index = self.path("i")
        with corpus_schema() as schema, quarry.Indexer(index, schema):
            with self.assertRaises(quarry.LockedError) as e:
                quarry.Indexer(index)
            self.assertEqual(e.exception.status, quarry.Status.LOCKED)
        with quarry.Indexer(index):  # the lock went with the first
            pass

    def test_create_and_open(self) -> None:
        index = self.path("i")
        with self.assertRaises(quarry.NoIndexError):
            quarry.Indexer(index)
        with corpus_schema() as schema:
            quarry.Indexer(index, schema, create=True).close()
            with self.assertRaises(quarry.IndexExistsError):
                quarry.Indexer(index, schema, create=True)
            quarry.Indexer(index, schema).close()  # the same schema: fine
        other = quarry.Schema().add_field("x", "text")
        with self.assertRaises(quarry.SchemaError):
            quarry.Indexer(index, other)
        with quarry.Indexer(os.fsencode(index)) as ix:
            self.assertEqual(ix.path, os.fsencode(index))

    def test_indexing_threads_give_the_one_thread_hits(self) -> None:
        docs = sample_docs(400)
        one, three = self.path("one"), self.path("three")
        with sample_schema() as schema:
            build_index(one, schema, docs)
            # A small budget, so each thread writes several segments.
            with quarry.Indexer(three, schema, create=True, threads=3, memory_budget=1 << 16) as ix:
                for d in docs:
                    ix.add(d)
            with self.assertRaises(quarry.IndexExistsError):
                quarry.Indexer(three, schema, create=True, threads=2)
        with self.assertRaises(quarry.InvalidArgumentError):
            quarry.Indexer(self.path("x"), sample_schema(), threads=257)
        with self.assertRaises(quarry.InvalidArgumentError):
            quarry.Indexer(self.path("x"), sample_schema(), threads=-1)
        with quarry.Searcher(one) as a, quarry.Searcher(three) as b:
            self.assertEqual(a.doc_count, len(docs))
            self.assertEqual(b.doc_count, len(docs))
            for text in ("estate fortune", "the", "mother daughters sister"):
                q = Query.match("body", text, "or")
                with a.search(q, limit=20, total="exact") as ha, b.search(q, limit=20, total="exact") as hb:
                    self.assertGreater(len(ha), 0)
                    self.assertEqual(ha.total, hb.total)
                    self.assertEqual(
                        [(h.doc, h.score_bits, h["id"]) for h in ha],
                        [(h.doc, h.score_bits, h["id"]) for h in hb],
                    )

    def test_deletes_by_string_and_i64_terms(self) -> None:
        index = self.path("i")
        build_corpus(index, segments=2)
        with quarry.Indexer(index) as ix:
            ix.delete("cat", "animals")
            ix.delete("id", 6)
            with self.assertRaises(quarry.SchemaError):
                ix.delete("body", "quick")  # not an indexed string field
            with self.assertRaises(quarry.SchemaError):
                ix.delete("cat", 3)  # an i64 term for a string field
        with quarry.Searcher(index) as s, s.search(Query.all(), limit=100, sort="doc") as hits:
            self.assertEqual(ids(hits), [3, 4, 7, 8])

    def test_merge(self) -> None:
        index = self.path("i")
        build_corpus(index, segments=4)
        q = Query.match("body", "quick the sun")
        with quarry.Searcher(index) as s, s.search(q) as before:
            want = [(h["id"], h.score_bits) for h in before]
        with quarry.Indexer(index) as ix:
            ix.delete("id", 8)
            ix.merge(1)
            with self.assertRaises(quarry.InvalidArgumentError):
                ix.merge(0)
        quarry.check_index(index)  # raises on a problem
        with quarry.Searcher(index) as s, s.search(q) as after:
            # the statistics changed with the deletion; the documents did not
            self.assertEqual(sorted(h["id"] for h in after), sorted(i for i, _ in want if i != 8))
            self.assertEqual(s.doc_count, 7)

    def test_unusual_paths(self) -> None:
        index = os.path.join(self.dir, "d\u00e9j\u00e0 vu")
        build_corpus(index)
        self.assertEqual(count(index, Query.all()), 8)
        with self.assertRaises(quarry.InvalidArgumentError):
            quarry.Indexer(self.dir + "/nul\0byte")
        with self.assertRaises(TypeError):
            quarry.Indexer(42)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
