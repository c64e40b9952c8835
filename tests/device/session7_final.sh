#!/usr/bin/env bash
# Session 7's closing call, from a `build_drop.sh` folder holding device_lib.sh: the GPU tests
# of the final binary, then the shipped schedules nearest issue #12's bars head to head against
# cuBLAS again (serial launches, three times each in turn), to show their run-to-run spread.
set -uo pipefail
source ./device_lib.sh
device_setup s7d
echo "== 1. GPU tests"
gpu_tests
P=wgmma_tf32
echo "== 2. repeats"
{
for round in 1 2 3; do
  h2h 3000 5000 1000 ${P}_128x232x32_s4_wg2_swz16_pers_c1_k1
  h2h 2048 8192 512 ${P}_128x200x32_s5_wg2_swz16_pers_c1_k1
  h2h 6144 6144 6144 ${P}_128x256x32_s4_wg2_swz8_pers_c2_k1
done
} 2>&1 | tee "$W/h2h.txt"
gpu_state
echo "== summary"
cat "$W/tests.txt" "$W/h2h.txt"
