"""Errors: each status as its exception with the library's message, NULL
and closed handles, invalid UTF-8 and unpaired surrogates, wrong types,
damaged indexes, and a panic inside the library."""

from __future__ import annotations

import ctypes
import os
import unittest

import quarry
from quarry import Query, Status, _ffi
from quarry.errors import error_for

from common import CorpusCase, TempDirCase, build_corpus, corpus_schema


class StatusMapping(unittest.TestCase):
    def test_every_status_has_its_class(self) -> None:
        classes = {
            Status.NULL_ARGUMENT: quarry.NullArgumentError,
            Status.INVALID_ARGUMENT: quarry.InvalidArgumentError,
            Status.INVALID_UTF8: quarry.InvalidUtf8Error,
            Status.SCHEMA: quarry.SchemaError,
            Status.IO: quarry.IoError,
            Status.CORRUPT: quarry.CorruptError,
            Status.UNSUPPORTED_VERSION: quarry.UnsupportedVersionError,
            Status.LOCKED: quarry.LockedError,
            Status.NO_INDEX: quarry.NoIndexError,
            Status.INDEX_EXISTS: quarry.IndexExistsError,
            Status.UNSUPPORTED: quarry.UnsupportedError,
            Status.INTERNAL: quarry.InternalError,
            Status.NO_VALUE: quarry.NoValueError,
            Status.QUERY_SYNTAX: quarry.QuerySyntaxError,
            Status.TOO_MANY_TERMS: quarry.TooManyTermsError,
        }
        self.assertEqual(set(classes), set(Status) - {Status.OK})
        for status, cls in classes.items():
            e = error_for(status, "m")
            self.assertIs(type(e), cls)
            self.assertIsInstance(e, quarry.Error)
            self.assertEqual((e.status, e.message, str(e)), (status, "m", "m"))
            self.assertEqual(cls("x").status, status)

    def test_unknown_codes_stay_errors(self) -> None:
        e = error_for(99, "from a newer library")
        self.assertIs(type(e), quarry.Error)
        self.assertEqual(e.status, 99)
        self.assertEqual(_ffi.status_text(99), "unknown status code")
        self.assertEqual(_ffi.status_text(Status.LOCKED), "index locked by another writer")

    def test_python_families(self) -> None:
        self.assertTrue(issubclass(quarry.InvalidArgumentError, ValueError))
        self.assertTrue(issubclass(quarry.InvalidUtf8Error, ValueError))
        self.assertTrue(issubclass(quarry.NoValueError, KeyError))
        self.assertTrue(issubclass(quarry.ClosedError, quarry.NullArgumentError))
        self.assertEqual(str(quarry.NoValueError("no value here")), "no value here")  # not KeyError's quoting


class LibraryMessages(unittest.TestCase):
    def test_null_arguments_reach_c_as_null(self) -> None:
        # Below the classes: the C API's own NULL checks and messages.
        out = ctypes.c_void_p()
        with self.assertRaises(quarry.NullArgumentError) as e:
            _ffi.call("quarry_query_term", None, 0, b"x", 1, ctypes.byref(out))
        self.assertIn("NULL", e.exception.message)
        self.assertIsNone(out.value)  # out-parameters are written only on success
        with self.assertRaises(quarry.NullArgumentError):
            _ffi.call("quarry_query_all", None)
        self.assertEqual(_ffi.fn("quarry_hits_len")(None), 0)

    def test_the_message_is_the_failed_calls(self) -> None:
        with self.assertRaises(quarry.InvalidUtf8Error) as e:
            Query.term("body", b"\xff\xfe")
        self.assertIn("not valid UTF-8", e.exception.message)
        _ffi.call("quarry_query_all", ctypes.byref(ctypes.c_void_p()))  # leaks one query: fine in a test
        self.assertEqual(_ffi.last_error_message(), "")  # a success clears it

    def test_a_panic_is_an_internal_error(self) -> None:
        with self.assertRaises(quarry.InternalError) as e:
            _ffi.call("quarry_debug_panic")
        self.assertIn("quarry_debug_panic", e.exception.message)
        self.assertEqual(e.exception.status, Status.INTERNAL)


class InvalidText(CorpusCase):
    SURROGATE = "ab\ud800c"

    def test_unpaired_surrogates_are_refused_before_c(self) -> None:
        s = self.SURROGATE
        calls = [
            lambda: Query.term(s, "x"),
            lambda: Query.term("body", s),
            lambda: Query.match("body", s),
            lambda: Query.phrase("body", s),
            lambda: Query.prefix("body", s),
            lambda: Query.range("cat", s, "z"),
            lambda: self.s.parse(s, "body"),
            lambda: self.s.parse("x", s),
            lambda: quarry.SortSpec(quarry.SortRule.by_field(s)),
            lambda: quarry.Schema().add_field(s, "text"),
            lambda: quarry.Schema().add_field("t", "text", analyzer=s),
            lambda: quarry.Schema.from_json(s),
            lambda: quarry.Doc().add_text("body", s),
            lambda: quarry.Doc().add_string(s, "v"),
        ]
        for i, call in enumerate(calls):
            with self.assertRaises(quarry.InvalidUtf8Error, msg=str(i)) as e:
                call()
            self.assertIn("U+D800 at index 2", e.exception.message)
            self.assertEqual(e.exception.status, Status.INVALID_UTF8)
            self.assertIsInstance(e.exception.__cause__, UnicodeEncodeError)
        with self.s.search(Query.all()) as hits:
            with self.assertRaises(quarry.InvalidUtf8Error):
                hits[0].stored(s)

    def test_invalid_utf8_bytes_are_refused_by_c(self) -> None:
        for call in (
            lambda: Query.match("body", b"caf\xc3"),
            lambda: quarry.Doc().add_text("body", b"\x80"),
            lambda: quarry.Schema().add_field(b"\xff", "text"),  # type: ignore[arg-type]
        ):
            with self.assertRaises(quarry.InvalidUtf8Error) as e:
                call()
            self.assertIn("UTF-8", e.exception.message)
        # valid bytes are text like any other
        with self.s.search(Query.match("body", "quick".encode())) as hits:
            self.assertEqual(hits.total, 3)

    def test_paths_are_bytes_and_need_not_be_utf8(self) -> None:
        index = os.path.join(os.fsencode(self.dir), b"latin1-\xe9")
        build_corpus(index)  # type: ignore[arg-type]
        with quarry.Searcher(index) as s:
            self.assertEqual(s.doc_count, 8)
            self.assertEqual(s.path, index)

    def test_wrong_types(self) -> None:
        for call in (
            lambda: self.s.search(None),  # type: ignore[arg-type]
            lambda: self.s.search("quick"),  # type: ignore[arg-type]
            lambda: Query.term("body", 1.5),  # type: ignore[arg-type]
            lambda: Query.term(None, "x"),  # type: ignore[arg-type]
            lambda: Query.match("body", 7),  # type: ignore[arg-type]
            lambda: Query.phrase("body", "a", slop=-1),
            lambda: Query.range("year", 1, "z"),
            lambda: Query.all().boost("2"),  # type: ignore[arg-type]
            lambda: quarry.Query(),
            lambda: quarry.SortSpec(3),  # type: ignore[arg-type]
            lambda: quarry.Searcher(None),  # type: ignore[arg-type]
        ):
            with self.assertRaises((TypeError, quarry.InvalidArgumentError)):
                call()
        with self.assertRaises(TypeError):
            Query.range("year")  # open at both ends: which type?
        with self.assertRaises(quarry.InvalidArgumentError):
            Query.match("body", "x", "xor")
        with self.assertRaises(quarry.InvalidArgumentError):
            Query.term("id", 2**63)


class ClosedHandles(CorpusCase):
    def test_use_after_close_raises(self) -> None:
        q = Query.match("body", "quick")
        hits = self.s.search(q)
        spec = quarry.SortSpec("year")
        schema = corpus_schema()
        doc = quarry.Doc()
        searcher = quarry.Searcher(self.index)
        ix = quarry.Indexer(self.index)
        uses = [
            (q, lambda: self.s.search(q)),
            (q, lambda: q.boost(2.0)),
            (q, lambda: Query.boolean(must=[q])),
            (q, lambda: hits[0].highlight("body", q)),
            (hits, lambda: hits[0].stored("body")),
            (hits, lambda: hits[0].highlight("body")),
            (spec, lambda: self.s.search(Query.all(), sort=spec)),
            (schema, lambda: schema.add_field("z", "text")),
            (schema, lambda: quarry.Indexer(self.path("other"), schema)),
            (doc, lambda: doc.add_text("body", "x")),
            (doc, lambda: ix.add(doc)),
            (searcher, lambda: searcher.search(Query.all())),
            (searcher, lambda: searcher.doc_count),
            (searcher, lambda: searcher.reopen()),
            (searcher, lambda: searcher.set_threads(2)),
            (searcher, lambda: searcher.parse("x", "body")),
            (ix, lambda: ix.add({"id": 1})),
            (ix, lambda: ix.commit()),
        ]
        for obj, use in uses:
            obj.close()
            self.assertTrue(obj.closed)
            with self.assertRaises(quarry.ClosedError, msg=repr(obj)) as e:
                use()
            self.assertEqual(e.exception.status, Status.NULL_ARGUMENT)
            self.assertIn("closed", str(e.exception))
            obj.close()  # again: nothing happens
            self.assertIn("closed", repr(obj))
        # the closed indexer released the lock
        with quarry.Indexer(self.index):
            pass

    def test_data_read_at_search_time_survives_close(self) -> None:
        with self.s.search(Query.all(), sort="year:desc") as hits:
            pass
        self.assertEqual(len(hits), 8)
        self.assertEqual(hits[0].sort_values, (2020,))
        self.assertEqual(hits.total, 8)


class DamagedIndexes(TempDirCase):
    def test_no_index(self) -> None:
        with self.assertRaises(quarry.NoIndexError):
            quarry.Searcher(self.path("missing"))
        with self.assertRaises(quarry.NoIndexError):
            quarry.check_index(self.path("missing"))

    def test_a_damaged_segment_is_corrupt(self) -> None:
        index = self.path("i")
        build_corpus(index)
        quarry.check_index(index)
        segments = [n for n in os.listdir(index) if n.startswith("seg-")]
        self.assertTrue(segments, os.listdir(index))
        path = os.path.join(index, segments[0])
        with open(path, "r+b") as f:
            f.seek(os.path.getsize(path) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))
        with self.assertRaises(quarry.CorruptError) as e:
            quarry.check_index(index)
        self.assertIn(segments[0], e.exception.message)
        with self.assertRaises(quarry.CorruptError):
            quarry.Searcher(index, mmap=False)

    def test_bad_environment_switches(self) -> None:
        index = self.path("i")
        build_corpus(index)
        old = os.environ.get("QUARRY_BULK_AND")
        os.environ["QUARRY_BULK_AND"] = "sometimes"
        try:
            with self.assertRaises(quarry.InvalidArgumentError) as e:
                quarry.Searcher(index)
            self.assertIn("QUARRY_BULK_AND", e.exception.message)
        finally:
            if old is None:
                del os.environ["QUARRY_BULK_AND"]
            else:
                os.environ["QUARRY_BULK_AND"] = old


if __name__ == "__main__":
    unittest.main()
