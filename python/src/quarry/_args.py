"""Python arguments converted to what the C functions take, checked first.

Strings go to C as UTF-8 bytes and a length; integers are range-checked
(ctypes would wrap them silently); enum-like arguments accept the enum
member or its name.
"""

from __future__ import annotations

import enum
import os
from typing import Type, TypeVar, Union

from .errors import InvalidArgumentError, InvalidUtf8Error

E = TypeVar("E", bound=enum.IntEnum)

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: Text arguments: ``str``, or ``bytes`` holding UTF-8 (checked by the library).
Text = Union[str, bytes]


def text(value: Text, what: str) -> bytes:
    """``value`` as UTF-8 bytes. ``bytes`` pass unchanged (the library
    checks them); a ``str`` holding an unpaired surrogate, which has no
    UTF-8 form, raises :class:`InvalidUtf8Error`."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidUtf8Error(
                f"{what} is not valid UTF-8: it holds the unpaired surrogate "
                f"U+{ord(value[e.start]):04X} at index {e.start}"
            ) from e
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def path(value: StrPath, what: str = "path") -> bytes:
    """A file-system path as the bytes the OS uses (``os.fsencode``)."""
    try:
        return os.fsencode(os.fspath(value))
    except TypeError:
        raise TypeError(f"{what} must be a str, bytes or os.PathLike, not {type(value).__name__}") from None


def integer(value: int, what: str, lo: int, hi: int) -> int:
    """``value`` checked to be an ``int`` (not a ``bool``) in ``[lo, hi]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise InvalidArgumentError(f"{what} {value} is out of range [{lo}, {hi}]")
    return value


def i64(value: int, what: str) -> int:
    """An ``int64_t``."""
    return integer(value, what, I64_MIN, I64_MAX)


def u64(value: int, what: str) -> int:
    """A ``uint64_t``."""
    return integer(value, what, 0, U64_MAX)


def size(value: int, what: str) -> int:
    """A ``size_t`` (64 bits wide on the platforms quarry supports)."""
    return integer(value, what, 0, U64_MAX)


def u32(value: int, what: str) -> int:
    """A ``uint32_t``."""
    return integer(value, what, 0, U32_MAX)


def f64(value: float, what: str) -> float:
    """A ``double``: a ``float`` or an ``int`` (not a ``bool``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a float, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise InvalidArgumentError(f"{what} {value} is too large for a float") from None


def choice(value: Union[E, str], cls: Type[E], what: str) -> E:
    """An enum member given as itself, by name (``"desc"``, any case, ``-``
    for ``_``) or by its number (the header's constant)."""
    if isinstance(value, cls):
        return value
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            if isinstance(value, str):
                return cls[value.upper().replace("-", "_")]
            return cls(value)
        except (KeyError, ValueError):
            pass
        names = ", ".join(repr(m.name.lower()) for m in cls)
        raise InvalidArgumentError(f"{what} {value!r} is not one of {names}")
    raise TypeError(f"{what} must be a {cls.__name__} or its name, not {type(value).__name__}")
