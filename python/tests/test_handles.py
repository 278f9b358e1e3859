"""Handle ownership: every C handle freed exactly once (by close, a
context manager or garbage collection), never while a call uses it, and
searches on several threads while handles close never crash."""

from __future__ import annotations

import gc
import threading
import time
import unittest
from collections import Counter
from typing import Any, Callable, Dict, List

import quarry
from quarry import Query, _ffi

from common import CorpusCase, corpus_schema

FREES = [
    f"quarry_{t}_free" for t in ("schema", "indexer", "doc", "query", "sort", "searcher", "hits", "stats")
]


class FreeLog:
    """Wraps every ``quarry_*_free`` so the test sees which pointers were
    freed, and how often."""

    def __init__(self, case: unittest.TestCase) -> None:
        self.freed: Counter = Counter()
        saved: Dict[str, Callable[..., Any]] = {}
        for name in FREES:
            real = _ffi.fn(name)
            saved[name] = real

            def wrapper(ptr: int, real: Callable[..., Any] = real, name: str = name) -> None:
                self.freed[(name, ptr)] += 1
                real(ptr)

            _ffi._bound[name] = wrapper
        case.addCleanup(_ffi._bound.update, saved)

    def count(self, name: str, ptr: int) -> int:
        return self.freed[(f"quarry_{name}_free", ptr)]


class ExactlyOnce(CorpusCase):
    def test_close_frees_once(self) -> None:
        everything = Query.all()
        stats = self.s.export_stats([everything])
        scored = self.s.with_stats(stats, 0)
        part = scored.search(everything)
        for o in (everything, stats, scored, part):
            self.addCleanup(o.close)
        log = FreeLog(self)
        objects: List[Any] = [
            ("query", Query.match("body", "quick")),
            ("query", Query.boolean(must=[Query.all()])),
            ("sort", quarry.SortSpec("year")),
            ("schema", corpus_schema()),
            ("doc", quarry.Doc()),
            ("searcher", quarry.Searcher(self.index)),
            ("hits", self.s.search(Query.all())),
            ("indexer", quarry.Indexer(self.index)),
            ("stats", self.s.export_stats([everything])),
            ("stats", quarry.Stats.merge([stats, stats])),
            ("searcher", quarry.Searcher.open_many([self.index, self.index])),
            ("searcher", self.s.with_stats(stats, 0)),
            ("hits", quarry.merge_hits([part])),
        ]
        for kind, obj in objects:
            ptr = obj._ptr
            obj.close()
            obj.close()
            del obj
            gc.collect()
            self.assertEqual(log.count(kind, ptr), 1, kind)
        self.assertTrue(all(n == 1 for n in log.freed.values()), log.freed)

    def test_garbage_collection_frees(self) -> None:
        log = FreeLog(self)
        q = Query.term("body", "fox")
        hits = self.s.search(q)
        qp, hp = q._ptr, hits._ptr
        hit = hits[0]
        del hits
        gc.collect()
        self.assertEqual(log.count("hits", hp), 0)  # a Hit keeps its Hits
        self.assertIn("fox", hit.stored("body"))
        del hit, q
        gc.collect()
        self.assertEqual((log.count("hits", hp), log.count("query", qp)), (1, 1))

    def test_context_managers_free(self) -> None:
        log = FreeLog(self)
        with quarry.Searcher(self.index) as s:
            sp = s._ptr
            with s.search(Query.all()) as hits:
                hp = hits._ptr
        self.assertEqual((log.count("searcher", sp), log.count("hits", hp)), (1, 1))
        del s, hits
        gc.collect()
        self.assertEqual((log.count("searcher", sp), log.count("hits", hp)), (1, 1))

    def test_statistics_made_from_bytes_for_a_merge_are_freed(self) -> None:
        with self.s.export_stats([Query.all()]) as mine:
            blob = mine.to_bytes()
            log = FreeLog(self)
            with quarry.Stats.merge([mine, blob, blob]):
                pass
        frees = Counter(name for name, _ in log.freed.elements())
        self.assertEqual(frees["quarry_stats_free"], 4)  # two parts read from bytes, the merge, mine

    def test_temporary_sort_specs_are_freed(self) -> None:
        log = FreeLog(self)
        with self.s.search(Query.all(), sort="year:desc,score"):
            pass
        self.assertEqual(sum(n for (name, _), n in log.freed.items() if name == "quarry_sort_free"), 1)
        spec = quarry.SortSpec("year")
        with self.s.search(Query.all(), sort=spec):
            pass
        self.assertFalse(spec.closed)  # a spec given is the caller's

    def test_failed_constructions_free_what_they_made(self) -> None:
        log = FreeLog(self)
        with self.assertRaises(quarry.InvalidUtf8Error):
            quarry.SortSpec("year", quarry.SortRule.by_field("\ud800"))  # the handle exists by then
        with self.assertRaises(quarry.InvalidArgumentError):
            quarry.Searcher(self.index, threads=0)
        frees = Counter(name for name, _ in log.freed.elements())
        self.assertEqual((frees["quarry_sort_free"], frees["quarry_searcher_free"]), (1, 1))
        schema = quarry.Schema().add_field("a", "text")
        old = schema._ptr
        with self.assertRaises(quarry.SchemaError):
            schema.add_field("t", "text", analyzer="klingon")  # rebuilt without the field
        self.assertEqual(log.count("schema", old), 1)
        self.assertEqual(log.count("schema", schema._ptr), 0)
        schema.add_field("t", "text", analyzer="english")  # the name is free again


class NeverWhileInUse(CorpusCase):
    def test_close_during_a_call_defers_the_free(self) -> None:
        log = FreeLog(self)
        q = Query.term("body", "quick")
        ptr = q._ptr
        with q._use():  # a call in flight
            q.close()
            self.assertEqual(log.count("query", ptr), 0)
            with self.assertRaises(quarry.ClosedError):
                self.s.search(q)
        self.assertEqual(log.count("query", ptr), 1)

    def test_concurrent_searches_while_closing(self) -> None:
        query = Query.match("body", "quick fox the sun")
        with self.s.search(query, limit=5) as h:
            want = [(x.doc, x.score_bits) for x in h]
        searcher = quarry.Searcher(self.index, exec_mode="auto")
        results: List[str] = []
        errors: List[BaseException] = []
        start = threading.Barrier(5)

        def worker() -> None:
            start.wait()
            try:
                for _ in range(300):
                    try:
                        with searcher.search(query, limit=5) as hits:
                            got = [(x.doc, x.score_bits) for x in hits]
                            results.append("same" if got == want else f"differs: {got}")
                            hits[0].stored("body")
                    except quarry.ClosedError:
                        results.append("closed")
                        return
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        start.wait()
        while len(results) < 40 and any(t.is_alive() for t in threads):
            time.sleep(0.001)
        searcher.close()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertTrue(set(results) <= {"same", "closed"}, set(results))
        self.assertGreaterEqual(results.count("same"), 40)

    def test_setters_and_searches_on_several_threads(self) -> None:
        query = Query.match("body", "quick brown")
        errors: List[BaseException] = []

        def searching() -> None:
            try:
                for _ in range(200):
                    with self.s.search(query) as hits:
                        if sorted(h["id"] for h in hits) != [1, 2, 4, 7]:
                            raise AssertionError([h["id"] for h in hits])
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        def setting() -> None:
            try:
                for i in range(200):
                    self.s.set_threads(1 + i % 3)
                    self.s.set_fast_path("bulk_and", "off" if i % 2 else "auto")
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=searching) for _ in range(3)] + [threading.Thread(target=setting)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_one_indexer_from_several_threads(self) -> None:
        ix = quarry.Indexer(self.index)
        errors: List[BaseException] = []

        def adding(base: int) -> None:
            try:
                for i in range(50):
                    ix.add({"id": base + i, "price": float(i)})
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=adding, args=(1000 * (k + 1),)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ix.commit()
        ix.close()
        self.assertEqual(errors, [])
        with quarry.Searcher(self.index) as s:
            self.assertEqual(s.doc_count, 8 + 150)


if __name__ == "__main__":
    unittest.main()
