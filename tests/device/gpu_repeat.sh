#!/usr/bin/env bash
# Repeatability of the head-to-head ratio: tune the same shapes N times in a row.
# Usage on the GPU machine: bash tests/device/gpu_repeat.sh SHAPES N [extra tune args]
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
SHAPES=$1; N=$2; shift 2
export FORGE_CACHE=/tmp/forge-cache-repeat
for i in $(seq 1 "$N"); do
  ./target/release/forge tune --arch sm_90a --shapes "$SHAPES" --run-dir "/tmp/repeat/run$i" \
    --profile "/tmp/repeat/p$i.toml" --no-plots "$@" 2>&1 | grep -E "chosen|no gate" | sed "s/^/run $i: /"
done | tee "$OUT/repeat.txt"
tar czf "$OUT/repeat.tgz" -C /tmp/repeat .
