#!/usr/bin/env bash
# Session 10, issue #13: selection by three cost models on sets 6 and 7 (jobs from
# tests/device/session10_select_jobs.py), as many rounds as fit in ROUND_BUDGET_S (default 420 s:
# a round is started only while the elapsed time is below budget / 2 per round done), then the
# table. From a `build_drop.sh` folder holding device_lib.sh, jobs.txt, jobs.json and
# session9_select_table.py. $OUT: screens-N.txt, selection.txt, nvidia-smi.txt, s10s.tgz (each
# round's JSONL); with TESTS=1 also the GPU tests of this build (tests*.txt).
set -uo pipefail
[ -s jobs.txt ] || { echo "no jobs: jobs.txt is missing or empty" >&2; exit 2; }
source ./device_lib.sh
device_setup s10s
cp jobs.json "$W/"
start=$SECONDS
budget=${ROUND_BUDGET_S:-420}
round=0
while :; do
  round=$((round + 1))
  while read -r m n k rest; do
    # shellcheck disable=SC2086  # the schedule names are one word each
    screen "$m" "$n" "$k" $rest
  done < jobs.txt > "$W/screens-$round.txt"
  mkdir -p "$W/round$round"
  mv "$W"/screen-*.jsonl "$W/round$round/"
  took=$((SECONDS - start))
  echo "round $round (${took} s): $(grep -c 'gate pass' "$W/screens-$round.txt") gate-passing, $(grep -c 'gate fail' "$W/screens-$round.txt") failing"
  gpu_state
  # Another round only if it fits at this round's pace.
  [ $((took + took / round)) -lt "$budget" ] || break
done
python3 session9_select_table.py "$W" 100 > "$W/selection.txt"
[ "${TESTS:-0}" = 1 ] && gpu_tests
grep "^set" "$W/selection.txt"
