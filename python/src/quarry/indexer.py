"""Writing an index: :class:`Indexer` and the document builder :class:`Doc`."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Type, Union

from . import _args, _ffi
from ._args import StrPath, Text
from ._handle import Handle
from .schema import FieldType, Schema

__all__ = ["Doc", "Indexer", "DocValue"]

#: What a field of a document mapping may hold: ``str`` (text or string
#: fields), ``int`` (i64, or f64), ``float`` (f64), a list of ``str`` (the
#: several values of a text field), or ``None`` (no value).
DocValue = Union[str, int, float, Iterable[str], None]


class Doc(Handle):
    """A document under construction (``quarry_doc``): (field, value) pairs,
    checked against the index's schema when :meth:`Indexer.add` adds it.

    Each ``add_*`` returns the document, so calls chain::

        doc = quarry.Doc().add_i64("id", 7).add_text("body", "the quick brown fox")

    A text field may be given several values; other fields one. Reuse a
    document with :meth:`clear`. Use one document from one thread at a
    time (calls from several threads are serialised).
    """

    _FREE = "quarry_doc_free"

    def __init__(
        self, values: Optional[Mapping[str, DocValue]] = None, schema: Optional[Schema] = None
    ) -> None:
        """An empty document, or one holding ``values`` (see :meth:`update`)."""
        super().__init__(_ffi.new_handle("quarry_doc_new"))
        if values is not None:
            self.update(values, schema)

    def _add(self, fn: str, field: str, *value: object) -> "Doc":
        """``fn(doc, field, len, *value)``: one of the ``quarry_doc_add_*``."""
        name = _args.text(field, "field name")
        with self._use(alone=True) as ptr:
            _ffi.call(fn, ptr, name, len(name), *value)
        return self

    def add_text(self, field: str, value: Text) -> "Doc":
        """Adds a value of the text field ``field`` (analysed when indexed;
        ``bytes`` must be UTF-8)."""
        data = _args.text(value, f"value of field {field!r}")
        return self._add("quarry_doc_add_text", field, data, len(data))

    def add_string(self, field: str, value: Text) -> "Doc":
        """Adds the value of the string field ``field`` (kept exactly)."""
        data = _args.text(value, f"value of field {field!r}")
        return self._add("quarry_doc_add_string", field, data, len(data))

    def add_i64(self, field: str, value: int) -> "Doc":
        """Adds the value of the i64 field ``field``."""
        return self._add("quarry_doc_add_i64", field, _args.i64(value, f"value of field {field!r}"))

    def add_f64(self, field: str, value: float) -> "Doc":
        """Adds the value of the f64 field ``field``."""
        return self._add("quarry_doc_add_f64", field, _args.f64(value, f"value of field {field!r}"))

    def update(self, values: Mapping[str, DocValue], schema: Optional[Schema] = None) -> "Doc":
        """Adds every value of ``values``, each by the adder of its field's
        type in ``schema``. Without a schema (or for a field it lacks) the
        Python type decides: ``int`` is i64, ``float`` f64; a ``str`` then
        raises :class:`TypeError`, as text and string fields take the same
        Python type. ``None`` adds nothing.
        """
        types = schema.types() if schema is not None else {}
        for field, value in values.items():
            if value is None:
                continue
            ty = types.get(field)
            if isinstance(value, (list, tuple)) and ty in (FieldType.TEXT, None):
                for v in value:
                    self._add_typed(field, v, ty, bool(types))
            else:
                self._add_typed(field, value, ty, bool(types))
        return self

    def _add_typed(self, field: str, value: Any, ty: Optional[FieldType], have_schema: bool) -> None:
        if ty is FieldType.TEXT:
            self.add_text(field, value)
        elif ty is FieldType.STRING:
            self.add_string(field, value)
        elif ty is FieldType.I64:
            self.add_i64(field, value)
        elif ty is FieldType.F64:
            self.add_f64(field, value)
        elif isinstance(value, bool):
            raise TypeError(f"field {field!r}: a bool is not a field value")
        elif isinstance(value, int):
            self.add_i64(field, value)
        elif isinstance(value, float):
            self.add_f64(field, value)
        elif isinstance(value, (str, bytes)) and have_schema:
            # Not in the schema: the indexer reports the unknown field.
            self.add_string(field, value)
        elif isinstance(value, (str, bytes)):
            raise TypeError(
                f"field {field!r}: a str value may be text or string; give the Indexer "
                "the index's Schema, or use Doc.add_text / Doc.add_string"
            )
        else:
            raise TypeError(f"field {field!r}: unsupported value type {type(value).__name__}")

    def clear(self) -> "Doc":
        """Removes every value, so the document can be reused."""
        with self._use(alone=True) as ptr:
            _ffi.call("quarry_doc_clear", ptr)
        return self

    def __repr__(self) -> str:
        return f"<quarry.Doc{' closed' if self.closed else ''}>"


class Indexer(Handle):
    """The one writer of an index (``quarry_indexer``).

    It holds the index's lock from opening until :meth:`close`, so a second
    indexer on the directory, in this process or another, raises
    :class:`~quarry.LockedError`. Added documents and deletions become
    visible to searchers opened after :meth:`commit`.

    As a context manager it commits on a normal exit and discards the
    uncommitted work when the block raises, then closes::

        with quarry.Indexer("/tmp/idx", schema) as ix:
            ix.add({"id": 1, "body": "the quick brown fox"})

    :meth:`close` (and garbage collection) discards what was not
    committed. Calls from several threads are serialised.
    """

    _FREE = "quarry_indexer_free"

    def __init__(
        self,
        path: StrPath,
        schema: Optional[Schema] = None,
        *,
        create: bool = False,
        threads: int = 0,
        memory_budget: int = 0,
    ) -> None:
        """Opens the index in the directory ``path`` for writing.

        Args:
            path: the index directory (created when needed).
            schema: the schema of a new index; for an existing one it must
                equal the index's (or be ``None``). It is copied. It also
                tells :meth:`add` the type of each field of a mapping.
            create: require a new index (:class:`~quarry.IndexExistsError`
                when the directory holds one already).
            threads: threads that analyse and invert documents beside
                the caller's (0: none, :meth:`add` does it; at most 256).
                With one, :meth:`add` only checks and queues a document;
                with several, documents go to them in runs of the order
                they are added in. Searches give the same hits, score bits
                and totals as after a build on the caller's thread; an
                error writing a full buffer is raised by the next commit.
            memory_budget: bytes the buffered documents may take before
                they are written as a segment (0: 256 MiB), shared by the
                threads.

        Raises:
            NoIndexError: no index at ``path`` and no ``schema``.
            SchemaError: ``schema`` differs from the index's, or has no
                fields.
            LockedError: another indexer holds the index.
            InvalidArgumentError: more than 256 threads.
            IoError, CorruptError, UnsupportedVersionError.
        """
        raw = _args.path(path)
        threads = _args.u32(threads, "threads")
        memory_budget = _args.size(memory_budget, "memory_budget")
        if threads > 0 or memory_budget != 0:
            # Libraries from before quarry_indexer_open_with lack it; the
            # defaults need only the older exports.
            flags = 1 if create else 0  # QUARRY_INDEXER_CREATE
            fn, extra = "quarry_indexer_open_with", (memory_budget, threads, flags)
        else:
            fn, extra = ("quarry_indexer_create" if create else "quarry_indexer_open"), ()
        if schema is None:
            ptr = _ffi.new_handle(fn, raw, len(raw), None, *extra)
        else:
            with schema._use(alone=True) as sp:
                ptr = _ffi.new_handle(fn, raw, len(raw), sp, *extra)
        super().__init__(ptr)
        self._path = raw
        self._schema = schema
        self._doc: Optional[Doc] = None
        self._pending = False

    @property
    def path(self) -> bytes:
        """The index directory, as bytes."""
        return self._path

    def add(self, doc: Union[Doc, Mapping[str, DocValue]]) -> None:
        """Adds a document, searchable after the next :meth:`commit`: a
        :class:`Doc`, or a mapping of field names to values (converted as
        :meth:`Doc.update` says, with the schema the indexer was opened
        with).

        Raises:
            SchemaError: a field not in the index's schema, a value of the
                wrong type, two values of a non-text field (the document is
                then not added).
            IoError: flushing a full buffer failed (the buffered documents
                are kept).
        """
        if isinstance(doc, Doc):
            self._add_doc(doc)
            return
        if not isinstance(doc, Mapping):
            raise TypeError(f"a document is a quarry.Doc or a mapping, not {type(doc).__name__}")
        if self._doc is None:
            self._doc = Doc()
        self._doc.clear().update(doc, self._schema)
        self._add_doc(self._doc)

    def _add_doc(self, doc: Doc) -> None:
        with self._use(alone=True) as ptr, doc._use() as dp:
            _ffi.call("quarry_indexer_add_doc", ptr, dp)
            self._pending = True

    def delete(self, field: str, value: Union[str, int]) -> None:
        """Deletes every document whose indexed string field (``str``
        value) or indexed i64 field (``int`` value) ``field`` holds
        ``value``, those committed and those added before; takes effect at
        the next :meth:`commit`.

        Raises:
            SchemaError: no such field, or not an indexed field of the
                value's type.
        """
        name = _args.text(field, "field name")
        with self._use(alone=True) as ptr:
            if isinstance(value, (str, bytes)):
                data = _args.text(value, "value")
                _ffi.call("quarry_indexer_delete_term_string", ptr, name, len(name), data, len(data))
            else:
                v = _args.i64(value, "value")
                _ffi.call("quarry_indexer_delete_term_i64", ptr, name, len(name), v)
            self._pending = True

    def commit(self) -> None:
        """Makes every addition and deletion so far durable and visible to
        searchers opened (or reopened) afterwards.

        Raises:
            IoError: the previous commit stays the index and the work is
                kept, so the commit can be retried.
        """
        with self._use(alone=True) as ptr:
            _ffi.call("quarry_indexer_commit", ptr)
            self._pending = False

    def merge(self, max_segments: int = 1) -> None:
        """Commits, then merges segments until at most ``max_segments``
        remain (a lone segment with deletions is rewritten without them);
        the merge is committed too.

        Raises:
            InvalidArgumentError: ``max_segments`` is 0.
        """
        n = _args.size(max_segments, "max_segments")
        with self._use(alone=True) as ptr:
            _ffi.call("quarry_indexer_merge", ptr, n)
            self._pending = False

    def close(self) -> None:
        """Releases the index's lock, discarding uncommitted work."""
        if self._doc is not None:
            self._doc.close()
        super().close()

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Any
    ) -> None:
        try:
            if exc_type is None and self._pending and not self.closed:
                self.commit()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"<quarry.Indexer {self._path!r}{' closed' if self.closed else ''}>"
