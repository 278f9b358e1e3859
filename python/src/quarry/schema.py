"""Schemas: the named, typed fields of an index."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _args, _ffi
from ._handle import Handle
from .errors import Error

__all__ = ["FieldType", "Field", "Schema", "ANALYZERS"]

#: The analyzer names the library knows (``docs/C-API.md``, "Analyzers").
ANALYZERS = ("default", "english", "english_stop", "whitespace", "keyword")


class FieldType(enum.IntEnum):
    """``quarry_field_type``."""

    #: Analysed text, always indexed; cannot be sortable.
    TEXT = 1
    #: An exact string value: sortable, optionally indexed as one token.
    STRING = 2
    #: A signed 64-bit integer: sortable, optionally indexed.
    I64 = 3
    #: A 64-bit float: sortable; cannot be indexed.
    F64 = 4


class _Flag(enum.IntFlag):
    STORED = 1
    INDEXED = 2
    SORTABLE = 4
    NO_POSITIONS = 8


@dataclass(frozen=True)
class Field:
    """One field of a :class:`Schema`, as it was given."""

    name: str
    type: FieldType
    stored: bool = False
    indexed: bool = False
    sortable: bool = False
    positions: bool = True
    analyzer: Optional[str] = None


class Schema(Handle):
    """An ordered list of named, typed fields (``quarry_schema``).

    Build one field by field::

        schema = quarry.Schema()
        schema.add_field("id", "i64", stored=True, indexed=True)
        schema.add_field("body", quarry.FieldType.TEXT, stored=True, analyzer="english")

    or from the JSON form the ``quarry`` command reads
    (:meth:`from_json`). An :class:`~quarry.Indexer` copies the schema, so
    it may be closed (or changed) afterwards. Use one schema from one
    thread at a time (calls from several threads are serialised).
    """

    _FREE = "quarry_schema_free"

    def __init__(self) -> None:
        super().__init__(_ffi.new_handle("quarry_schema_new"))
        self._json: Optional[bytes] = None
        self._json_specs: Tuple[Field, ...] = ()
        self._fields: List[Field] = []

    @classmethod
    def from_json(cls, source: Union[str, bytes, Mapping[str, Any]]) -> "Schema":
        """A schema from its JSON form, e.g.
        ``{"fields": [{"name": "id", "type": "i64", "stored": true}]}``
        (a ``str``/``bytes`` of JSON, or the same structure as a mapping).

        Raises:
            SchemaError: malformed JSON, an invalid field or analyzer.
        """
        if isinstance(source, Mapping):
            data = json.dumps(source).encode("utf-8")
        else:
            data = _args.text(source, "schema JSON")
        schema = cls.__new__(cls)
        Handle.__init__(schema, _ffi.new_handle("quarry_schema_from_json", data, len(data)))
        schema._json = data
        schema._json_specs = _json_fields(data)
        schema._fields = []
        return schema

    @property
    def fields(self) -> Tuple[Field, ...]:
        """The fields, in order (those of the JSON first, when the schema
        came from :meth:`from_json`)."""
        return self._json_specs + tuple(self._fields)

    def field(self, name: str) -> Optional[Field]:
        """The field named ``name``, or ``None``."""
        return next((f for f in self.fields if f.name == name), None)

    def add_field(
        self,
        name: str,
        type: Union[FieldType, str],
        *,
        stored: bool = False,
        indexed: bool = False,
        sortable: bool = False,
        positions: bool = True,
        analyzer: Optional[str] = None,
    ) -> "Schema":
        """Appends a field and returns the schema (so calls chain).

        Args:
            name: 1 to 255 bytes of UTF-8, unique in the schema.
            type: a :class:`FieldType` or its name (``"text"``,
                ``"string"``, ``"i64"``, ``"f64"``).
            stored: the value is kept and returned with hits.
            indexed: searchable (and deletable) as a term; implied for text.
            sortable: hits can be sorted by it (not text).
            positions: for text fields, whether token positions are
                indexed (phrase queries need them); ``False`` on another
                type is a :class:`SchemaError`.
            analyzer: for text fields, one of :data:`ANALYZERS`.

        Raises:
            SchemaError: a bad name, a duplicate, an invalid combination
                (a sortable text field, an indexed f64 field, ...), or an
                analyzer that is unknown or on a field that is not text.
                The schema is then unchanged.
        """
        spec = Field(
            name,
            _args.choice(type, FieldType, "field type"),
            bool(stored),
            bool(indexed),
            bool(sortable),
            bool(positions),
            analyzer,
        )
        with self._use(alone=True) as ptr:
            try:
                _add(ptr, spec)
            except Error:
                if spec.analyzer is not None:
                    # The field went in and its analyzer did not: build the
                    # schema again without it (the C schema has no removal).
                    self._rebuild()
                raise
        self._fields.append(spec)
        return self

    def _rebuild(self) -> None:
        """Replaces the C schema by one made again from the JSON and the
        recorded fields (the caller holds the handle alone)."""
        if self._json is not None:
            fresh = _ffi.new_handle("quarry_schema_from_json", self._json, len(self._json))
        else:
            fresh = _ffi.new_handle("quarry_schema_new")
        try:
            for spec in self._fields:
                _add(fresh, spec)
        except BaseException:
            _ffi.fn(self._FREE)(fresh)
            raise
        old, self._ptr = self._ptr, fresh
        _ffi.fn(self._FREE)(old)

    def types(self) -> Dict[str, FieldType]:
        """Each field's name and type."""
        return {f.name: f.type for f in self.fields}

    def __repr__(self) -> str:
        state = (
            "closed" if self.closed else ", ".join(f"{f.name}: {f.type.name.lower()}" for f in self.fields)
        )
        return f"<quarry.Schema {state}>"


def _add(ptr: int, spec: Field) -> None:
    """``quarry_schema_add_field`` (then ``_set_analyzer``) for ``spec``."""
    name = _args.text(spec.name, "field name")
    flags = _Flag(0)
    if spec.stored:
        flags |= _Flag.STORED
    if spec.indexed:
        flags |= _Flag.INDEXED
    if spec.sortable:
        flags |= _Flag.SORTABLE
    if not spec.positions:
        flags |= _Flag.NO_POSITIONS
    analyzer = None if spec.analyzer is None else _args.text(spec.analyzer, "analyzer name")
    _ffi.call("quarry_schema_add_field", ptr, name, len(name), int(spec.type), int(flags))
    if analyzer is not None:
        _ffi.call("quarry_schema_set_analyzer", ptr, name, len(name), analyzer, len(analyzer))


def _json_fields(data: bytes) -> Tuple[Field, ...]:
    """The fields of a schema's JSON form that the library accepted (an
    empty tuple if Python reads the JSON differently)."""
    try:
        return tuple(
            Field(
                s["name"],
                _args.choice(s["type"], FieldType, "field type"),
                bool(s.get("stored", False)),
                bool(s.get("indexed", s["type"] == "text")),
                bool(s.get("sortable", False)),
                bool(s.get("positions", True)),
                s.get("analyzer"),
            )
            for s in json.loads(data)["fields"]
        )
    except (ValueError, KeyError, TypeError, Error):
        return ()
