#!/usr/bin/env bash
# Installs the tools the test suite uses beyond the Rust toolchain, gcc and
# python3: pkg-config (the install test), valgrind (the C tests under
# valgrind), g++ and clang (the header compiled as C++ and with clang), make
# (the C examples), binutils (nm, readelf), abigail-tools (abidw/abidiff, the
# ABI check), python3-venv (the Python package's tests install it into a
# fresh virtual environment; its Dask test fetches dask[distributed] from the
# package index into another one, so nothing of it is installed here) and
# Python's cffi (the cffi ABI-mode test).
# Debian/Ubuntu only; needs root (or sudo) for apt-get. Tools already present
# are left alone, so running it again does nothing. Without apt-get or root
# it says what is missing; the tests that need it then skip with a printed
# note, or fail under QUARRY_REQUIRE_TOOLS=1 (which .ci/run sets).
set -euo pipefail

need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v make >/dev/null 2>&1 || need+=(make)
command -v nm >/dev/null 2>&1 || need+=(binutils)
{ command -v abidw && command -v abidiff; } >/dev/null 2>&1 || need+=(abigail-tools)
# Debian ships venv's ensurepip apart from python3.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    need+=(python3-venv)
fi

if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; }; then
        echo "setup: installing ${need[*]}"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    else
        echo "setup: please install: ${need[*]} (tests that need them will be skipped)" >&2
    fi
fi

# cffi for the python3 the tests run (a pyenv or system interpreter alike).
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import cffi" >/dev/null 2>&1; then
    echo "setup: installing the Python module cffi"
    python3 -m pip install --user --quiet cffi ||
        python3 -m pip install --user --quiet --break-system-packages cffi ||
        echo "setup: please install the Python module cffi (the cffi test will be skipped)" >&2
fi
