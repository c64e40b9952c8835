#!/usr/bin/env bash
# perf helper's second device call (2026-12-03): staged epilogue A/B + the fixed no-store probe.
cd "$(dirname "$0")"
export FORGE_CACHE=/tmp/forge-cache-perf 
source ./worker_job.sh
OUT=${OUT:-$PWD/gpu-out}; LOG=$OUT/perf_ab2.txt
S1=wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1
S2=wgmma_tf32_128x192x32_s5_wg2_swz16_pers_c2_k1
S3=wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c1_k1
run_h2h() {  # TAG DEFINES M N K SCHED
  write_job /tmp/j.json "$3" "$4" "$5" "$6" 0.5
  FORGE_KERNEL_DEFINES=$2 timeout 60 ./forge worker --job /tmp/j.json 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: print("   ", line.rstrip()[:200]); continue
    if e.get("event") == "head_to_head":
        o, c, b = e["own"]["median_us"], e["cublas"]["median_us"], e["burst"]
        print("%-8s %-46s sustained own %8.2f cuBLAS %8.2f ratio %.3f | burst own %8.2f cuBLAS %8.2f ratio %.3f" % (sys.argv[1], e["schedule"], o, c, c/o, b["own"]["median_us"], b["cublas"]["median_us"], b["cublas"]["median_us"]/b["own"]["median_us"]))' "$1"
}
{
for spec in "2048 8192 512 $S1" "3000 5000 1000 $S2"; do
  set -- $spec
  run_h2h direct "" $1 $2 $3 $4
  run_h2h staged FORGE_EPILOGUE_STAGED=1 $1 $2 $3 $4
done
cat > /tmp/s.json <<JOB
{"shape":{"m":2048,"n":8192,"k":512},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"tf32-rne-k8-inorder","candidates":["$S1","$S3"],"time_cublas":true,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,"target_half_width":0.01,"max_seconds":0.2}}
JOB
for d in "" FORGE_DIAG_NO_EPILOGUE=1; do
  FORGE_KERNEL_DEFINES=$d timeout 60 ./forge worker --job /tmp/s.json 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "result":
        print("screen %-22s %-46s %8.2f us gate %s" % (sys.argv[1] or "store", e["schedule"], e["measured"]["median_us"], e["gate"]["verdict"]))' "$d"
done
} 2>&1 | tee "$LOG"
