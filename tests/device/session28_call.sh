#!/usr/bin/env bash
# Session 28, issue #13, one device call (from a build_drop.sh folder holding session17_call1.sh,
# its scripts, ncu_traffic.sh, lrc_table.py and the set folders SETS names):
#   1. the held-out sets of SETS (default "set26": `busy_sm_clock_exponent` 0.1; "set27": the
#      DRAM walk; session28_select_jobs.py), TESTS=0, ROUND_BUDGET_S (default 300):
#      $OUT/{gpu.txt,sel.tgz,selection.txt,select-log.txt};
#   2. unless NCU=0: the traffic counters and SM clocks of three one-wave pairs where the
#      DRAM wave model and the shipped model pick apart (deepk_kernels.txt; notes, session 28):
#      $OUT/deepk/{ncu.tgz,traffic.md}.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
sets=${SETS:-set26}
OUT=$O REPEAT=0 JOBS_H200=$sets JOBS_OTHER=$sets TESTS=0 ROUND_BUDGET_S=${ROUND_BUDGET_S:-300} \
  bash session17_call1.sh
if [ "${NCU:-1}" = 1 ]; then
  # shellcheck disable=SC2046  # one SHAPE:SCHEDULE a word
  OUT=$O/deepk bash ncu_traffic.sh $(cat deepk_kernels.txt)
  grep -h "SM Frequency" "$O"/deepk/ncu_own_*.txt 2>/dev/null | head -6
fi
