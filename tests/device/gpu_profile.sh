#!/usr/bin/env bash
# One device call: the dispatcher test with its printed overhead, and Nsight Compute on the
# chosen kernel (D4096 unless a shape is given) and on cuBLAS's kernel for the same problem (clocks left alone).
# Usage on the GPU machine: bash tests/device/gpu_profile.sh SCHEDULE [MxNxK (default 4096x4096x4096)]
set -uo pipefail
source "$(dirname "$0")/worker_job.sh"
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
SCHEDULE=${1:-wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1}
IFS=x read -r M N K <<< "${2:-4096x4096x4096}"
BIN=$PWD/target/release/forge
export FORGE_CACHE=/tmp/forge-cache-profile
if [ "${SKIP_DISPATCHER:-0}" != 1 ]; then
  ./target/release/gpu_tests --test-threads=1 --nocapture dispatcher > "$OUT/dispatcher.txt" 2>&1
  grep -E "launch cost|dispatch |test result" "$OUT/dispatcher.txt"
fi
write_job /tmp/job.json "$M" "$N" "$K" "$SCHEDULE" 0.5
$BIN worker --job /tmp/job.json > /dev/null 2>&1   # warm the kernel cache
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
# Launch 0 is the canonical kernel (golden output); launch 1 is the schedule's first run.
ncu --clock-control none --target-processes all -k regex:forge_gemm --launch-skip 1 --launch-count 1 \
  $SECTIONS $BIN worker --job /tmp/job.json > "$OUT/ncu_own.txt" 2>&1
# cuBLAS's kernels are the ones whose names do not start with forge_.
ncu --clock-control none --target-processes all -k 'regex:^[^f]' --launch-count 1 \
  $SECTIONS $BIN worker --job /tmp/job.json > "$OUT/ncu_cublas.txt" 2>&1
for f in ncu_own ncu_cublas; do
  echo "== $f"
  grep -E "^  [a-zA-Z_].*\(|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Dynamic Shared" "$OUT/$f.txt" | head -20
done
