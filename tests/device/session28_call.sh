#!/usr/bin/env bash
# Session 28, issue #13, one device call (from a build_drop.sh folder holding session17_call1.sh,
# its scripts, ncu_traffic.sh, lrc_table.py and the set folders SETS names):
#   1. the held-out sets of SETS (default "set26": `busy_sm_clock_exponent` 0.1; "set27": the
#      DRAM walk; session28_select_jobs.py), TESTS=0, ROUND_BUDGET_S (default 300):
#      $OUT/{gpu.txt,sel.tgz,selection.txt,select-log.txt};
#   2. unless NCU=0: the traffic counters and SM clocks of three one-wave pairs where the
#      DRAM wave model and the shipped model pick apart (reports/notes.md, session 28):
#      $OUT/deepk/{ncu.tgz,traffic.md}.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
sets=${SETS:-set26}
OUT=$O REPEAT=0 JOBS_H200=$sets JOBS_OTHER=$sets TESTS=0 ROUND_BUDGET_S=${ROUND_BUDGET_S:-300} \
  bash session17_call1.sh
if [ "${NCU:-1}" = 1 ]; then
  OUT=$O/deepk bash ncu_traffic.sh \
    1216x1216x11264:wgmma_tf32_128x104x32_s7_wg1_swz4c_np_c1_k1 \
    1216x1216x11264:wgmma_tf32_128x96x32_s7_wg1_swz2_np_c1_k1 \
    768x2560x10240:wgmma_tf32_128x128x32_s6_wg2_swz8_np_c1_k1 \
    768x2560x10240:wgmma_tf32_128x120x32_s5_wg2_swz2c_pers_c1_k1 \
    9216x576x8192:wgmma_tf32_128x192x32_s5_wg2_swz2_pers_c1_k1 \
    9216x576x8192:wgmma_tf32_128x120x32_s6_wg1_swz2_np_c1_k1
  grep -h "SM Frequency" "$O"/deepk/ncu_own_*.txt 2>/dev/null | head -6
fi
