"""Every query constructor against the hand-checked corpus (common.CORPUS),
each on every execution path with the same hits."""

from __future__ import annotations

import math
import struct
import unittest

import quarry
from quarry import Query

from common import CorpusCase, signature


class TermAndMatch(CorpusCase):
    def test_term_on_text_string_and_i64_fields(self) -> None:
        self.assert_matches(Query.term("body", "quick"), [1, 2, 7])  # not "quickly"
        self.assert_matches(Query.term("cat", "animals"), [1, 2, 5])
        self.assert_matches(Query.term("id", 5), [5])
        self.assert_matches(Query.term("body", "Quick"), [])  # terms are not analysed

    def test_match_or_and_and(self) -> None:
        self.assert_matches(Query.match("body", "quick fox"), [1, 2, 5, 7])
        self.assert_matches(Query.match("body", "QUICK, Fox!", "and"), [1])
        self.assert_matches(Query.match("body", "quick fox", quarry.Operator.AND), [1])
        self.assert_matches(Query.match("body", "quick nothing", "and"), [])

    def test_match_scores_rank_by_bm25(self) -> None:
        with self.s.search(Query.match("body", "quick"), limit=3) as hits:
            # "quick quick quick brown": the highest term frequency in a short body.
            self.assertEqual(hits[0]["id"], 2)
            scores = [h.score for h in hits]
            self.assertEqual(scores, sorted(scores, reverse=True))
            self.assertTrue(all(s > 0 for s in scores))

    def test_score_bits_are_the_f32_of_the_score(self) -> None:
        with self.s.search(Query.match("body", "lazy sun dog")) as hits:
            self.assertGreater(len(hits), 0)
            for h in hits:
                self.assertEqual(struct.unpack("<I", struct.pack("<f", h.score))[0], h.score_bits)
                # an f32 widened: rounding it to f32 changes nothing
                self.assertEqual(struct.unpack("<f", struct.pack("<f", h.score))[0], h.score)


class Phrases(CorpusCase):
    def test_phrase_in_order(self) -> None:
        self.assert_matches(Query.phrase("body", "quick brown"), [1, 2])
        self.assert_matches(Query.phrase("body", "brown quick"), [])
        self.assert_matches(Query.phrase("body", "the lazy dog"), [1])

    def test_slop_allows_moves(self) -> None:
        # swapped tokens are two moves
        self.assert_matches(Query.phrase("body", "brown quick", slop=1), [])
        self.assert_matches(Query.phrase("body", "brown quick", slop=2), [1, 2])
        self.assert_matches(Query.phrase("body", "quick fox", slop=1), [1])

    def test_phrase_on_a_field_without_positions_is_unsupported(self) -> None:
        with self.assertRaises(quarry.UnsupportedError) as e:
            self.s.search(Query.phrase("note", "a b"))
        self.assertEqual(e.exception.status, quarry.Status.UNSUPPORTED)


class PrefixAndRange(CorpusCase):
    def test_prefix_on_text_and_string(self) -> None:
        self.assert_matches(Query.prefix("body", "jump"), [1, 8])
        self.assert_matches(Query.prefix("cat", "le"), [3, 7])
        self.assert_matches(Query.prefix("body", "zz"), [])
        with self.s.search(Query.prefix("body", "jump")) as hits:
            self.assertEqual([h.score for h in hits], [1.0, 1.0])

    def test_prefix_past_the_expansion_limit(self) -> None:
        with quarry.Searcher(self.index, max_expansions=1) as s:
            with self.assertRaises(quarry.TooManyTermsError):
                s.search(Query.prefix("body", "jump"))  # jumps, jumping
            with s.search(Query.prefix("body", "jumpi")) as hits:
                self.assertEqual(len(hits), 1)

    def test_i64_ranges(self) -> None:
        self.assert_matches(Query.range("year", 2000, 2010), [1, 3, 4])
        self.assert_matches(Query.range("year", 2000, 2010, include_upper=False), [1, 4])
        self.assert_matches(Query.range("year", 2001, 2010, include_lower=False), [3, 4])
        self.assert_matches(Query.range("year", None, 2000), [2, 5])
        self.assert_matches(Query.range("year", 2015), [6, 8])
        self.assert_matches(Query.range("year", type="i64"), [1, 2, 3, 4, 5, 6, 8])  # 7 has no year
        self.assert_matches(Query.range("id", 3, 4), [3, 4])  # indexed, not sortable

    def test_f64_ranges(self) -> None:
        self.assert_matches(Query.range("price", 0.0, 10.0), [1, 2, 6, 7])
        self.assert_matches(Query.range("price", 10.0, include_lower=False), [3, 8])
        self.assert_matches(Query.range("price", -math.inf, 0.0, include_upper=False), [4])
        # int ends on an f64 field need the type said
        self.assert_matches(Query.range("price", 0, 10, type="f64"), [1, 2, 6, 7])
        with self.assertRaises(quarry.SchemaError):
            self.s.search(Query.range("price", 0, 10))  # an i64 range
        with self.assertRaises(quarry.InvalidArgumentError):
            Query.range("price", math.nan, 1.0)

    def test_string_ranges(self) -> None:
        self.assert_matches(Query.range("cat", "f", "m"), [3, 4, 7])
        self.assert_matches(Query.range("cat", "food", "leisure", include_lower=False), [3, 7])
        self.assert_matches(Query.range("cat", None, "b"), [1, 2, 5])

    def test_constant_scores(self) -> None:
        with self.s.search(Query.range("year", 2000, 2010)) as hits:
            self.assertEqual({h.score for h in hits}, {1.0})


class AllNoneBoost(CorpusCase):
    def test_all_and_none(self) -> None:
        self.assert_matches(Query.all(), range(1, 9))
        self.assert_matches(Query.none(), [])

    def test_boost_scales_constants_and_weights(self) -> None:
        with self.s.search(Query.all().boost(3.0)) as hits:
            self.assertEqual({h.score for h in hits}, {3.0})
        q = Query.match("body", "quick fox")
        with self.s.search(q) as plain, self.s.search(q.boost(1.0)) as same:
            self.assertEqual(signature(plain), signature(same))  # 1.0 changes no bit
        with self.s.search(q.boost(2.0)) as doubled:
            before = {h.doc: h.score for h in plain}
            after = {h.doc: h.score for h in doubled}
            self.assertEqual(set(after), set(before))
            for doc, score in after.items():
                self.assertGreater(score, before[doc])
        # a boost decides an OR: "sun" boosted over "fox"
        favour_sun = Query.boolean(should=[Query.term("body", "fox"), Query.term("body", "sun").boost(10.0)])
        self.assertEqual(set(self.search_ids(favour_sun)[:2]), {3, 6})

    def test_invalid_boosts(self) -> None:
        for bad in (-1.0, math.inf, math.nan, 1e39, -1e39):
            with self.assertRaises(quarry.InvalidArgumentError) as e:
                Query.all().boost(bad)
            self.assertIn("boost", e.exception.message)
        with self.s.search(Query.all().boost(3.4028234663852886e38)) as hits:
            self.assertEqual(hits[0].score_bits, 0x7F7FFFFF)  # the largest f32 passes


class Booleans(CorpusCase):
    def test_must_should_must_not_filter(self) -> None:
        quick, fox = Query.term("body", "quick"), Query.term("body", "fox")
        self.assert_matches(Query.boolean(must=[quick], must_not=[fox]), [2, 7])
        self.assert_matches(Query.boolean(should=[fox, Query.term("body", "sun")]), [1, 3, 5, 6])
        self.assert_matches(Query.boolean(must=[quick], should=[fox]), [1, 2, 7])
        self.assert_matches(Query.boolean(must_not=[fox]), [])  # nothing required or optional
        self.assert_matches(Query.boolean(must=[Query.all()], must_not=[fox]), [2, 3, 4, 6, 7, 8])
        self.assert_matches(Query.boolean([("must", quick), (quarry.Occur.SHOULD, fox)]), [1, 2, 7])

    def test_filter_adds_no_score(self) -> None:
        brown = Query.term("body", "brown")
        filtered = Query.boolean(must=[brown], filter=[Query.term("cat", "animals")])
        self.assert_matches(filtered, [1, 2])
        with self.s.search(filtered) as f, self.s.search(brown) as b:
            plain = {h.doc: h.score_bits for h in b}
            self.assertEqual({h.doc: h.score_bits for h in f}, {d: plain[d] for d in (0, 1)})
        with self.s.search(Query.boolean(filter=[Query.term("cat", "animals")])) as only:
            self.assertEqual({h.score for h in only}, {0.0})

    def test_clauses_are_copied(self) -> None:
        quick = Query.term("body", "quick")
        b = Query.boolean(must=[quick])
        quick.close()
        self.assert_matches(b, [1, 2, 7])
        self.assert_matches(Query.boolean(must=[b, b]), [1, 2, 7])

    def test_score_is_the_sum_of_clauses(self) -> None:
        quick, brown = Query.term("body", "quick"), Query.term("body", "brown")
        both = Query.boolean(must=[quick, brown])
        with self.s.search(both) as h, self.s.search(quick) as q, self.s.search(brown) as b:
            qs, bs = {x.doc: x.score for x in q}, {x.doc: x.score for x in b}
            for hit in h:
                f32 = struct.unpack("<f", struct.pack("<f", qs[hit.doc] + bs[hit.doc]))[0]
                self.assertEqual(hit.score, f32)

    def test_nesting_is_capped_as_the_parser_caps_it(self) -> None:
        q = Query.term("body", "quick")
        for _ in range(quarry.MAX_QUERY_DEPTH - 2):
            q = Query.boolean(must=[q], should=[Query.term("body", "fox")])
        deepest = q.boost(1.0)  # a boost is a level too
        with self.assertRaises(quarry.InvalidArgumentError) as e:
            Query.boolean(must=[deepest])
        self.assertIn(str(quarry.MAX_QUERY_DEPTH), str(e.exception))
        with self.assertRaises(quarry.InvalidArgumentError):
            deepest.boost(2.0)
        # the deepest allowed runs, on several threads too
        with quarry.Searcher(self.index, threads=3) as s:
            self.assert_matches(deepest, [1, 2, 7])
            with s.search(deepest) as h:
                self.assertEqual(sorted(x["id"] for x in h), [1, 2, 7])

    def test_bad_clauses(self) -> None:
        with self.assertRaises(TypeError):
            Query.boolean(must=["quick"])  # type: ignore[list-item]
        with self.assertRaises(quarry.InvalidArgumentError):
            Query.boolean([("sometimes", Query.all())])  # type: ignore[list-item]


class Parsing(CorpusCase):
    def test_parsed_queries(self) -> None:
        self.assert_matches(self.s.parse("quick AND -fox", "body"), [2, 7])
        self.assert_matches(self.s.parse("quick fox", "body", "and"), [1])
        self.assert_matches(self.s.parse("quick fox", "body"), [1, 2, 5, 7])
        self.assert_matches(self.s.parse('"quick brown"', "body"), [1, 2])
        self.assert_matches(self.s.parse("cat:animals year:[2000 TO 2010]", op="and"), [1])
        self.assert_matches(self.s.parse("jump*", "body"), [1, 8])
        self.assert_matches(Query.parse(self.s, "body:sun OR body:hound"), [3, 5, 6])

    def test_parse_agrees_with_the_constructors(self) -> None:
        parsed, built = self.s.parse("quick fox", "body"), Query.match("body", "quick fox")
        with self.s.search(parsed) as a, self.s.search(built) as b:
            self.assertEqual(signature(a), signature(b))

    def test_syntax_error_names_its_byte_position(self) -> None:
        with self.assertRaises(quarry.QuerySyntaxError) as e:
            self.s.parse("body:(quick", "body")
        self.assertEqual(e.exception.position, 11)
        self.assertEqual(e.exception.status, quarry.Status.QUERY_SYNTAX)
        self.assertIn("query syntax error at byte 11", str(e.exception))
        # positions are bytes of the UTF-8 text: "é" is two
        with self.assertRaises(quarry.QuerySyntaxError) as e:
            self.s.parse("\u00e9t\u00e9 AND", "body")
        self.assertEqual(e.exception.position, len("\u00e9t\u00e9 AND".encode()))

    def test_unknown_default_field(self) -> None:
        with self.assertRaises(quarry.SchemaError):
            self.s.parse("quick", "nope")


if __name__ == "__main__":
    unittest.main()
