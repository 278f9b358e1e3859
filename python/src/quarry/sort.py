"""Sort specifications (``quarry_sort``): rules, most significant first."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple, Union

from . import _args, _ffi
from ._handle import Handle
from .errors import InvalidArgumentError

__all__ = ["Order", "SortRule", "SortSpec", "SortLike"]


class Order(enum.IntEnum):
    """``quarry_sort_order``."""

    ASC = 1
    DESC = 2


@dataclass(frozen=True)
class SortRule:
    """One rule of a :class:`SortSpec`: by score, by document number, or by
    a sortable field (``kind`` ``"score"``, ``"doc"`` or ``"field"``)."""

    kind: str
    order: Order
    field: Optional[str] = None

    @classmethod
    def score(cls, order: Union[Order, str] = Order.DESC) -> "SortRule":
        """By BM25 score (descending unless told); the hit's sort value is
        the score as a float."""
        return cls("score", _args.choice(order, Order, "sort order"))

    @classmethod
    def doc(cls, order: Union[Order, str] = Order.ASC) -> "SortRule":
        """By document number; the sort value is an int."""
        return cls("doc", _args.choice(order, Order, "sort order"))

    @classmethod
    def by_field(cls, name: str, order: Union[Order, str] = Order.ASC) -> "SortRule":
        """By the sortable string, i64 or f64 field ``name``; documents
        without a value sort last in both directions, strings by UTF-8
        bytes. The sort value has the field's type (``None`` when the
        document has no value)."""
        if not isinstance(name, str):
            raise TypeError(f"a field name is a str, not {type(name).__name__}")
        return cls("field", _args.choice(order, Order, "sort order"), name)

    @classmethod
    def parse(cls, spec: str) -> List["SortRule"]:
        """Rules written as the ``quarry`` command's ``--sort`` takes them:
        a comma list of ``score``, ``doc`` or a field name, each optionally
        ``:asc`` or ``:desc`` (score descending by default, the others
        ascending), e.g. ``"year:desc,score"``. Use :meth:`by_field` for a
        field named ``score`` or ``doc``."""
        rules = []
        for part in spec.split(","):
            key, _, order = part.strip().partition(":")
            if not key:
                raise InvalidArgumentError(f"empty rule in sort spec {spec!r}")
            if key == "score":
                rules.append(cls.score(order or Order.DESC))
            elif key == "doc":
                rules.append(cls.doc(order or Order.ASC))
            else:
                rules.append(cls.by_field(key, order or Order.ASC))
        return rules

    def __str__(self) -> str:
        return f"{self.field if self.kind == 'field' else self.kind}:{self.order.name.lower()}"


def rules_of(rules: Iterable[Union[SortRule, str]]) -> Tuple[SortRule, ...]:
    """``rules`` with each string parsed (:meth:`SortRule.parse`)."""
    parsed: List[SortRule] = []
    for r in rules:
        if isinstance(r, str):
            parsed.extend(SortRule.parse(r))
        elif isinstance(r, SortRule):
            parsed.append(r)
        else:
            raise TypeError(f"a sort rule is a SortRule or a str, not {type(r).__name__}")
    return tuple(parsed)


#: What a search's ``sort`` may be given as: a spec, a rule, a string of
#: rules, or a list of rules and strings.
SortLike = Union["SortSpec", SortRule, str, Iterable[Union[SortRule, str]]]


class SortSpec(Handle):
    """A sort order: rules, most significant first; hits equal under every
    rule go by ascending document number. Fields are checked against the
    searcher's schema when a search runs (:class:`~quarry.SchemaError`).

    ::

        quarry.SortSpec("year:desc", "score")
        quarry.SortSpec(quarry.SortRule.by_field("category"), quarry.SortRule.score())

    ``track_scores``: compute every hit's score even when no rule is a
    score rule (else their score is 0; scores cost time, not order). Never
    changed after construction, so it may be shared by concurrent searches.
    """

    _FREE = "quarry_sort_free"

    def __init__(self, *rules: Union[SortRule, str], track_scores: bool = False) -> None:
        parsed = rules_of(rules)
        super().__init__(_ffi.new_handle("quarry_sort_new"))
        self.rules: Tuple[SortRule, ...] = parsed
        self.track_scores = bool(track_scores)
        try:
            with self._use(alone=True) as ptr:
                for rule in parsed:
                    if rule.kind == "score":
                        _ffi.call("quarry_sort_add_score", ptr, int(rule.order))
                    elif rule.kind == "doc":
                        _ffi.call("quarry_sort_add_doc", ptr, int(rule.order))
                    else:
                        name = _args.text(rule.field or "", "sort field")
                        _ffi.call("quarry_sort_add_field", ptr, name, len(name), int(rule.order))
                if track_scores:
                    _ffi.call("quarry_sort_track_scores", ptr, True)
        except BaseException:
            self.close()
            raise

    @classmethod
    def of(cls, sort: SortLike) -> "SortSpec":
        """``sort`` as a spec (a new one unless it is one)."""
        if isinstance(sort, SortSpec):
            return sort
        if isinstance(sort, (str, SortRule)):
            return cls(sort)
        return cls(*sort)

    def __repr__(self) -> str:
        rules = ", ".join(repr(str(r)) for r in self.rules)
        extra = ", track_scores=True" if self.track_scores else ""
        return f"<quarry.SortSpec({rules}{extra}){' closed' if self.closed else ''}>"
