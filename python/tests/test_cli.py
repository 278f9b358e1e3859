"""The package and the ``quarry search`` command on the same index: the
same documents, score bits, sort values and totals.

The index is the first part of ``data/sample.jsonl`` written through the
package in three commits with a deletion, so it has several segments and a
tombstone. The command is ``$QUARRY_CLI`` (``tests/python.rs`` sets it to
the build under test), else the checkout's release build.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import unittest
from typing import Any, Dict, Optional, Tuple

import quarry
from quarry import Query

from common import ROOT, SharedIndexCase, cli

DOCS = 2000


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def comparable(values: Any) -> Tuple[Any, ...]:
    """Sort values with floats as their f32 bits (the command prints score
    values as f32 decimals that read back to the same f32)."""
    return tuple(f32_bits(v) if isinstance(v, float) else v for v in values)


@unittest.skipUnless(cli(), "no quarry binary: set QUARRY_CLI or cargo build --release")
class SameAsTheCommand(SharedIndexCase):
    @classmethod
    def build(cls, path: str) -> None:
        schema = quarry.Schema.from_json((ROOT / "data" / "schema.json").read_text())
        lines = (ROOT / "data" / "sample.jsonl").read_text(encoding="utf-8").splitlines()[:DOCS]
        with schema, quarry.Indexer(path, schema) as ix:
            for n, line in enumerate(lines):
                ix.add(json.loads(line))
                if n in (700, 1400):
                    ix.commit()
            ix.delete("id", 5)

    def command(self, text: str, *args: str) -> Dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUARRY_") or k == "QUARRY_CLI"}
        out = subprocess.run(
            [cli() or "quarry", "search", self.index, text, "--format", "json", "--id-field", "id", *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def assert_same(
        self,
        query: Query,
        text: str,
        *args: str,
        limit: int = 10,
        offset: int = 0,
        sort: Optional[str] = None,
        total: quarry.Total = "exact",
    ) -> Dict[str, Any]:
        """Runs ``query`` here and ``text`` with ``args`` in the command,
        asserts the same page and total, and returns the command's answer."""
        want = self.command(text, "--k", str(limit), "--offset", str(offset), *args)
        with self.s.search(query, limit=limit, offset=offset, sort=sort, total=total) as hits:
            got = [(h.doc, h.score_bits) for h in hits]
            self.assertEqual(got, [(h["doc"], int(h["score_bits"], 16)) for h in want["hits"]], text)
            if sort:
                self.assertEqual(
                    [comparable(h.sort_values) for h in hits],
                    [comparable(h["sort_values"]) for h in want["hits"]],
                )
            self.assertEqual((hits.total, hits.total_is_exact), (want["total_hits"], want["total_is_exact"]))
            self.assertEqual([h.stored("id") for h in hits], [h["id"] for h in want["hits"]])
        self.assertTrue(got, f"{text}: no hits to compare")
        return want

    def test_match_queries(self) -> None:
        self.assert_same(Query.match("body", "elizabeth darcy"), "elizabeth darcy")
        self.assert_same(Query.match("body", "elizabeth darcy", "and"), "elizabeth darcy", "--op", "and")
        self.assert_same(Query.match("title", "chapter sense"), "chapter sense", "--field", "title")
        self.assert_same(Query.match("body", "marriage"), "marriage", limit=25)

    def test_phrases(self) -> None:
        self.assert_same(Query.phrase("body", "my dear"), "my dear", "--op", "phrase")
        self.assert_same(Query.phrase("body", "dear my", slop=2), "dear my", "--op", "phrase", "--slop", "2")

    def test_parsed_queries(self) -> None:
        text = 'happiness +"young man" -title:emma'
        self.assert_same(self.s.parse(text, "body"), text, "--parse")
        text = "sister year:[1811 TO 1813] OR mother^2"
        self.assert_same(self.s.parse(text, "body", "and"), text, "--parse", "--op", "and")

    def test_sorted_and_paged(self) -> None:
        q = Query.match("body", "letter sister")
        self.assert_same(q, "letter sister", "--sort", "year:desc,score", sort="year:desc,score")
        self.assert_same(
            q, "letter sister", "--sort", "category,doc:desc", sort="category,doc:desc", offset=7
        )
        whole = self.assert_same(q, "letter sister", limit=20)["hits"]
        page = self.assert_same(q, "letter sister", offset=10)["hits"]
        self.assertEqual([h["doc"] for h in page], [h["doc"] for h in whole[10:]])

    def test_counting_modes(self) -> None:
        q = Query.match("body", "the")
        # the inexact totals too are the same numbers
        self.assertFalse(
            self.assert_same(q, "the", "--total", "lower-bound", total="lower-bound")["total_is_exact"]
        )
        self.assertFalse(self.assert_same(q, "the", "--total", "100", total=100)["total_is_exact"])
        self.assertTrue(self.assert_same(q, "the")["total_is_exact"])


if __name__ == "__main__":
    unittest.main()
