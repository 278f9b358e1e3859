"""Queries (``quarry_query``), built by the constructors of :class:`Query`."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Iterable, Optional, Tuple, Union

from . import _args, _ffi
from ._args import Text
from ._handle import Handle
from .errors import InvalidArgumentError
from .schema import FieldType

if TYPE_CHECKING:
    from .searcher import Searcher

__all__ = ["Operator", "Occur", "Query", "RangeValue", "MAX_QUERY_DEPTH"]

#: An end of a range: ``int`` (i64 fields), ``float`` (f64), ``str``
#: (string fields), or ``None`` for an open end.
RangeValue = Union[int, float, str, None]


class Operator(enum.IntEnum):
    """``quarry_operator``: how a match query combines its terms."""

    AND = 1
    OR = 2


class Occur(enum.IntEnum):
    """``quarry_occur``: how a boolean clause takes part."""

    #: Must match; contributes to the score.
    MUST = 1
    #: May match; contributes when it does. Without MUST or FILTER
    #: clauses, one SHOULD clause must match.
    SHOULD = 2
    #: Must not match.
    MUST_NOT = 3
    #: Must match; does not contribute to the score.
    FILTER = 4


#: How deep booleans and boosts may nest: the query parser's limit. The
#: library plans and runs a query by recursion over its nesting, and a
#: query built by hand thousands deep overflows a thread's stack (a
#: crash, not an error), so the constructors refuse what the parser would.
MAX_QUERY_DEPTH = 64


_F32_MAX = 3.4028234663852886e38


class _Bound(enum.IntEnum):
    UNBOUNDED = 0
    INCLUSIVE = 1
    EXCLUSIVE = 2


class Query(Handle):
    """A query. Made by the class methods (:meth:`term`, :meth:`match`,
    :meth:`phrase`, :meth:`prefix`, :meth:`range`, :meth:`all`,
    :meth:`none`, :meth:`boolean`, :meth:`parse`) and :meth:`boost`, and
    never changed afterwards, so one query may be used by any number of
    concurrent searches.

    Queries name fields; names and types are checked when a search runs
    (:class:`~quarry.SchemaError`), except by :meth:`parse`, which checks
    its text against the searcher at once. Scoring is BM25 for terms,
    match queries and phrases, 1.0 for prefixes, ranges and :meth:`all`,
    times the boosts above; a boolean sums its scoring clauses in order.
    """

    _FREE = "quarry_query_free"
    _desc: str
    _depth: int

    def __init__(self) -> None:
        raise TypeError("make queries with Query.term, Query.match, Query.boolean, ...")

    @classmethod
    def _make(cls, desc: str, ctor: str, *args: object, depth: int = 1) -> "Query":
        if depth > MAX_QUERY_DEPTH:
            raise InvalidArgumentError(
                f"queries nest at most {MAX_QUERY_DEPTH} booleans and boosts deep (this one {depth})"
            )
        q = cls.__new__(cls)
        Handle.__init__(q, _ffi.new_handle(ctor, *args))
        q._desc = desc
        q._depth = depth
        return q

    @classmethod
    def term(cls, field: str, value: Union[Text, int]) -> "Query":
        """Documents whose ``field`` holds exactly the term ``value``: for
        a text field one token as the analyzer makes it (not analysed
        here), for a string field the exact value, for an indexed i64
        field an ``int``."""
        name = _args.text(field, "field name")
        if isinstance(value, (str, bytes)):
            data = _args.text(value, "term")
            return cls._make(
                f"Query.term({field!r}, {value!r})", "quarry_query_term", name, len(name), data, len(data)
            )
        v = _args.i64(value, "term")
        return cls._make(f"Query.term({field!r}, {v!r})", "quarry_query_term_i64", name, len(name), v)

    @classmethod
    def match(cls, field: str, text: Text, op: Union[Operator, str] = Operator.OR) -> "Query":
        """``text`` analysed like the text field ``field``, its distinct
        terms combined with ``op`` (``"and"`` or ``"or"``)."""
        name = _args.text(field, "field name")
        data = _args.text(text, "text")
        o = _args.choice(op, Operator, "operator")
        return cls._make(
            f"Query.match({field!r}, {text!r}, {o.name.lower()!r})",
            "quarry_query_match",
            name,
            len(name),
            data,
            len(data),
            int(o),
        )

    @classmethod
    def phrase(cls, field: str, text: Text, slop: int = 0) -> "Query":
        """``text``'s tokens (analysed like ``field``) in order at
        consecutive positions, or at most ``slop`` moves out of place (two
        swapped tokens are 2). Searching it needs a text field with
        positions (:class:`~quarry.UnsupportedError` otherwise)."""
        name = _args.text(field, "field name")
        data = _args.text(text, "text")
        s = _args.u32(slop, "slop")
        return cls._make(
            f"Query.phrase({field!r}, {text!r}, slop={s})",
            "quarry_query_phrase",
            name,
            len(name),
            data,
            len(data),
            s,
        )

    @classmethod
    def prefix(cls, field: str, prefix: Text) -> "Query":
        """Documents whose text or indexed string ``field`` holds a term
        starting with ``prefix`` (not analysed: lowercase it for a text
        field). Past the searcher's expansion limit the search raises
        :class:`~quarry.TooManyTermsError`."""
        name = _args.text(field, "field name")
        data = _args.text(prefix, "prefix")
        return cls._make(
            f"Query.prefix({field!r}, {prefix!r})", "quarry_query_prefix", name, len(name), data, len(data)
        )

    @classmethod
    def range(
        cls,
        field: str,
        lower: RangeValue = None,
        upper: RangeValue = None,
        *,
        include_lower: bool = True,
        include_upper: bool = True,
        type: Union[FieldType, str, None] = None,
    ) -> "Query":
        """Documents whose ``field`` value lies between ``lower`` and
        ``upper`` (``None``: no limit on that side), each end included
        unless ``include_lower``/``include_upper`` is false.

        The range's type is ``type`` when given (``"i64"``, ``"f64"`` or
        ``"string"``), else that of the ends: ``str`` for a string field,
        ``float`` (or a mix of ``float`` and ``int``) for an f64 field,
        ``int`` for an i64 field. An f64 range compares by IEEE total
        order (-0.0 < 0.0) and allows infinite ends, not NaN.
        """
        name = _args.text(field, "field name")
        ends = [v for v in (lower, upper) if v is not None]
        if type is not None:
            ty = _args.choice(type, FieldType, "range type")
        elif not ends:
            raise TypeError("a range open at both ends needs type= (i64, f64 or string)")
        elif all(isinstance(v, (str, bytes)) for v in ends):
            ty = FieldType.STRING
        elif any(isinstance(v, float) for v in ends):
            ty = FieldType.F64
        else:
            ty = FieldType.I64

        def kind(v: RangeValue, inclusive: bool) -> int:
            if v is None:
                return int(_Bound.UNBOUNDED)
            return int(_Bound.INCLUSIVE if inclusive else _Bound.EXCLUSIVE)

        lk, uk = kind(lower, include_lower), kind(upper, include_upper)
        desc = (
            f"Query.range({field!r}, {lower!r}, {upper!r}, include_lower={include_lower}, "
            f"include_upper={include_upper}, type={ty.name.lower()!r})"
        )
        if ty is FieldType.I64:
            lo = 0 if lower is None else _args.i64(lower, "lower end")  # type: ignore[arg-type]
            hi = 0 if upper is None else _args.i64(upper, "upper end")  # type: ignore[arg-type]
            return cls._make(desc, "quarry_query_range_i64", name, len(name), lo, lk, hi, uk)
        if ty is FieldType.F64:
            flo = 0.0 if lower is None else _args.f64(lower, "lower end")  # type: ignore[arg-type]
            fhi = 0.0 if upper is None else _args.f64(upper, "upper end")  # type: ignore[arg-type]
            return cls._make(desc, "quarry_query_range_f64", name, len(name), flo, lk, fhi, uk)
        if ty is FieldType.STRING:
            slo = b"" if lower is None else _args.text(lower, "lower end")  # type: ignore[arg-type]
            shi = b"" if upper is None else _args.text(upper, "upper end")  # type: ignore[arg-type]
            return cls._make(
                desc, "quarry_query_range_str", name, len(name), slo, len(slo), lk, shi, len(shi), uk
            )
        raise TypeError(f"no range over {ty.name.lower()} fields (i64, f64 or string)")

    @classmethod
    def all(cls) -> "Query":
        """Every document, each scoring 1.0."""
        return cls._make("Query.all()", "quarry_query_all")

    @classmethod
    def none(cls) -> "Query":
        """No document."""
        return cls._make("Query.none()", "quarry_query_none")

    @classmethod
    def boolean(
        cls,
        clauses: Iterable[Tuple[Union[Occur, str], "Query"]] = (),
        *,
        must: Iterable["Query"] = (),
        should: Iterable["Query"] = (),
        must_not: Iterable["Query"] = (),
        filter: Iterable["Query"] = (),
    ) -> "Query":
        """A boolean query of ``(occur, query)`` ``clauses`` in order, then
        the ``must``, ``should``, ``must_not`` and ``filter`` queries. A
        document's score is the sum of its matching scoring clauses'
        scores in that order. The clauses are copied: the queries given
        stay the caller's. With no MUST, FILTER or SHOULD clause it
        matches nothing.
        """
        listed = [(_args.choice(o, Occur, "occur"), q) for o, q in clauses]
        for occur, group in (
            (Occur.MUST, must),
            (Occur.SHOULD, should),
            (Occur.MUST_NOT, must_not),
            (Occur.FILTER, filter),
        ):
            listed.extend((occur, q) for q in group)
        for _, q in listed:
            if not isinstance(q, Query):
                raise TypeError(f"a boolean clause is a quarry.Query, not {type(q).__name__}")
        desc = "Query.boolean([" + ", ".join(f"({o.name.lower()!r}, {q!r})" for o, q in listed) + "])"
        b = cls._make(desc, "quarry_query_boolean", depth=1 + max((q._depth for _, q in listed), default=0))
        try:
            with b._use(alone=True) as bp:
                for occur, q in listed:
                    with q._use() as qp:
                        _ffi.call("quarry_query_add_clause", bp, int(occur), qp)
        except BaseException:
            b.close()
            raise
        return b

    @classmethod
    def parse(
        cls,
        searcher: "Searcher",
        text: str,
        default_field: Optional[str] = None,
        op: Union[Operator, str] = Operator.OR,
    ) -> "Query":
        """``text`` in the query syntax (``docs/QUERY-SYNTAX.md``), checked
        against ``searcher``'s schema: clauses without ``field:`` search
        ``default_field`` (``None``: every clause names its field), clauses
        side by side combine with ``op``.

        Raises:
            QuerySyntaxError: the text is not in the syntax; ``.position``
                is the byte offset of the error in the UTF-8 text.
            SchemaError: ``default_field`` is not a field of the index.
        """
        data = _args.text(text, "query text")
        o = _args.choice(op, Operator, "operator")
        field = None if default_field is None else _args.text(default_field, "default field")
        with searcher._use() as sp:
            return cls._make(
                f"Query.parse({text!r}, {default_field!r}, {o.name.lower()!r})",
                "quarry_query_parse",
                sp,
                data,
                len(data),
                field,
                0 if field is None else len(field),
                int(o),
            )

    def boost(self, factor: float) -> "Query":
        """A new query: this one with its scores multiplied by ``factor``
        (finite, at least 0; applied to each term weight and constant
        score below, as an f32)."""
        f = _args.f64(factor, "boost")
        if abs(f) > _F32_MAX and f != float("inf"):
            # ctypes would round it to infinity, which the library names instead
            raise InvalidArgumentError(f"a boost must be an f32; {f!r} is beyond the largest")
        with self._use() as qp:
            return Query._make(
                f"{self._desc}.boost({f!r})", "quarry_query_boost", qp, f, depth=self._depth + 1
            )

    def __repr__(self) -> str:
        return f"<closed {self._desc}>" if self.closed else self._desc
