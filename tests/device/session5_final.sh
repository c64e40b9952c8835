#!/usr/bin/env bash
# Session 5's closing device call, from a folder assembled by
#   bash tests/device/build_drop.sh devdrop/s5c session5_final.sh session5_suite.sh
# with the 15:13 suite run (run_suite/, profile_suite.toml) copied into devdrop/s5c/resume:
#   1. the GPU tests of the final binary (tests/gpu.rs, gpu_layouts.rs, step.rs);
#   2. the suite shapes whose 15:13 choice came from a screen launched programmatically
#      (which mis-ranks memory-bound grids under the SM count), tuned again by the final tuner
#      (serial screens; finalists serial, the fastest also programmatic), into the same run.
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s5c
rm -rf "$W"; mkdir -p "$W" "$FINAL"
export FORGE_CACHE=$here/cache
echo "== GPU tests"
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-90}" ./$t --test-threads=1 --nocapture \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
grep -h "programmatic chains\|dispatch \|launch cost" "$W/tests-gpu_tests.txt" | tee -a "$W/tests.txt"
tar czf "$FINAL/tests.tgz" -C "$W" .
echo "== suite shapes tuned again"
RESUME=$here/resume SUITE_SHAPES=${RETUNE:-128x5376x7168,128x5376x14336,128x21504x5376,128x28672x5376,3000x5000x1000,6144x6144x6144,4096x21504x5376,4096x5376x14336} \
  bash session5_suite.sh --force "$@"
cat "$W/tests.txt"
