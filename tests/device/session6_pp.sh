#!/usr/bin/env bash
# Session 6: ping-pong consumers with clusters of 2 (cuBLAS's short-K kernel on the H200 is a
# ping-pong 128×128 with clusters of 2 and 4: reports/2026-12-03-h200-session6-ncu), from a
# folder assembled by `bash tests/device/build_drop.sh devdrop/s6d session6_pp.sh` with the
# session 5 suite run (run_suite/, profile_suite.toml) copied into ./resume:
#   1. screens (gated, cuBLAS in the same job) of the shipped schedule and ping-pong schedules
#      with and without clusters at the two short-K suite shapes, and gate-only screens of a
#      cluster-2 ping-pong on ragged shapes;
#   2. head-to-heads (sustained | burst) of the fastest cluster-2 ping-pong and the shipped one;
#   3. the two short-K suite shapes tuned again into the session 5 run (the tuner now screens
#      the best ping-pong of each cluster size).
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6d
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/pp.tgz" -C "$W" . ; cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
source ./worker_job.sh
screen() {  # M N K SCHEDULE...: one screen job; $W/screen-MxNxK.jsonl and one line per result
  local m=$1 n=$2 k=$3; shift 3
  local c; c=$(printf '"%s",' "$@"); c=${c%,}
  cat > "$W/screen.json" <<JOB
{"shape":{"m":$m,"n":$n,"k":$k},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":[$c],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,"target_half_width":0.01,"max_seconds":0.4}}
JOB
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
best_pp2() {  # M N K: the fastest passing cluster-2 ping-pong of the screen
  python3 - "$W/screen-$1x$2x$3.jsonl" <<'PY'
import json, sys
best = None
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "result" and "_pp_c2" in e["schedule"] and e["gate"].get("verdict") == "pass" and e.get("measured"):
        t = e["measured"]["median_us"]
        if best is None or t < best[0]: best = (t, e["schedule"])
print(best[1] if best else "")
PY
}
h2h() {  # M N K SCHEDULE
  write_job "$W/job.json" "$1" "$2" "$3" "$4" 0.5
  timeout 90 ./forge worker --job "$W/job.json" 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "head_to_head":
        o, c, b = e["own"]["median_us"], e["cublas"]["median_us"], e["burst"]
        bo, bc = b["own"]["median_us"], b["cublas"]["median_us"]
        print("%-15s %-48s sustained %9.2f / %9.2f = %.3f | burst %9.2f / %9.2f = %.3f" % (sys.argv[1], e["schedule"], c, o, c/o, bc, bo, bc/bo))
    elif e.get("event") == "result" and e["gate"].get("verdict") != "pass":
        print("   GATE", line.rstrip()[:300])' "$1x$2x$3"
}
echo "== 1. screens"
{
for shape in "2048 8192 512" "3000 5000 1000"; do
  screen $shape wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1 \
    wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c1_k1 wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c2_k1 \
    wgmma_tf32_128x128x32_s7_wg2_swz16_pp_c2_k1 wgmma_tf32_128x128x32_s6_wg2_swz8_pp_c2_k1 \
    wgmma_tf32_128x128x32_s6_wg2_swz4c_pp_c2_k1 wgmma_tf32_128x128x32_s5_wg2_swz16_pp_c2_k1
done
screen 1000 1000 1000 wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c2_k1 wgmma_tf32_64x128x32_s6_wg2_swz1_pp_c2_k1
screen 517 263 300 wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c2_k1 wgmma_tf32_64x64x32_s6_wg2_swz1_pp_c2_k1
} 2>&1 | tee "$W/screens.txt"
echo "== 2. head-to-heads"
{
for shape in "2048 8192 512" "3000 5000 1000"; do
  set -- $shape
  b=$(best_pp2 $1 $2 $3)
  h2h $1 $2 $3 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1
  [ -n "$b" ] && h2h $1 $2 $3 "$b"
done
} 2>&1 | tee "$W/h2h.txt"
echo "== 3. the short-K suite shapes tuned again"
RESUME=$here/resume SUITE_SHAPES=${RETUNE:-2048x8192x512,3000x5000x1000} SUITE_LIMIT=${SUITE_LIMIT:-200} \
  bash session5_suite.sh --force --top 8 --max-seconds 0.5 2>&1 | tail -12 | tee "$W/retune.txt"
cp /tmp/forge-s5-suite/tune_suite.txt "$W/" 2>/dev/null
echo "== summary"
cat "$W/screens.txt" "$W/h2h.txt" | grep -v "^    "
