#!/usr/bin/env bash
# Session 6: Nsight Compute on forge's kernel and on cuBLAS's for the same problem (clocks left
# alone), on the shapes nearest issue #12's bars: per `MxNxK:SCHEDULE` the kernel names, launch
# shapes (cluster size), duration, SM frequency, throughputs, and the bytes moved through L2 and
# DRAM. From a folder assembled by `bash tests/device/build_drop.sh devdrop/s6c session6_ncu.sh`:
#   bash session6_ncu.sh 2048x8192x512:SCHED 3000x5000x1000:SCHED ...
# OWN_ONLY=1 skips cuBLAS; EXTRA_SECTIONS adds ncu sections (e.g. "--section MemoryWorkloadAnalysis"),
# EXTRA_METRICS more metrics (comma-separated, e.g. "sm__cycles_active.max,sm__cycles_active.min").
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6c
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/ncu.tgz" -C "$W" . ; cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
source ./worker_job.sh
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy ${EXTRA_SECTIONS:-}"
METRICS="--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum${EXTRA_METRICS:+,$EXTRA_METRICS}"
for spec in "$@"; do
  shape=${spec%%:*}; sched=${spec#*:}
  IFS=x read -r M N K <<< "$shape"
  write_job "$W/job.json" "$M" "$N" "$K" "$sched" 0.2
  timeout 120 ./forge worker --job "$W/job.json" > /dev/null 2>&1   # warm the kernel cache
  # Launch 0 of forge_gemm is the canonical kernel (golden output); launch 1 the schedule's.
  timeout 200 ncu --clock-control none --target-processes all -k regex:forge_gemm --launch-skip 1 --launch-count 1 \
    $SECTIONS $METRICS ./forge worker --job "$W/job.json" > "$W/ncu_own_${shape}_${sched}.txt" 2>&1
  kinds=own
  if [ -z "${OWN_ONLY:-}" ]; then
    kinds="own cublas"
    timeout 200 ncu --clock-control none --target-processes all -k 'regex:^[^f]' --launch-count 1 \
      $SECTIONS $METRICS ./forge worker --job "$W/job.json" > "$W/ncu_cublas_$shape.txt" 2>&1
  fi
  for f in $kinds; do
    file=$W/ncu_cublas_$shape.txt
    [ "$f" = own ] && file=$W/ncu_own_${shape}_${sched}.txt
    echo "== $shape $f $sched"
    grep -E "^  [a-zA-Z_].*\(|Duration|SM Frequency|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|Cluster Size|Grid Size|Dynamic Shared|L2 Hit Rate|Mem Busy|Max Bandwidth|dram__bytes|lts__t_bytes|l1tex__data_pipe|sm__pipe_tensor|smsp__inst_executed" "$file" | head -40
  done
done 2>&1 | tee "$W/ncu_summary.txt"
