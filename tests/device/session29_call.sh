#!/usr/bin/env bash
# Session 29, issue #13, one device call (from a build_drop.sh folder holding session17_call1.sh,
# its scripts, ncu_traffic.sh, lrc_table.py, deepk_kernels.txt and the set folders SETS names:
# set28, or set26r and set27r of session29_rounds_jobs.py):
#   1. the set folders SETS names (default "set26r set27r": more rounds of held-out sets 26 and
#      27, the roles' picks and the 3 fastest of session 29's first round; "set28": held-out set
#      28, `line_split_row_l2_factor` 2), TESTS=0, ROUND_BUDGET_S (default 300):
#      $OUT/{gpu.txt,sel.tgz,selection.txt,select-log.txt};
#   2. unless NCU=0, Nsight Compute's traffic counters and SM clocks of two tall-skinny pairs the
#      model prices alike but that ran 1.5–1.7× apart in that round: $OUT/tall/{ncu.tgz,traffic.md};
#   3. unless DEEPK=0, session 28's six one-wave deep-K kernels (deepk_kernels.txt):
#      $OUT/deepk/{ncu.tgz,traffic.md}.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
sets=${SETS:-set26r set27r}
OUT=$O REPEAT=0 JOBS_H200=$sets JOBS_OTHER=$sets TESTS=0 ROUND_BUDGET_S=${ROUND_BUDGET_S:-300} \
  bash session17_call1.sh
if [ "${NCU:-1}" = 1 ]; then
  OUT=$O/tall bash ncu_traffic.sh \
    9344x168x6632:wgmma_tf32_128x64x32_s7_wg1_swz1_pers_c1_k1 \
    9344x168x6632:wgmma_tf32_128x168x32_s5_wg2_swz16_pers_c1_k1 \
    21808x344x3248:wgmma_tf32_128x120x32_s6_wg1_swz1_pers_c1_k1 \
    21808x344x3248:wgmma_tf32_256x128x32_s4_wg2_swz1_pers_c1_k1
  grep -h "SM Frequency\|Duration\|L2 Cache Throughput\|sm__pipe_tensor" "$O"/tall/ncu_own_*.txt 2>/dev/null
fi
if [ "${DEEPK:-1}" = 1 ]; then
  # shellcheck disable=SC2046  # one SHAPE:SCHEDULE a word
  OUT=$O/deepk bash ncu_traffic.sh $(cat deepk_kernels.txt)
  grep -h "SM Frequency" "$O"/deepk/ncu_own_*.txt 2>/dev/null | head -6
fi
# At most 8 files come back: the reports' text is in each ncu.tgz.
rm -f "$O"/tall/*.txt "$O"/deepk/*.txt
find "$O" -type f | sort
