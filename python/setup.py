"""The build hook: bundles libquarry into the package when one is at hand.

`pip install ./python` runs this. The library copied into the package as
quarry/libquarry.so is the first of:

1. $QUARRY_LIBRARY, the path of a libquarry.so (an error if it is missing);
2. $CARGO_TARGET_DIR/release/libquarry.so, when that variable is set;
3. ../target/release/libquarry.so, what `cargo build --release` and
   `make -C c-examples run` leave in this checkout.

With none of them the package is built without a library and loads one at
run time from $QUARRY_LIBRARY or the system loader. A wheel that bundles the
library is tagged for this platform (py3-none-<platform>), one without it is
pure Python.
"""

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
NAME = "libquarry.dylib" if sys.platform == "darwin" else "libquarry.so"


def library_to_bundle():
    env = os.environ.get("QUARRY_LIBRARY")
    if env:
        path = Path(env)
        if not path.is_file():
            raise SystemExit(f"QUARRY_LIBRARY={env} is not a file")
        return path
    candidates = []
    target = os.environ.get("CARGO_TARGET_DIR")
    if target:
        candidates.append(HERE.parent / target / "release" / NAME)
    candidates.append(HERE.parent / "target" / "release" / NAME)
    return next((c for c in candidates if c.is_file()), None)


LIBRARY = library_to_bundle()


class BuildPy(build_py):
    def run(self):
        super().run()
        dest = Path(self.build_lib) / "quarry" / NAME
        if LIBRARY is None:
            # A library left in the build directory by an earlier build
            # must not end up in this wheel.
            dest.unlink(missing_ok=True)
            print("quarry: no libquarry to bundle; the package will load it at run time", file=sys.stderr)
        else:
            print(f"quarry: bundling {LIBRARY}", file=sys.stderr)
            shutil.copyfile(LIBRARY, dest)


class BdistWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = LIBRARY is None

    def get_tag(self):
        python, abi, plat = super().get_tag()
        return ("py3", "none", plat) if LIBRARY is not None else (python, abi, plat)


setup(cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
