"""Shards on a Dask cluster (``dask.distributed``): one search over shards
that live on several workers, with the hits one index of all their
documents gives (the same documents, score bits, order and exact totals).

Needs the ``distributed`` extra (``pip install 'quarry[distributed]'``);
``import quarry`` alone does not. ::

    from distributed import Client
    from quarry.distributed import MatchQuery, ShardedIndex

    with Client("tcp://scheduler:8786") as client:
        with ShardedIndex(client, ["/data/shard0", "/data/shard1"]) as index:
            pages = index.search([MatchQuery("body", "dear sister")], k=10, fields=["id"])
            for hit in pages[0].hits:
                print(hit.shard, hit.score, hit.stored[0])

What runs where (``docs/SCALE-OUT.md``, "Running under Dask"): each
shard is an actor on one worker, which opens the shard's searcher once
and keeps it. For a batch of queries every shard exports the statistics
the queries take from it (a blob of bytes), the client merges them in
shard order, sends the merged blob back with the queries, and each shard
searches in the corpus's score space with offset 0 and limit ``offset +
k``; the client merges the pages by merge key. Queries travel as plain
descriptions (:class:`MatchQuery`, :class:`ParsedQuery`), hits as
:class:`RemoteHit` tuples: never postings.
"""

from __future__ import annotations

import os
import struct
from contextlib import ExitStack
from dataclasses import dataclass
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Type,
    Union,
)

try:
    import distributed
except ImportError as e:  # pragma: no cover - the message is what matters
    raise ImportError(
        "quarry.distributed needs Dask's distributed scheduler: "
        "pip install 'quarry[distributed]' (from a checkout: pip install './python[distributed]')",
        name=e.name,
    ) from e

from . import _args
from ._args import StrPath
from .errors import InvalidArgumentError
from .hits import Value
from .query import Query
from .searcher import Searcher, Total, _total
from .sort import SortRule, SortSpec, rules_of
from .stats import Stats

__all__ = [
    "MatchQuery",
    "ParsedQuery",
    "QuerySpec",
    "RemoteHit",
    "Page",
    "merge_pages",
    "RemoteSort",
    "ShardActor",
    "ShardedIndex",
]


@dataclass(frozen=True)
class MatchQuery:
    """A match query (:meth:`Query.match`): ``text`` analysed as the
    field's text, its terms combined with ``op``. Plain data, so it
    crosses to the workers as it is."""

    field: str
    text: str
    op: str = "or"

    def build(self, searcher: Searcher) -> Query:
        return Query.match(self.field, self.text, self.op)


@dataclass(frozen=True)
class ParsedQuery:
    """A query in the query syntax (:meth:`Query.parse`), parsed on each
    worker against its shard's schema (the same on every shard)."""

    text: str
    default_field: Optional[str] = None
    op: str = "or"

    def build(self, searcher: Searcher) -> Query:
        return searcher.parse(self.text, self.default_field, self.op)


class QuerySpec(Protocol):
    """What :class:`ShardedIndex` takes as a query: a picklable object whose
    ``build(searcher)`` makes the :class:`Query` on a worker
    (:class:`MatchQuery`, :class:`ParsedQuery`, or one of your own)."""

    def build(self, searcher: Searcher) -> Query: ...


class RemoteHit(NamedTuple):
    """One hit as it crosses the network: what the coordinator needs to
    merge pages and print the hit, read while the shard's hits were open.

    Attributes:
        merge_key: the hit's merge key (:attr:`Hit.merge_key`); hits of
            one request sort by it in their order.
        shard, shard_doc: the hit's shard and its document there.
        doc: its document number in the corpus (the shards' documents one
            after the other).
        score_bits: the f32 score's IEEE bits (:attr:`score` is the score).
        sort_values: one per sort rule, as :attr:`Hit.sort_values`.
        stored: the stored values of the fields the search asked for, in
            that order (``None`` where the document has none).
    """

    merge_key: bytes
    shard: int
    shard_doc: int
    doc: int
    score_bits: int
    sort_values: Tuple[Value, ...]
    stored: Tuple[Value, ...]

    @property
    def score(self) -> float:
        """The BM25 score, the library's f32 as a Python float."""
        value: float = struct.unpack("<f", struct.pack("<I", self.score_bits))[0]
        return value


class Page(NamedTuple):
    """One query's page of hits (of one shard, or merged).

    Attributes:
        total: how many documents matched (exact when ``total_is_exact``,
            else a lower bound).
        total_is_exact: whether ``total`` is exact.
        hits: the page's hits, in order.
    """

    total: int
    total_is_exact: bool
    hits: Tuple[RemoteHit, ...]


def merge_pages(pages: Sequence[Page], *, offset: int = 0, limit: int = 10) -> Page:
    """The page ``[offset, offset + limit)`` of the union of one request's
    shard pages, each searched with offset 0 and a limit of at least
    ``offset + limit`` with the same merged statistics: their hits sorted
    by merge key, the totals summed (exact when every page's is). What
    :func:`quarry.merge_hits` does for pages still in this process.

    Raises:
        InvalidArgumentError: no page, or a page with fewer hits than
            ``offset + limit`` and its total (searched with too small a
            limit).
    """
    off, lim = _args.size(offset, "offset"), _args.size(limit, "limit")
    if not pages:
        raise InvalidArgumentError("merge_pages needs at least one page")
    want = off + lim
    for i, p in enumerate(pages):
        if len(p.hits) < min(want, p.total):
            raise InvalidArgumentError(
                f"page {i} has {len(p.hits)} hits of {p.total}: search each shard with a limit "
                f"of at least offset + limit ({want}) to merge this page"
            )
    hits = sorted((h for p in pages for h in p.hits), key=lambda h: h.merge_key)
    return Page(
        sum(p.total for p in pages),
        all(p.total_is_exact for p in pages),
        tuple(hits[off:want]),
    )


#: What a search's ``sort`` may be given as here: a :class:`SortSpec`
#: (its rules and ``track_scores`` travel, not its handle), rules, or a
#: string of them.
RemoteSort = Union[SortSpec, str, SortRule, Iterable[Union[SortRule, str]]]

#: A sort as it travels: the rules and ``track_scores``.
_Sort = Tuple[Tuple[SortRule, ...], bool]


def _plain_sort(sort: Optional[RemoteSort]) -> _Sort:
    if sort is None:
        return ((), False)
    if isinstance(sort, SortSpec):
        return (sort.rules, sort.track_scores)
    return (rules_of([sort] if isinstance(sort, (str, SortRule)) else sort), False)


class ShardActor:
    """The actor that holds one shard on its worker: the shard's searcher,
    opened once when the actor starts and kept until :meth:`close`.
    :class:`ShardedIndex` makes one per shard; its methods take and
    return only plain data."""

    def __init__(self, path: str, shard: int, options: Dict[str, Any]) -> None:
        self.path = path
        self.shard = shard
        self.searcher = Searcher(path, **options)

    def info(self) -> Tuple[int, int]:
        """The shard's live documents and the process it lives in."""
        return self.searcher.doc_count, os.getpid()

    def export_stats(self, queries: Sequence[QuerySpec]) -> bytes:
        """The statistics blob ``queries`` take from this shard."""
        with ExitStack() as stack:
            built = [stack.enter_context(q.build(self.searcher)) for q in queries]
            with self.searcher.export_stats(built) as stats:
                return stats.to_bytes()

    def search(
        self,
        stats: bytes,
        queries: Sequence[QuerySpec],
        limit: int,
        sort: _Sort,
        total: int,
        fields: Tuple[str, ...],
    ) -> List[Page]:
        """Each query's first ``limit`` hits, scored with the corpus
        statistics ``stats`` (this shard being shard :attr:`shard` of
        them), with the stored ``fields`` of every hit."""
        with ExitStack() as stack:
            st = stack.enter_context(Stats.from_bytes(stats))
            scored = stack.enter_context(self.searcher.with_stats(st, self.shard))
            rules, track_scores = sort
            spec = stack.enter_context(SortSpec(*rules, track_scores=track_scores)) if rules else None
            pages = []
            for q in queries:
                with q.build(scored) as query, scored.search(
                    query, limit=limit, sort=spec, total=total
                ) as hits:
                    pages.append(
                        Page(
                            hits.total,
                            hits.total_is_exact,
                            tuple(
                                RemoteHit(
                                    h.merge_key,
                                    h.shard,
                                    h.shard_doc,
                                    h.doc,
                                    h.score_bits,
                                    h.sort_values,
                                    tuple(h.stored(f) for f in fields),
                                )
                                for h in hits
                            ),
                        )
                    )
            return pages

    def close(self) -> None:
        self.searcher.close()


class _Done:
    """The result of a call made in this process, read as an actor's."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


class _Here:
    """A :class:`ShardActor` in this process, called as an actor is."""

    def __init__(self, actor: ShardActor) -> None:
        self._actor = actor

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._actor, name)
        return lambda *args: _Done(method(*args))


class ShardedIndex:
    """Shards of one corpus (split by document order, the same schema) on
    the workers of a Dask cluster, searched as one index.

    Each shard becomes a :class:`ShardActor` on one worker, which opens its
    searcher once; the directory must be readable there (on a real
    cluster, the worker's own disk). ``workers`` places the shards: a list
    of worker addresses, shard ``i`` going to ``workers[i % len(workers)]``
    (default: the client's workers in address order). ``options`` go to
    each shard's :class:`Searcher` (``mmap``, ``exec_mode``, ``threads``,
    ``max_expansions``, ...). Close it (or use ``with``) to close the
    shards' searchers and release the actors.

    With ``client`` ``None`` the actors live in this process, called one
    after the other: the same flow and bytes without a cluster, to tell
    the cluster's cost from the searches'.
    """

    def __init__(
        self,
        client: Optional["distributed.Client"],
        paths: Sequence[StrPath],
        *,
        workers: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> None:
        if isinstance(paths, (str, bytes, os.PathLike)):
            raise TypeError("ShardedIndex takes a list of shard paths")
        names = [os.fsdecode(os.fspath(p)) for p in paths]
        if not names:
            raise InvalidArgumentError("ShardedIndex needs at least one shard")
        if client is None:
            places = ["this process"]
        else:
            places = list(workers) if workers else sorted(client.scheduler_info()["workers"])
        if not places:
            raise InvalidArgumentError("the cluster has no workers")
        self.client = client
        #: The worker address of each shard.
        self.placement: Tuple[str, ...] = tuple(places[i % len(places)] for i in range(len(names)))
        self.paths: Tuple[str, ...] = tuple(names)
        self._futures: List[Any] = []  # distributed.Future
        self._actors: List[Any] = []
        try:
            for i, (path, where) in enumerate(zip(names, self.placement)):
                if client is None:
                    self._actors.append(_Here(ShardActor(path, i, options)))
                    continue
                self._futures.append(
                    client.submit(
                        ShardActor,
                        path,
                        i,
                        options,
                        actor=True,
                        workers=[where],
                        allow_other_workers=False,
                        pure=False,
                    )
                )
            self._actors += [f.result() for f in self._futures]
            info = self._gather([a.info() for a in self._actors])
        except BaseException:
            self.close()
            raise
        #: Each shard's live documents.
        self.shard_docs: Tuple[int, ...] = tuple(n for n, _ in info)
        #: The process id each shard's searcher lives in.
        self.shard_pids: Tuple[int, ...] = tuple(pid for _, pid in info)

    @staticmethod
    def _gather(futures: Sequence[Any]) -> List[Any]:
        """The results of actor calls started together, in order."""
        return [f.result() for f in futures]

    @property
    def shard_count(self) -> int:
        return len(self.paths)

    @property
    def doc_count(self) -> int:
        """The live documents of every shard."""
        return sum(self.shard_docs)

    def _live(self) -> List[Any]:
        if not self._actors:
            raise InvalidArgumentError("the ShardedIndex is closed")
        return self._actors

    def export_stats(self, queries: Sequence[QuerySpec]) -> List[bytes]:
        """Each shard's statistics blob for ``queries``, in shard order
        (one round trip to every shard, in parallel)."""
        qs = list(queries)
        return self._gather([a.export_stats(qs) for a in self._live()])

    def stats(self, queries: Sequence[QuerySpec]) -> Stats:
        """The corpus statistics of ``queries``: every shard's export,
        merged here in shard order. Valid until a shard commits; reuse
        them for searches of the same queries (``search(stats=...)``)."""
        return Stats.merge(self.export_stats(queries))

    def search_pages(
        self,
        queries: Sequence[QuerySpec],
        stats: Stats,
        *,
        limit: int = 10,
        sort: Optional[RemoteSort] = None,
        total: Total = "exact",
        fields: Sequence[str] = (),
    ) -> List[List[Page]]:
        """Every shard's pages, ``[shard][query]``: each query's first
        ``limit`` hits on each shard, scored with ``stats`` (one round trip
        to every shard, in parallel, carrying the blob and the queries)."""
        qs = list(queries)
        blob = stats.to_bytes()
        args = (_args.size(limit, "limit"), _plain_sort(sort), _total(total), tuple(fields))
        actors = self._live()
        return self._gather([a.search(blob, qs, *args) for a in actors])

    def search(
        self,
        queries: Sequence[QuerySpec],
        *,
        k: int = 10,
        offset: int = 0,
        sort: Optional[RemoteSort] = None,
        total: Total = "exact",
        fields: Sequence[str] = (),
        stats: Optional[Stats] = None,
    ) -> List[Page]:
        """Each query's page ``[offset, offset + k)``, as one searcher of
        every shard (:meth:`Searcher.open_many`) returns it: the statistics
        exchange (unless ``stats`` are given), each shard's search with
        offset 0 and limit ``offset + k``, and the merge by merge key.

        Args:
            queries: :class:`MatchQuery`, :class:`ParsedQuery` or any
                :class:`QuerySpec`.
            sort: sort rules (``"year:desc,score"``, :class:`SortRule`\\ s).
            total: as :meth:`Searcher.search`; only with ``"exact"`` (the
                default here) is the total the one a single searcher gives
                (docs/SCALE-OUT.md, "What is exact").
            fields: stored fields to bring back with every hit
                (:attr:`RemoteHit.stored`).
            stats: statistics of these queries from :meth:`stats`.

        Raises:
            quarry.Error: a shard's failure, as that shard raised it.
        """
        qs = list(queries)
        want = _args.size(offset, "offset") + _args.size(k, "k")
        owned = stats is None
        st = self.stats(qs) if stats is None else stats
        try:
            parts = self.search_pages(qs, st, limit=want, sort=sort, total=total, fields=fields)
        finally:
            if owned:
                st.close()
        return [merge_pages([p[i] for p in parts], offset=offset, limit=k) for i in range(len(qs))]

    def close(self) -> None:
        """Closes every shard's searcher and releases the actors."""
        actors, self._actors = self._actors, []
        try:
            self._gather([a.close() for a in actors])
        finally:
            futures, self._futures = self._futures, []
            for f in futures:
                f.release()

    def __enter__(self) -> "ShardedIndex":
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Any
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " closed" if not self._actors else ""
        return f"<quarry.distributed.ShardedIndex of {len(self.paths)} shard(s){state}>"
