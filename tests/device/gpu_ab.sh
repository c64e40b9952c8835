#!/usr/bin/env bash
# A/B of schedules on one shape, each as a head-to-head against cuBLAS in the worker
# (6 alternating rounds, same process, same buffers), repeated REPEATS times in turn so that
# clock drift hits every schedule alike. Prints one line per head-to-head.
# Usage on the GPU machine: REPEATS=2 bash tests/device/gpu_ab.sh MxNxK SCHEDULE...
set -uo pipefail
source "$(dirname "$0")/worker_job.sh"
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
IFS=x read -r M N K <<< "$1"; shift
BIN=$PWD/target/release/forge
export FORGE_CACHE=${FORGE_CACHE:-/tmp/forge-cache-ab}
SUMMARIZE='
import json, os, sys
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        print(line.rstrip())
        continue
    if e.get("event") == "head_to_head":
        o, c = e["own"]["median_us"], e["cublas"]["median_us"]
        print("round %s %-48s own %9.1f us  cuBLAS %9.1f us  ratio %.3f"
              % (os.environ["ROUND"], e["schedule"], o, c, c / o))
'
for r in $(seq 1 "${REPEATS:-2}"); do
  for s in "$@"; do
    write_job /tmp/ab-job.json "$M" "$N" "$K" "$s" 1.0
    $BIN worker --job /tmp/ab-job.json 2>&1 | ROUND=$r python3 -c "$SUMMARIZE"
  done
done | tee -a "$OUT/ab.txt"
