#!/usr/bin/env bash
# One device call for every operand layout (issue #11 §1) and K % 4 ≠ 0 (issue #12): the
# layout GPU tests (tests/gpu_layouts.rs: each layout's product bit-identical to the canonical
# TN product of the explicitly transposed operands), then `forge tune` of nn, nt and tt at
# $LAYOUT_SHAPES and of TN at the ragged $RAGGED_SHAPES, each timed head to head against cuBLAS
# called with the matching transposes in the same worker, all into one profile. "operand
# preparation" lines give each chosen schedule's measured preparation time and bandwidth beside
# the cost model's transpose term.
# Usage on the GPU machine, from a directory holding `forge` and `gpu_layouts_tests` (built by
# `cargo build --release` and `test_binary gpu_layouts`, tests/device/test_binary.sh):
#   bash layouts.sh [tune args]
# Results: one tarball results.tgz under $OUT, plus the text logs.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
OUT=/tmp/forge-layouts
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
trap 'tar czf "$FINAL/results.tgz" -C "$OUT" . ; cp "$OUT"/*.txt "$FINAL"/ 2>/dev/null' EXIT
BIN=${FORGE_BIN:-./forge}
export FORGE_CACHE=/tmp/forge-cache-layouts
LAYOUT_SHAPES=${LAYOUT_SHAPES:-D2048,D4096,4096x5376x7168}
RAGGED_SHAPES=${RAGGED_SHAPES:-257x513x1025,1000x1000x1001}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUT/nvidia-smi.txt"
if [ -x ./gpu_layouts_tests ]; then
  timeout "${TEST_LIMIT:-150}" ./gpu_layouts_tests --test-threads=1 --nocapture > "$OUT/gpu_layouts_tests.txt" 2>&1
  echo "gpu_layouts_tests exit $?"
  grep -E "^test |test result|panicked|operand preparation" "$OUT/gpu_layouts_tests.txt"
fi
run_tune() {  # NAME LIMIT_S tune-args...
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$BIN" tune --arch sm_90a --run-dir "$OUT/run_$name" --profile "$OUT/profile.toml" "$@" \
    > "$OUT/tune_$name.txt" 2>&1
  echo "tune $name exit $? in $(( $(date +%s) - t0 )) s"
}
run_tune tn_ragged "${RAGGED_LIMIT:-90}" --shapes "$RAGGED_SHAPES" "$@"
for l in nn nt tt; do
  run_tune "$l" "${LAYOUT_LIMIT:-120}" --layout "$l" --shapes "$LAYOUT_SHAPES" "$@"
done
"$BIN" select --profile "$OUT/profile.toml" --layout nt 3000x3000x3000 > "$OUT/select.txt" 2>&1
grep -hE "chosen|ratio|operand preparation|no gate|rror" "$OUT"/tune_*.txt | cut -c1-220
