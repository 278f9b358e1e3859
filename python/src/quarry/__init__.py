"""quarry: full-text search (BM25 ranked and sorted top-k) over ``libquarry``.

A Python face of the C library, loaded with ctypes (no compiler needed)::

    import quarry

    schema = quarry.Schema()
    schema.add_field("id", "i64", stored=True, indexed=True)
    schema.add_field("body", "text", stored=True)
    with quarry.Indexer("/tmp/idx", schema) as ix:      # commits on exit
        ix.add({"id": 1, "body": "the quick brown fox"})
    with quarry.Searcher("/tmp/idx") as s:
        for hit in s.search(quarry.Query.match("body", "quick fox", "and")):
            print(hit.doc, hit.score, hit.stored("body"))

Failures raise :class:`quarry.Error` subclasses carrying the C status and
message. Every object that owns a C handle has ``close()`` and is a context
manager; one is also freed when garbage collected, and raises
:class:`quarry.ClosedError` when used after ``close()``.

Where the library is found: ``$QUARRY_LIBRARY``, else the copy bundled at
install, else the system loader (see :func:`library_path`).
"""

from __future__ import annotations

from . import _ffi, _lib, errors, hits, indexer, query, schema, searcher, sort, stats
from ._lib import LibraryNotFoundError
from .errors import *  # noqa: F403
from .hits import *  # noqa: F403
from .indexer import *  # noqa: F403
from .query import *  # noqa: F403
from .schema import *  # noqa: F403
from .searcher import *  # noqa: F403
from .sort import *  # noqa: F403
from .stats import *  # noqa: F403

__version__ = "0.1.0"

__all__ = ["__version__", "library_path", "library_version", "LibraryNotFoundError"]
__all__ += errors.__all__
__all__ += schema.__all__
__all__ += indexer.__all__
__all__ += query.__all__
__all__ += sort.__all__
__all__ += searcher.__all__
__all__ += hits.__all__
__all__ += stats.__all__


def library_path() -> str:
    """The file of the loaded ``libquarry`` (loading it if needed). The
    lookup: ``$QUARRY_LIBRARY`` if set (only it), else the copy bundled in
    the package at install, else the system loader (``libquarry.so.0``,
    then ``ctypes.util.find_library("quarry")``).

    Raises:
        LibraryNotFoundError: none loads; the message says what was tried.
    """
    return _lib.library_path()


def library_version() -> str:
    """The loaded library's version, ``"MAJOR.MINOR.PATCH"``."""
    raw: bytes = _ffi.fn("quarry_version_string")()
    return raw.decode("ascii")
