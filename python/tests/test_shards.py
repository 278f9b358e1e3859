"""Shards of one corpus: a searcher of several indexes, corpus statistics
exported, merged and imported, and shards' pages merged, each giving the
hits one index of the same documents gives (documents, score bits, sort
values, totals)."""

from __future__ import annotations

import os
import pickle
import tempfile
import unittest
from typing import Any, Dict, List, Tuple

import quarry
from quarry import Query

from common import TempDirCase, build_index, build_shards, corpus_schema, sample_docs, sample_schema

#: Documents of the sample in the corpus (its shards: 300, 300, 301 and
#: 301), and its shards.
DOCS = 1202
SHARDS = 4


def page(hits: quarry.Hits) -> List[Tuple[Any, ...]]:
    """What one index and its shards must agree on, per hit."""
    return [(h.doc, h.score_bits, h.sort_values, h["id"]) for h in hits]


#: (query, search arguments) pairs: ranked and, or, phrase and prefix
#: queries, sorted ones, and a page past the first.
def requests() -> List[Tuple[Query, Dict[str, Any]]]:
    return [
        (Query.match("body", "dear sister", "or"), {}),
        (Query.match("body", "young man", "and"), {"limit": 15, "offset": 5}),
        (Query.phrase("body", "my dear", 0), {}),
        (Query.prefix("body", "marri"), {"limit": 20}),
        (Query.match("body", "letter happiness", "or"), {"sort": "year:desc,score"}),
        (Query.match("title", "chapter"), {"sort": "category,doc:desc", "offset": 7}),
        (Query.match("body", "zzzqqq"), {}),
    ]


class ShardsAsOneIndex(unittest.TestCase):
    """The first :data:`DOCS` documents of the sample as one index and as
    :data:`SHARDS` shards split by document order."""

    _tmp: "tempfile.TemporaryDirectory[str]"
    whole: str
    shards: List[str]

    @classmethod
    def setUpClass(cls) -> None:
        cls._tmp = tempfile.TemporaryDirectory(prefix="quarry-py-")
        docs = sample_docs(DOCS)
        cls.whole = os.path.join(cls._tmp.name, "whole")
        cls.shards = [os.path.join(cls._tmp.name, f"shard{i}") for i in range(SHARDS)]
        with sample_schema() as schema:
            build_index(cls.whole, schema, docs)
            build_shards(cls.shards, schema, docs)

    @classmethod
    def tearDownClass(cls) -> None:
        cls._tmp.cleanup()

    def setUp(self) -> None:
        self.one = quarry.Searcher(self.whole)
        self.many = quarry.Searcher.open_many(self.shards)
        self.each = [quarry.Searcher(p) for p in self.shards]
        for s in [self.one, self.many, *self.each]:
            self.addCleanup(s.close)
        self.first_doc = [0]
        for s in self.each:
            self.first_doc.append(self.first_doc[-1] + s.doc_count)

    def test_one_searcher_of_every_shard(self) -> None:
        self.assertEqual((self.many.shard_count, self.one.shard_count), (SHARDS, 1))
        self.assertEqual(self.many.doc_count, DOCS)
        self.assertEqual(self.many.paths, tuple(os.fsencode(p) for p in self.shards))
        self.assertEqual(self.many.path, os.fsencode(self.shards[0]))
        self.assertEqual(quarry.Searcher(self.shards).paths, self.many.paths)  # a list opens shards too
        for q, kw in requests():
            with q, self.one.search(q, total="exact", **kw) as want, self.many.search(
                q, total="exact", **kw
            ) as got:
                self.assertEqual(page(got), page(want), repr(q))
                self.assertEqual((got.total, got.total_is_exact), (want.total, True))
                for h in got:
                    self.assertEqual(h.doc, self.first_doc[h.shard] + h.shard_doc)
                with self.each[0].search(q, total="exact", **kw) as alone:
                    self.assertTrue(all(h.shard == 0 and h.shard_doc == h.doc for h in alone))

    def test_reopen_keeps_every_shard(self) -> None:
        with self.many.reopen() as again:
            self.assertEqual((again.shard_count, again.paths), (SHARDS, self.many.paths))

    def exchange(self, queries: List[Query]) -> quarry.Stats:
        """Each shard's statistics, sent as bytes and merged in shard order."""
        blobs = []
        for s in self.each:
            with s.export_stats(queries) as mine:
                blobs.append(mine.to_bytes())
        return quarry.Stats.merge([quarry.Stats.from_bytes(b) for b in blobs])

    def test_the_statistics_exchange_gives_the_pages_of_one_index(self) -> None:
        reqs = requests()
        queries = [q for q, _ in reqs]
        with self.exchange(queries) as stats:
            self.assertEqual((stats.doc_count, stats.shard_count), (DOCS, SHARDS))
            with self.many.export_stats(queries) as direct:
                self.assertEqual(direct.to_bytes(), stats.to_bytes())
            scored = [s.with_stats(stats, i) for i, s in enumerate(self.each)]
        for s in scored:
            self.addCleanup(s.close)
        for q, kw in reqs:
            offset, limit = kw.pop("offset", 0), kw.pop("limit", 10)
            with self.one.search(q, total="exact", offset=offset, limit=limit, **kw) as want:
                parts = [s.search(q, total="exact", limit=offset + limit, **kw) for s in scored]
                for i, part in enumerate(parts):
                    self.assertTrue(all(h.shard == i for h in part))
                    self.assertTrue(all(h.doc == self.first_doc[i] + h.shard_doc for h in part))
                with quarry.merge_hits(parts, offset=offset, limit=limit) as merged:
                    self.assertEqual(page(merged), page(want), repr(q))  # stored ids read through the parts
                    self.assertEqual((merged.total, merged.total_is_exact), (want.total, True))
                    self.assertEqual(merged.offset, offset)
                    by_key = sorted((h for p in parts for h in p), key=lambda h: h.merge_key)
                    window = by_key[offset : offset + limit]
                    self.assertEqual(
                        [(h.shard, h.shard_doc) for h in window], [(h.shard, h.shard_doc) for h in merged]
                    )
                    self.assertEqual([h.merge_key for h in window], [h.merge_key for h in merged])
                for part in parts:
                    part.close()
            q.close()

    def test_a_shard_alone_scores_otherwise(self) -> None:
        q = Query.match("body", "dear sister")
        with self.exchange([q]) as stats, self.each[1].with_stats(stats, 1) as scored:
            with scored.search(q) as corpus, self.each[1].search(q) as alone:
                self.assertEqual([h.shard_doc for h in corpus][:1], [h.shard_doc for h in alone][:1])
                self.assertNotEqual([h.score_bits for h in corpus], [h.score_bits for h in alone])
            with scored.reopen() as again, again.search(q) as reopened, scored.search(q) as before:
                self.assertEqual(page(reopened), page(before))  # reopen keeps the statistics

    def test_statistics_travel_as_bytes_and_pickles(self) -> None:
        q = Query.match("body", "dear sister")
        with self.each[0].export_stats([q]) as a, self.each[1].export_stats([q]) as b:
            blob = bytes(a)
            self.assertEqual(blob, a.to_bytes())
            with pickle.loads(pickle.dumps(a)) as copy:
                self.assertEqual(copy.to_bytes(), blob)
                self.assertEqual((copy.doc_count, copy.shard_count), (a.doc_count, 1))
            with quarry.Stats.merge([a, b.to_bytes()]) as mixed, quarry.Stats.merge([a, b]) as plain:
                self.assertEqual(mixed.to_bytes(), plain.to_bytes())  # a part may be its bytes
                self.assertEqual(plain.doc_count, a.doc_count + b.doc_count)
                with quarry.Stats.merge([plain, plain]) as twice:
                    self.assertEqual(twice.shard_count, 4)
            self.assertIn("1 shard(s)", repr(a))

    def test_statistics_refused(self) -> None:
        q = Query.match("body", "dear sister")
        with self.each[0].export_stats([q]) as mine:
            blob = mine.to_bytes()
            with self.assertRaises(quarry.CorruptError) as e:
                quarry.Stats.from_bytes(blob[:-1])
            self.assertEqual(e.exception.status, quarry.Status.CORRUPT)
            damaged = bytearray(blob)
            damaged[len(blob) // 2] ^= 0x40
            with self.assertRaises(quarry.CorruptError):
                quarry.Stats.from_bytes(damaged)
            with self.assertRaises(quarry.InvalidArgumentError):
                self.each[0].with_stats(mine, 1)  # no shard 1
            with self.assertRaises(quarry.InvalidArgumentError):
                self.each[3].with_stats(mine, 0)  # shard 0 holds another number of documents
            with self.assertRaises(quarry.InvalidArgumentError):
                self.many.with_stats(mine, 0)  # a searcher of several shards
            with self.each[0].with_stats(mine, 0) as scored:
                with self.assertRaises(quarry.InvalidArgumentError) as lacking:
                    scored.search(Query.match("body", "letter"))  # not exported for
                self.assertEqual(lacking.exception.status, quarry.Status.INVALID_ARGUMENT)
                with self.assertRaises(quarry.InvalidArgumentError):
                    scored.export_stats([q])
            with self.each[1].export_stats([Query.match("body", "letter")]) as other:
                with self.assertRaises(quarry.InvalidArgumentError):
                    quarry.Stats.merge([mine, other])  # other queries
        with self.assertRaises(quarry.InvalidArgumentError):
            quarry.Stats.merge([])
        with self.assertRaises(quarry.SchemaError):
            self.each[0].export_stats([Query.match("nope", "x")])
        with self.assertRaises(TypeError):
            self.each[0].export_stats(q)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            quarry.Stats.from_bytes("text")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            self.each[0].with_stats(blob, 0)  # type: ignore[arg-type]

    def test_pages_refused_by_the_merge(self) -> None:
        q = Query.match("body", "dear sister")
        with self.exchange([q]) as stats:
            a, b = self.each[0].with_stats(stats, 0), self.each[1].with_stats(stats, 1)
        with a, b, a.search(q) as pa, a.search(q, offset=1) as shifted, b.search(q, sort="year") as sorted_b:
            with b.search(q) as pb, quarry.merge_hits([pa, pb], limit=5) as ok:
                self.assertEqual(len(ok), 5)
            for parts in ([pa, shifted], [pa, sorted_b], [pa, pa], []):
                with self.assertRaises(quarry.InvalidArgumentError):
                    quarry.merge_hits(parts)
            with self.assertRaises(TypeError):
                quarry.merge_hits(pa)  # type: ignore[arg-type]
            with self.assertRaises(TypeError):
                quarry.merge_hits([pa, "hits"])  # type: ignore[list-item]


class ShardsRefused(TempDirCase):
    def test_open_many_refuses(self) -> None:
        a, b = self.path("a"), self.path("b")
        with sample_schema() as schema:
            build_index(a, schema, sample_docs(3))
        with corpus_schema() as other:
            build_index(b, other, [{"id": 1, "body": "fox"}])
        with self.assertRaises(quarry.SchemaError) as e:
            quarry.Searcher.open_many([a, b])
        self.assertEqual(e.exception.status, quarry.Status.SCHEMA)
        with self.assertRaises(quarry.InvalidArgumentError):
            quarry.Searcher.open_many([])
        with self.assertRaises(quarry.NoIndexError):
            quarry.Searcher.open_many([a, self.path("missing")])
        with self.assertRaises(TypeError):
            quarry.Searcher.open_many(a)  # a str is no list of paths
        with self.assertRaises(TypeError):
            quarry.Searcher(3)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
