"""Ownership of C handles: each freed exactly once, never while in use.

A :class:`Handle` owns one pointer from a ``quarry_*`` constructor. Every
call that passes it to C runs inside :meth:`Handle._use`, which

- raises :class:`quarry.ClosedError` once the handle is closed, so C never
  sees a freed or NULL pointer;
- counts the call as a user. Calls the C API allows to overlap (searches on
  one searcher, getters on one hits object, a query used by concurrent
  searches) share the handle; the others (every call on an indexer,
  document or schema; a searcher's setters) take it alone and wait for the
  sharers to finish, as the header's thread-safety rules ask. ctypes
  releases the GIL during a call, so these rules matter in Python too.

``close()`` frees the handle at once when nothing uses it, or else when the
last call using it returns; either way exactly once. ``__del__`` closes a
handle nobody closed. A context manager closes on exit.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack, contextmanager
from ctypes import Array, c_void_p
from typing import Any, ClassVar, Iterator, Optional, Sequence, Type, TypeVar

from . import _ffi
from .errors import ClosedError

H = TypeVar("H", bound="Handle")


class Handle:
    """Base of every object that owns a C handle."""

    #: The C function that frees this type's handles.
    _FREE: ClassVar[str]

    _ptr: Optional[int]
    _users: int
    _alone: bool
    _closed: bool
    _cond: threading.Condition

    def __init__(self, ptr: int) -> None:
        self._ptr = ptr
        self._users = 0
        self._alone = False
        self._closed = False
        self._cond = threading.Condition(threading.Lock())

    @contextmanager
    def _use(self, alone: bool = False) -> Iterator[int]:
        """The pointer, for the calls of the ``with`` block. ``alone``: the
        block needs the handle to itself (waits for other users)."""
        with self._cond:
            while True:
                if self._closed:
                    raise ClosedError(f"the {type(self).__name__} is closed")
                if not self._alone and not (alone and self._users):
                    break
                self._cond.wait()
            self._users += 1
            self._alone = alone
            ptr = self._ptr
        assert ptr is not None
        try:
            yield ptr
        finally:
            with self._cond:
                self._users -= 1
                self._alone = False
                if self._users == 0:
                    if self._closed:
                        self._free()
                    self._cond.notify_all()

    def _free(self) -> None:
        """Frees the pointer (the condition's lock held, no users)."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            _ffi.fn(self._FREE)(ptr)

    def close(self) -> None:
        """Releases the C handle. Later use raises
        :class:`quarry.ClosedError`; closing again does nothing. A call
        running on another thread finishes first: the handle is freed when
        it returns."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            if self._users == 0:
                self._free()
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self: H) -> H:
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Any
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # Nothing can be using the handle: a running call holds a reference.
        try:
            if getattr(self, "_ptr", None) is not None:
                self._closed = True
                self._free()
        except Exception:  # interpreter shutdown: the library may be gone
            pass


@contextmanager
def use_all(handles: Sequence[Handle]) -> Iterator["Array[c_void_p]"]:
    """The pointers of ``handles`` as a C array (``T *const *``), each
    handle in shared use for the ``with`` block."""
    with ExitStack() as stack:
        ptrs = [stack.enter_context(h._use()) for h in handles]
        yield (c_void_p * len(ptrs))(*ptrs)
