"""Searches the shards of one corpus on a Dask cluster and prints, byte for
byte, the tsv that ``quarry search DIR... --queries FILE --format tsv``
prints for the same directories and options.

    python shards.py --shards s0 s1 s2 s3 --queries data/queries.tsv \\
        [--field body] [--op and|or] [--k 10] [--offset 0] [--sort SPEC] \\
        [--id-field NAME] [--workers 2 | --scheduler ADDRESS] --format tsv

Without ``--scheduler`` it starts a LocalCluster of ``--workers`` worker
processes (one thread each); with it, it joins that cluster, whose
workers must be able to open the shard directories; with
``--in-process`` the shards are opened in this process (no cluster: the
same flow, to tell the cluster's cost from the searches'). Each shard is an
actor on one worker (``quarry.distributed.ShardedIndex``), which opens it
once. For the whole queries file: every shard exports its statistics
blob, they are merged here, the merged blob goes back to every shard with
the queries, each shard searches every query with offset 0 and limit
offset + k, and the pages are merged here by merge key. ``--timings``
prints on stderr how long each step took and how many bytes each
direction carried (the payloads, pickled); with ``--repeat N`` the
queries are searched N times and it gives each step's median.

Needs ``pip install './python[distributed]'``.
"""

from __future__ import annotations

import argparse
import logging
import math
import pickle
import struct
import sys
import time
from decimal import Decimal
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import quarry
from quarry import SortRule, Value
from quarry.distributed import MatchQuery, Page, ShardedIndex, merge_pages

# The columns `quarry search` prints for several directories.
COLUMNS = "qno\tclass\trank\tshard\tshard_doc\tid\tscore\tscore_bits\ttotal_hits\tmerge_key"

# What Rust's str::trim strips (char::is_whitespace), which the query file
# reader uses to find blank lines; Python's str.strip strips \x1c-\x1f too.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def read_queries(path: str) -> List[Tuple[str, str]]:
    """The (class, text) lines of a queries file, as the command reads
    them: 'class<TAB>query text', blank lines and '#' lines skipped."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for i, line in enumerate(lines):
        line = line[:-1] if line.endswith("\r") else line
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip(RUST_WHITESPACE) or line.startswith("#"):
            continue
        if "\t" not in line:
            raise SystemExit(f"{path}, line {i + 1}: expected 'class<TAB>query text'")
        cls, query = line.split("\t", 1)
        out.append((cls, query))
    if not out:
        raise SystemExit(f"{path}: no queries")
    return out


def tsv_escape(s: str) -> str:
    return (
        s.replace("\\", "\\\\")
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("|", "\\|")
    )


def plain_decimal(sign: str, digits: str, exp: int) -> str:
    """0.DIGITS x 10^exp written out without an exponent, as Rust's
    Display of a float does (1, 0.25, 1500, 0.0001)."""
    if exp <= 0:
        return f"{sign}0.{'0' * -exp}{digits}"
    if exp < len(digits):
        return f"{sign}{digits[:exp]}.{digits[exp:]}"
    return f"{sign}{digits}{'0' * (exp - len(digits))}"


def digits_of(d: Decimal) -> Tuple[str, int]:
    """(DIGITS, exp) of a positive decimal written 0.DIGITS x 10^exp."""
    t = d.normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    return digits, len(digits) + int(t.exponent)


def ties_up(shortest: Decimal, exact: Decimal, reads_back: Callable[[Decimal], bool]) -> Decimal:
    """Where two shortest decimals are equally close to a float, Rust's
    digit generation takes the upper one and Python's formatting the even
    one: ``shortest`` one step up when it lies exactly half a step below
    the ``exact`` value and that reads back too."""
    step = Decimal((0, (1,), int(shortest.normalize().as_tuple().exponent)))
    if exact - shortest == step / 2 and reads_back(shortest + step):
        return shortest + step
    return shortest


F32 = struct.Struct("<f")
U32 = struct.Struct("<I")


def f32_value(bits: int) -> float:
    value: float = F32.unpack(U32.pack(bits))[0]
    return value


def f32_bits(x: float) -> int:
    bits: int = U32.unpack(F32.pack(x))[0]
    return bits


def shortest_f32(mag: int) -> Decimal:
    """The shortest decimal that reads back as the positive finite f32
    ``mag`` (the closest such one, ties up), as Rust's ``{}`` finds it.

    Below a power of two the f32's rounding interval is symmetric, so the
    correctly rounded decimal of each length is the closest that could
    read back; it does when its f64 rounds to the f32, unless that f64
    lies on the midpoint of two f32s (the one place where rounding the
    decimal to f64 first can change the f32). Elsewhere, and on such a
    midpoint, exact arithmetic decides: for each length the correctly
    rounded decimal and its two neighbours against the interval."""
    value = Decimal(f32_value(mag))

    def reads_back(d: Decimal) -> bool:
        lo = (value + Decimal(f32_value(mag - 1))) / 2
        hi = (value + Decimal(f32_value(mag + 1))) / 2 if mag < 0x7F7FFFFF else value + (value - lo)
        return lo < d < hi or (mag % 2 == 0 and (d == lo or d == hi))

    x = f32_value(mag)
    quick = mag & 0x7FFFFF != 0 and mag < 0x7F7FFFFF
    for length in range(1, 10):
        text = f"{x:.{length - 1}e}"
        if quick:
            d = float(text)
            back = f32_bits(d)
            near = f32_value(back)
            if d == near or d != (near + f32_value(back + 1 if d > near else back - 1)) / 2:
                if back == mag:
                    return ties_up(Decimal(text), value, reads_back)
                continue
        mantissa, _, e = text.partition("e")
        n, scale = int(mantissa.replace(".", "")), int(e) - (length - 1)
        fits = [
            Decimal(c).scaleb(scale)
            for c in (n, n - 1, n + 1)
            if len(str(c)) == length and reads_back(Decimal(c).scaleb(scale))
        ]
        if fits:
            return min(fits, key=lambda d: (abs(d - value), -d))
    raise AssertionError(f"no decimal reads back as f32 {mag:08x}")


def f32_text(bits: int) -> str:
    """An f32 as Rust's ``{}`` prints it: its shortest round-trip decimal,
    never in exponent form."""
    sign, mag = ("-" if bits >> 31 else ""), bits & 0x7FFFFFFF
    if mag > 0x7F800000:
        return "NaN"
    if mag == 0x7F800000:
        return f"{sign}inf"
    if mag == 0:
        return f"{sign}0"
    return plain_decimal(sign, *digits_of(shortest_f32(mag)))


def f64_text(x: float) -> str:
    """An f64 value as the command prints it: the shortest round-trip
    decimal (ties up, as Rust's), without exponent for 0 and 1e-5 <= |x| <
    1e16, else in Rust's ``{:e}`` form (1e-300, -2.5e20)."""
    if x != x:
        return "NaN"
    sign, a = ("-" if math.copysign(1.0, x) < 0 else ""), abs(x)
    if a == math.inf:
        return f"{sign}inf"
    if a == 0:
        return f"{sign}0"
    digits, exp = digits_of(ties_up(Decimal(repr(a)), Decimal(a), lambda d: float(d) == a))
    if 1e-5 <= a < 1e16:
        return plain_decimal(sign, digits, exp)
    rest = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{rest}e{exp - 1}"


def value_text(v: Value) -> str:
    """A stored or sort value as the command prints it."""
    if isinstance(v, str):
        return tsv_escape(v)
    if isinstance(v, bool) or v is None:
        raise TypeError(f"no text for {v!r}")
    if isinstance(v, int):
        return str(v)
    return f64_text(v)


def sort_text(rules: Sequence[SortRule], values: Sequence[Value]) -> str:
    """The sort_values column: the values joined by '|', a missing one
    empty, score values as f32."""
    cells = []
    for rule, v in zip(rules, values):
        if v is None:
            cells.append("")
        elif rule.kind == "score" and isinstance(v, float):
            cells.append(f32_text(f32_bits(v)))
        else:
            cells.append(value_text(v))
    return "|".join(cells)


def tsv(
    queries: Sequence[Tuple[str, str]],
    pages: Sequence[Page],
    offset: int,
    rules: Sequence[SortRule],
    id_field: Optional[str],
) -> str:
    """What ``quarry search DIR... --format tsv`` prints for these pages."""
    out = [COLUMNS + ("\tsort_values" if rules else "") + "\n"]
    for qno, ((cls, _), page) in enumerate(zip(queries, pages), 1):
        total = f"{page.total}{'' if page.total_is_exact else '+'}"
        cls = tsv_escape(cls)
        if not page.hits:
            out.append(f"{qno}\t{cls}\t0\t-\t-\t-\t0\t00000000\t{total}\t-" + ("\t" if rules else "") + "\n")
        for rank, h in enumerate(page.hits, offset + 1):
            ident: Value = h.stored[0] if id_field is not None and h.stored[0] is not None else h.doc
            row = [
                str(qno),
                cls,
                str(rank),
                str(h.shard),
                str(h.shard_doc),
                value_text(ident),
                f32_text(h.score_bits),
                f"{h.score_bits:08x}",
                total,
                h.merge_key.hex(),
            ]
            if rules:
                row.append(sort_text(rules, h.sort_values))
            out.append("\t".join(row) + "\n")
    return "".join(out)


def size(obj: object) -> int:
    """The bytes of ``obj`` pickled, as Dask sends a payload."""
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def run(index: ShardedIndex, a: argparse.Namespace, timings: Dict[str, float]) -> str:
    lines = read_queries(a.queries)
    specs = [MatchQuery(a.field, text, a.op) for _, text in lines]
    rules = SortRule.parse(a.sort) if a.sort else []
    fields = (a.id_field,) if a.id_field else ()

    t0 = time.perf_counter()
    blobs = index.export_stats(specs)
    t1 = time.perf_counter()
    with quarry.Stats.merge(blobs) as stats:
        merged = stats.to_bytes()
        t2 = time.perf_counter()
        parts = index.search_pages(
            specs, stats, limit=a.offset + a.k, sort=rules, total="exact", fields=fields
        )
    t3 = time.perf_counter()
    pages = [merge_pages([p[i] for p in parts], offset=a.offset, limit=a.k) for i in range(len(specs))]
    t4 = time.perf_counter()
    text = tsv(lines, pages, a.offset, rules, a.id_field)
    t5 = time.perf_counter()
    timings.update(
        queries=len(specs),
        statistics_s=t1 - t0,
        stats_merge_s=t2 - t1,
        search_s=t3 - t2,
        merge_s=t4 - t3,
        format_s=t5 - t4,
        stats_up_bytes=sum(map(len, blobs)),
        stats_down_bytes=len(merged) * index.shard_count,
        queries_down_bytes=2 * size(specs) * index.shard_count,
        hits_up_bytes=sum(size(p) for p in parts),
    )
    return text


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shards", nargs="+", required=True, metavar="DIR", help="the shards, in shard order")
    p.add_argument("--queries", required=True, metavar="FILE", help="'class<TAB>query text' lines")
    p.add_argument("--field", default="body", help="the field searched [body]")
    p.add_argument("--op", choices=["and", "or"], default="or", help="how a query's terms combine [or]")
    p.add_argument("--k", type=int, default=10, help="hits per query [10]")
    p.add_argument("--offset", type=int, default=0, help="hits skipped first [0]")
    p.add_argument("--sort", metavar="SPEC", help="sort rules, as quarry search --sort takes them")
    p.add_argument("--id-field", metavar="NAME", help="print this stored field as the hit id")
    p.add_argument("--format", choices=["tsv"], default="tsv", help="the output format [tsv]")
    p.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster [2]")
    p.add_argument("--scheduler", metavar="ADDRESS", help="join this cluster instead of starting one")
    p.add_argument(
        "--in-process", action="store_true", help="the same flow without Dask: every shard in this process"
    )
    p.add_argument("--timings", action="store_true", help="print each step's time and bytes on stderr")
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="search the queries N times; --timings gives medians [1]",
    )
    a = p.parse_args(argv)

    from distributed import Client, LocalCluster

    start = time.perf_counter()
    client: Optional[Client] = None
    cluster: Optional[LocalCluster] = None
    if a.scheduler:
        client = Client(a.scheduler)
    elif not a.in_process:
        cluster = LocalCluster(
            n_workers=a.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        client = Client(cluster)
    runs: List[Dict[str, float]] = []
    try:
        t0 = time.perf_counter()
        with ShardedIndex(client, a.shards) as index:
            t1 = time.perf_counter()
            for _ in range(max(a.repeat, 1)):
                runs.append({})
                text = run(index, a, runs[-1])
        runs[0].update(cluster_start_s=t0 - start, shards_open_s=t1 - t0)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    sys.stdout.write(text)
    sys.stdout.flush()
    if a.timings:
        for key, first in runs[0].items():
            values = sorted(r.get(key, first) for r in runs)
            value = values[len(values) // 2]
            print(f"{key}\t{value:.6f}" if isinstance(value, float) else f"{key}\t{value}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
