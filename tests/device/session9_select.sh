#!/usr/bin/env bash
# Session 9, issue #13: selection measured on shapes nothing had measured (set 6), twice in turn
# so near-ties show their spread; then the GPU tests of this build. From a `build_drop.sh`
# folder holding device_lib.sh and jobs.txt (tests/device/session9_select_jobs.py).
# $OUT: screens-1.txt, screens-2.txt, tests*.txt, nvidia-smi.txt, and s9s.tgz holding round1/,
# round2/ (each job's JSONL; too many files to return one by one).
set -uo pipefail
source ./device_lib.sh
device_setup s9s
for round in 1 2; do
  while read -r m n k rest; do
    # shellcheck disable=SC2086  # the schedule names are one word each
    screen "$m" "$n" "$k" $rest
  done < jobs.txt > "$W/screens-$round.txt"
  mkdir -p "$W/round$round"
  mv "$W"/screen-*.jsonl "$W/round$round/"
  echo "round $round: $(grep -c 'gate pass' "$W/screens-$round.txt") gate-passing, $(grep -c 'gate fail' "$W/screens-$round.txt") failing"
  gpu_state
done
[ "${TESTS:-1}" = 1 ] && gpu_tests
