"""The package against the library and its header: every prototype and
constant as ``include/quarry.h`` declares them, the versions, and the
lookup order of the library."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Tuple

import quarry
from quarry import _ffi, _lib

from common import ROOT

HEADER = ROOT / "include" / "quarry.h"

_SCALARS: Dict[str, Any] = {
    "size_t": ctypes.c_size_t,
    "uint64_t": ctypes.c_uint64,
    "int64_t": ctypes.c_int64,
    "uint32_t": ctypes.c_uint32,
    "uint8_t": ctypes.c_uint8,
    "double": ctypes.c_double,
    "float": ctypes.c_float,
    "bool": ctypes.c_bool,
}


def header_prototypes() -> Dict[str, Tuple[Any, List[Any]]]:
    """Each function of the header with the ctypes types its declaration
    maps to: ``quarry_*`` integer typedefs are ``uint32_t``, handles
    ``void *``, strings in ``char *``, and every ``T **`` out-parameter
    ``void **`` (the package reads pointers it is handed back as
    addresses)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*|^#[^\n]*", "", HEADER.read_text(), flags=re.S | re.M)
    typedefs = set(re.findall(r"typedef uint32_t (\w+);", text))
    handles = set(re.findall(r"typedef struct (\w+) \1;", text))

    def ctype(decl: str) -> Any:
        decl = decl.replace("const ", "").strip()
        stars = decl.count("*")
        base = decl.replace("*", "").split()[0]
        if stars == 2 or (stars == 1 and base in handles):
            return ctypes.c_void_p if stars == 1 else ctypes.POINTER(ctypes.c_void_p)
        if base == "char" and stars == 1:
            return ctypes.c_char_p
        scalar = ctypes.c_uint32 if base in typedefs else _SCALARS.get(base)
        if base == "void" and stars == 0:
            return None
        assert scalar is not None, decl
        return ctypes.POINTER(scalar) if stars else scalar

    found = {}
    for ret, name, params in re.findall(r"([\w\s\*]+?)\s*\b(quarry_\w+)\(([^)]*)\);", text):
        args = (
            []
            if params.strip() == "void"
            else [ctype(re.sub(r"\w+$", "", p.strip())) for p in params.split(",")]
        )
        found[name] = (ctype(ret), args)
    return found


class AgainstTheHeader(unittest.TestCase):
    def test_every_prototype_matches_its_declaration(self) -> None:
        declared = header_prototypes()
        self.assertGreater(len(declared), 70)
        for name, (ret, args) in _ffi.PROTOTYPES.items():
            self.assertIn(name, declared, f"{name} is not in the header")
            want_ret, want_args = declared[name]
            # strings returned (status texts, the version) are read as NUL-terminated
            self.assertEqual(ret, want_ret, name)
            self.assertEqual(args, want_args, name)

    def test_every_function_the_package_binds_is_exported(self) -> None:
        exported = set((ROOT / "abi" / "symbols.txt").read_text().split())
        self.assertLessEqual(set(_ffi.PROTOTYPES), exported)
        for name in _ffi.PROTOTYPES:
            self.assertTrue(callable(_ffi.fn(name)), name)

    def test_constants_match_the_header(self) -> None:
        defines = {n: int(v) for n, v in re.findall(r"#define QUARRY_(\w+) (\d+)\b", HEADER.read_text())}
        groups: List[Tuple[str, Any]] = [
            ("", quarry.Status),
            ("FIELD_", quarry.FieldType),
            ("OPERATOR_", quarry.Operator),
            ("OCCUR_", quarry.Occur),
            ("SORT_", quarry.Order),
            ("EXEC_", quarry.ExecMode),
            ("PATH_", quarry.FastPath),
            ("SWITCH_", quarry.Switch),
        ]
        for prefix, enum in groups:
            for member in enum:
                self.assertEqual(defines[prefix + member.name], member.value, f"QUARRY_{prefix}{member.name}")
        self.assertEqual(len([n for n in defines if n.startswith("OCCUR_")]), len(quarry.Occur))
        self.assertEqual(defines["TOTAL_DEFAULT"], quarry.TOTAL_DEFAULT)
        self.assertEqual(defines["TOTAL_LOWER_BOUND"], quarry.TOTAL_LOWER_BOUND)
        self.assertIn("#define QUARRY_TOTAL_EXACT 18446744073709551615ull", HEADER.read_text())
        self.assertEqual(quarry.TOTAL_EXACT, 18446744073709551615)
        from quarry.query import _Bound
        from quarry.schema import _Flag

        for member in _Bound:
            self.assertEqual(defines["BOUND_" + member.name], member.value)
        for member in _Flag:
            self.assertEqual(defines["FIELD_" + member.name], member.value)


class Versions(unittest.TestCase):
    def test_package_library_and_crate_agree(self) -> None:
        cargo = (ROOT / "Cargo.toml").read_text()
        crate = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)  # type: ignore[union-attr]
        self.assertEqual(quarry.__version__, crate)
        self.assertEqual(quarry.library_version(), crate)
        pyproject = (ROOT / "python" / "pyproject.toml").read_text()
        self.assertIn(f'version = "{crate}"', pyproject)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != _lib.ENV_VAR}
    environ.update(env)
    with tempfile.TemporaryDirectory() as cwd:  # nothing importable beside the child
        return subprocess.run(
            [sys.executable, "-c", code], env=environ, capture_output=True, text=True, cwd=cwd
        )


class LookupOrder(unittest.TestCase):
    def test_the_environment_variable_wins_and_is_the_only_candidate(self) -> None:
        path = quarry.library_path()
        r = run_python("import quarry; print(quarry.library_path())", QUARRY_LIBRARY=path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.path.realpath(path))
        r = run_python("import quarry; quarry.library_version()", QUARRY_LIBRARY="/nonexistent/libquarry.so")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFoundError", r.stderr)
        self.assertIn("$QUARRY_LIBRARY (/nonexistent/libquarry.so)", r.stderr)
        self.assertNotIn("bundled", r.stderr)  # no fallback to another copy

    def test_without_it_the_bundled_copy_then_the_loader(self) -> None:
        r = run_python(
            "import quarry, quarry._lib as l; print(l.BUNDLED.exists()); print(quarry.library_path())"
        )
        if _lib.BUNDLED.exists():
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["True", str(_lib.BUNDLED)])
        elif r.returncode == 0:  # no copy in the package: the system's library
            self.assertEqual(r.stdout.split()[0], "False")
            self.assertNotEqual(r.stdout.split()[1], str(_lib.BUNDLED))
        else:
            self.assertIn("the system loader (libquarry.so.0)", r.stderr)
        if os.environ.get("QUARRY_EXPECT_BUNDLED") == "1":
            self.assertTrue(_lib.BUNDLED.exists())
            self.assertEqual(quarry.library_path(), str(_lib.BUNDLED))

    def test_importing_does_not_load(self) -> None:
        r = run_python(
            "import quarry, quarry._lib as l; print(l._loaded is None)", QUARRY_LIBRARY="/nonexistent"
        )
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "True"), r.stderr)

    def test_a_missing_export_is_unsupported_when_called(self) -> None:
        _ffi.PROTOTYPES["quarry_not_yet_exported"] = (ctypes.c_uint32, [])
        try:
            with self.assertRaises(quarry.UnsupportedError) as e:
                _ffi.fn("quarry_not_yet_exported")
            self.assertIn("quarry_not_yet_exported", e.exception.message)
        finally:
            del _ffi.PROTOTYPES["quarry_not_yet_exported"]


if __name__ == "__main__":
    unittest.main()
