#!/usr/bin/env bash
# Session 15, call 1 (from a `build_drop.sh` folder, prepared in session 14): the GPU tests with
# the retiled tail, its screens beside the pers twins and head-to-heads (session14_rt.sh), the
# held-out selection with inward tiles (session10_select.sh), then the staged stores of
# shifted edge tiles A/B (session13_inward.sh, what time is left), all inside LIMIT_S seconds; whatever ran is packed into
# $OUT/work.tgz (every /tmp/forge-* work folder) and the summaries are printed last.
set -uo pipefail
O=${OUT:?}
P=wgmma_tf32
export O P
timeout "${LIMIT_S:-540}" bash -c '
OUT=$O/rt TESTS=1 TEST_S=100 ROUNDS=2 bash session14_rt.sh
OUT=$O/select TESTS=0 ROUND_BUDGET_S=${SELECT_S:-150} bash session10_select.sh
OUT=$O/staged OFF_DEFINES=FORGE_EDGE_STAGED=0 ON_DEFINES=FORGE_EDGE_STAGED=1 ROUNDS=2 \
  SPECS="1000x1000x1001:${P}_128x128x32_s6_wg1_swz1_np_c1_k1 3000x5000x1000:${P}_128x232x32_s4_wg2_swz16_pers_c1_k1 1024x1024x1024:${P}_128x80x32_s7_wg1_swz16c_np_c1_k1 2048x8192x512:${P}_128x200x32_s5_wg2_swz16_pers_c1_k1" \
  bash session13_inward.sh'
echo "exit $?"
tar czf "$O/work.tgz" -C /tmp $(cd /tmp && ls -d forge-*)
rm -rf "$O"/rt "$O"/staged "$O"/select
for f in /tmp/forge-*/tests.txt /tmp/forge-*/rt.txt /tmp/forge-*/h2h.txt /tmp/forge-*/inward.txt /tmp/forge-*/selection.txt; do
  [ -f "$f" ] && { echo "== $f"; cat "$f"; }
done
