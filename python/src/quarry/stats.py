"""Corpus statistics (``quarry_stats``): what BM25 takes from a corpus of
shards, as a blob that travels between processes.

Each shard exports the statistics a batch of queries needs
(:meth:`Searcher.export_stats <quarry.Searcher.export_stats>`), a
coordinator merges them in shard order (:meth:`Stats.merge`), and each
shard searches with the merge (:meth:`Searcher.with_stats
<quarry.Searcher.with_stats>`): its scores are then the bits one searcher
of every shard gives (``docs/SCALE-OUT.md``).
"""

from __future__ import annotations

from ctypes import byref, c_size_t, c_uint8, c_void_p
from typing import Any, Callable, Sequence, Tuple, Union

from . import _ffi
from ._handle import Handle, use_all

__all__ = ["Stats"]


class Stats(Handle):
    """The corpus statistics of some shards for a batch of queries: per
    shard its documents, and the token totals, document frequencies and
    expanded terms the queries look up. Immutable; any number of threads
    may use one at once.

    Its bytes (:meth:`to_bytes`, ``bytes(stats)``) are a versioned,
    checksummed blob (``docs/FORMAT.md``, "Corpus statistics"); a
    :class:`Stats` pickles as them, so it may be sent to another process
    as it is.
    """

    _FREE = "quarry_stats_free"

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "Stats":
        """Reads statistics from the bytes :meth:`to_bytes` gave (possibly
        in another process or on another machine).

        Raises:
            CorruptError: truncated, a checksum mismatch or a layout error.
            UnsupportedVersionError: an intact blob of a version this
                library does not read.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"statistics are read from bytes, not {type(data).__name__}")
        raw = bytes(data)
        buf = (c_uint8 * len(raw)).from_buffer_copy(raw)
        return cls(_ffi.new_handle("quarry_stats_from_bytes", buf, len(raw)))

    @classmethod
    def merge(cls, parts: Sequence[Union["Stats", bytes]]) -> "Stats":
        """The statistics of the corpus whose shards ``parts`` describe, in
        shard order (the first part's shards are shards 0, 1, ..., the next
        part's follow): documents, token totals and document frequencies
        summed, expanded terms united. A part may be given as its bytes.

        Raises:
            InvalidArgumentError: no part; parts of different schemas,
                expansion limits or queries.
            CorruptError, UnsupportedVersionError: a part's bytes.
        """
        if isinstance(parts, (Stats, bytes)):
            raise TypeError("Stats.merge takes a sequence of parts")
        owned = [p if isinstance(p, Stats) else Stats.from_bytes(p) for p in parts]
        try:
            with use_all(owned) as ptrs:
                return cls(_ffi.new_handle("quarry_stats_merge", ptrs, len(owned)))
        finally:
            for o, p in zip(owned, parts):
                if o is not p:
                    o.close()

    def to_bytes(self) -> bytes:
        """The blob: what :meth:`from_bytes` reads back."""
        ptr, length = c_void_p(), c_size_t()
        with self._use() as p:
            _ffi.call("quarry_stats_bytes", p, byref(ptr), byref(length))
            return _ffi.borrowed_bytes(ptr, length)

    def __bytes__(self) -> bytes:
        return self.to_bytes()

    @property
    def doc_count(self) -> int:
        """The corpus's documents (BM25's N: every shard's, deleted ones
        included until merged away)."""
        with self._use() as p:
            return int(_ffi.fn("quarry_stats_doc_count")(p))

    @property
    def shard_count(self) -> int:
        """How many shards the statistics describe."""
        with self._use() as p:
            return int(_ffi.fn("quarry_stats_shard_count")(p))

    def __reduce__(self) -> Tuple[Callable[..., Any], Tuple[bytes]]:
        return (Stats.from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        if self.closed:
            return "<quarry.Stats closed>"
        return f"<quarry.Stats of {self.shard_count} shard(s), {self.doc_count} documents>"
