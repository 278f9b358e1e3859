"""The status codes of the C API and the exceptions that carry them.

Every failure of a library call raises an :class:`Error` whose ``status``
is the :class:`Status` the C function returned and whose ``message`` is
the text of ``quarry_last_error_message()`` for that call. Each status has
its own subclass, so ``except quarry.SchemaError`` and
``except quarry.Error as e: if e.status == quarry.Status.SCHEMA`` are the
same test.

Arguments that Python can judge before the call (a ``str`` that cannot be
encoded as UTF-8, an integer out of the C type's range, a closed handle)
raise the subclass of the status the C API would have returned, with a
message saying which argument was wrong. Arguments of the wrong Python type
raise :class:`TypeError`.
"""

from __future__ import annotations

import enum
import re
from typing import Dict, Optional, Type, Union

__all__ = [
    "Status",
    "Error",
    "NullArgumentError",
    "ClosedError",
    "InvalidArgumentError",
    "InvalidUtf8Error",
    "SchemaError",
    "IoError",
    "CorruptError",
    "UnsupportedVersionError",
    "LockedError",
    "NoIndexError",
    "IndexExistsError",
    "UnsupportedError",
    "InternalError",
    "NoValueError",
    "QuerySyntaxError",
    "TooManyTermsError",
]


class Status(enum.IntEnum):
    """``quarry_status``: the codes are the header's ``QUARRY_*`` values,
    never renumbered; a library newer than this package may return codes
    not listed here (they raise a plain :class:`Error` with an ``int``
    status)."""

    OK = 0
    NULL_ARGUMENT = 1
    INVALID_ARGUMENT = 2
    INVALID_UTF8 = 3
    SCHEMA = 4
    IO = 5
    CORRUPT = 6
    UNSUPPORTED_VERSION = 7
    LOCKED = 8
    NO_INDEX = 9
    INDEX_EXISTS = 10
    UNSUPPORTED = 11
    INTERNAL = 12
    NO_VALUE = 13
    QUERY_SYNTAX = 14
    TOO_MANY_TERMS = 15


class Error(Exception):
    """A failed quarry call.

    Attributes:
        status: the :class:`Status` (an ``int`` for a code this package
            does not know).
        message: the library's description of the failure.
    """

    status: Union[Status, int]
    message: str

    def __init__(self, message: str, status: Union[Status, int, None] = None) -> None:
        super().__init__(message)
        self.message = message
        if status is None:
            status = _STATUS_OF.get(type(self), 0)
        self.status = _as_status(status)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class NullArgumentError(Error):
    """``QUARRY_NULL_ARGUMENT``: a handle or pointer argument was NULL."""


class ClosedError(NullArgumentError, ValueError):
    """A handle was used after ``close()``. Its status is
    ``NULL_ARGUMENT``: a closed handle is NULL to the C API, which is never
    called with it."""


class InvalidArgumentError(Error, ValueError):
    """``QUARRY_INVALID_ARGUMENT``: an enum or flag value, index, count or
    length out of range, or an operation that does not apply."""


class InvalidUtf8Error(Error, ValueError):
    """``QUARRY_INVALID_UTF8``: a string is not valid UTF-8 (for ``str``
    arguments: it holds an unpaired surrogate)."""


class SchemaError(Error):
    """``QUARRY_SCHEMA``: a bad schema, or a document, query, sort rule or
    getter that does not fit the index's schema."""


class IoError(Error):
    """``QUARRY_IO``: an operating-system I/O error."""


class CorruptError(Error):
    """``QUARRY_CORRUPT``: an index file failed its checks."""


class UnsupportedVersionError(Error):
    """``QUARRY_UNSUPPORTED_VERSION``: an index file of a format this
    library cannot read."""


class LockedError(Error):
    """``QUARRY_LOCKED``: another indexer holds the index."""


class NoIndexError(Error):
    """``QUARRY_NO_INDEX``: there is no index at the path."""


class IndexExistsError(Error):
    """``QUARRY_INDEX_EXISTS``: an index exists where one was to be
    created."""


class UnsupportedError(Error):
    """``QUARRY_UNSUPPORTED``: a feature this library does not have (also
    raised for a function missing from an older library)."""


class InternalError(Error):
    """``QUARRY_INTERNAL``: a bug in quarry (a caught panic); close the
    object involved."""


class NoValueError(Error, KeyError):
    """``QUARRY_NO_VALUE``: the hit has no value for that field or rule."""


class QuerySyntaxError(Error, ValueError):
    """``QUARRY_QUERY_SYNTAX``: the text is not in the query syntax.

    Attributes:
        position: the byte offset in the UTF-8 text where the error is, as
            the message names it (``None`` if it names none).
    """

    position: Optional[int]

    def __init__(self, message: str, status: Union[Status, int, None] = None) -> None:
        super().__init__(message, status)
        m = re.search(r"at byte (\d+)", message)
        self.position = int(m.group(1)) if m else None


class TooManyTermsError(Error):
    """``QUARRY_TOO_MANY_TERMS``: a prefix or range expands past the
    searcher's limit (``Searcher.set_max_expansions``)."""


_CLASS_OF: Dict[int, Type[Error]] = {
    Status.NULL_ARGUMENT: NullArgumentError,
    Status.INVALID_ARGUMENT: InvalidArgumentError,
    Status.INVALID_UTF8: InvalidUtf8Error,
    Status.SCHEMA: SchemaError,
    Status.IO: IoError,
    Status.CORRUPT: CorruptError,
    Status.UNSUPPORTED_VERSION: UnsupportedVersionError,
    Status.LOCKED: LockedError,
    Status.NO_INDEX: NoIndexError,
    Status.INDEX_EXISTS: IndexExistsError,
    Status.UNSUPPORTED: UnsupportedError,
    Status.INTERNAL: InternalError,
    Status.NO_VALUE: NoValueError,
    Status.QUERY_SYNTAX: QuerySyntaxError,
    Status.TOO_MANY_TERMS: TooManyTermsError,
}
_STATUS_OF: Dict[Type[Error], int] = {cls: code for code, cls in _CLASS_OF.items()}
_STATUS_OF[ClosedError] = Status.NULL_ARGUMENT


def _as_status(code: int) -> Union[Status, int]:
    try:
        return Status(code)
    except ValueError:
        return code


def error_for(status: int, message: str) -> Error:
    """The exception of ``status`` (a plain :class:`Error` for an unknown
    code) carrying ``message``."""
    return _CLASS_OF.get(status, Error)(message, status)
