#!/usr/bin/env bash
# Session 6's closing device call (not run: two starts were refused and the session's device
# time ran out): the GPU tests of the final binary (tests/gpu.rs, gpu_layouts.rs, step.rs),
# which cover the preparation passes taking the GEMM plan's launch order. From a folder
# assembled by `bash tests/device/build_drop.sh devdrop/s6f session6_final.sh`.
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6f
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-120}" ./$t --test-threads=1 --nocapture \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
grep -h "programmatic chains\|dispatch \|launch cost\|GB/s\|FAILED\|panicked" "$W"/tests-*.txt | head -20 | tee -a "$W/tests.txt"
