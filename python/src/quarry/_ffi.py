"""The C functions this package calls: their ctypes prototypes, bound on
first use, and the status check every fallible call goes through.

Every prototype mirrors its declaration in ``include/quarry.h`` (a test
compares them). A function missing from the loaded library (an older one)
raises :class:`quarry.UnsupportedError` when called, not at import, so
modules built on later exports can live beside an older library.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    POINTER,
    c_bool,
    c_char_p,
    c_double,
    c_float,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _lib
from .errors import Error, UnsupportedError, error_for

__all__ = ["PROTOTYPES", "fn", "check", "last_error_message", "status_text"]

_status = c_uint32
_u32 = c_uint32
_handle = c_void_p
_out_handle = POINTER(c_void_p)
_out_str = POINTER(c_void_p)
_str = c_char_p
#: An array of handles or strings (``T *const *``), passed as addresses.
_array = POINTER(c_void_p)

#: name: (return type, argument types), as the header declares them.
PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    # errors, versions
    "quarry_status_str": (c_char_p, [_status]),
    "quarry_last_error_message": (c_char_p, []),
    "quarry_version_number": (c_uint32, []),
    "quarry_version_string": (c_char_p, []),
    # schema
    "quarry_schema_new": (_status, [_out_handle]),
    "quarry_schema_from_json": (_status, [_str, c_size_t, _out_handle]),
    "quarry_schema_add_field": (_status, [_handle, _str, c_size_t, _u32, _u32]),
    "quarry_schema_set_analyzer": (_status, [_handle, _str, c_size_t, _str, c_size_t]),
    "quarry_schema_free": (None, [_handle]),
    # indexer
    "quarry_indexer_open": (_status, [_str, c_size_t, _handle, _out_handle]),
    "quarry_indexer_create": (_status, [_str, c_size_t, _handle, _out_handle]),
    "quarry_indexer_open_with": (_status, [_str, c_size_t, _handle, c_size_t, _u32, _u32, _out_handle]),
    "quarry_indexer_add_doc": (_status, [_handle, _handle]),
    "quarry_indexer_delete_term_string": (_status, [_handle, _str, c_size_t, _str, c_size_t]),
    "quarry_indexer_delete_term_i64": (_status, [_handle, _str, c_size_t, c_int64]),
    "quarry_indexer_commit": (_status, [_handle]),
    "quarry_indexer_merge": (_status, [_handle, c_size_t]),
    "quarry_indexer_free": (None, [_handle]),
    # document builder
    "quarry_doc_new": (_status, [_out_handle]),
    "quarry_doc_add_text": (_status, [_handle, _str, c_size_t, _str, c_size_t]),
    "quarry_doc_add_string": (_status, [_handle, _str, c_size_t, _str, c_size_t]),
    "quarry_doc_add_i64": (_status, [_handle, _str, c_size_t, c_int64]),
    "quarry_doc_add_f64": (_status, [_handle, _str, c_size_t, c_double]),
    "quarry_doc_clear": (_status, [_handle]),
    "quarry_doc_free": (None, [_handle]),
    # queries
    "quarry_query_term": (_status, [_str, c_size_t, _str, c_size_t, _out_handle]),
    "quarry_query_term_i64": (_status, [_str, c_size_t, c_int64, _out_handle]),
    "quarry_query_match": (_status, [_str, c_size_t, _str, c_size_t, _u32, _out_handle]),
    "quarry_query_phrase": (_status, [_str, c_size_t, _str, c_size_t, c_uint32, _out_handle]),
    "quarry_query_boolean": (_status, [_out_handle]),
    "quarry_query_add_clause": (_status, [_handle, _u32, _handle]),
    "quarry_query_prefix": (_status, [_str, c_size_t, _str, c_size_t, _out_handle]),
    "quarry_query_range_i64": (_status, [_str, c_size_t, c_int64, _u32, c_int64, _u32, _out_handle]),
    "quarry_query_range_f64": (_status, [_str, c_size_t, c_double, _u32, c_double, _u32, _out_handle]),
    "quarry_query_range_str": (
        _status,
        [_str, c_size_t, _str, c_size_t, _u32, _str, c_size_t, _u32, _out_handle],
    ),
    "quarry_query_all": (_status, [_out_handle]),
    "quarry_query_none": (_status, [_out_handle]),
    "quarry_query_boost": (_status, [_handle, c_float, _out_handle]),
    "quarry_query_parse": (_status, [_handle, _str, c_size_t, _str, c_size_t, _u32, _out_handle]),
    "quarry_query_free": (None, [_handle]),
    # sort specs
    "quarry_sort_new": (_status, [_out_handle]),
    "quarry_sort_add_score": (_status, [_handle, _u32]),
    "quarry_sort_add_doc": (_status, [_handle, _u32]),
    "quarry_sort_add_field": (_status, [_handle, _str, c_size_t, _u32]),
    "quarry_sort_track_scores": (_status, [_handle, c_bool]),
    "quarry_sort_free": (None, [_handle]),
    # searcher
    "quarry_searcher_open": (_status, [_str, c_size_t, _out_handle]),
    "quarry_searcher_open_with": (_status, [_str, c_size_t, _u32, _out_handle]),
    "quarry_searcher_reopen": (_status, [_handle, _out_handle]),
    "quarry_searcher_doc_count": (c_uint64, [_handle]),
    "quarry_searcher_generation": (c_uint64, [_handle]),
    "quarry_searcher_set_exec_mode": (_status, [_handle, _u32]),
    "quarry_searcher_exec_mode": (_u32, [_handle]),
    "quarry_searcher_set_path": (_status, [_handle, _u32, _u32]),
    "quarry_searcher_path": (_status, [_handle, _u32, POINTER(c_uint32)]),
    "quarry_searcher_set_max_expansions": (_status, [_handle, c_size_t]),
    "quarry_searcher_set_threads": (_status, [_handle, c_size_t]),
    "quarry_searcher_search_total": (
        _status,
        [_handle, _handle, _handle, c_size_t, c_size_t, c_uint64, _out_handle],
    ),
    "quarry_searcher_free": (None, [_handle]),
    # shards
    "quarry_searcher_open_many": (_status, [_array, POINTER(c_size_t), c_size_t, _u32, _out_handle]),
    "quarry_searcher_shard_count": (c_size_t, [_handle]),
    "quarry_searcher_export_stats": (_status, [_handle, _array, c_size_t, _out_handle]),
    "quarry_searcher_with_stats": (_status, [_handle, _handle, c_uint32, _out_handle]),
    "quarry_hits_shard": (_status, [_handle, c_size_t, POINTER(c_uint32)]),
    "quarry_hits_shard_doc": (_status, [_handle, c_size_t, POINTER(c_uint64)]),
    "quarry_hits_merge_key": (_status, [_handle, c_size_t, _out_str, POINTER(c_size_t)]),
    "quarry_hits_merge": (_status, [_array, c_size_t, c_size_t, c_size_t, _out_handle]),
    "quarry_stats_from_bytes": (_status, [POINTER(c_uint8), c_size_t, _out_handle]),
    "quarry_stats_bytes": (_status, [_handle, _out_str, POINTER(c_size_t)]),
    "quarry_stats_merge": (_status, [_array, c_size_t, _out_handle]),
    "quarry_stats_doc_count": (c_uint64, [_handle]),
    "quarry_stats_shard_count": (c_size_t, [_handle]),
    "quarry_stats_free": (None, [_handle]),
    # hits
    "quarry_hits_len": (c_size_t, [_handle]),
    "quarry_hits_total": (c_uint64, [_handle]),
    "quarry_hits_total_is_exact": (c_bool, [_handle]),
    "quarry_hits_doc": (_status, [_handle, c_size_t, POINTER(c_uint64)]),
    "quarry_hits_score": (_status, [_handle, c_size_t, POINTER(c_float)]),
    "quarry_hits_stored_str": (_status, [_handle, c_size_t, _str, c_size_t, _out_str, POINTER(c_size_t)]),
    "quarry_hits_stored_i64": (_status, [_handle, c_size_t, _str, c_size_t, POINTER(c_int64)]),
    "quarry_hits_stored_f64": (_status, [_handle, c_size_t, _str, c_size_t, POINTER(c_double)]),
    "quarry_hits_highlight": (
        _status,
        [
            _handle,
            c_size_t,
            _handle,
            _str,
            c_size_t,
            _str,
            c_size_t,
            _str,
            c_size_t,
            c_size_t,
            _out_str,
            POINTER(c_size_t),
        ],
    ),
    "quarry_hits_highlight_ex": (
        _status,
        [
            _handle,
            c_size_t,
            _handle,
            _str,
            c_size_t,
            _str,
            c_size_t,
            _str,
            c_size_t,
            _str,
            c_size_t,
            c_size_t,
            _u32,
            _out_str,
            POINTER(c_size_t),
        ],
    ),
    "quarry_hits_sort_value_count": (c_size_t, [_handle]),
    "quarry_hits_sort_value_type": (_status, [_handle, c_size_t, c_size_t, POINTER(c_uint32)]),
    "quarry_hits_sort_value_i64": (_status, [_handle, c_size_t, c_size_t, POINTER(c_int64)]),
    "quarry_hits_sort_value_f64": (_status, [_handle, c_size_t, c_size_t, POINTER(c_double)]),
    "quarry_hits_sort_value_str": (_status, [_handle, c_size_t, c_size_t, _out_str, POINTER(c_size_t)]),
    "quarry_hits_free": (None, [_handle]),
    # integrity check, test support
    "quarry_index_check": (_status, [_str, c_size_t]),
    "quarry_debug_panic": (_status, []),
}

_bound: Dict[str, Callable[..., Any]] = {}


def fn(name: str) -> Callable[..., Any]:
    """The C function ``name`` with its prototype set (bound once).

    Raises:
        UnsupportedError: the loaded library does not export it.
    """
    f = _bound.get(name)
    if f is None:
        restype, argtypes = PROTOTYPES[name]
        lib = _lib.load()
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise UnsupportedError(
                f"{name} is not in the loaded library {_lib.library_path()} (an older version)"
            ) from None
        f.restype, f.argtypes = restype, argtypes
        _bound[name] = f
    return f


def last_error_message() -> str:
    """``quarry_last_error_message()`` of the calling thread, decoded."""
    raw: Optional[bytes] = fn("quarry_last_error_message")()
    return (raw or b"").decode("utf-8", "replace")


def status_text(code: int) -> str:
    """``quarry_status_str(code)``: the static name of a status code."""
    raw: Optional[bytes] = fn("quarry_status_str")(code)
    return (raw or b"").decode("utf-8", "replace")


def failure(status: int) -> Error:
    """The exception for a failed call's ``status``, with the calling
    thread's last-error message (read at once, before any other call)."""
    message = last_error_message() or status_text(status)
    return error_for(status, message)


def check(status: int) -> None:
    """Raises the :class:`quarry.Error` of ``status`` unless it is OK."""
    if status != 0:
        raise failure(status)


def call(name: str, *args: Any) -> None:
    """Calls the fallible C function ``name`` and checks its status."""
    status = fn(name)(*args)
    if status != 0:
        raise failure(status)


def new_handle(name: str, *args: Any) -> int:
    """Calls the constructor ``name`` with ``args`` and an out-pointer, and
    returns the new handle's address."""
    out = c_void_p()
    call(name, *args, ctypes.byref(out))
    assert out.value, f"{name} returned OK without a handle"
    return out.value


def borrowed_bytes(ptr: c_void_p, length: c_size_t) -> bytes:
    """Copies ``length`` bytes at ``ptr`` (borrowed from a handle that is
    alive)."""
    if not length.value:
        return b""
    assert ptr.value is not None, "non-empty bytes at NULL"
    return ctypes.string_at(ptr.value, length.value)


def borrowed_str(ptr: c_void_p, length: c_size_t) -> str:
    """Copies ``length`` UTF-8 bytes at ``ptr`` (borrowed from a hits
    object that is alive) into a ``str``."""
    return borrowed_bytes(ptr, length).decode("utf-8")
