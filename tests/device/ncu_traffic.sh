#!/usr/bin/env bash
# Issue #13: the traffic counters of named kernels under Nsight Compute (clocks left alone, one
# launch each; ~10 s a kernel on an H100): time, the read sectors the SMs requested, the share
# the L2 request coalescer merged, the sectors that reached the L2 slices, and the DRAM bytes
# read. From a build_drop.sh folder holding session6_ncu.sh and lrc_table.py:
#   OUT=<results> bash ncu_traffic.sh SHAPE:SCHEDULE ...
# Writes $OUT/ncu.tgz, the reports and traffic.md (lrc_table.py's table).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
[ $# -gt 0 ] || { echo "usage: OUT=DIR bash ncu_traffic.sh SHAPE:SCHEDULE ..." >&2; exit 2; }
OUT=$O OWN_ONLY=1 EXTRA_METRICS="lrc__request_sectors_op_read_coalescable.sum,\
lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,\
lrc__lts2lrc_sectors_op_read.sum" bash session6_ncu.sh "$@" > /dev/null 2>&1
python3 lrc_table.py "$O" | tee "$O/traffic.md"
