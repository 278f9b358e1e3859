"""Searching: :class:`Searcher` (``quarry_searcher``) and the counting modes."""

from __future__ import annotations

import enum
import os
from ctypes import addressof, byref, c_size_t, c_uint32, c_void_p, create_string_buffer
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

from . import _args, _ffi
from ._args import StrPath
from ._handle import Handle, use_all
from .errors import InvalidArgumentError
from .hits import Hits
from .query import Operator, Query
from .sort import SortLike, SortSpec
from .stats import Stats

__all__ = [
    "ExecMode",
    "FastPath",
    "Switch",
    "Searcher",
    "Total",
    "TOTAL_EXACT",
    "TOTAL_LOWER_BOUND",
    "TOTAL_DEFAULT",
    "check_index",
]

#: ``total``: count every match (``QUARRY_TOTAL_EXACT``).
TOTAL_EXACT = 2**64 - 1
#: ``total``: count only what the search visits (``QUARRY_TOTAL_LOWER_BOUND``).
TOTAL_LOWER_BOUND = 0
#: ``total``: exact below 1000 matches, else at least 1000: the library's
#: recommended setting and the default here (``QUARRY_TOTAL_DEFAULT``).
TOTAL_DEFAULT = 1000

#: A counting mode: ``"exact"``, ``"lower-bound"``, or N, the number of
#: matches to count exactly (then the total is a lower bound of at least N).
Total = Union[int, str]

_OPEN_NO_MMAP = 1


class ExecMode(enum.IntEnum):
    """``quarry_exec_mode``: every mode returns bit-identical hits."""

    #: The fastest path that applies (the default).
    AUTO = 1
    #: The exhaustive oracle: every matching document evaluated.
    EXHAUSTIVE = 2
    #: Document at a time over posting blocks.
    DAAT = 3


class FastPath(enum.IntEnum):
    """``quarry_path``: a fast path of :attr:`ExecMode.AUTO`, each with a
    kill switch."""

    TERM_TOPK = 1
    BLOCK_MAX_OR = 2
    BULK_AND = 3


class Switch(enum.IntEnum):
    """``quarry_switch``: a fast path's setting."""

    AUTO = 1
    OFF = 2


def _total(total: Total) -> int:
    if isinstance(total, str):
        key = total.lower().replace("_", "-")
        if key == "exact":
            return TOTAL_EXACT
        if key == "lower-bound":
            return TOTAL_LOWER_BOUND
        raise InvalidArgumentError(f"total {total!r} is not 'exact', 'lower-bound' or a count")
    return _args.u64(total, "total")


def _open(paths: Sequence[bytes], flags: int) -> int:
    """A new searcher handle over ``paths`` (one index, or shards)."""
    if len(paths) == 1:
        return _ffi.new_handle("quarry_searcher_open_with", paths[0], len(paths[0]), flags)
    bufs = [create_string_buffer(p, len(p) + 1) for p in paths]
    ptrs = (c_void_p * len(bufs))(*(addressof(b) for b in bufs))
    lens = (c_size_t * len(paths))(*(len(p) for p in paths))
    return _ffi.new_handle("quarry_searcher_open_many", ptrs, lens, len(paths), flags)


class Searcher(Handle):
    """A searcher over one committed snapshot of an index, or of each of
    the shards of a corpus (:meth:`open_many`).

    It never changes: later commits are seen by :meth:`reopen` (or a new
    searcher). Any number of threads may search it at once; the setters
    wait until no search runs. ::

        with quarry.Searcher("/tmp/idx") as s:
            for hit in s.search(quarry.Query.match("body", "quick fox"), limit=5):
                print(hit.score, hit.stored("body"))
    """

    _FREE = "quarry_searcher_free"

    def __init__(
        self,
        path: Union[StrPath, Sequence[StrPath]],
        *,
        mmap: bool = True,
        exec_mode: Union[ExecMode, str, None] = None,
        fast_paths: Optional[Mapping[Union[FastPath, str], Union[Switch, str]]] = None,
        threads: Optional[int] = None,
        max_expansions: Optional[int] = None,
    ) -> None:
        """Opens the newest commit of the index in the directory ``path``;
        given a list of directories, the shards of one corpus, as
        :meth:`open_many`.

        Args:
            mmap: ``False`` reads every segment into memory once
                (``QUARRY_OPEN_NO_MMAP``): files changed behind quarry's
                back can then never raise ``SIGBUS``; ``True`` maps them
                unless ``QUARRY_READ=heap`` is set.
            exec_mode, fast_paths, threads, max_expansions: as the setters
                of the same names, applied before the searcher is returned.

        Raises:
            NoIndexError, IoError, CorruptError, UnsupportedVersionError;
            InvalidArgumentError for an environment variable
            (``QUARRY_EXEC``, ``QUARRY_BULK_AND``, ...) set to a value it
            does not accept, or an empty list of directories;
            SchemaError: shards of different schemas.
        """
        if isinstance(path, (str, bytes, os.PathLike)):
            raw: Tuple[bytes, ...] = (_args.path(path),)
        elif isinstance(path, Iterable):
            raw = tuple(_args.path(p, "shard path") for p in path)
            if not raw:
                raise InvalidArgumentError("a searcher of shards needs at least one path")
        else:
            raise TypeError(f"path must be a path or a list of paths, not {type(path).__name__}")
        super().__init__(_open(raw, 0 if mmap else _OPEN_NO_MMAP))
        self._paths = raw
        try:
            if exec_mode is not None:
                self.set_exec_mode(exec_mode)
            for p, v in (fast_paths or {}).items():
                self.set_fast_path(p, v)
            if threads is not None:
                self.set_threads(threads)
            if max_expansions is not None:
                self.set_max_expansions(max_expansions)
        except BaseException:
            self.close()
            raise

    @classmethod
    def open_many(
        cls,
        paths: Sequence[StrPath],
        **options: object,
    ) -> "Searcher":
        """One searcher over the newest commits of several indexes, the
        shards of one corpus split by document order: ``paths[i]`` is
        shard ``i``. It searches them as one index holding their documents
        in that order would (statistics summed over the shards, ties to the
        lower shard, then document): the same hits, score bits and totals.
        ``Hit.doc`` numbers the documents one shard after the other;
        ``Hit.shard`` and ``Hit.shard_doc`` name a hit's shard and its
        document there. ``options`` as for the constructor.

        Raises:
            SchemaError: a shard's schema differs from shard 0's (the
                message names the shard and the field).
            InvalidArgumentError: no path.
            UnsupportedError: more than 2^32 - 2 documents in all.
            The errors of opening each index.
        """
        if isinstance(paths, (str, bytes, os.PathLike)):
            raise TypeError("open_many takes a list of paths")
        return cls(list(paths), **options)  # type: ignore[arg-type]

    def _derived(self, ptr: int) -> "Searcher":
        """A searcher owning ``ptr``, made from this one."""
        s = Searcher.__new__(Searcher)
        Handle.__init__(s, ptr)
        s._paths = self._paths
        return s

    @property
    def path(self) -> bytes:
        """The index directory, as bytes (with several shards, shard 0's)."""
        return self._paths[0]

    @property
    def paths(self) -> Tuple[bytes, ...]:
        """Every shard's directory in shard order, as bytes."""
        return self._paths

    @property
    def shard_count(self) -> int:
        """How many indexes (shards) the searcher searches."""
        with self._use() as p:
            return int(_ffi.fn("quarry_searcher_shard_count")(p))

    def reopen(self) -> "Searcher":
        """A new searcher on the newest commit of the same index (of every
        shard), sharing unchanged segments and keeping this one's settings
        and statistics; this one is unchanged (close each)."""
        with self._use() as p:
            return self._derived(_ffi.new_handle("quarry_searcher_reopen", p))

    def export_stats(self, queries: Sequence[Query]) -> Stats:
        """The corpus statistics ``queries`` take from this searcher's
        index: its documents, and the token totals, document frequencies
        and expanded terms the queries look up (also those it does not
        hold). Export every shard's for the same queries, merge them in
        shard order (:meth:`Stats.merge`) and search each shard with the
        merge (:meth:`with_stats`). A searcher of several shards exports
        what the merge of its shards' statistics would be.

        Raises:
            SchemaError: a query does not fit the schema.
            TooManyTermsError: a prefix expands past the limit in this
                index alone.
            InvalidArgumentError: a searcher made by :meth:`with_stats`.
            IoError, CorruptError.
        """
        if isinstance(queries, Query):
            raise TypeError("export_stats takes a sequence of queries")
        qs = list(queries)
        for q in qs:
            if not isinstance(q, Query):
                raise TypeError(f"a query must be a quarry.Query, not {type(q).__name__}")
        with self._use() as p, use_all(qs) as qp:
            return Stats(_ffi.new_handle("quarry_searcher_export_stats", p, qp, len(qs)))

    def with_stats(self, stats: Stats, shard: int) -> "Searcher":
        """A new searcher of the same index (sharing its snapshot and
        settings) that searches it as shard ``shard`` of the corpus
        ``stats`` describe: scores in the corpus's space (the bits a
        searcher of every shard gives), documents numbered as in that
        corpus, hits naming shard ``shard``. Search it with offset 0 and a
        limit of ``offset + limit`` and merge the shards' pages with
        :func:`merge_hits` (or by ``Hit.merge_key``). A search of a query
        ``stats`` lack raises :class:`InvalidArgumentError`, as does one
        under another expansion limit than ``stats`` were exported with.
        ``stats`` are copied: close them when you like.

        Raises:
            SchemaError: statistics of another schema.
            InvalidArgumentError: this searcher searches several shards;
                ``stats`` have no shard ``shard``, or give it another
                number of documents (statistics of another commit or
                shard).
        """
        if not isinstance(stats, Stats):
            raise TypeError(f"stats must be quarry.Stats, not {type(stats).__name__}")
        n = _args.u32(shard, "shard")
        with self._use() as p, stats._use() as sp:
            return self._derived(_ffi.new_handle("quarry_searcher_with_stats", p, sp, n))

    @property
    def doc_count(self) -> int:
        """The number of live documents in the snapshot."""
        with self._use() as p:
            return int(_ffi.fn("quarry_searcher_doc_count")(p))

    @property
    def generation(self) -> int:
        """The commit generation the snapshot is (it grows with commits)."""
        with self._use() as p:
            return int(_ffi.fn("quarry_searcher_generation")(p))

    @property
    def exec_mode(self) -> ExecMode:
        """The execution path of searches on this searcher."""
        with self._use() as p:
            return ExecMode(_ffi.fn("quarry_searcher_exec_mode")(p))

    def set_exec_mode(self, mode: Union[ExecMode, str]) -> None:
        """Sets the execution path of later searches (overrides
        ``QUARRY_EXEC``); reopened searchers inherit it."""
        m = _args.choice(mode, ExecMode, "exec mode")
        with self._use(alone=True) as p:
            _ffi.call("quarry_searcher_set_exec_mode", p, int(m))

    def fast_path(self, path: Union[FastPath, str]) -> Switch:
        """The kill switch of the fast path ``path``."""
        fp = _args.choice(path, FastPath, "fast path")
        out = c_uint32()
        with self._use() as p:
            _ffi.call("quarry_searcher_path", p, int(fp), byref(out))
        return Switch(out.value)

    def set_fast_path(self, path: Union[FastPath, str], value: Union[Switch, str]) -> None:
        """Sets the kill switch of the fast path ``path`` (``"auto"`` or
        ``"off"``; overrides its environment variable). A path switched
        off runs its queries document at a time, with the same hits."""
        fp = _args.choice(path, FastPath, "fast path")
        sw = _args.choice(value, Switch, "switch")
        with self._use(alone=True) as p:
            _ffi.call("quarry_searcher_set_path", p, int(fp), int(sw))

    def set_threads(self, threads: int) -> None:
        """Lets one search run its segments on up to ``threads`` threads
        (at most one per segment; the same hits). Default 1, or
        ``QUARRY_SEARCH_THREADS``.

        Raises:
            InvalidArgumentError: ``threads`` is 0.
        """
        n = _args.size(threads, "threads")
        with self._use(alone=True) as p:
            _ffi.call("quarry_searcher_set_threads", p, n)

    def set_max_expansions(self, limit: int) -> None:
        """Sets the most distinct terms a prefix (or a range served by an
        indexed field's terms) may expand to (default 1024); past it a
        search raises :class:`~quarry.TooManyTermsError`.

        Raises:
            InvalidArgumentError: ``limit`` is 0.
        """
        n = _args.size(limit, "max_expansions")
        with self._use(alone=True) as p:
            _ffi.call("quarry_searcher_set_max_expansions", p, n)

    def parse(
        self, text: str, default_field: Optional[str] = None, op: Union[Operator, str] = Operator.OR
    ) -> Query:
        """:meth:`Query.parse` against this searcher's schema."""
        return Query.parse(self, text, default_field, op)

    def search(
        self,
        query: Query,
        *,
        limit: int = 10,
        offset: int = 0,
        sort: Optional[SortLike] = None,
        total: Total = TOTAL_DEFAULT,
    ) -> Hits:
        """Runs ``query`` and returns the hits ``[offset, offset + limit)``.

        Args:
            query: what to search.
            limit: the page's size.
            offset: how many hits to skip first (paging).
            sort: the order: a :class:`SortSpec`, or rules it takes
                (``"year:desc,score"``, a :class:`SortRule`, a list);
                ``None`` is score descending, then document number.
            total: how many matches to count exactly: ``"exact"``
                (:data:`TOTAL_EXACT`), ``"lower-bound"``
                (:data:`TOTAL_LOWER_BOUND`: only what the search visits) or
                N (exact up to N, then a lower bound of at least N). The
                hits are the same whatever it is; only ``Hits.total`` and
                ``Hits.total_is_exact`` depend on it.

        Raises:
            SchemaError: a field the query or sort names is missing or of
                the wrong kind.
            TooManyTermsError, UnsupportedError (a phrase on a field
                without positions), IoError, CorruptError.
        """
        if not isinstance(query, Query):
            raise TypeError(f"query must be a quarry.Query, not {type(query).__name__}")
        lim, off, tot = _args.size(limit, "limit"), _args.size(offset, "offset"), _total(total)
        spec = None if sort is None else SortSpec.of(sort)
        try:
            with self._use() as p, query._use() as qp:
                if spec is None:
                    ptr = _ffi.new_handle("quarry_searcher_search_total", p, qp, None, off, lim, tot)
                else:
                    with spec._use() as sp:
                        ptr = _ffi.new_handle("quarry_searcher_search_total", p, qp, sp, off, lim, tot)
        finally:
            if spec is not None and spec is not sort:
                spec.close()
        return Hits(ptr, query, off)

    def __repr__(self) -> str:
        where = repr(self._paths[0]) if len(self._paths) == 1 else repr(list(self._paths))
        return f"<quarry.Searcher {where}{' closed' if self.closed else ''}>"


def check_index(path: StrPath) -> None:
    """Checks the newest commit of the index in ``path`` as ``quarry check``
    does (checksums, references, each segment's structure); read-only and
    lock-free.

    Raises:
        CorruptError: at least one problem; the message lists each as
            ``FILE: WHAT``, one per line.
        UnsupportedVersionError: every problem is a file of a newer format.
        NoIndexError, IoError.
    """
    raw = _args.path(path)
    _ffi.call("quarry_index_check", raw, len(raw))
