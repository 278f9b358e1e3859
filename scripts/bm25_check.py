#!/usr/bin/env python3
"""An independent float64 BM25 reference for quarry (Python 3, stdlib only).

Reads a JSONL corpus and a queries TSV (``class<TAB>query text``), scores
every query exactly as quarry's contract says (see below) in float64, and
compares the top-k against ``quarry search --format tsv`` output: either run
by this script (``--quarry BIN --index DIR``) or read from a file
(``--results FILE``).

The contract reimplemented here (docs/DESIGN.md, sections 2 and 3):

* Analysis: split on every char for which ``str.isalnum()`` is False,
  lowercase each char with ``str.lower()`` (per char, so no final-sigma
  context rule), drop tokens longer than 40 UTF-8 bytes (after lowercasing).
  A text field given as an array of strings is analysed value by value (as
  if joined with a separator).
* Field length = token count; norm = Lucene ``SmallFloat.intToByte4``,
  dl = ``byte4ToInt(norm)`` (reimplemented below from Lucene's definition).
* N = documents in the corpus, n = documents containing the term,
  avgdl = total tokens of the field / N,
  idf = ln(1 + (N - n + 0.5)/(n + 0.5)),
  score = sum over the query's distinct terms present in the document of
  idf * 2.2 * tf / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl)).
* AND: every distinct term must occur; OR: at least one. Ranking: score
  descending, then corpus order (document number) ascending.

Python's ``str.isalnum`` and Rust's ``char::is_alphanumeric`` differ on some
characters: Rust's Alphabetic property includes Other_Alphabetic (combining
vowel signs of Indic scripts, U+0345, ...), which Python's isalpha (letter
categories only) does not, and the two runtimes may ship different Unicode
versions. ``--char-table FILE`` (lines ``HEX<TAB>0|1<TAB>HEX,HEX...``, as
Rust classifies and lowercases each char; tests/cli.rs writes one for the
corpus) checks agreement for exactly the characters the corpus contains;
without it the script lists the corpus's characters in the risky categories.

Agreement "ties aside": quarry's hits are re-scored here in float64; the
query agrees when quarry returns as many hits as the reference, every hit
matches the query, quarry's f32 score of each hit is within the tolerance
of its float64 score, and position by position the float64 score of
quarry's i-th hit equals the reference's i-th score within the tolerance
(relative 1e-5 by default). So hits may differ only by swaps among hits of
(nearly) equal score, including across the k-th boundary. total_hits must
be equal exactly.

Exit status: 0 when every query agrees, 1 when one does not, 2 on bad usage
or input.
"""

import argparse
import json
import math
import subprocess
import sys
import unicodedata
from collections import Counter, defaultdict

K1 = 1.2
B = 0.75
MAX_TOKEN_BYTES = 40


# ---- Lucene SmallFloat, from org.apache.lucene.util.SmallFloat ----------

def long_to_int4(i):
    """SmallFloat.longToInt4: 4 significant bits, the leading one implicit."""
    if i < 0:
        raise ValueError("negative length")
    num_bits = i.bit_length()
    if num_bits < 4:
        return i  # subnormal
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07  # drop the implicit leading bit
    encoded |= (shift + 1) << 3  # 0 is reserved for subnormal values
    return encoded


def int4_to_long(i):
    """SmallFloat.int4ToLong."""
    bits = i & 0x07
    shift = (i >> 3) - 1
    if shift == -1:
        return bits
    return (bits | 0x08) << shift


MAX_INT4 = long_to_int4(2**31 - 1)
NUM_FREE_VALUES = 255 - MAX_INT4
assert NUM_FREE_VALUES == 24, NUM_FREE_VALUES


def int_to_byte4(i):
    """SmallFloat.intToByte4 (the norm byte of a field length)."""
    if i < NUM_FREE_VALUES:
        return i
    return NUM_FREE_VALUES + long_to_int4(i - NUM_FREE_VALUES)


def byte4_to_int(b):
    """SmallFloat.byte4ToInt (the length BM25 uses)."""
    if b < NUM_FREE_VALUES:
        return b
    return min(NUM_FREE_VALUES + int4_to_long(b - NUM_FREE_VALUES), 2**31 - 1)


def _self_test_smallfloat():
    for n in range(24):
        assert byte4_to_int(int_to_byte4(n)) == n
    prev = 0
    for n in range(0, 100000, 7):
        b = int_to_byte4(n)
        assert 0 <= b <= 255
        d = byte4_to_int(b)
        assert d <= n, (n, b, d)  # decoding rounds down
        assert b >= prev  # monotone
        prev = b
    assert int_to_byte4(2**31 - 1) == 255


# ---- analysis -------------------------------------------------------------

def tokens(text):
    out = []
    cur = []
    for ch in text:
        if ch.isalnum():
            cur.append(ch.lower())
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return [t for t in out if len(t.encode("utf-8")) <= MAX_TOKEN_BYTES]


def field_tokens(value):
    if value is None:
        return []
    if isinstance(value, list):
        toks = []
        for v in value:
            if v is not None:
                toks.extend(tokens(v))
        return toks
    return tokens(value)


# ---- the index ------------------------------------------------------------

class Corpus:
    def __init__(self, path, field, id_field):
        self.ids = []  # per doc number: the id as quarry prints it
        self.lengths = []  # per doc: decoded norm length
        self.postings = defaultdict(dict)  # term -> {doc: tf}
        self.chars = set()
        total = 0
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                try:
                    doc = json.loads(line)
                except ValueError as e:
                    raise SystemExit(f"{path}, line {lineno}: {e}")
                d = len(self.ids)
                ident = doc.get(id_field) if id_field else None
                self.ids.append(str(d) if ident is None else str(ident))
                value = doc.get(field)
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, str):
                        self.chars.update(v)
                toks = field_tokens(value)
                total += len(toks)
                self.lengths.append(byte4_to_int(int_to_byte4(len(toks))))
                for t, tf in Counter(toks).items():
                    self.postings[t][d] = tf
        self.n_docs = len(self.ids)
        self.avgdl = total / self.n_docs if self.n_docs else 1.0
        self.total_tokens = total

    def idf(self, term):
        n = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n_docs - n + 0.5) / (n + 0.5))

    def term_score(self, idf, tf, doc):
        if self.avgdl > 0:
            norm = K1 * ((1.0 - B) + B * self.lengths[doc] / self.avgdl)
        else:
            norm = K1
        return idf * (K1 + 1.0) * tf / (tf + norm)

    def query_terms(self, text):
        seen = []
        for t in tokens(text):
            if t not in seen:
                seen.append(t)
        return seen

    def matches(self, terms, op):
        lists = [self.postings.get(t, {}) for t in terms]
        if not terms:
            return set()
        if op == "and":
            if any(not p for p in lists):
                return set()
            smallest = min(lists, key=len)
            return {d for d in smallest if all(d in p for p in lists)}
        out = set()
        for p in lists:
            out.update(p)
        return out

    def score(self, terms, doc):
        s = 0.0
        for t in terms:
            tf = self.postings.get(t, {}).get(doc)
            if tf:
                s += self.term_score(self.idf(t), tf, doc)
        return s

    def search(self, text, op, k):
        terms = self.query_terms(text)
        docs = self.matches(terms, op)
        scored = sorted(((-self.score(terms, d), d) for d in docs))
        return terms, docs, [(d, -s) for s, d in scored[:k]]


# ---- quarry's output ------------------------------------------------------

def read_queries(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            if "\t" not in line:
                raise SystemExit(f"{path}, line {lineno}: expected class<TAB>query text")
            cls, text = line.split("\t", 1)
            out.append((cls, text))
    return out


def parse_tsv(text):
    """{qno: {"total": int, "hits": [(rank, id, score_str, bits)]}}"""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("qno\tclass\trank\tid\tscore\tscore_bits\ttotal_hits"):
        raise SystemExit("quarry output does not start with the tsv header")
    out = {}
    for line in lines[1:]:
        cols = line.split("\t")
        qno, rank, ident, score, bits, total = int(cols[0]), int(cols[2]), cols[3], cols[4], cols[5], int(cols[6])
        q = out.setdefault(qno, {"total": total, "hits": []})
        if rank > 0:
            q["hits"].append((rank, ident, score, bits))
    return out


def run_quarry(args):
    cmd = [args.quarry, "search", args.index, "--queries", args.queries, "--format", "tsv",
           "--op", args.op, "--k", str(args.k), "--field", args.field]
    if args.id_field:
        cmd += ["--id-field", args.id_field]
    if args.exec:
        cmd += ["--exec", args.exec]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


# ---- checks ---------------------------------------------------------------

RISKY_CATEGORIES = {"Mn", "Mc", "Me", "Nl", "No", "So", "Lm", "Lo"}


def check_chars(corpus, table_path):
    """Compares Python's classification with Rust's for the corpus's chars."""
    if table_path is None:
        risky = sorted(c for c in corpus.chars if ord(c) > 127 and unicodedata.category(c) in RISKY_CATEGORIES)
        if risky:
            print(f"note: {len(risky)} corpus chars in categories where isalnum may differ from Rust: "
                  + " ".join(f"U+{ord(c):04X}" for c in risky[:20]))
        return 0
    rust = {}
    with open(table_path, encoding="utf-8") as f:
        for line in f:
            h, alnum, lower = line.rstrip("\n").split("\t")
            rust[chr(int(h, 16))] = (alnum == "1", "".join(chr(int(x, 16)) for x in lower.split(",") if x))
    bad = 0
    for c in sorted(corpus.chars):
        if c not in rust:
            continue
        alnum, lower = rust[c]
        if c.isalnum() != alnum or (alnum and c.lower() != lower):
            bad += 1
            print(f"char U+{ord(c):04X} {unicodedata.name(c, '?')}: python isalnum={c.isalnum()} "
                  f"lower={c.lower()!r}; rust is_alphanumeric={alnum} lower={lower!r}")
    missing = [c for c in corpus.chars if c not in rust]
    print(f"char table: {len(corpus.chars) - len(missing)} corpus chars compared with Rust, {bad} differ"
          + (f", {len(missing)} not in the table" if missing else ""))
    return bad


def close(a, b, tol):
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="JSONL documents, in indexing order")
    ap.add_argument("--queries", required=True, help="class<TAB>query text lines")
    ap.add_argument("--op", choices=["and", "or"], default="or")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--field", default="body")
    ap.add_argument("--id-field", default="id", help="stored id field ('' for document numbers)")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--quarry", help="the quarry binary (then --index is needed)")
    src.add_argument("--results", help="a saved 'quarry search --format tsv' output")
    ap.add_argument("--index", help="the index directory (with --quarry)")
    ap.add_argument("--exec", help="passed to quarry search --exec")
    ap.add_argument("--tolerance", type=float, default=1e-5, help="relative score tolerance")
    ap.add_argument("--char-table", help="Rust's classification of chars, to compare with Python's")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.quarry and not args.index:
        ap.error("--quarry needs --index")

    _self_test_smallfloat()
    corpus = Corpus(args.corpus, args.field, args.id_field)
    char_diffs = check_chars(corpus, args.char_table)
    queries = read_queries(args.queries)
    if args.results:
        with open(args.results, encoding="utf-8") as f:
            got_all = parse_tsv(f.read())
    else:
        got_all = parse_tsv(run_quarry(args))
    id_to_doc = {}
    for d, ident in enumerate(corpus.ids):
        id_to_doc.setdefault(ident, d)

    passed = failed = exact = 0
    for qno, (cls, text) in enumerate(queries, 1):
        terms, docs, want = corpus.search(text, args.op, args.k)
        got = got_all.get(qno, {"total": None, "hits": []})
        problems = []
        if got["total"] != len(docs):
            problems.append(f"total_hits {got['total']} != {len(docs)}")
        if len(got["hits"]) != len(want):
            problems.append(f"{len(got['hits'])} hits != {len(want)}")
        for i, (rank, ident, score_s, bits) in enumerate(got["hits"]):
            d = id_to_doc.get(ident)
            if d is None or d not in docs:
                problems.append(f"rank {rank}: id {ident} does not match the query")
                continue
            s64 = corpus.score(terms, d)
            q32 = float(score_s)
            if not close(q32, s64, args.tolerance):
                problems.append(f"rank {rank}: id {ident} quarry score {score_s} vs float64 {s64!r}")
            if i < len(want) and not close(s64, want[i][1], args.tolerance):
                problems.append(f"rank {rank}: id {ident} (float64 {s64!r}) where the reference has "
                                f"id {corpus.ids[want[i][0]]} (float64 {want[i][1]!r})")
        got_ids = [h[1] for h in got["hits"]]
        want_ids = [corpus.ids[d] for d, _ in want]
        dups = sorted({i for i in got_ids if got_ids.count(i) > 1})
        if dups:
            problems.append(f"ids returned more than once: {dups}")
        ranks = [h[0] for h in got["hits"]]
        if ranks != list(range(1, len(ranks) + 1)):
            problems.append(f"ranks are not 1..{len(ranks)}: {ranks}")
        if problems:
            failed += 1
            print(f"FAIL q{qno} [{cls}] {text!r} ({args.op}):")
            for p in problems[:10]:
                print(f"    {p}")
            print(f"    quarry:    {got_ids}")
            print(f"    reference: {want_ids}")
        else:
            passed += 1
            if got_ids == want_ids:
                exact += 1
            elif args.verbose:
                print(f"ok (ties aside) q{qno} [{cls}] {text!r}: {got_ids} vs {want_ids}")
    extra = sorted(set(got_all) - set(range(1, len(queries) + 1)))
    if extra:
        failed += 1
        print(f"FAIL: quarry printed results for unknown query numbers {extra[:10]}")
    print(f"bm25_check ({args.op}, k={args.k}, N={corpus.n_docs}, avgdl={corpus.avgdl:.4f}): "
          f"{exact} of {passed} agreeing queries identical in order, the rest agree ties aside")
    print(f"{passed} passed, {failed} failed")
    if char_diffs:
        print(f"{char_diffs} chars classified differently by Python and Rust")
    return 1 if failed or char_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
