"""Searching: sorted search and sort values, paging, counting modes, stored
fields, highlighting, search threads, execution paths, reopening."""

from __future__ import annotations

import unittest

import quarry
from quarry import Query, SortRule, SortSpec

from common import (
    BIG_DOCS,
    CORPUS,
    CorpusCase,
    SharedIndexCase,
    TempDirCase,
    build_big,
    build_corpus,
    build_index,
    ids,
    signature,
)


class Sorting(CorpusCase):
    def test_by_field_missing_values_last_in_both_directions(self) -> None:
        self.assertEqual(self.search_ids(Query.all(), sort="year:desc"), [6, 8, 3, 4, 1, 2, 5, 7])
        self.assertEqual(self.search_ids(Query.all(), sort="year"), [5, 2, 1, 4, 3, 8, 6, 7])
        self.assertEqual(
            self.search_ids(Query.all(), sort=[SortRule.by_field("price", "desc")]), [8, 3, 1, 7, 2, 6, 4, 5]
        )

    def test_several_rules_and_their_sort_values(self) -> None:
        with self.s.search(
            Query.all(), limit=100, sort=SortSpec("cat", SortRule.by_field("year", "desc"))
        ) as hits:
            self.assertEqual(ids(hits), [1, 2, 5, 4, 3, 7, 6, 8])
            self.assertEqual(
                [h.sort_values for h in hits],
                [
                    ("animals", 2001),
                    ("animals", 1999),
                    ("animals", 1981),
                    ("food", 2005),
                    ("leisure", 2010),
                    ("leisure", None),
                    ("sky", 2020),
                    (None, 2015),
                ],
            )

    def test_score_and_doc_rules(self) -> None:
        q = Query.match("body", "quick fox")
        with self.s.search(q) as by_score, self.s.search(q, sort="score,doc:desc") as spelled:
            self.assertEqual([h.doc for h in spelled], [h.doc for h in by_score])
            for h in spelled:
                score, doc = h.sort_values
                self.assertIsInstance(score, float)
                self.assertEqual(score, h.score)
                self.assertEqual(doc, h.doc)
        self.assertEqual(self.search_ids(Query.all(), sort="doc:desc"), [8, 7, 6, 5, 4, 3, 2, 1])
        with self.s.search(q) as ranked:
            self.assertEqual(len({h.score for h in ranked}), len(ranked))  # no ties
        self.assertEqual(self.search_ids(q, sort="score:asc"), self.search_ids(q)[::-1])

    def test_ties_go_to_the_lower_document(self) -> None:
        self.assertEqual(self.search_ids(Query.term("cat", "animals"), sort="cat"), [1, 2, 5])

    def test_scores_only_when_asked(self) -> None:
        q = Query.match("body", "quick fox")
        with self.s.search(q, sort="year") as untracked:
            self.assertEqual({h.score for h in untracked}, {0.0})
        spec = SortSpec("year", track_scores=True)
        with self.s.search(q) as ranked, self.s.search(q, sort=spec) as tracked:
            bits = {h.doc: h.score_bits for h in ranked}
            self.assertEqual({h.doc: h.score_bits for h in tracked}, bits)
            self.assertEqual([h.sort_values[0] for h in tracked], [1981, 1999, 2001, None])

    def test_sort_parsing(self) -> None:
        self.assertEqual(
            [str(r) for r in SortRule.parse("year:desc, score ,doc,cat:asc")],
            ["year:desc", "score:desc", "doc:asc", "cat:asc"],
        )
        with self.assertRaises(quarry.InvalidArgumentError):
            SortRule.parse("year:sideways")
        with self.assertRaises(quarry.InvalidArgumentError):
            SortRule.parse("year,,score")

    def test_unsortable_or_unknown_fields(self) -> None:
        for field in ("body", "id", "nope"):
            with self.assertRaises(quarry.SchemaError):
                self.s.search(Query.all(), sort=field)

    def test_a_spec_is_reusable(self) -> None:
        spec = SortSpec("price:desc")
        with spec:
            a = self.search_ids(Query.all(), sort=spec)
            self.assertEqual(a, self.search_ids(Query.all(), sort=spec))
        self.assertTrue(spec.closed)
        with self.assertRaises(quarry.ClosedError):
            self.s.search(Query.all(), sort=spec)


class Paging(CorpusCase):
    def test_pages_concatenate_to_the_whole(self) -> None:
        for sort in (None, "year:desc", "cat,price"):
            q = Query.boolean(should=[Query.all(), Query.match("body", "the quick sun")])
            with self.s.search(q, limit=100, sort=sort) as whole:
                pages = []
                for offset in range(0, 9, 3):
                    with self.s.search(q, offset=offset, limit=3, sort=sort) as page:
                        self.assertEqual(page.total, 8)
                        self.assertEqual(page.offset, offset)
                        pages += signature(page)
                self.assertEqual(pages, signature(whole), sort)

    def test_past_the_end_and_empty_pages(self) -> None:
        with self.s.search(Query.all(), offset=100) as hits:
            self.assertEqual((len(hits), hits.total, list(hits)), (0, 8, []))
        with self.s.search(Query.all(), limit=0) as hits:
            self.assertEqual((len(hits), hits.total), (0, 8))
        with self.s.search(Query.all(), limit=2**64 - 1) as hits:
            self.assertEqual(len(hits), 8)

    def test_hits_are_a_sequence(self) -> None:
        with self.s.search(Query.all(), limit=5, sort="doc") as hits:
            self.assertEqual(len(hits), 5)
            self.assertEqual([h.doc for h in hits[1:3]], [1, 2])
            self.assertEqual(hits[-1].doc, 4)
            self.assertEqual([h.index for h in hits], list(range(5)))
            with self.assertRaises(IndexError):
                hits[5]
            self.assertIn("5 of 8", repr(hits))

    def test_bad_page_arguments(self) -> None:
        for kw in ({"limit": -1}, {"offset": -1}, {"limit": 2**64}):
            with self.assertRaises(quarry.InvalidArgumentError):
                self.s.search(Query.all(), **kw)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            self.s.search(Query.all(), limit=2.5)  # type: ignore[arg-type]


class Totals(SharedIndexCase):
    searcher_options = {"exec_mode": "auto"}

    @classmethod
    def build(cls, path: str) -> None:
        build_big(path)

    def test_counting_modes(self) -> None:
        cases = [
            (Query.match("body", "alpha"), BIG_DOCS),
            (Query.match("body", "alpha beta"), BIG_DOCS),
            (Query.match("body", "alpha beta", "and"), BIG_DOCS // 2),
        ]
        for q, n in cases:
            with self.s.search(q, total="exact") as exact:
                self.assertEqual((exact.total, exact.total_is_exact), (n, True))
                self.assertEqual(len(exact), 10)
                with self.s.search(q, total=quarry.TOTAL_EXACT) as same:
                    self.assertEqual(same.total, n)
                # lower bound: the later blocks are skipped uncounted, and it says so
                with self.s.search(q, total="lower-bound") as lower:
                    self.assertFalse(lower.total_is_exact)
                    self.assertTrue(10 <= lower.total < n, lower.total)
                    self.assertEqual(signature(lower), signature(exact))
                    self.assertIn(f"of {lower.total}+", repr(lower))
                # at least N: exact up to N, then a flagged lower bound
                with self.s.search(q, total=5) as five:
                    self.assertFalse(five.total_is_exact)
                    self.assertTrue(5 <= five.total < n)
                    self.assertEqual(signature(five), signature(exact))
                with self.s.search(q) as default:  # TOTAL_DEFAULT
                    self.assertTrue(quarry.TOTAL_DEFAULT <= default.total <= n)
                    self.assertEqual(default.total_is_exact, default.total == n)
                    self.assertEqual(signature(default), signature(exact))
                with self.s.search(q, total=n + 1) as above:  # fewer matches than N: exact
                    self.assertEqual((above.total, above.total_is_exact), (n, True))

    def test_switched_off_paths_count_everything(self) -> None:
        q = Query.match("body", "alpha")
        with quarry.Searcher(self.index, exec_mode="auto", fast_paths={"term_topk": "off"}) as off:
            self.assertEqual(off.fast_path(quarry.FastPath.TERM_TOPK), quarry.Switch.OFF)
            self.assertEqual(self.s.fast_path("term-topk"), quarry.Switch.AUTO)
            with off.search(q, total="lower-bound") as h, self.s.search(q, total="exact") as exact:
                self.assertEqual((h.total, h.total_is_exact), (BIG_DOCS, True))
                self.assertEqual(signature(h), signature(exact))
            off.set_fast_path("term_topk", quarry.Switch.AUTO)
            with off.search(q, total="lower-bound") as h:
                self.assertFalse(h.total_is_exact)

    def test_bad_totals(self) -> None:
        for bad in (-1, 2**64, "approximately"):
            with self.assertRaises(quarry.InvalidArgumentError):
                self.s.search(Query.all(), total=bad)


class StoredFields(CorpusCase):
    def test_values_by_type(self) -> None:
        with self.s.search(Query.all(), limit=100, sort="doc") as hits:
            for h in hits:
                body, year, cat, price = CORPUS[h["id"]]  # type: ignore[index]
                self.assertEqual(h.stored("body"), body)
                self.assertEqual(h.stored("year"), year)
                self.assertEqual(h.stored("cat"), cat)
                self.assertEqual(h.stored("price"), price)
                self.assertIsInstance(h["id"], int)

    def test_missing_values(self) -> None:
        with self.s.search(Query.term("id", 7)) as hits:
            h = hits[0]
            self.assertIsNone(h.stored("year"))
            self.assertEqual(h.stored("year", -1), -1)
            with self.assertRaises(quarry.NoValueError) as e:
                h["year"]
            self.assertIsInstance(e.exception, KeyError)
            self.assertIn("no value", str(e.exception))

    def test_unknown_and_unstored_fields(self) -> None:
        with self.s.search(Query.all()) as hits:
            with self.assertRaises(quarry.SchemaError) as e:
                hits[0].stored("nope")
            self.assertIn("nope", e.exception.message)
            with self.assertRaises(quarry.SchemaError) as e:
                hits[0].stored("note")
            self.assertIn("not stored", e.exception.message)

    def test_unicode_round_trip(self) -> None:
        text = "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001f600 end"
        with quarry.Indexer(self.index) as ix:
            ix.add(quarry.Doc().add_i64("id", 9).add_text("body", text).add_string("cat", "\u00e9t\u00e9"))
        q = Query.match("body", "CAF\u00c9 \u65e5\u672c\u8a9e", "and")
        with quarry.Searcher(self.index) as s, s.search(q) as hits:
            self.assertEqual(ids(hits), [9])
            self.assertEqual(hits[0].stored("body"), text)
            self.assertEqual(hits[0].stored("cat"), "\u00e9t\u00e9")

    def test_hits_outlive_their_searcher_but_not_their_close(self) -> None:
        with quarry.Searcher(self.index) as s:
            hits = s.search(Query.term("id", 3))
        self.assertEqual(hits[0].stored("body"), CORPUS[3][0])
        hit = hits[0]
        hits.close()
        self.assertEqual(hit.doc, 2)  # read at search time
        with self.assertRaises(quarry.ClosedError):
            hit.stored("body")


class Highlighting(CorpusCase):
    def test_excerpts_mark_the_matches(self) -> None:
        q = Query.match("body", "quick fox")
        with self.s.search(q) as hits:
            by_id = {h["id"]: h for h in hits}
            self.assertEqual(
                by_id[1].highlight("body"), "the <b>quick</b> brown <b>fox</b> jumps over the lazy dog"
            )
            self.assertEqual(by_id[5].highlight("body", pre="[", post="]"), "the [fox] and the hound")
            # another query than the one searched
            self.assertEqual(
                by_id[1].highlight("body", Query.term("body", "lazy")),
                "the quick brown fox jumps over the <b>lazy</b> dog",
            )

    def test_the_limit_cuts_with_an_ellipsis(self) -> None:
        with self.s.search(Query.term("body", "dog")) as hits:
            ex = hits[0].highlight("body", max_len=12)
            self.assertIn("<b>dog</b>", ex)
            self.assertTrue(ex.startswith("\u2026"), ex)
            self.assertLessEqual(
                len(ex.replace("<b>", "").replace("</b>", "").replace("\u2026", "").encode()), 12
            )

    def test_escaping_and_the_ellipsis(self) -> None:
        with self.s.search(Query.term("body", "dog")) as hits:
            # The ellipsis as given; the limit counts stored bytes.
            self.assertEqual(
                hits[0].highlight("body", pre="<em>", post="</em>", ellipsis=" [...] ", max_len=12),
                " [...] the lazy <em>dog</em>",
            )
        path = self.path("specials")
        with quarry.Schema().add_field("body", "text", stored=True) as schema:
            build_index(path, schema, [{"body": "Tom & Jerry: \"<fox>\" isn't 'fox' > cat."}])
        with quarry.Searcher(path) as s, s.search(Query.term("body", "fox")) as hits:
            hit = hits[0]
            self.assertEqual(hit.highlight("body"), "Tom & Jerry: \"<<b>fox</b>>\" isn't '<b>fox</b>' > cat.")
            self.assertEqual(hit.highlight("body", escape="none"), hit.highlight("body"))
            want = "Tom &amp; Jerry: &quot;&lt;<b>fox</b>&gt;&quot; isn&#39;t &#39;<b>fox</b>&#39; &gt; cat."
            self.assertEqual(hit.highlight("body", escape="html"), want)
            self.assertEqual(hit.highlight("body", escape=quarry.Escape.HTML), want)
            # The markers and the ellipsis are not escaped.
            jerry = Query.term("body", "jerry")
            self.assertEqual(
                hit.highlight("body", jerry, ellipsis="<i>~</i>", escape="html", max_len=14),
                "<i>~</i>&amp; <b>Jerry</b>:<i>~</i>",
            )

    def test_string_fields_are_one_token(self) -> None:
        with self.s.search(Query.term("cat", "leisure")) as hits:
            self.assertEqual(sorted(h["id"] for h in hits), [3, 7])
            self.assertEqual(hits[0].highlight("cat"), "<b>leisure</b>")
            self.assertEqual(hits[0].highlight("cat", Query.term("cat", "Leisure")), "leisure")
            self.assertEqual(hits[0].highlight("cat", max_len=4), "<b>leis</b>\u2026")

    def test_highlight_errors(self) -> None:
        with self.s.search(Query.term("id", 7)) as hits:
            with self.assertRaises(quarry.SchemaError):
                hits[0].highlight("year")  # an i64 field
            with self.assertRaises(quarry.SchemaError):
                hits[0].highlight("note")  # not stored
            with self.assertRaises(quarry.InvalidArgumentError):
                hits[0].highlight("body", max_len=0)
            with self.assertRaises(quarry.InvalidUtf8Error):
                hits[0].highlight("body", pre="\udc80")
            with self.assertRaises(quarry.InvalidUtf8Error):
                hits[0].highlight("body", ellipsis="\udc80")
            with self.assertRaises(quarry.InvalidArgumentError):
                hits[0].highlight("body", escape="xml")


class ThreadsAndPaths(TempDirCase):
    def test_the_same_hits_on_every_thread_count_and_path(self) -> None:
        index = self.path("corpus4")
        build_corpus(index, segments=4)
        queries = [
            Query.match("body", "quick fox the"),
            Query.match("body", "the sun", "and"),
            Query.phrase("body", "quick brown"),
            Query.boolean(must=[Query.all()], must_not=[Query.term("body", "the")]),
        ]
        with quarry.Searcher(index, exec_mode="exhaustive") as oracle:
            self.assertEqual(oracle.exec_mode, quarry.ExecMode.EXHAUSTIVE)
            for q in queries:
                for sort in (None, "year:desc"):
                    with oracle.search(q, limit=5, sort=sort, total="exact") as want:
                        for threads in (1, 3):
                            with quarry.Searcher(index, exec_mode="auto", threads=threads) as s:
                                with s.search(q, limit=5, sort=sort, total="exact") as got:
                                    self.assertEqual(signature(got), signature(want), (q, sort, threads))
                                    self.assertEqual(got.total, want.total)

    def test_bad_settings(self) -> None:
        index = self.path("c")
        build_corpus(index)
        with quarry.Searcher(index) as s:
            for call in (
                lambda: s.set_threads(0),
                lambda: s.set_max_expansions(0),
                lambda: s.set_exec_mode("fastest"),
            ):
                with self.assertRaises(quarry.InvalidArgumentError):
                    call()
            with self.assertRaises(quarry.InvalidArgumentError):
                s.set_fast_path("bulk_and", "sometimes")
            s.set_exec_mode(quarry.ExecMode.DAAT)
            self.assertEqual(s.exec_mode, quarry.ExecMode.DAAT)
            with s.reopen() as again:
                self.assertEqual(again.exec_mode, quarry.ExecMode.DAAT)  # inherited

    def test_no_mmap_gives_the_same_hits(self) -> None:
        index = self.path("c")
        build_corpus(index, segments=2)
        q = Query.match("body", "quick lazy sun")
        with quarry.Searcher(index) as mapped, quarry.Searcher(index, mmap=False) as heap:
            with mapped.search(q) as a, heap.search(q) as b:
                self.assertEqual(signature(a), signature(b))
                self.assertGreater(len(a), 0)


class Reopening(TempDirCase):
    def test_commits_are_seen_by_reopen_only(self) -> None:
        index = self.path("c")
        build_corpus(index)
        with quarry.Searcher(index) as s:
            self.assertEqual(s.doc_count, 8)
            gen = s.generation
            with quarry.Indexer(index) as ix:
                ix.delete("id", 3)
                ix.delete("cat", "sky")
            self.assertEqual(s.doc_count, 8)  # its snapshot
            with s.reopen() as fresh:
                self.assertEqual(fresh.doc_count, 6)
                self.assertGreater(fresh.generation, gen)
                with fresh.search(Query.all(), limit=100) as hits:
                    self.assertEqual(sorted(ids(hits)), [1, 2, 4, 5, 7, 8])
            self.assertEqual(s.doc_count, 8)


if __name__ == "__main__":
    unittest.main()
