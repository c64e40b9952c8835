#!/usr/bin/env bash
# Session 4's closing device call, after merging every branch, from a flat folder holding
# forge, gpu_tests, gpu_layouts_tests, step-tests, sm_90a-h200.toml, tests/device/step*.sh|py
# and multi_gpu.sh (tests/device/build_session4_final.sh assembles it). In priority order,
# each part under its own time limit:
#   1. forge step, quick mode (speed table against PyTorch, determinism check, FP64 reference)
#   2. --gpus all against the default (one GPU here: the same run) — issue #16
#   3. the GPU tests of the merged binary (tests/gpu.rs, tests/gpu_layouts.rs, tests/step.rs)
# One tarball final.tgz and the summaries under $OUT.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s4
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/final.tgz" -C "$W" . ; cp "$W"/*.txt "$W"/step/table.md "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$W/cache
here=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$W/nvidia-smi.txt"
echo "== step (quick, ${STEP_S:-170} s)"
bash step.sh quick "$W/step" "${STEP_S:-170}" > "$W/step.txt" 2>&1
echo "step exit $?"
echo "== --gpus all vs 0"
GPUS=all BIN=$here/forge OUT=$W/multi timeout "${MULTI_S:-80}" bash multi_gpu.sh "${MULTI_SHAPES:-D1024,2048x8192x512}" \
  --top 2 --max-seconds 0.2 > "$W/multi.txt" 2>&1
echo "multi exit $?"
echo "== GPU tests"
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-40}" ./$t --test-threads=1 \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
echo "== summary"
tail -5 "$W/multi.txt"
cat "$W/step/table.md" 2>/dev/null | head -30
grep -hE "max \||determinism|invariant|differ|PASS|FAIL" "$W/step/check.txt" 2>/dev/null | head -20
cat "$W/tests.txt"
