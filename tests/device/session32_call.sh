#!/usr/bin/env bash
# Session 32, issue #13, one device call (from a build_drop.sh folder holding session30_call.sh
# and its scripts, stage_sweep_kernels.txt, the set folders named below and, optionally,
# cache.tar.xz: kernels compiled on the CPU, unpacked into ./cache):
#   held-out set 32 (`stage_merge_loss_per_stage` 0.05, registered in e4edc56 before any
#   timing) for ROUND_BUDGET_S (default 300), on an H200 together with the H200 halves of sets
#   29r and 25 (SETS_H200 overrides), then the stage sweep under Nsight Compute (2000x872x3072
#   128x112 at s4-s7, 9216x576x8192 128x192 at s3-s5, 5632x1600x6264 128x184 at s3):
#   $OUT/{gpu.txt,sel.tgz,selection.txt,select-log.txt,stage_sweep/ncu.tgz,...}.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
nvidia-smi --query-gpu=name --format=csv,noheader > "$O/gpu.txt" 2>&1
sets=set32
grep -q H200 "$O/gpu.txt" && sets=${SETS_H200:-set32 set29r set25}
if [ -f cache.tar.xz ]; then mkdir -p cache && tar xJf cache.tar.xz -C cache; fi
OUT=$O SETS=$sets ROUND_BUDGET_S=${ROUND_BUDGET_S:-300} LISTS=${LISTS-stage_sweep} \
  bash session30_call.sh
