#!/usr/bin/env bash
# Session 5's first device call (issue #12 probes, #13 data), from a folder assembled by
#   bash tests/device/build_drop.sh devdrop/s5a session5_probe.sh calibrate.sh
# (a kernel cache precompiled on the CPU machine may sit in ./cache). In order, each part
# under its own time limit:
#   1. programmatic dependent launch: head-to-heads against cuBLAS with FORGE_PDL=0 and 1
#      (the operand preparation's batched loads are in both);
#   2. the staged epilogue (FORGE_EPILOGUE_STAGED=1) against the direct stores, and the
#      no-store probe (FORGE_DIAG_NO_EPILOGUE=1: what the epilogue costs at most);
#   3. the 128×112 tile on 128×14336×4096;
#   4. the GPU tests (tests/gpu.rs, gpu_layouts.rs, step.rs) with programmatic launches on;
#   5. calibration data on eight shapes the first data set lacks.
# Every head-to-head line: sustained and burst medians, own and cuBLAS, same process.
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s5a
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/probe.tgz" -C "$W" . ; cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
source ./worker_job.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > "$W/nvidia-smi.txt"
h2h() {  # TAG ENV M N K SCHEDULE: one head-to-head, one line
  write_job "$W/job.json" "$3" "$4" "$5" "$6" 0.5
  env $2 timeout 60 ./forge worker --job "$W/job.json" 2>&1 | python3 -c '
import json, sys
tag = sys.argv[1]
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: print("   ", line.rstrip()[:200]); continue
    if e.get("event") == "head_to_head":
        o, c, b = e["own"]["median_us"], e["cublas"]["median_us"], e["burst"]
        bo, bc = b["own"]["median_us"], b["cublas"]["median_us"]
        print("%-10s %-15s %-48s sustained %9.2f / %9.2f = %.3f | burst %9.2f / %9.2f = %.3f" % (tag, sys.argv[2], e["schedule"], c, o, c/o, bc, bo, bc/bo))
    elif e.get("event") == "prep":
        print("%-10s %-15s %-48s prep %8.2f us, %d passes, %.1f MB" % (tag, sys.argv[2], e["schedule"], e["measurement"]["median_us"], e["passes"], e["bytes"] / 1e6))
    elif e.get("event") == "result" and e["gate"].get("verdict") != "pass":
        print("   ", line.rstrip()[:300])' "$1" "$3x$4x$5"
}
echo "== 1. PDL A/B"
{
for spec in "512 512 512 wgmma_tf32_64x64x32_s6_wg1_swz1_np_c1_k1" \
            "2048 2048 2048 wgmma_tf32_128x256x32_s4_wg2_swz16_np_c1_k1" \
            "4096 4096 4096 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1" \
            "2048 8192 512 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1" \
            "2048 8192 512 wgmma_tf32_128x256x32_s4_wg2_swz16c_pers_c2_k1" \
            "3000 5000 1000 wgmma_tf32_128x192x32_s5_wg2_swz16_pers_c2_k1" \
            "128 14336 4096 wgmma_tf32_128x168x32_s6_wg2_swz16c_np_c1_k1" \
            "257 513 1025 wgmma_tf32_64x64x32_s7_wg1_swz16c_np_c2_k1" \
            "257 513 1025 mma_sync_tf32_64x64x32_s3_w8_swz16c_np_c1_k1" \
            "1000 1000 1001 wgmma_tf32_64x128x32_s6_wg1_swz1_np_c2_k1"; do
  set -- $spec
  h2h pdl-off FORGE_PDL=0 "$@"
  h2h pdl-on FORGE_PDL=1 "$@"
done
} 2>&1 | tee "$W/pdl.txt"
echo "== 2. staged epilogue, no-store probe"
{
for spec in "2048 8192 512 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1" \
            "3000 5000 1000 wgmma_tf32_128x192x32_s5_wg2_swz16_pers_c2_k1" \
            "2048 2048 2048 wgmma_tf32_128x256x32_s4_wg2_swz16_np_c1_k1" \
            "4096 4096 4096 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1"; do
  set -- $spec
  h2h staged FORGE_KERNEL_DEFINES=FORGE_EPILOGUE_STAGED=1 "$@"
done
cat > "$W/screen.json" <<JOB
{"shape":{"m":2048,"n":8192,"k":512},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":["wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1"],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,"target_half_width":0.01,"max_seconds":0.3}}
JOB
for d in FORGE_ROUND_IN=producer FORGE_DIAG_NO_EPILOGUE=1; do
  FORGE_KERNEL_DEFINES=$d timeout 60 ./forge worker --job "$W/screen.json" 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "result":
        print("screen %-26s %-48s %8.2f us gate %s" % (sys.argv[1], e["schedule"], e["measured"]["median_us"], e["gate"]["verdict"]))' "$d"
done
} 2>&1 | tee "$W/epilogue.txt"
echo "== 3. 128x112"
{
for s in wgmma_tf32_128x112x32_s7_wg1_swz16c_np_c1_k1 wgmma_tf32_128x112x32_s7_wg2_swz16c_np_c1_k1 \
         wgmma_tf32_128x112x32_s7_wg2_swz16c_pers_c1_k1; do
  h2h bn112 FORGE_PDL=1 128 14336 4096 $s
done
} 2>&1 | tee "$W/bn112.txt"
echo "== 4. GPU tests"
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-120}" ./$t --test-threads=1 \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
echo "== 5. calibration"
SHAPES=${CAL_SHAPES:-4096x4096x4096,96x12288x3072,768x3072x768,2048x2048x8192,8192x1024x1024,300x7000x2500,4096x4096x512,1000x3000x2000}
timeout "${CAL_S:-170}" ./forge calibrate --arch sm_90a --shapes "$SHAPES" --top 40 --sample 150 \
    --profile sm_90a-h200.toml --cache ./cache --out "$W/calibration" > "$W/calibrate.txt" 2>&1
echo "calibrate exit $?: $(grep -c . "$W/calibration/calibration.csv" 2>/dev/null) csv lines"
tail -3 "$W/calibrate.txt"
echo "== summary"
cat "$W/pdl.txt" "$W/epilogue.txt" "$W/bn112.txt" "$W/tests.txt" | grep -v "^    "
