#!/usr/bin/env bash
# Session 27, issue #13: DRAM bytes and the L2 request coalescer's counters over every tile order
# of one schedule: per SHAPE:TILE_STAGES:PERSISTENCE, visit groups 1, 2, 4, 8 and 16 in row and
# column raster (`lrc_sweep.sh` with VISIT_GROUPS="1 2 4 8 16" TWINS=0). The data a joint fit of
# the DRAM re-read term (`l2_share_loss_per_doubling`) and a coalescer term must meet. From a
# build_drop.sh folder holding session6_ncu.sh, ncu_traffic.sh, lrc_sweep.sh and lrc_table.py:
#   OUT=<results> bash order_sweep.sh [SHAPE:TILE_STAGES:PERSISTENCE ...]
# (default: the two below, 20 kernels: one shape whose A + B fit the L2, one whose do not).
# Writes $OUT/ncu.tgz, the reports and lrc.md (the table).
set -uo pipefail
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(
  13680x7872x296:128x248x32_s4:pers
  6656x4992x1536:128x200x32_s5:pers
)
VISIT_GROUPS="1 2 4 8 16" TWINS=0 bash lrc_sweep.sh "${specs[@]}"
