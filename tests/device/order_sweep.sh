#!/usr/bin/env bash
# Session 27, issue #13: DRAM bytes and the L2 request coalescer's counters over every tile order
# of one schedule (Nsight Compute, clocks left alone, one launch per kernel; ~10 s a kernel on an
# H100): per SHAPE:TILE_STAGES:PERSISTENCE, visit groups 1, 2, 4, 8 and 16 in row and column
# raster. The data a joint fit of the DRAM re-read term (`l2_share_loss_per_doubling`) and a
# coalescer term must meet. From a build_drop.sh folder holding session6_ncu.sh and lrc_table.py:
#   OUT=<results> bash order_sweep.sh [SHAPE:TILE_STAGES:PERSISTENCE ...]
# (default: the two below, 20 kernels: one shape whose A + B fit the L2, one whose do not).
# Writes $OUT/ncu.tgz, the reports and order.md (lrc_table.py's table).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(
  13680x7872x296:128x248x32_s4:pers
  6656x4992x1536:128x200x32_s5:pers
)
list=()
for spec in "${specs[@]}"; do
  IFS=: read -r shape tile pers <<< "$spec"
  for g in 1 2 4 8 16; do
    for r in "" c; do
      list+=("$shape:wgmma_tf32_${tile}_wg2_swz${g}${r}_${pers}_c1_k1")
    done
  done
done
OUT=$O OWN_ONLY=1 EXTRA_METRICS="lrc__request_sectors_op_read_coalescable.sum,\
lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,\
lrc__lts2lrc_sectors_op_read.sum" bash session6_ncu.sh "${list[@]}" > /dev/null 2>&1
python3 lrc_table.py "$O" | tee "$O/order.md"
