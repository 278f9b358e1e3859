"""Finding and loading ``libquarry``.

The lookup order, first match wins:

1. ``$QUARRY_LIBRARY``: the path of the library file. When it is set it is
   the only candidate, so a wrong path is an error rather than a silent
   fallback to another copy.
2. The copy bundled into the package when it was built (``pip install``
   copies ``libquarry.so`` from the build tree, see ``setup.py``).
3. The system's dynamic loader: ``libquarry.so.0`` (the SONAME, found
   through ``LD_LIBRARY_PATH``, the loader cache and the default
   directories, e.g. after ``scripts/install.sh /usr/local``), then
   whatever ``ctypes.util.find_library("quarry")`` names.

The library is loaded on first use, not at import.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from pathlib import Path
from typing import List, Optional, Tuple

__all__ = ["ENV_VAR", "BUNDLED", "load", "library_path", "LibraryNotFoundError"]

#: The environment variable naming the library file to load.
ENV_VAR = "QUARRY_LIBRARY"

if sys.platform == "darwin":
    _FILE, _SONAME = "libquarry.dylib", "libquarry.0.dylib"
else:
    _FILE, _SONAME = "libquarry.so", "libquarry.so.0"

#: Where the build copies the library inside the package.
BUNDLED = Path(__file__).resolve().parent / _FILE

#: The oldest library this package works with: 0.1.0, as
#: ``quarry_version_number()`` encodes it (``MAJOR * 1000000 + MINOR * 1000
#: + PATCH``). The major version must match (the SONAME's promise).
MIN_VERSION = 1000


class LibraryNotFoundError(ImportError):
    """No usable ``libquarry`` was found; the message lists every place
    tried and why each failed."""


_lock = threading.Lock()
_loaded: Optional[Tuple[ctypes.CDLL, str]] = None


def _candidates() -> List[Tuple[str, str]]:
    """``(description, what to dlopen)`` in lookup order."""
    env = os.environ.get(ENV_VAR)
    if env:
        return [(f"${ENV_VAR}", env)]
    found: List[Tuple[str, str]] = []
    if BUNDLED.exists():
        found.append(("the copy bundled in the package", str(BUNDLED)))
    found.append(("the system loader", _SONAME))
    name = ctypes.util.find_library("quarry")
    if name and name != _SONAME:
        found.append(("ctypes.util.find_library", name))
    return found


def _check_version(lib: ctypes.CDLL) -> None:
    fn = lib.quarry_version_number
    fn.restype, fn.argtypes = ctypes.c_uint32, []
    number = fn()
    if number // 1000000 != MIN_VERSION // 1000000 or number < MIN_VERSION:
        raise OSError(
            f"library version {number // 1000000}.{number // 1000 % 1000}.{number % 1000} "
            f"does not fit this package (needs {MIN_VERSION // 1000000}.x, "
            f"at least {MIN_VERSION // 1000000}.{MIN_VERSION // 1000 % 1000}.{MIN_VERSION % 1000})"
        )


def load() -> ctypes.CDLL:
    """The loaded library (loading it on the first call).

    Raises:
        LibraryNotFoundError: no candidate loads, or the one that does is
            of an incompatible version.
    """
    global _loaded
    if _loaded is not None:
        return _loaded[0]
    with _lock:
        if _loaded is None:
            failures = []
            for how, target in _candidates():
                try:
                    lib = ctypes.CDLL(target)
                    _check_version(lib)
                except (OSError, AttributeError) as e:
                    failures.append(f"  {how} ({target}): {e}")
                    continue
                _loaded = (lib, _resolve(lib, target))
                break
            else:
                raise LibraryNotFoundError(
                    "cannot load libquarry; tried, in order:\n"
                    + "\n".join(failures)
                    + f"\nSet {ENV_VAR} to the path of libquarry.so, or build the "
                    "library (cargo build --release) before pip install."
                )
        return _loaded[0]


def library_path() -> str:
    """The file of the loaded library (loading it first)."""
    load()
    assert _loaded is not None
    return _loaded[1]


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _resolve(lib: ctypes.CDLL, target: str) -> str:
    """The path of the file the loader chose for ``target`` (``dladdr`` on
    one of its functions), or ``target`` itself when that cannot be told."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        dladdr.restype = ctypes.c_int
        info = _DlInfo()
        addr = ctypes.cast(lib.quarry_version_number, ctypes.c_void_p)
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    except (AttributeError, OSError):
        pass
    return target
