#!/usr/bin/env bash
# Build and run the mma_sync TF32 family harness on the GPU machine.
#   bash kernels/harness/run_mma_sync_check.sh      (from the repository root)
# Kernels are compiled at run time by NVRTC from kernels/common.cuh + kernels/mma_sync_tf32.cu,
# exactly as the Rust host assembles them. Full log goes to $OUT/mma_sync_check.log when set.
set -euo pipefail
cd "$(dirname "$0")/../.."
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
BIN=/tmp/forge_mma_sync_check
OUTDIR=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv || true
"$NVCC" -O2 -std=c++17 -o "$BIN" kernels/harness/mma_sync_check.cu \
    -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lnvrtc -lcuda -lcublas -lpthread
"$BIN" kernels 2>&1 | tee "$OUTDIR/mma_sync_check.log"
