#!/usr/bin/env bash
# Session 7, issue #12: wgmma tiles 128 × every N from 72 to 248 in steps of 8 (the fine
# widths), from a `build_drop.sh` folder holding device_lib.sh, session5_suite.sh and resume/
# (session 5's suite run and profile):
#   1. the GPU tests of this binary;
#   2. gated screens: 3000×5000×1000 (128×232: 528 tiles = 4 whole waves of 132, where
#      128×256 leaves 3.6), 6144³ and 8192³ (128×248, 128×216 stream-K), and ragged shapes
#      (K % 4 ≠ 0, partial tiles) for the new widths' partial-tile paths, the staged
#      epilogue's 8-column tail chunk included (BN % 32 = 8, 24);
#   3. head-to-heads against cuBLAS of the shipped choice and the screens' best;
#   4. with RETUNE (shapes), those suite shapes tuned again into session 5's suite run.
set -uo pipefail
source ./device_lib.sh
device_setup s7a
echo "== 1. GPU tests"
gpu_tests
P=wgmma_tf32
echo "== 2. screens"
{
screen 3000 5000 1000 ${P}_128x256x32_s4_wg2_swz16_pers_c1_k1 \
  ${P}_128x232x32_s5_wg2_swz16_pers_c1_k1 ${P}_128x232x32_s4_wg2_swz16_pers_c1_k1 \
  ${P}_128x232x32_s3_wg2_swz16_pers_c1_k1 ${P}_128x232x32_s4_wg2_swz8_pers_c1_k1 \
  ${P}_128x232x32_s4_wg2_swz16_np_c1_k1 ${P}_128x240x32_s4_wg2_swz16_pers_c1_k1 \
  ${P}_128x152x32_s6_wg2_swz16_pers_c1_k1 ${P}_128x192x32_s5_wg2_swz16_pers_c1_k1
screen 6144 6144 6144 ${P}_128x256x32_s3_wg2_swz16_sk_c1_k1 ${P}_128x248x32_s4_wg2_swz16_sk_c1_k1 \
  ${P}_128x248x32_s3_wg2_swz16_sk_c1_k1 ${P}_128x240x32_s4_wg2_swz16_sk_c1_k1
screen 8192 8192 8192 ${P}_128x224x32_s4_wg2_swz16_pers_c1_k1 ${P}_128x216x32_s5_wg2_swz16_sk_c1_k1 \
  ${P}_128x216x32_s4_wg2_swz16_pers_c1_k1
screen 1000 1000 1001 ${P}_128x232x32_s4_wg2_swz1_np_c1_k1 ${P}_128x72x32_s7_wg1_swz1_np_c1_k1 \
  ${P}_128x200x32_s4_wg2_swz1_np_c1_k1 ${P}_128x120x32_s6_wg2_swz1_pers_c1_k1
screen 517 263 300 ${P}_128x88x32_s7_wg1_swz1_np_c1_k1 ${P}_128x232x32_s4_wg2_swz1_np_c1_k1 \
  ${P}_128x136x32_s5_wg2_swz1_np_c1_k1
} 2>&1 | tee "$W/screens.txt"
echo "== 3. head-to-heads"
{
h2h 3000 5000 1000 ${P}_128x256x32_s4_wg2_swz16_pers_c1_k1
h2h 3000 5000 1000 "$(best_of 3000 5000 1000 128x232)"
h2h 6144 6144 6144 ${P}_128x256x32_s3_wg2_swz16_sk_c1_k1
h2h 6144 6144 6144 "$(best_of 6144 6144 6144 'x(248|240)x')"
h2h 3000 5000 1000 ${P}_128x256x32_s4_wg2_swz16_pers_c1_k1
h2h 3000 5000 1000 "$(best_of 3000 5000 1000 128x232)"
} 2>&1 | tee "$W/h2h.txt"
gpu_state
if [ -n "${RETUNE:-}" ]; then
  echo "== 4. suite shapes tuned again: $RETUNE"
  RESUME=$here/resume SUITE_SHAPES=$RETUNE SUITE_LIMIT=${SUITE_LIMIT:-240} \
    bash session5_suite.sh --force --top 8 --max-seconds 0.5 2>&1 | tail -12 | tee "$W/retune.txt"
  cp /tmp/forge-s5-suite/tune_suite.txt "$W/" 2>/dev/null
fi
echo "== summary"
cat "$W/tests.txt" "$W/screens.txt" "$W/h2h.txt" | grep -v "^    "
