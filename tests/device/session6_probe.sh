#!/usr/bin/env bash
# Session 6's first device call (issue #12), from a folder assembled by
#   bash tests/device/build_drop.sh devdrop/s6a session6_probe.sh
#   1. the GPU tests of this binary (tests/gpu.rs, gpu_layouts.rs, step.rs): session 5's last
#      changes (serial launches under stream capture, the reported launch order, the
#      programmatic chain test with new inputs each round) never ran on a GPU;
#   2. what the C store costs on the large squares and short K: screen timings of the shipped
#      schedules with and without it (FORGE_DIAG_NO_EPILOGUE=1 keeps the accumulators live and
#      skips the store; its gate fails by design), cuBLAS timed in the same job.
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6a
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/probe.tgz" -C "$W" . ; cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > "$W/nvidia-smi.txt"
echo "== 1. GPU tests"
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-120}" ./$t --test-threads=1 --nocapture \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
grep -h "programmatic chains\|dispatch \|launch cost" "$W/tests-gpu_tests.txt" | tee -a "$W/tests.txt"
echo "== 2. C store share"
screen() {  # M N K SCHEDULE...: one screen job, with and without the C store
  local m=$1 n=$2 k=$3; shift 3
  local c; c=$(printf '"%s",' "$@"); c=${c%,}
  cat > "$W/screen.json" <<JOB
{"shape":{"m":$m,"n":$n,"k":$k},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":[$c],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,"target_half_width":0.01,"max_seconds":0.4}}
JOB
  for d in FORGE_EPILOGUE_STAGED=1 FORGE_DIAG_NO_EPILOGUE=1 FORGE_EPILOGUE_STAGED=0; do
    FORGE_KERNEL_DEFINES=$d timeout 120 ./forge worker --job "$W/screen.json" 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") in ("result", "cublas"):
        m = e.get("measured") or e.get("measurement") or {}
        g = e.get("gate", {}).get("verdict", "-")
        print("%-15s %-26s %-50s %9.2f us gate %s" % (sys.argv[2], sys.argv[1], e.get("schedule", "cublas"), m.get("median_us", float("nan")), g))' "$d" "${m}x${n}x${k}"
  done
}
{
screen 4096 4096 4096 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1
screen 6144 6144 6144 wgmma_tf32_128x256x32_s3_wg2_swz16_sk_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1
screen 8192 8192 8192 wgmma_tf32_128x224x32_s4_wg2_swz16_pers_c1_k1
screen 2048 8192 512 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1
screen 3000 5000 1000 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1
} 2>&1 | tee "$W/epilogue.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv >> "$W/nvidia-smi.txt"
echo "== summary"
cat "$W/tests.txt" "$W/epilogue.txt"
