#!/usr/bin/env bash
# Session 30, issue #13, one device call (from a build_drop.sh folder holding session17_call1.sh,
# its scripts, ncu_traffic.sh, lrc_table.py, the *_kernels.txt lists and the set folders SETS
# names):
#   1. if SETS names set folders (e.g. "set28": more rounds of held-out set 28), TESTS=0,
#      ROUND_BUDGET_S (default 240): $OUT/{gpu.txt,sel.tgz,selection.txt,select-log.txt};
#   2. Nsight Compute's traffic counters of each list in LISTS (LIST_kernels.txt, one
#      SHAPE:SCHEDULE a line): $OUT/LIST/{ncu.tgz,traffic.md}. Default: none with SETS, else
#      "cluster tall deepk". cluster: 2-CTA clusters and their 1-CTA twins at small tiles, which
#      ran 1.03-1.6x their twins where the model prices 1.00-1.03x (reports/notes.md, sessions
#      29-30); tall: the tall-skinny pairs of session 29; deepk: session 28's one-wave deep-K
#      kernels.
#   At most 8 files come back, so with SETS (4 files) at most two lists are taken.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
if [ -n "${SETS:-}" ]; then
  lists=${LISTS-}
  # shellcheck disable=SC2086  # one list a word
  set -- $lists
  [ $# -le 2 ] || { echo "session30_call.sh: with SETS at most two LISTS (8 files come back)" >&2; exit 2; }
  OUT=$O REPEAT=0 JOBS_H200=$SETS JOBS_OTHER=$SETS TESTS=0 ROUND_BUDGET_S=${ROUND_BUDGET_S:-240} \
    bash session17_call1.sh
else
  lists=${LISTS-cluster tall deepk}
fi
for list in $lists; do
  # shellcheck disable=SC2046  # one SHAPE:SCHEDULE a word
  OUT=$O/$list bash ncu_traffic.sh $(cat "${list}_kernels.txt")
  grep -h "SM Frequency\|Duration" "$O/$list"/ncu_own_*.txt 2>/dev/null | head -12
done
# At most 8 files come back: the reports' text is in each ncu.tgz.
for list in $lists; do rm -f "$O/$list"/*.txt; done
find "$O" -type f | sort
