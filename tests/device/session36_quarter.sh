#!/usr/bin/env bash
# Session 36 (issue #13), registered before any timing: held-out calibration set 47, 16 shapes
# drawn by session26_select_jobs.draw(7676) with K moved to a quarter-line row pitch (K*4 = 32
# or 96 mod 128; session36-quarter/shapes.txt), each timed with `forge calibrate` defaults (the
# shipped model's top 40, 150 sampled, the profile's candidates, 4 confirmation rounds) plus the
# hypothesis' first 8 (session36-quarter/hyp-SHAPE.txt: session36-model-q175.toml, the
# quarter-line L2 factor 1.75). One calibrate per shape, so each adds only its own 8.
# From a build_drop.sh folder, with the tree's tests/device at ../../tests/device:
#   bash session36_quarter.sh        ($OUT/cal47/SHAPE/: calibration.json, .csv; cal47-log.txt)
set -uo pipefail
O=${OUT:?OUT must name the results folder}
Q=../../tests/device/session36-quarter
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$O/gpu.txt" 2>&1
if grep -q H200 "$O/gpu.txt"; then profile=sm_90a-h200.toml; else profile=sm_90a-h100.toml; fi
[ -f "$profile" ] || profile=../../profiles/$profile
mkdir -p cache "$O/cal47"
# Kernels precompiled on the CPU machine (`forge calibrate --compile-only`, same arguments), if given.
[ ! -f c47.tar.xz ] || tar xJf c47.tar.xz -C cache
start=$SECONDS
for s in $(tr ',' ' ' < "$Q/shapes.txt"); do
  [ $((SECONDS - start)) -lt "${BUDGET_S:-420}" ] || { echo "budget: $s not timed" >> "$O/cal47-log.txt"; continue; }
  ./forge calibrate --arch sm_90a --shapes "$s" --profile "$profile" --cache cache \
    --schedules "$Q/hyp-$s.txt" --repeat "${REPEAT:-4}" --out "$O/cal47/$s" >> "$O/cal47-log.txt" 2>&1
  echo "$s: exit $? at $((SECONDS - start)) s" >> "$O/cal47-log.txt"
done
tar czf "$O/cal47.tgz" -C "$O" cal47 && rm -rf "$O/cal47"
grep -h "cuBLAS\|noise\|exit\|budget" "$O/cal47-log.txt" | tail -40
