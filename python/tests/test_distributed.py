"""quarry.distributed: the sample split into four shards on a LocalCluster
of two worker processes gives the hits one index of the whole sample
gives (documents, score bits, sort values, stored ids, totals), and the
shard placement, statistics and failures behave as documented.

The cluster tests need the ``distributed`` extra (``pip install
'./python[distributed]'``) and are skipped without it; ``import quarry``
must work without it either way. ``$QUARRY_SAMPLE_INDEXES`` may name a
directory holding ``whole`` and ``shard0`` .. ``shard3`` already built
from ``data/sample.jsonl`` (``tests/python.rs`` builds them with ``quarry
index``); without it they are built here.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import pickle
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional, Sequence, Tuple

import quarry
from quarry import Query

from common import build_index, build_shards, sample_docs, sample_schema

HAVE_DASK = importlib.util.find_spec("distributed") is not None
#: The reason the cluster tests give when they skip.
NO_DASK = "dask is not installed (pip install './python[distributed]')"
SHARDS = 4


class WithoutDask(unittest.TestCase):
    def test_import_quarry_needs_no_dask(self) -> None:
        code = (
            "import sys\n"
            "sys.modules['distributed'] = None\n"
            "sys.modules['dask'] = None\n"
            "import quarry\n"
            "print(sorted(m for m in sys.modules if m.startswith('quarry')))\n"
            "try:\n"
            "    import quarry.distributed\n"
            "except ImportError as e:\n"
            "    print(e)\n"
        )
        with tempfile.TemporaryDirectory() as cwd:
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
        self.assertEqual(r.returncode, 0, r.stderr)
        loaded, message = r.stdout.splitlines()
        self.assertNotIn("quarry.distributed", loaded)
        self.assertIn("pip install 'quarry[distributed]'", message)

    def test_importing_quarry_does_not_import_dask(self) -> None:
        code = "import sys, quarry; print('distributed' in sys.modules, 'dask' in sys.modules)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout.split()), (0, ["False", "False"]), r.stderr)


def signature(hits: Sequence[Any], stored: bool) -> List[Tuple[Any, ...]]:
    """Per hit what one index and the shards agree on: document, score
    bits, sort values and stored id (``hit["id"]`` of a :class:`quarry.Hit`,
    ``stored[0]`` of a RemoteHit)."""
    return [(h.doc, h.score_bits, h.sort_values, h.stored[0] if stored else h["id"]) for h in hits]


@unittest.skipUnless(HAVE_DASK, NO_DASK)
class OnALocalCluster(unittest.TestCase):
    _tmp: Optional["tempfile.TemporaryDirectory[str]"] = None
    whole: str
    shards: List[str]
    cluster: Any
    client: Any
    index: Any

    @classmethod
    def setUpClass(cls) -> None:
        from distributed import Client, LocalCluster

        from quarry.distributed import ShardedIndex

        given = os.environ.get("QUARRY_SAMPLE_INDEXES")
        if given:
            base = given
        else:
            cls._tmp = tempfile.TemporaryDirectory(prefix="quarry-py-")
            base = cls._tmp.name
        cls.whole = os.path.join(base, "whole")
        cls.shards = [os.path.join(base, f"shard{i}") for i in range(SHARDS)]
        if not given:
            docs = sample_docs()
            with sample_schema() as schema:
                build_index(cls.whole, schema, docs)
                build_shards(cls.shards, schema, docs)
        cls.cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        cls.client = Client(cls.cluster)
        cls.index = ShardedIndex(cls.client, cls.shards)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.index.close()
        cls.client.close()
        cls.cluster.close()
        if cls._tmp is not None:
            cls._tmp.cleanup()

    def setUp(self) -> None:
        self.one = quarry.Searcher(self.whole)
        self.many = quarry.Searcher.open_many(self.shards)
        self.addCleanup(self.one.close)
        self.addCleanup(self.many.close)

    def test_the_pages_of_one_index(self) -> None:
        from quarry.distributed import MatchQuery, ParsedQuery

        texts = ["dear sister", "young man", "army navy militia", "the", "zzzqqq", "fitzgerald"]
        runs: List[Tuple[List[Any], Dict[str, Any]]] = [
            ([MatchQuery("body", t, "and") for t in texts], {}),
            ([MatchQuery("body", t, "or") for t in texts], {"k": 15, "offset": 5}),
            ([MatchQuery("body", t) for t in texts], {"sort": "year:desc,score"}),
            (
                [MatchQuery("title", "chapter")],
                {"sort": ["category", quarry.SortRule.doc("desc")], "offset": 30},
            ),
            ([ParsedQuery('body:"my dear" OR title:letter', op="and"), ParsedQuery("marri*", "body")], {}),
        ]
        for specs, kw in runs:
            pages = self.index.search(specs, fields=["id"], **kw)
            self.assertEqual(len(pages), len(specs))
            for spec, got in zip(specs, pages):
                k, offset = kw.get("k", 10), kw.get("offset", 0)
                args = {"limit": k, "offset": offset, "sort": kw.get("sort"), "total": "exact"}
                with spec.build(self.one) as q, self.one.search(q, **args) as want, self.many.search(
                    q, **args
                ) as many:
                    self.assertEqual(signature(got.hits, True), signature(want, False), spec)
                    self.assertEqual((got.total, got.total_is_exact), (want.total, True), spec)
                    self.assertEqual(
                        [(h.shard, h.shard_doc, h.merge_key) for h in got.hits],
                        [(h.shard, h.shard_doc, h.merge_key) for h in many],
                    )
                    self.assertEqual([h.score for h in got.hits], [h.score for h in want])
        self.assertTrue(any(p.hits for p in pages))

    def test_each_shard_lives_on_one_worker(self) -> None:
        workers = sorted(self.client.scheduler_info()["workers"])
        self.assertEqual(len(workers), 2)
        self.assertEqual(self.index.placement, (workers[0], workers[1], workers[0], workers[1]))
        pids = self.index.shard_pids
        self.assertEqual((pids[0], pids[1]), (pids[2], pids[3]))
        self.assertNotEqual(pids[0], pids[1])
        self.assertNotIn(os.getpid(), pids)
        self.assertEqual(self.index.doc_count, self.one.doc_count)
        self.assertEqual(sum(self.index.shard_docs), self.many.doc_count)
        self.assertEqual(self.index.shard_count, SHARDS)

    def test_statistics_for_a_batch(self) -> None:
        from quarry.distributed import MatchQuery

        specs = [MatchQuery("body", "dear sister"), MatchQuery("body", "public debt", "and")]
        with self.index.stats(specs) as stats:
            self.assertEqual((stats.doc_count, stats.shard_count), (self.one.doc_count, SHARDS))
            queries = [s.build(self.many) for s in specs]
            with self.many.export_stats(queries) as direct:
                self.assertEqual(stats.to_bytes(), direct.to_bytes())
            for q in queries:
                q.close()
            first = self.index.search(specs, stats=stats, fields=["id"])
            self.assertEqual(self.index.search(specs, stats=stats, fields=["id"]), first)
            self.assertEqual(self.index.search(specs, fields=["id"]), first)
            self.assertFalse(stats.closed)  # given statistics are the caller's
            blobs = self.index.export_stats(specs)
            self.assertEqual(len(blobs), SHARDS)
            with quarry.Stats.merge(blobs) as merged:
                self.assertEqual(merged.to_bytes(), stats.to_bytes())
        page = first[0]
        self.assertEqual(pickle.loads(pickle.dumps(page)), page)

    def test_in_this_process_the_same_pages(self) -> None:
        from quarry.distributed import MatchQuery, ShardedIndex

        specs = [MatchQuery("body", t) for t in ("dear sister", "army navy militia", "zzzqqq")]
        with ShardedIndex(None, self.shards) as here:
            self.assertEqual(here.placement, ("this process",) * SHARDS)
            self.assertEqual(here.shard_pids, (os.getpid(),) * SHARDS)
            for kw in ({}, {"sort": "year:desc,score", "k": 4, "offset": 3}):
                self.assertEqual(
                    here.search(specs, fields=["id"], **kw), self.index.search(specs, fields=["id"], **kw)
                )

    def test_a_shards_failure_raises_its_error(self) -> None:
        from quarry.distributed import MatchQuery, ParsedQuery

        with self.assertRaises(quarry.SchemaError) as e:
            self.index.search([MatchQuery("nope", "x")])
        self.assertEqual(e.exception.status, quarry.Status.SCHEMA)
        with self.assertRaises(quarry.QuerySyntaxError) as syntax:
            self.index.search([ParsedQuery("body:(dear", "body")])
        self.assertIsNotNone(syntax.exception.position)
        with self.assertRaises(quarry.InvalidArgumentError):
            self.index.search([MatchQuery("body", "dear")], k=-1)
        # the shards go on serving
        self.assertEqual(len(self.index.search([MatchQuery("body", "dear")])[0].hits), 10)

    def test_merge_pages(self) -> None:
        from quarry.distributed import Page, RemoteHit, merge_pages

        a = RemoteHit(b"\x01", 0, 3, 3, 0x3F800000, (), ())
        b = RemoteHit(b"\x00\xff", 1, 0, 10, 0x40000000, (), (7,))
        merged = merge_pages([Page(1, True, (a,)), Page(1, False, (b,))], offset=0, limit=5)
        self.assertEqual(merged, Page(2, False, (b, a)))
        self.assertEqual((a.score, b.score), (1.0, 2.0))
        self.assertEqual(merge_pages([Page(5, True, (a,))], offset=0, limit=1).hits, (a,))
        with self.assertRaises(quarry.InvalidArgumentError):
            merge_pages([Page(5, True, (a,))], offset=1, limit=1)  # searched with too small a limit
        with self.assertRaises(quarry.InvalidArgumentError):
            merge_pages([])

    def test_refused(self) -> None:
        from quarry.distributed import MatchQuery, ShardedIndex

        with self.assertRaises(TypeError):
            ShardedIndex(self.client, self.shards[0])
        with self.assertRaises(quarry.InvalidArgumentError):
            ShardedIndex(self.client, [])
        with self.assertRaises(quarry.NoIndexError):
            ShardedIndex(self.client, [self.shards[0], self.shards[0] + "-missing"])
        second = sorted(self.client.scheduler_info()["workers"])[1:]
        with ShardedIndex(self.client, self.shards[:1], workers=second) as one:
            self.assertEqual(one.placement, tuple(second))
            got = one.search([MatchQuery("body", "dear")], fields=["id"])[0]
            with quarry.Searcher(self.shards[0]) as alone, alone.search(
                Query.match("body", "dear"), total="exact"
            ) as want:
                self.assertEqual(signature(got.hits, True), signature(want, False))
        with self.assertRaises(quarry.InvalidArgumentError):
            one.search([MatchQuery("body", "dear")])  # closed


if __name__ == "__main__":
    unittest.main()
