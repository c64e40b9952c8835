# Sourced by the device scripts from session 7 on (from a `build_drop.sh` folder): the preamble,
# the GPU tests, screens and head-to-heads every call repeats.
#   device_setup NAME     work dir /tmp/forge-NAME ($W), results to $OUT ($FINAL), the kernel
#                         cache ./cache, nvidia-smi's clocks and power; while the script runs,
#                         the SM clock, power and temperature every 100 ms in $W/clocks.csv, and
#                         each screen's and head-to-head's start time in $W/marks.csv (to align
#                         a timing with the clock it ran at); on exit NAME.tgz of $W and its *.txt
#                         are copied to $FINAL
#   clock_log FILE        the clock log alone (for scripts with their own preamble)
#   gpu_tests             tests/gpu.rs, gpu_layouts.rs, step.rs (TEST_S seconds each, 120)
#   screen M N K S...     one worker job timing schedules S… once each, gated against the
#                         canonical output, cuBLAS in the same job; $W/screen-MxNxK.jsonl and one
#                         line per result
#   best_of M N K RE      the fastest gate-passing schedule of that screen whose name matches RE
#   h2h M N K S           schedule S head to head against cuBLAS, sustained and burst
source ./worker_job.sh

device_setup() {
  here=$PWD
  FINAL=${OUT:-$PWD/gpu-out}
  W=/tmp/forge-$1
  rm -rf "$W"; mkdir -p "$W" "$FINAL"
  clock_log "$W/clocks.csv"
  # shellcheck disable=SC2064  # expand now: the names are fixed for this call
  trap "kill $CLOCK_LOGGER 2>/dev/null; tar czf '$FINAL/$1.tgz' -C '$W' . ; cp '$W'/*.txt '$FINAL'/ 2>/dev/null" EXIT
  export FORGE_CACHE=$here/cache
  gpu_state
}

# The SM clock, power and temperature every 100 ms, appended to FILE while the script runs;
# the logger's pid in $CLOCK_LOGGER (kill it on exit).
clock_log() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader \
    -lms 100 >> "$1" 2>&1 &
  CLOCK_LOGGER=$!
}

# A line in $W/marks.csv: the wall-clock time (the clock log's format) and what starts now.
mark() {
  echo "$(date '+%Y/%m/%d %H:%M:%S.%3N'), $*" >> "$W/marks.csv"
}

gpu_state() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
    --format=csv >> "$W/nvidia-smi.txt"
}

gpu_tests() {
  local t
  for t in gpu_tests gpu_layouts_tests step-tests; do
    FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-120}" \
      "./$t" --test-threads=1 --nocapture > "$W/tests-$t.txt" 2>&1
    echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
  done | tee "$W/tests.txt"
}

screen() {
  local m=$1 n=$2 k=$3; shift 3
  local c; c=$(printf '"%s",' "$@"); c=${c%,}
  cat > "$W/screen.json" <<JOB
{"shape":{"m":$m,"n":$n,"k":$k},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":[$c],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,"target_half_width":0.01,"max_seconds":0.4}}
JOB
  mark screen "${m}x${n}x${k}"
  timeout 150 ./forge worker --job "$W/screen.json" > "$W/screen-${m}x${n}x${k}.jsonl" 2>&1
  python3 - "$W/screen-${m}x${n}x${k}.jsonl" "${m}x${n}x${k}" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: print("   ", line.rstrip()[:200]); continue
    if e.get("event") in ("result", "cublas"):
        m = e.get("measured") or e.get("measurement") or {}
        print("%-15s %-50s %9.2f us gate %s" % (sys.argv[2], e.get("schedule", "cublas"),
              m.get("median_us", float("nan")), e.get("gate", {}).get("verdict", "-")))
PY
}

best_of() {
  python3 - "$W/screen-$1x$2x$3.jsonl" "$4" <<'PY'
import json, re, sys
best = None
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if (e.get("event") == "result" and re.search(sys.argv[2], e["schedule"])
            and e["gate"].get("verdict") == "pass" and e.get("measured")):
        t = e["measured"]["median_us"]
        if best is None or t < best[0]: best = (t, e["schedule"])
print(best[1] if best else "")
PY
}

h2h() {
  [ -n "$4" ] || { echo "$1x$2x$3: no schedule to time"; return; }
  write_job "$W/job.json" "$1" "$2" "$3" "$4" 0.5
  mark h2h "$1x$2x$3" "$4" "${LAUNCH:-serial}"
  timeout 90 ./forge worker --job "$W/job.json" 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "head_to_head":
        o, c, b = e["own"]["median_us"], e["cublas"]["median_us"], e["burst"]
        bo, bc = b["own"]["median_us"], b["cublas"]["median_us"]
        print("%-15s %-48s%s sustained %9.2f / %9.2f = %.3f | burst %9.2f / %9.2f = %.3f" % (sys.argv[1], e["schedule"], " " + sys.argv[2] if sys.argv[2] != "serial" else "", c, o, c/o, bc, bo, bc/bo))
    elif e.get("event") == "result" and e["gate"].get("verdict") != "pass":
        print("   GATE", line.rstrip()[:300])' "$1x$2x$3" "${LAUNCH:-serial}"
}
