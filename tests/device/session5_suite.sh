#!/usr/bin/env bash
# Issue #12's suite, tuned and measured in both regimes in one call, from a folder assembled by
#   bash tests/device/build_drop.sh devdrop/s5b session5_suite.sh
# (a kernel cache precompiled on the CPU machine may sit in ./cache): squares 512…8192, the LLM
# linears at M ∈ {128, 4096}, short K (3000×5000×1000, 2048×8192×512) and K % 4 ≠ 0
# (257×513×1025, 1000×1000×1001). Every chosen schedule is timed head to head against cuBLAS in
# the same process: sustained (ABBA rounds of ≥ 400 ms) and burst (≥ 5 ms after 25 ms idle).
# $OUT: suite.tgz (run report, profile, logs, clocks.csv: the SM clock and power every 100 ms),
# summary.md, profile_suite.toml, tune_suite.txt.
# RESUME=dir: a run directory (and profile_suite.toml beside it) brought back from an earlier,
# cut call; the tune measures only the shapes it lacks.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s5-suite
rm -rf "$W"; mkdir -p "$W" "$FINAL"
[ -n "${RESUME:-}" ] && cp -r "$RESUME"/. "$W"/
# The SM clock, power and temperature every 100 ms while the suite runs (appended on a resume).
source ./device_lib.sh
clock_log "$W/clocks.csv"
trap 'kill $CLOCK_LOGGER 2>/dev/null; tar czf "$FINAL/suite.tgz" -C "$W" . ; cp "$W"/profile_suite.toml "$W"/*.txt "$W"/run_suite/summary.md "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$PWD/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > "$W/nvidia-smi.txt"
# Most telling first (a cut run keeps them; `--run-dir` resumes the rest in a later call).
SHAPES=2048x8192x512,3000x5000x1000,257x513x1025,1000x1000x1001,D2048,D4096,D8192,D3072,D6144
for m in 128 4096; do
  SHAPES+=",${m}x21504x5376,${m}x5376x7168,${m}x28672x5376,${m}x5376x14336"
done
SHAPES+=",D512,D768,D1024,D1536"
timeout "${SUITE_LIMIT:-540}" ./forge tune --arch sm_90a --shapes "${SUITE_SHAPES:-$SHAPES}" \
  --run-dir "$W/run_suite" --profile "$W/profile_suite.toml" "$@" > "$W/tune_suite.txt" 2>&1
echo "suite exit $?"
grep -hE "chosen|error|differs" "$W/tune_suite.txt" | cut -c1-200
