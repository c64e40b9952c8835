#!/usr/bin/env bash
# One device call: GPU tests, a cold-cache and a warm-cache tune of $SHAPES (default
# D2048,D4096), then, when SUITE=1, the whole issue-#4 suite into the shipped profile.
# Usage on the GPU machine: SUITE=1 bash tests/device/gpu_run.sh "D2048,D4096" [extra tune args]
# Results go into one tarball under $OUT (the device tool returns at most 8 files).
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
OUT=/tmp/forge-gpu-run
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
trap 'tar czf "$FINAL/results.tgz" -C "$OUT" . ; cp "$OUT"/*.txt "$FINAL"/ 2>/dev/null' EXIT
SHAPES=${1:-D2048,D4096}
shift || true
BIN=./target/release/forge
# A new cache directory per call: the first tune below really starts cold.
export FORGE_CACHE=/tmp/forge-cache-$(date +%s%N)
now() { date +%s%N; }
secs() { echo "$(( ($2 - $1) / 1000000 ))ms"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUT/nvidia-smi.txt"
if [ -x ./target/release/gpu_tests ]; then
  FORGE_BIN=$PWD/$BIN ./target/release/gpu_tests --test-threads=1 --nocapture > "$OUT/gpu_tests.txt" 2>&1
  grep -E "^test |test result|launch cost|fault isolation|pieces per tail tile|dispatch " "$OUT/gpu_tests.txt"
fi
t0=$(now)
$BIN tune --arch sm_90a --shapes "$SHAPES" --run-dir "$OUT/run_cold" --profile "$OUT/profile_cold.toml" "$@" > "$OUT/tune_cold.txt" 2>&1
t1=$(now)
$BIN tune --arch sm_90a --shapes "$SHAPES" --run-dir "$OUT/run_warm" --profile "$OUT/profile_warm.toml" "$@" > "$OUT/tune_warm.txt" 2>&1
t2=$(now)
echo "cold-cache tune: $(secs $t0 $t1), warm-cache tune: $(secs $t1 $t2)" | tee "$OUT/tune_times.txt"
$BIN select --profile "$OUT/profile_cold.toml" 3000x3000x3000 > "$OUT/select.txt" 2>&1
grep -hE "chosen|no gate|error" "$OUT/tune_cold.txt" "$OUT/tune_warm.txt"
if [ "${SUITE:-0}" = 1 ]; then
  SUITE_SHAPES=D512,D768,D1024,D1536,D2048,D3072,D4096,D6144,D8192
  for m in 128 4096; do
    SUITE_SHAPES+=",${m}x21504x5376,${m}x5376x7168,${m}x28672x5376,${m}x5376x14336"
  done
  timeout "${SUITE_LIMIT:-330}" $BIN tune --arch sm_90a --shapes "$SUITE_SHAPES" --run-dir "$OUT/run_suite" \
    --profile "$OUT/profile_suite.toml" "$@" > "$OUT/tune_suite.txt" 2>&1
  echo "suite exit $?"
  grep -hE "chosen|no gate|error" "$OUT/tune_suite.txt"
fi
