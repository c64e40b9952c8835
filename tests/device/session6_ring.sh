#!/usr/bin/env bash
# Session 6, the C store ring (kernels/wgmma_tf32.cu, FORGE_EPI_SLOTS). The ring is not in the
# tree any more (measured no faster, reverted): build commit f0fd04b (`git worktree add
# /tmp/ring f0fd04b`, then in it) and assemble the folder with
#   bash tests/device/build_drop.sh devdrop/s6b session6_ring.sh
#   1. the GPU tests (tests/gpu.rs, gpu_layouts.rs, step.rs): every wgmma schedule there now
#      stores through the ring where N % 4 == 0 (ragged tiles, split-K slices, chained tails);
#   2. screens with the ring drained by the store warps (default, tag `ring`), by TMA bulk
#      stores (FORGE_RING_STORE=0, tag `tma`) and without the ring (FORGE_EPILOGUE_TMA=0: the
#      staged stores, tag `noring`), cuBLAS in the same job; every result gated;
#   3. head-to-heads against cuBLAS (sustained | burst): per shape the fastest ring schedule of
#      the screen, and the shipped schedule without the ring.
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6b
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/ring.tgz" -C "$W" . ; cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
source ./worker_job.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > "$W/nvidia-smi.txt"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
echo "== 1. GPU tests"
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-120}" ./$t --test-threads=1 --nocapture \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
grep -h "FAILED\|panicked" "$W"/tests-*.txt | head -20 | tee -a "$W/tests.txt"
fi
echo "== 2. screens: ring | no ring"
screen() {  # TAG M N K SCHEDULE...: one screen job; writes $W/screen-TAG-MxNxK.jsonl
  local tag=$1 m=$2 n=$3 k=$4; shift 4
  local c; c=$(printf '"%s",' "$@"); c=${c%,}
  cat > "$W/screen.json" <<JOB
{"shape":{"m":$m,"n":$n,"k":$k},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":[$c],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,"target_half_width":0.01,"max_seconds":0.4}}
JOB
  local env=FORGE_EPILOGUE_TMA=1
  [ "$tag" = noring ] && env=FORGE_EPILOGUE_TMA=0
  [ "$tag" = tma ] && env=FORGE_KERNEL_DEFINES=FORGE_RING_STORE=0
  env $env timeout 150 ./forge worker --job "$W/screen.json" > "$W/screen-$tag-${m}x${n}x${k}.jsonl" 2>&1
  python3 - "$W/screen-$tag-${m}x${n}x${k}.jsonl" "$tag" "${m}x${n}x${k}" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: print("   ", line.rstrip()[:200]); continue
    if e.get("event") in ("result", "cublas"):
        m = e.get("measured") or e.get("measurement") or {}
        print("%-15s %-7s %-50s %9.2f us gate %s" % (sys.argv[3], sys.argv[2], e.get("schedule", "cublas"),
              m.get("median_us", float("nan")), e.get("gate", {}).get("verdict", "-")))
PY
}
SHAPES=(
 "6144 6144 6144 wgmma_tf32_128x256x32_s3_wg2_swz16_sk_c1_k1 wgmma_tf32_128x256x32_s4_wg2_swz16_sk_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x192x32_s3_wg2_swz16_sk_c1_k1"
 "4096 4096 4096 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_sk_c1_k1"
 "8192 8192 8192 wgmma_tf32_128x224x32_s4_wg2_swz16_pers_c1_k1 wgmma_tf32_128x224x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_sk_c1_k1"
 "2048 8192 512 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x192x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x128x32_s4_wg2_swz16_pers_c1_k1"
 "3000 5000 1000 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1 wgmma_tf32_128x192x32_s3_wg2_swz16_pers_c1_k1"
)
{
for spec in "${SHAPES[@]}"; do
  set -- $spec
  screen ring "$@"
  screen tma "$@"
  screen noring "$@"
done
} 2>&1 | tee "$W/screens.txt"
echo "== 3. head-to-heads (sustained | burst)"
h2h() {  # TAG ENV M N K SCHEDULE
  write_job "$W/job.json" "$3" "$4" "$5" "$6" 0.5
  env $2 timeout 90 ./forge worker --job "$W/job.json" 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "head_to_head":
        o, c, b = e["own"]["median_us"], e["cublas"]["median_us"], e["burst"]
        bo, bc = b["own"]["median_us"], b["cublas"]["median_us"]
        print("%-7s %-15s %-48s sustained %9.2f / %9.2f = %.3f | burst %9.2f / %9.2f = %.3f" % (sys.argv[1], sys.argv[2], e["schedule"], c, o, c/o, bc, bo, bc/bo))
    elif e.get("event") == "result" and e["gate"].get("verdict") != "pass":
        print("   GATE", line.rstrip()[:300])' "$1" "$3x$4x$5"
}
best() {  # M N K: the fastest passing ring schedule of the screen
  python3 - "$W/screen-ring-$1x$2x$3.jsonl" <<'PY'
import json, sys
best = None
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "result" and e["gate"].get("verdict") == "pass" and e.get("measured"):
        t = e["measured"]["median_us"]
        if best is None or t < best[0]: best = (t, e["schedule"])
print(best[1] if best else "")
PY
}
{
for spec in "6144 6144 6144 wgmma_tf32_128x256x32_s3_wg2_swz16_sk_c1_k1" \
            "4096 4096 4096 wgmma_tf32_128x256x32_s3_wg2_swz16_pers_c1_k1" \
            "2048 8192 512 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1" \
            "3000 5000 1000 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1" \
            "8192 8192 8192 wgmma_tf32_128x224x32_s4_wg2_swz16_pers_c1_k1"; do
  set -- $spec
  b=$(best $1 $2 $3)
  h2h noring FORGE_EPILOGUE_TMA=0 "$@"
  [ -n "$b" ] && h2h ring FORGE_EPILOGUE_TMA=1 $1 $2 $3 "$b"
done
} 2>&1 | tee "$W/h2h.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv >> "$W/nvidia-smi.txt"
echo "== summary"
cat "$W/tests.txt" 2>/dev/null; cat "$W/screens.txt" "$W/h2h.txt" | grep -v "^    "
