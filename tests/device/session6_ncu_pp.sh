#!/usr/bin/env bash
# Session 6: Nsight Compute on forge's ping-pong kernel where it loses to cuBLAS's
# (3000×5000×1000) and where it wins (2048×8192×512): tensor-pipe activity, shared-memory
# wavefronts, warp stall reasons. From a `build_drop.sh` folder holding session6_ncu_pp.sh.
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6e
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
source ./worker_job.sh
SECTIONS="--section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis_Tables"
METRICS="--metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg"
for spec in "$@"; do
  shape=${spec%%:*}; sched=${spec#*:}
  IFS=x read -r M N K <<< "$shape"
  write_job "$W/job.json" "$M" "$N" "$K" "$sched" 0.2
  timeout 120 ./forge worker --job "$W/job.json" > /dev/null 2>&1
  tag=$shape-${sched:11:22}
  timeout 150 ncu --clock-control none --target-processes all -k regex:forge_gemm --launch-skip 1 --launch-count 1 \
    $SECTIONS $METRICS ./forge worker --job "$W/job.json" > "$W/ncu_$tag.txt" 2>&1
  echo "== $tag"
  grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|sm__pipe_tensor|l1tex__data|Stall|stall|Warp Cycles Per Issued|Shared" "$W/ncu_$tag.txt" | head -30
done 2>&1 | tee "$W/ncu_pp_summary.txt"
