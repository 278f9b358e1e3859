"""Search results: :class:`Hits` (``quarry_hits``) and each :class:`Hit`."""

from __future__ import annotations

import enum
from ctypes import byref, c_double, c_float, c_int64, c_size_t, c_uint32, c_uint64, c_void_p
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

from . import _args, _ffi
from ._handle import Handle, use_all
from .errors import Error, Status
from .query import Query

__all__ = ["Escape", "Hit", "Hits", "Value", "merge_hits"]

#: A stored or sort value: ``str`` (text and string fields), ``int`` (i64
#: fields, document numbers), ``float`` (f64 fields, scores), or ``None``.
Value = Union[str, int, float, None]

_VALUE_NONE, _VALUE_STR, _VALUE_I64, _VALUE_F64 = 0, 1, 2, 3
_NOTHING: Any = object()


class Escape(enum.IntEnum):
    """How :meth:`Hit.highlight` writes the stored text (the values are
    the flags of ``quarry_hits_highlight_ex``)."""

    #: As stored (the default).
    NONE = 0
    #: HTML-escaped: ``&`` ``<`` ``>`` ``"`` ``'`` as ``&amp;`` ``&lt;``
    #: ``&gt;`` ``&quot;`` ``&#39;``; the markers and the ellipsis are
    #: written as given.
    HTML = 1


class Hit:
    """One hit of a page: its document number, score and sort values, and
    access to its stored fields and excerpts (through its :class:`Hits`,
    which must be open for those).

    Attributes:
        index: the hit's position in the page (0-based).
        doc: the document number, valid for the searcher's snapshot only.
        score: the BM25 score, the library's f32 as a Python float (exact).
        score_bits: the f32's IEEE 754 bits, as an int.
        sort_values: one value per rule of the search's sort spec
            (``None`` where the document has no value; empty without a
            spec).
        shard: the hit's shard: its index's position among the paths of
            a searcher of several (0 for one index), or the shard number
            given to :meth:`Searcher.with_stats`.
        shard_doc: the document number within its shard's index (``doc``
            numbers the documents of all shards, one shard after the
            other).
        merge_key: bytes whose order is the order of the hits of one
            request, whichever shard they come from (``sorted(hits,
            key=lambda h: h.merge_key)``); ``docs/C-API.md`` gives the
            encoding.
    """

    __slots__ = (
        "_hits",
        "index",
        "doc",
        "score",
        "score_bits",
        "sort_values",
        "shard",
        "shard_doc",
        "merge_key",
    )

    def __init__(
        self,
        hits: "Hits",
        index: int,
        doc: int,
        score: float,
        score_bits: int,
        sort_values: Tuple[Value, ...],
        shard: int,
        shard_doc: int,
        merge_key: bytes,
    ) -> None:
        self._hits = hits
        self.index = index
        self.doc = doc
        self.score = score
        self.score_bits = score_bits
        self.sort_values = sort_values
        self.shard = shard
        self.shard_doc = shard_doc
        self.merge_key = merge_key

    def stored(self, field: str, default: Any = None) -> Any:
        """The stored value of ``field`` (``str``, ``int`` or ``float`` by
        the field's type; the first value of a text field given several),
        or ``default`` when this document has none.

        Raises:
            SchemaError: no such field, or it is not stored.
        """
        return self._hits._stored(self.index, field, default)

    def __getitem__(self, field: str) -> Value:
        """The stored value of ``field``.

        Raises:
            NoValueError: this document has no value for it (a
                :class:`KeyError`).
            SchemaError: no such field, or it is not stored.
        """
        value: Value = self._hits._stored(self.index, field, _NOTHING)
        return value

    def highlight(
        self,
        field: str,
        query: Optional[Query] = None,
        *,
        pre: str = "<b>",
        post: str = "</b>",
        ellipsis: str = "\u2026",
        escape: Union[Escape, str] = Escape.NONE,
        max_len: int = 200,
    ) -> str:
        """An excerpt of the stored text or string ``field`` around the
        region that best matches ``query`` (default: the query searched),
        each matched token between ``pre`` and ``post`` (a string value is
        one token, marked when a query term equals it): at most
        ``max_len`` bytes of the stored value (markers, ellipses and what
        escaping adds not counted), cut at sentence or word boundaries,
        ``ellipsis`` where it is cut. A document the query does not match
        gets the value's start. ``escape`` (an :class:`Escape` or its name,
        ``"none"`` or ``"html"``) says how the stored text is written; the
        markers and the ellipsis are written as given.

        Raises:
            NoValueError: the document has no value for ``field``.
            SchemaError: ``field`` is not a stored text or string field.
            InvalidArgumentError: ``max_len`` is 0, or ``escape`` is not
                an :class:`Escape`.
        """
        return self._hits._highlight(self.index, field, query, pre, post, ellipsis, escape, max_len)

    def __repr__(self) -> str:
        extra = f", sort_values={self.sort_values!r}" if self.sort_values else ""
        return f"Hit(doc={self.doc}, score={self.score!r}{extra})"


class Hits(Handle, Sequence[Hit]):
    """One page of hits in order, with the total number of matches.

    A sequence: ``len(hits)``, ``hits[0]``, ``for hit in hits``. The
    document numbers, scores and sort values are read when the search
    returns; stored values and excerpts are read on demand, so those need
    the object open (close it, or use ``with``, to free it early). It keeps
    the searcher's snapshot alive, so it may outlive its searcher.
    Thread safety: its methods may run on several threads at once.

    Attributes:
        total: how many documents matched in all (exact when
            ``total_is_exact``, else a lower bound).
        total_is_exact: whether ``total`` is exact.
        query: the query searched (the default of :meth:`Hit.highlight`).
        offset: the page's offset in the whole result.
    """

    _FREE = "quarry_hits_free"

    def __init__(self, ptr: int, query: Query, offset: int) -> None:
        super().__init__(ptr)
        self.query = query
        self.offset = offset
        self._kinds: Dict[str, str] = {}
        with self._use() as p:
            self.total: int = _ffi.fn("quarry_hits_total")(p)
            self.total_is_exact: bool = _ffi.fn("quarry_hits_total_is_exact")(p)
            n = _ffi.fn("quarry_hits_len")(p)
            rules = _ffi.fn("quarry_hits_sort_value_count")(p)
            self._hits: List[Hit] = [self._read_hit(p, i, rules) for i in range(n)]

    def _read_hit(self, p: int, i: int, rules: int) -> Hit:
        doc, score, shard, shard_doc = c_uint64(), c_float(), c_uint32(), c_uint64()
        key, key_len = c_void_p(), c_size_t()
        _ffi.call("quarry_hits_doc", p, i, byref(doc))
        _ffi.call("quarry_hits_score", p, i, byref(score))
        _ffi.call("quarry_hits_shard", p, i, byref(shard))
        _ffi.call("quarry_hits_shard_doc", p, i, byref(shard_doc))
        _ffi.call("quarry_hits_merge_key", p, i, byref(key), byref(key_len))
        bits = c_uint32.from_buffer(score).value
        values = tuple(_sort_value(p, i, r) for r in range(rules))
        return Hit(
            self,
            i,
            doc.value,
            score.value,
            bits,
            values,
            shard.value,
            shard_doc.value,
            _ffi.borrowed_bytes(key, key_len),
        )

    def __len__(self) -> int:
        return len(self._hits)

    @overload
    def __getitem__(self, i: int) -> Hit: ...

    @overload
    def __getitem__(self, i: slice) -> List[Hit]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[Hit, List[Hit]]:
        return self._hits[i]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self._hits)

    def _stored(self, index: int, field: str, default: Any) -> Any:
        name = _args.text(field, "field name")
        known = self._kinds.get(field)
        schema_error: Optional[Error] = None
        with self._use() as p:
            # The getters check the field's type before the document, so
            # the one that fits answers and the others are SCHEMA errors.
            for kind in (known,) if known else ("str", "i64", "f64"):
                status, value = _STORED[kind](p, index, name)
                if status == Status.OK:
                    self._kinds[field] = kind
                    return value
                error = _ffi.failure(status)
                if status == Status.NO_VALUE:
                    self._kinds[field] = kind
                    if default is _NOTHING:
                        raise error
                    return default
                if status != Status.SCHEMA:
                    raise error
                schema_error = schema_error or error
        assert schema_error is not None
        raise schema_error

    def _highlight(
        self,
        index: int,
        field: str,
        query: Optional[Query],
        pre: str,
        post: str,
        ellipsis: str,
        escape: Union[Escape, str],
        max_len: int,
    ) -> str:
        q = self.query if query is None else query
        if not isinstance(q, Query):
            raise TypeError(f"query must be a quarry.Query, not {type(q).__name__}")
        name = _args.text(field, "field name")
        pre_b, post_b = _args.text(pre, "pre marker"), _args.text(post, "post marker")
        ellipsis_b = _args.text(ellipsis, "ellipsis")
        flags = int(_args.choice(escape, Escape, "escape"))
        limit = _args.size(max_len, "max_len")
        ptr, length = c_void_p(), c_size_t()
        with self._use() as p, q._use() as qp:
            _ffi.call(
                "quarry_hits_highlight_ex",
                p,
                index,
                qp,
                name,
                len(name),
                pre_b,
                len(pre_b),
                post_b,
                len(post_b),
                ellipsis_b,
                len(ellipsis_b),
                limit,
                flags,
                byref(ptr),
                byref(length),
            )
            return _ffi.borrowed_str(ptr, length)

    def __repr__(self) -> str:
        if self.closed:
            return "<quarry.Hits closed>"
        plus = "" if self.total_is_exact else "+"
        return f"<quarry.Hits {len(self)} of {self.total}{plus}>"


def merge_hits(parts: Sequence[Hits], *, offset: int = 0, limit: int = 10) -> Hits:
    """Merges the pages of several shards' searches into the page
    ``[offset, offset + limit)`` of their union, in the order one search
    of every shard gives (``quarry_hits_merge``): the hits
    :meth:`Searcher.open_many <quarry.Searcher.open_many>` returns for the
    same request, when each part is one shard's search with the same
    merged statistics (:meth:`Searcher.with_stats
    <quarry.Searcher.with_stats>`), query and sort, offset 0 and a limit
    of at least ``offset + limit``. The total is the parts' sum, exact
    when every part's is. The merged hits read stored values and excerpts
    through the parts' searchers; the parts stay usable (close each).

    Raises:
        InvalidArgumentError: no part; a part searched with an offset or
            with another sort than the first part's; a document in two
            parts.
        SchemaError: parts of indexes of different schemas.
    """
    if isinstance(parts, Hits):
        raise TypeError("merge_hits takes a sequence of Hits")
    for h in parts:
        if not isinstance(h, Hits):
            raise TypeError(f"merge_hits takes quarry.Hits, not {type(h).__name__}")
    off, lim = _args.size(offset, "offset"), _args.size(limit, "limit")
    with use_all(parts) as ptrs:
        ptr = _ffi.new_handle("quarry_hits_merge", ptrs, len(parts), off, lim)
    return Hits(ptr, parts[0].query, off)


def _stored_str(p: int, index: int, name: bytes) -> Tuple[int, Value]:
    ptr, length = c_void_p(), c_size_t()
    status = _ffi.fn("quarry_hits_stored_str")(p, index, name, len(name), byref(ptr), byref(length))
    return status, (_ffi.borrowed_str(ptr, length) if status == 0 else None)


def _stored_number(fn: str, ctype: Any) -> Any:
    def get(p: int, index: int, name: bytes) -> Tuple[int, Value]:
        out = ctype()
        status = _ffi.fn(fn)(p, index, name, len(name), byref(out))
        return status, out.value

    return get


_STORED = {
    "str": _stored_str,
    "i64": _stored_number("quarry_hits_stored_i64", c_int64),
    "f64": _stored_number("quarry_hits_stored_f64", c_double),
}


def _sort_value(p: int, index: int, rule: int) -> Value:
    """Hit ``index``'s value for sort rule ``rule``, by the rule's type."""
    ty = c_uint32()
    _ffi.call("quarry_hits_sort_value_type", p, index, rule, byref(ty))
    if ty.value == _VALUE_NONE:
        return None
    if ty.value == _VALUE_STR:
        ptr, length = c_void_p(), c_size_t()
        _ffi.call("quarry_hits_sort_value_str", p, index, rule, byref(ptr), byref(length))
        return _ffi.borrowed_str(ptr, length)
    if ty.value == _VALUE_I64:
        i = c_int64()
        _ffi.call("quarry_hits_sort_value_i64", p, index, rule, byref(i))
        return i.value
    if ty.value == _VALUE_F64:
        f = c_double()
        _ffi.call("quarry_hits_sort_value_f64", p, index, rule, byref(f))
        return f.value
    raise Error(
        f"sort rule {rule} has a value type this package does not know ({ty.value})", Status.UNSUPPORTED
    )
