#!/usr/bin/env bash
# Session 35, issue #13, one device call from a build_drop.sh folder holding session30_call.sh
# (and its scripts), the set 42 folder, cache.tar.xz (set 42's kernels), cacheab.tar.xz (the A/B
# shape's kernels) and forge_old (the binary of 9b23db3, session 34, whose gate copies every output to the
# host):
#   1. the gate tests of the GPU suite, then the whole suite (TEST_S, default 120 s);
#   2. A/B of `forge calibrate`'s cost per schedule at a large output (9344×3376×9984, 31.5 M
#      elements): the same 31 schedules (--top 10 --sample 20 --repeat 0) with forge_old and
#      with this forge (gate counted on the device), each wall-timed, AB_ROUNDS (default 2)
#      alternating rounds;
#   3. held-out set 42 (session30_call.sh, SETS=set42, ROUND_BUDGET_S default 270).
# $OUT (at most 8 files come back): tests.txt, ab.tgz, ab.txt, and session30_call.sh's four.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
mkdir -p cache
[ -f forge_old ] || xz -dk forge_old.xz
tar xJf cache.tar.xz -C cache
tar xJf cacheab.tar.xz -C cache
{
  timeout 60 ./gpu_tests gate 2>&1 | tail -15
  echo "--- whole suite"
  timeout "${TEST_S:-120}" ./gpu_tests 2>&1 | tail -25
  echo "gpu_tests exit ${PIPESTATUS[0]}"
} > "$O/tests.txt"
tail -4 "$O/tests.txt"
mkdir -p "$O/ab"
for round in $(seq 1 "${AB_ROUNDS:-2}"); do
  for bin in forge_old forge; do
    start=$EPOCHREALTIME
    "./$bin" calibrate --arch sm_90a --shapes 9344x3376x9984 --top 10 --sample 20 --repeat 0 \
      --cache cache --out "$O/ab/$bin-$round" > "$O/ab/$bin-$round.log" 2>&1
    rc=$?
    awk -v b="$bin" -v r="$round" -v rc="$rc" -v t0="$start" -v t1="$EPOCHREALTIME" \
      'BEGIN { printf "%s round %s: exit %s, %.1f s\n", b, r, rc, t1 - t0 }' >> "$O/ab.txt"
  done
done
tar czf "$O/ab.tgz" -C "$O" ab && rm -rf "$O/ab"
cat "$O/ab.txt"
SETS=set42 ROUND_BUDGET_S=${ROUND_BUDGET_S:-270} LISTS= bash session30_call.sh
