#!/usr/bin/env bash
# Session 26, issue #13: the L2 request coalescer's counters over a designed sample (Nsight
# Compute, clocks left alone, one launch per kernel; ~10 s a kernel on an H100). For each shape,
# one tile in row and column raster at each visit group of VISIT_GROUPS (default "1 16"),
# persistent (or split-K) and, unless TWINS=0, its non-persistent twin, plus the group-4 row
# order at a second stage count where the spec names one: what a term for the merged share
# (by raster, group, persistence, stages) must fit. From a build_drop.sh folder holding
# session6_ncu.sh, ncu_traffic.sh and lrc_table.py:
#   OUT=<results> [VISIT_GROUPS="1 2 4 8 16"] [TWINS=0] bash lrc_sweep.sh \
#     [SHAPE:TILE_STAGES:PERS[:OTHER_STAGES] ...]
# (default: the three below, 27 kernels). Writes $OUT/ncu.tgz, the reports and lrc.md (the
# table, with DRAM reads).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(
  12512x10048x712:128x240x32_s4:sk:s3
  1472x3472x7128:128x160x32_s4:pers:s6
  7552x3904x2480:128x200x32_s5:pers:s4
)
list=()
for spec in "${specs[@]}"; do
  IFS=: read -r shape tile pers other <<< "$spec"
  grids=("$pers")
  [ "${TWINS:-1}" = 0 ] || grids+=(np)
  for g in ${VISIT_GROUPS:-1 16}; do
    for r in "" c; do
      for p in "${grids[@]}"; do
        list+=("$shape:wgmma_tf32_${tile}_wg2_swz${g}${r}_${p}_c1_k1")
      done
    done
  done
  [ -n "${other:-}" ] && list+=("$shape:wgmma_tf32_${tile%_s*}_${other}_wg2_swz4_${pers}_c1_k1")
done
OUT=$O bash ncu_traffic.sh "${list[@]}" && mv "$O/traffic.md" "$O/lrc.md"
