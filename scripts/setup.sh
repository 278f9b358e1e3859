#!/usr/bin/env bash
# Installs the tools the test suite uses beyond the Rust toolchain, gcc and
# python3: pkg-config (the install test), valgrind (the C tests under
# valgrind), g++ (the header compiled as C++) and make (the C examples).
# Debian/Ubuntu only; needs root (or sudo). Tools already present are left
# alone; without apt-get or root it says what is missing and the tests that
# need it skip with a printed note.
set -euo pipefail

need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v nm >/dev/null 2>&1 || need+=(binutils)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
fi
if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; }; then
    echo "setup: installing ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
else
    echo "setup: please install: ${need[*]} (tests that need them will be skipped)" >&2
fi
