#!/usr/bin/env bash
# One device call: GPU tests, a cold-cache tune, a warm-cache tune, dispatch check.
# Usage on the GPU machine: bash tests/gpu_run.sh "D2048,D4096" [extra tune args]
# Writes everything under $OUT (the device tool's result folder) or ./gpu-out.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
OUT=/tmp/forge-gpu-run
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
# The device tool returns at most 8 files: everything goes into one tarball at the end.
trap 'tar czf "$FINAL/results.tgz" -C "$OUT" . ; cp "$OUT"/tune_cold.txt "$FINAL"/ 2>/dev/null' EXIT
SHAPES=${1:-D2048,D4096}
shift || true
BIN=./target/release/forge
export FORGE_CACHE=/tmp/forge-cache-cold
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/nvidia-smi.txt"
if [ -x ./target/release/gpu_tests ]; then
  ./target/release/gpu_tests --test-threads=1 2>&1 | tee "$OUT/gpu_tests.txt"
fi
start=$(date +%s.%N)
$BIN tune --arch sm_90a --shapes "$SHAPES" --run-dir "$OUT/run" --profile "$OUT/profile.toml" "$@" 2>&1 | tee "$OUT/tune_cold.txt"
cold=$(echo "$(date +%s.%N) - $start" | bc)
start=$(date +%s.%N)
$BIN tune --arch sm_90a --shapes "$SHAPES" --run-dir "$OUT/run_warm" --profile "$OUT/profile_warm.toml" "$@" 2>&1 | tail -5 > "$OUT/tune_warm.txt"
warm=$(echo "$(date +%s.%N) - $start" | bc)
$BIN select --profile "$OUT/profile.toml" 4096x4096x4096 | tee "$OUT/select.txt"
$BIN select --profile "$OUT/profile.toml" 3000x3000x3000 | tee -a "$OUT/select.txt"
echo "cold-cache tune: ${cold}s, warm-cache tune: ${warm}s" | tee "$OUT/tune_times.txt"
grep -E "chosen|no gate" "$OUT/tune_cold.txt"
grep -E "chosen|no gate" "$OUT/tune_warm.txt"
