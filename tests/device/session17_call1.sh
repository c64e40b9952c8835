#!/usr/bin/env bash
# Session 17, call 1 (from a `build_drop.sh` folder holding session16_repeat.sh,
# session10_select.sh and selection jobs). On an H200: issue #12's bars repeated
# (`session16_repeat.sh`, ROUNDS, default 3), then the held-out selection (ROUND_BUDGET_S,
# default 180); on any other card the selection alone, with ROUND_BUDGET_S default 360 (more
# rounds against the bimodal one-wave timings seen on the H100).
# The jobs: the drop's jobs.txt and jobs.json, or, where JOBS_H200 (on an H200) or JOBS_OTHER
# (elsewhere) names folders, their jobs files put together (e.g. "set11 set12").
# TESTS=0 skips the GPU tests (default 1: run them after the selection); REPEAT=0 skips #12's
# repeat on an H200.
# $OUT (at most 8 files come back): gpu.txt, rep.tgz + summary.txt (H200 only), sel.tgz +
# selection.txt, select-log.txt.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
nvidia-smi --query-gpu=name --format=csv,noheader > "$O/gpu.txt" 2>&1
use_jobs() {
  [ $# -gt 0 ] || return 0
  local d
  for d in "$@"; do
    [ -s "$d/jobs.txt" ] || { echo "no jobs: $d/jobs.txt is missing or empty" >&2; exit 2; }
    cat "$d/jobs.txt"
  done > jobs.txt
  python3 -c 'import json, sys
json.dump([j for d in sys.argv[1:] for j in json.load(open(d + "/jobs.json"))], open("jobs.json", "w"))' "$@"
}
budget=360
if grep -q H200 "$O/gpu.txt"; then
  budget=180
  # shellcheck disable=SC2086  # folder names, one word each
  use_jobs ${JOBS_H200:-}
  if [ "${REPEAT:-1}" = 1 ]; then
    OUT=$O/rep ROUNDS=${ROUNDS:-3} bash session16_repeat.sh > /dev/null
    tar czf "$O/rep.tgz" -C "$O" rep && cp "$O/rep/summary.txt" "$O/" && rm -rf "$O/rep"
  fi
else
  # shellcheck disable=SC2086
  use_jobs ${JOBS_OTHER:-}
fi
OUT=$O/sel TESTS=${TESTS:-1} TEST_S=100 ROUND_BUDGET_S=${ROUND_BUDGET_S:-$budget} bash session10_select.sh \
  > "$O/select-log.txt"
tar czf "$O/sel.tgz" -C "$O" sel && cp "$O/sel/selection.txt" "$O/" && rm -rf "$O/sel"
cat "$O/gpu.txt"
grep -h "exit\|^round" "$O/select-log.txt"
[ -f "$O/summary.txt" ] && cat "$O/summary.txt"
grep "^set" "$O/selection.txt"
