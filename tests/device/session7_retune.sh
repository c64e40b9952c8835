#!/usr/bin/env bash
# Session 7, issue #12, second call: from a `build_drop.sh` folder holding device_lib.sh,
# session5_suite.sh and resume/ (the suite run and profile the first call left):
#   1. 8192³: the shipped 128×224 against 128×216 (persistent, 4 stages), head to head against
#      cuBLAS twice each in turn (the first call's screen had them 3054 vs 2700 µs);
#   2. the suite shapes in RETUNE (default: all 21) tuned again into that run.
# SKIP_H2H=1 skips step 1.
set -uo pipefail
source ./device_lib.sh
device_setup s7b
P=wgmma_tf32
echo "== 1. 8192³ head-to-heads"
[ -n "${SKIP_H2H:-}" ] || {
for round in 1 2; do
  h2h 8192 8192 8192 ${P}_128x224x32_s4_wg2_swz16_pers_c1_k1
  h2h 8192 8192 8192 ${P}_128x216x32_s4_wg2_swz16_pers_c1_k1
done
} 2>&1 | tee "$W/h2h.txt"
gpu_state
echo "== 2. suite shapes tuned again: ${RETUNE:-all 21}"
RESUME=$here/resume SUITE_SHAPES=${RETUNE:-} SUITE_LIMIT=${SUITE_LIMIT:-400} \
  bash session5_suite.sh --force --top 8 --max-seconds 0.5 2>&1 | tail -12 | tee "$W/retune.txt"
cp /tmp/forge-s5-suite/tune_suite.txt "$W/" 2>/dev/null
gpu_state
echo "== summary"
cat "$W/h2h.txt" "$W/retune.txt"
