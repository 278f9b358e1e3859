#!/bin/sh
# Installs the quarry C library: the shared library with its SONAME links,
# the static library, include/quarry.h (and quarry_cdef.h, its declarations
# for Python's cffi) and a generated quarry.pc.
#
#   scripts/install.sh PREFIX
#
# Environment:
#   QUARRY_LIB_DIR  where the built libquarry.so / libquarry.a are
#                   (default: target/release; run `cargo build --release` first)
#   DESTDIR         staging root for packagers (files go to $DESTDIR$PREFIX,
#                   quarry.pc still says PREFIX)
#   LIBDIR          library directory (default: $PREFIX/lib)
#
# Result (version 0.1.0):
#   $PREFIX/lib/libquarry.so.0.1.0
#   $PREFIX/lib/libquarry.so.0 -> libquarry.so.0.1.0   (the SONAME)
#   $PREFIX/lib/libquarry.so   -> libquarry.so.0       (for -lquarry)
#   $PREFIX/lib/libquarry.a
#   $PREFIX/include/quarry.h
#   $PREFIX/include/quarry_cdef.h
#   $PREFIX/lib/pkgconfig/quarry.pc
set -eu

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
prefix=$1
case $prefix in
    /*) ;;
    *) echo "$0: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
src=${QUARRY_LIB_DIR:-$root/target/release}
destdir=${DESTDIR:-}
libdir=${LIBDIR:-$prefix/lib}
includedir=$prefix/include

version=$(sed -n 's/^version *= *"\([0-9][0-9.]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || { echo "$0: cannot read the version from Cargo.toml" >&2; exit 1; }
major=${version%%.*}

if [ ! -f "$src/libquarry.so" ]; then
    echo "$0: $src/libquarry.so not found; run 'cargo build --release' (or set QUARRY_LIB_DIR)" >&2
    exit 1
fi

install -d "$destdir$libdir" "$destdir$libdir/pkgconfig" "$destdir$includedir"
install -m 755 "$src/libquarry.so" "$destdir$libdir/libquarry.so.$version"
ln -sf "libquarry.so.$version" "$destdir$libdir/libquarry.so.$major"
ln -sf "libquarry.so.$major" "$destdir$libdir/libquarry.so"
if [ -f "$src/libquarry.a" ]; then
    install -m 644 "$src/libquarry.a" "$destdir$libdir/libquarry.a"
fi
install -m 644 "$root/include/quarry.h" "$destdir$includedir/quarry.h"
install -m 644 "$root/include/quarry_cdef.h" "$destdir$includedir/quarry_cdef.h"

# What a Rust staticlib needs from the system when linked statically
# (rustc --print native-static-libs on x86_64 Linux, glibc).
libs_private="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
sed -e "s|@PREFIX@|$prefix|g" \
    -e "s|@LIBDIR@|$libdir|g" \
    -e "s|@INCLUDEDIR@|$includedir|g" \
    -e "s|@VERSION@|$version|g" \
    -e "s|@LIBS_PRIVATE@|$libs_private|g" \
    "$root/scripts/quarry.pc.in" > "$destdir$libdir/pkgconfig/quarry.pc"

echo "installed quarry $version into $destdir$prefix"
