#!/usr/bin/env bash
# Kernel performance A/B (issue #12) in one device call, from a directory holding the forge
# binary and tests/device/worker_job.sh (or the repository root with target/release/forge):
#  1. gate: ping-pong (`pp`) schedules screened on ragged and short-K shapes (bits vs canonical);
#  2. floor probe: screens of the shipped schedule and the ping-pong one with and without
#     FORGE_DIAG_NO_EPILOGUE=1 (no C store: the time difference is what the epilogue costs);
#  3. A/B: each SHAPE:SCHEDULE head to head against cuBLAS in its own worker (burst and
#     sustained regimes, the gate re-checked), REPEATS times in turn;
#  4. with TUNE_SHAPES set, `forge tune` of those shapes (report and profile with both ratios).
# Results: $OUT/perf_ab.txt (one line per job), $OUT/tune.tgz.
# Usage: REPEATS=2 bash perf_ab.sh "MxNxK:SCHED,SCHED" ...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/worker_job.sh"
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
BIN=${BIN:-$here/forge}
export FORGE_CACHE=${FORGE_CACHE:-/tmp/forge-cache-perf}
LOG=$OUT/perf_ab.txt
SUMMARIZE='
import json, os, sys
tag = os.environ["TAG"]
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        print("   ", tag, line.rstrip()[:300]); continue
    ev = e.get("event")
    if ev == "cublas":
        print("%-10s cuBLAS screen %9.2f us" % (tag, e["measurement"]["median_us"]))
    elif ev == "result":
        m = e.get("measured") or {}
        print("%-10s %-46s screen %9.2f us gate %s" % (tag, e["schedule"], m.get("median_us", float("nan")),
              e["gate"]["verdict"]))
    elif ev == "head_to_head":
        o, c, b = e["own"]["median_us"], e["cublas"]["median_us"], e.get("burst") or {}
        bo, bc = b.get("own", {}).get("median_us", float("nan")), b.get("cublas", {}).get("median_us", float("nan"))
        print("%-10s %-46s sustained own %9.2f cuBLAS %9.2f ratio %.3f | burst own %9.2f cuBLAS %9.2f ratio %.3f"
              % (tag, e["schedule"], o, c, c / o, bo, bc, bc / bo))
'
# write_screen FILE M N K "SCHED SCHED..."
write_screen() {
  local list; list=$(printf '"%s",' $5); list=${list%,}
  cat > "$1" <<JOB
{"shape":{"m":$2,"n":$3,"k":$4},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":[$list],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,
           "target_half_width":0.01,"max_seconds":0.3}}
JOB
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv | tee -a "$LOG"
{
  echo "== 1. gate: ping-pong schedules (screen) =="
  for spec in ${GATE_SPECS:-}; do
    IFS=x read -r M N K <<< "${spec%%:*}"
    write_screen /tmp/perf-screen.json "$M" "$N" "$K" "$(echo "${spec#*:}" | tr , ' ')"
    timeout 120 "$BIN" worker --job /tmp/perf-screen.json 2>&1 | TAG="gate" python3 -c "$SUMMARIZE"
  done
  echo "== 2. floor probe: no-epilogue screens =="
  for spec in ${DIAG_SPECS:-}; do
    IFS=x read -r M N K <<< "${spec%%:*}"
    write_screen /tmp/perf-screen.json "$M" "$N" "$K" "$(echo "${spec#*:}" | tr , ' ')"
    timeout 120 "$BIN" worker --job /tmp/perf-screen.json 2>&1 | TAG="store" python3 -c "$SUMMARIZE"
    FORGE_KERNEL_DEFINES=FORGE_DIAG_NO_EPILOGUE=1 timeout 120 "$BIN" worker --job /tmp/perf-screen.json 2>&1 |
      TAG="no-store" python3 -c "$SUMMARIZE"
  done
  echo "== 3. A/B head to head (burst and sustained) =="
  for r in $(seq 1 "${REPEATS:-2}"); do
    for spec in "$@"; do
      IFS=x read -r M N K <<< "${spec%%:*}"
      for s in $(echo "${spec#*:}" | tr , ' '); do
        write_job /tmp/perf-job.json "$M" "$N" "$K" "$s" 0.5
        timeout 120 "$BIN" worker --job /tmp/perf-job.json 2>&1 | TAG="r$r" python3 -c "$SUMMARIZE"
      done
    done
  done
} 2>&1 | tee -a "$LOG"
if [ -n "${TUNE_SHAPES:-}" ]; then
  echo "== 4. tune $TUNE_SHAPES ==" | tee -a "$LOG"
  timeout "${TUNE_TIMEOUT:-200}" "$BIN" tune --arch sm_90a --shapes "$TUNE_SHAPES" --top "${TUNE_TOP:-6}" --max-seconds 0.5 \
    --run-dir "$OUT/tune" --profile "$OUT/tune/profile.toml" --cache "$FORGE_CACHE" --no-plots 2>&1 |
    tail -40 | tee -a "$LOG"
  tar czf "$OUT/tune.tgz" -C "$OUT" tune && rm -rf "$OUT/tune"
fi
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$LOG"
