#!/usr/bin/env bash
# Session 37 (issue #13), registered before any timing. Run at 9ca929c, whose kernels/ has
# FORGE_PAIRED_K (rejected and removed after this run: reports/notes.md, session 37, item 4).
# Does issuing two consecutive k-tiles' TMA loads together (FORGE_PAIRED_K=1 in kernels/wgmma_tf32.cu: A's two boxes, then B's) win
# back what quarter-line row pitches cost the narrow tiles? The tiles of
# session36_pitch_list.txt at five quarter-line shapes and their aligned twins, `forge
# calibrate --top 0 --sample 0 --repeat 2` (the gate checks every kernel's bits), four runs in
# the order base, paired, paired, base, each from the working tree's kernels/ (FORGE_KERNEL_DIR).
# No run starts past BUDGET_S seconds (400). From a build_drop.sh folder with the tree at ../..; pk.tar.xz: the kernels precompiled here.
#   BUDGET_S=400 bash session37_paired_k.sh     ($OUT/pk.tgz: pk/<run>/calibration.{json,csv}, pk-log.txt)
set -uo pipefail
O=${OUT:?OUT must name the results folder}
T=../../tests/device
SHAPES=${SHAPES:-192x8064x7944,192x8064x7936,5128x216x8264,5128x216x8256,288x3264x2936,288x3264x2944,768x2368x2744,768x2368x2752,384x7224x8440,384x7224x8448}
mkdir -p cache "$O/pk"
[ ! -f pk.tar.xz ] || tar xJf pk.tar.xz -C cache
export FORGE_KERNEL_DIR=$(cd ../../kernels && pwd)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader >> "$O/pk/gpu.txt"
start=$SECONDS
for run in base1 paired1 paired2 base2; do
  [ $((SECONDS - start)) -lt "${BUDGET_S:-400}" ] || { echo "$run: budget, not run" >> "$O/pk/gpu.txt"; continue; }
  case $run in paired*) d=FORGE_PAIRED_K=1 ;; *) d= ;; esac
  FORGE_KERNEL_DEFINES=$d ./forge calibrate --arch sm_90a --shapes "$SHAPES" --top 0 --sample 0 \
    --repeat "${REPEAT:-2}" --schedules "$T/session36_pitch_list.txt" --cache cache \
    --out "$O/pk/$run" >> "$O/pk-log.txt" 2>&1
  echo "$run: exit $?" >> "$O/pk/gpu.txt"
done
tar czf "$O/pk.tgz" -C "$O" pk pk-log.txt && rm -rf "$O/pk" "$O/pk-log.txt"
tar xzf "$O/pk.tgz" -O pk/gpu.txt
