#!/usr/bin/env bash
# Session 8, issue #13: selection for shapes a profile does not hold, measured. From a
# `build_drop.sh` folder holding device_lib.sh and jobs.txt (one line per shape: M N K and the
# schedules to screen in one worker job, cuBLAS in the same job; written on the CPU from the
# profiles' `forge select` choices, `forge rank`'s top picks and the calibration data's sampled
# bests; jobs.json says which is which). Then the GPU tests on the shipped profile.
# $OUT: screen-*.jsonl, screens.txt, tests*.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s8s
while read -r m n k rest; do
  # shellcheck disable=SC2086  # the schedule names are one word each
  screen "$m" "$n" "$k" $rest
done < jobs.txt | tee "$W/screens.txt" | grep -c "gate pass"
cp "$W"/screen-*.jsonl "$FINAL/"
gpu_state
[ "${TESTS:-1}" = 1 ] && gpu_tests
