#!/usr/bin/env bash
# Registered in session 35 for a later call (issue #13): does `forge calibrate --heat-ms` make a
# schedule's time independent of its position in the worker? Session 35 measured the drift
# (reports/notes.md, session 35, item 5): without the host gate's idle gaps, the schedules after
# the first ran 1.0-1.2x slower at 9344x3376x9984 on the H100.
# From a build_drop.sh folder holding cacheab.tar.xz (that shape's kernels, as in
# session35_call.sh): per round, the same calibrate (the model's top 10, 20 sampled, 4
# confirmation rounds in rotated orders) with --heat-ms 0 and with HEAT_MS (default 1000),
# alternating which runs first. Each confirmed schedule is timed in 5 positions; calibrate's
# "one timing's noise" line is the spread the heat-up must shrink, and
# `python3 tests/device/heat_ab_table.py DIR` compares each schedule's first timing with its
# confirmation medians.
# $OUT: heat.tgz (every run's calibration.json, .csv and log) and heat.txt (wall times, noise).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
SHAPE=${SHAPE:-9344x3376x9984}
mkdir -p cache "$O/heat"
[ ! -f cacheab.tar.xz ] || tar xJf cacheab.tar.xz -C cache
nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader > "$O/heat.txt"
for round in $(seq 1 "${ROUNDS:-2}"); do
  if [ $((round % 2)) = 1 ]; then order="0 ${HEAT_MS:-1000}"; else order="${HEAT_MS:-1000} 0"; fi
  for heat in $order; do
    name=heat$heat-$round
    start=$EPOCHREALTIME
    ./forge calibrate --arch sm_90a --shapes "$SHAPE" --top 10 --sample 20 --repeat 4 \
      --heat-ms "$heat" --cache cache --out "$O/heat/$name" > "$O/heat/$name.log" 2>&1
    rc=$?
    noise=$(grep -o "one timing's noise [0-9.]*%" "$O/heat/$name.log")
    awk -v n="$name" -v rc="$rc" -v t0="$start" -v t1="$EPOCHREALTIME" -v z="$noise" \
      'BEGIN { printf "%s: exit %s, %.1f s, %s\n", n, rc, t1 - t0, z }' >> "$O/heat.txt"
  done
done
tar czf "$O/heat.tgz" -C "$O" heat && rm -rf "$O/heat"
cat "$O/heat.txt"
