"""Shared pieces of the package's tests: a small corpus whose answers are
known by hand, index builders, and where the repository's files are.

Run from the repository root (with the package installed, not from
``python/src``)::

    python -m unittest discover -s python/tests -t python/tests

``QUARRY_CLI`` names the ``quarry`` binary for the CLI comparison;
``tests/python.rs`` sets it (and installs the package into a fresh venv).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import quarry

#: The repository root (the tests read its header and sample data).
ROOT = Path(__file__).resolve().parents[2]

#: The hand-checked corpus: id -> (body, year, category, price). Each query
#: test states its expected ids from these texts.
CORPUS: Dict[int, tuple] = {
    1: ("the quick brown fox jumps over the lazy dog", 2001, "animals", 9.5),
    2: ("quick quick quick brown", 1999, "animals", 3.0),
    3: ("a lazy afternoon in the sun", 2010, "leisure", 12.25),
    4: ("brown bread and butter", 2005, "food", -1.5),
    5: ("the fox and the hound", 1981, "animals", None),
    6: ("sun and moon and stars", 2020, "sky", 0.0),
    7: ("quick thinking saves the day", None, "leisure", 7.0),
    8: ("jumping foxes quickly", 2015, None, 100.0),
}


def corpus_schema() -> quarry.Schema:
    """id (stored, indexed i64), body (stored text), year (stored, sortable
    i64), cat (stored, indexed, sortable string), price (stored, sortable
    f64), note (a text field without positions, never given a value)."""
    s = quarry.Schema()
    s.add_field("id", "i64", stored=True, indexed=True)
    s.add_field("body", "text", stored=True)
    s.add_field("year", "i64", stored=True, sortable=True)
    s.add_field("cat", "string", stored=True, indexed=True, sortable=True)
    s.add_field("price", "f64", stored=True, sortable=True)
    s.add_field("note", "text", positions=False)
    return s


def corpus_doc(i: int) -> Dict[str, object]:
    body, year, cat, price = CORPUS[i]
    return {"id": i, "body": body, "year": year, "cat": cat, "price": price}


def build_corpus(path: str, segments: int = 1) -> None:
    """Indexes :data:`CORPUS` in id order, in ``segments`` commits (so the
    index has that many segments; document number = id - 1)."""
    ids = sorted(CORPUS)
    with corpus_schema() as schema, quarry.Indexer(path, schema) as ix:
        for n, i in enumerate(ids):
            ix.add(corpus_doc(i))
            if segments > 1 and (n + 1) % -(-len(ids) // segments) == 0:
                ix.commit()


def sample_docs(limit: Optional[int] = None) -> List[Dict[str, Any]]:
    """The documents of ``data/sample.jsonl`` in file order (the first
    ``limit``)."""
    lines = (ROOT / "data" / "sample.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:limit]]


def sample_schema() -> quarry.Schema:
    """``data/schema.json``, the sample's schema."""
    return quarry.Schema.from_json((ROOT / "data" / "schema.json").read_text())


def build_index(path: str, schema: quarry.Schema, docs: Iterable[Mapping[str, Any]]) -> None:
    """Indexes ``docs`` in order at ``path``, in one commit."""
    with quarry.Indexer(path, schema) as ix:
        for d in docs:
            ix.add(d)


def build_shards(paths: Sequence[str], schema: quarry.Schema, docs: Sequence[Mapping[str, Any]]) -> None:
    """Splits ``docs`` by document order into ``len(paths)`` slices as
    even as can be and indexes slice ``i`` at ``paths[i]``: the shards of
    one corpus."""
    n = len(paths)
    for i, path in enumerate(paths):
        build_index(path, schema, docs[i * len(docs) // n : (i + 1) * len(docs) // n])


#: The skipping corpus (as ffi-tests/lifecycle.c builds it): BIG_DOCS
#: documents with "alpha", the even ones with "beta"; the first 20 hold both
#: four times in a short body, so they fill a page of 10 and every later
#: block is beaten, which the lower-bound counting modes skip.
BIG_DOCS = 3000


def build_big(path: str) -> None:
    s = quarry.Schema().add_field("id", "i64", stored=True, indexed=True).add_field("body", "text")
    with s, quarry.Indexer(path, s) as ix:
        doc = quarry.Doc()
        for i in range(BIG_DOCS):
            tf = 4 if i < 20 else 1
            words = ["alpha"] * tf + (["beta"] * tf if i % 2 == 0 else [])
            if i >= 20:
                words += ["filler"] * (1 + i % 7)
            ix.add(doc.clear().add_i64("id", i).add_text("body", " ".join(words)))
        doc.close()


def ids(hits: Iterable[quarry.Hit]) -> List[int]:
    """The stored ids of ``hits``, in order."""
    return [h["id"] for h in hits]  # type: ignore[misc]


def signature(hits: quarry.Hits) -> List[tuple]:
    """What must agree bit for bit between two searches: per hit the
    document, the score's bits and the sort values."""
    return [(h.doc, h.score_bits, h.sort_values) for h in hits]


class TempDirCase(unittest.TestCase):
    """A test case with a fresh directory per test (``self.dir``)."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="quarry-py-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)


class SharedIndexCase(unittest.TestCase):
    """A test case whose tests share one index, made once by :meth:`build`
    in a temporary directory (``cls.index``), with a searcher on it
    (``cls.s``) opened with ``searcher_options``."""

    index: str
    s: quarry.Searcher
    searcher_options: Dict[str, Any] = {}
    _tmp: "tempfile.TemporaryDirectory[str]"

    @classmethod
    def build(cls, path: str) -> None:
        raise NotImplementedError

    @classmethod
    def setUpClass(cls) -> None:
        cls._tmp = tempfile.TemporaryDirectory(prefix="quarry-py-")
        cls.index = os.path.join(cls._tmp.name, "index")
        cls.build(cls.index)
        cls.s = quarry.Searcher(cls.index, **cls.searcher_options)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.s.close()
        cls._tmp.cleanup()


class CorpusCase(TempDirCase):
    """A test case with :data:`CORPUS` indexed in two segments and a
    searcher on it (``self.s``) running the fast paths."""

    segments = 2

    def setUp(self) -> None:
        super().setUp()
        self.index = self.path("corpus")
        build_corpus(self.index, self.segments)
        self.s = quarry.Searcher(self.index, exec_mode="auto")
        self.addCleanup(self.s.close)

    def search_ids(self, query: quarry.Query, **kw: object) -> List[int]:
        with self.s.search(query, limit=100, total="exact", **kw) as hits:  # type: ignore[arg-type]
            return ids(hits)

    def assert_matches(self, query: quarry.Query, expected: Iterable[int], **kw: object) -> None:
        """The query matches exactly ``expected`` (in any order), with an
        exact total, on every execution path with the same hits."""
        got = self.search_ids(query, **kw)
        self.assertEqual(sorted(got), sorted(expected), repr(query))
        with self.s.search(query, limit=100, total="exact", **kw) as reference:  # type: ignore[arg-type]
            self.assertEqual(reference.total, len(got))
            self.assertTrue(reference.total_is_exact)
            for mode in ("exhaustive", "daat"):
                with quarry.Searcher(self.index, exec_mode=mode) as other:
                    with other.search(query, limit=100, total="exact", **kw) as h:  # type: ignore[arg-type]
                        self.assertEqual(signature(h), signature(reference), f"{query!r} on {mode}")


def cli() -> Optional[str]:
    """The ``quarry`` binary to compare with: ``$QUARRY_CLI``, else the
    checkout's release build when present."""
    env = os.environ.get("QUARRY_CLI")
    if env:
        return env
    built = ROOT / "target" / "release" / "quarry"
    return str(built) if built.exists() else None
