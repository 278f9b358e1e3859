#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and SanitizerCoverage on the stable
# toolchain and runs each for a bounded time (docs/FUZZING.md).
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Default: 20 seconds for each of segment, postings, manifest, tombstones, stats,
# capi. The seed corpus is regenerated from the golden files and a fresh
# index by the test suite (tests/fuzz_smoke.rs); what a run adds to the
# corpus is kept in fuzz/corpus/<target>/ for the next run. A crash leaves
# its input in fuzz/artifacts/<target>/ and fails the script: keep that
# input in fuzz/regressions/<target>/ once it is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(segment postings manifest tombstones stats capi)

host=$(rustc -vV | sed -n 's/^host: //p')
# What `cargo fuzz build --sanitizer none` passes, without the nightly-only
# sanitizer flags: coverage counters, comparison tracing, and the
# debug assertions and overflow checks a release build would drop.
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cllvm-args=-sanitizer-coverage-stack-depth \
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps RUSTFLAGS off build scripts, which are not linked with libFuzzer;
# --target-dir keeps the instrumented build in fuzz/target whatever
# CARGO_TARGET_DIR says (which the seed step below does follow).
cargo build --manifest-path fuzz/Cargo.toml --release --target "$host" \
    --target-dir fuzz/target $(printf -- '--bin %s ' "${targets[@]}")
unset RUSTFLAGS

seeds=fuzz/target/seeds
rm -rf "$seeds"
QUARRY_FUZZ_SEEDS="$PWD/$seeds" cargo test --test fuzz_smoke every_seed_is_read_through -q

# The targets' scratch files (rewritten for every input, fsynced by the
# writer) go to a memory file system where there is one.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    TMPDIR=$(mktemp -d /dev/shm/quarry-fuzz.XXXXXX)
else
    TMPDIR=$(mktemp -d "$PWD/fuzz/target/tmp.XXXXXX")
fi
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    echo "fuzz: $t for ${secs}s"
    log="fuzz/target/$t.log"
    status=0
    "fuzz/target/$host/release/$t" "fuzz/corpus/$t" "$seeds/$t" \
        -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 \
        >"$log" 2>&1 || status=$?
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|peak_rss)' "$log" || true
    if [ "$status" != 0 ]; then
        tail -40 "$log"
        echo "fuzz: $t failed; the input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
done
