#!/usr/bin/env bash
# Session 7, issue #13: calibration set 3, eight shapes no calibration or tune has measured,
# timed with the schedule space of the fine widths and the profile the session-7 suite shipped
# (its entries and runners-up are selection's pool), from a `build_drop.sh` folder holding
# device_lib.sh (a kernel cache precompiled on the CPU with `forge calibrate … --compile-only`
# may sit in ./cache). $OUT: calibration/{calibration.json,calibration.csv}, calibrate.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s7c
SHAPES=${SHAPES:-384x8192x2048,1536x4096x1024,64x16384x4096,1920x7680x640,3584x3584x896,\
1200x4800x3600,5120x1280x5120,2500x2500x2500}
timeout "${CAL_S:-300}" ./forge calibrate --arch sm_90a --shapes "$SHAPES" --top 40 --sample 150 \
  --profile sm_90a-h200.toml --cache ./cache --out "$W/calibration" > "$W/calibrate.txt" 2>&1
echo "calibrate exit $?: $(grep -c . "$W/calibration/calibration.csv" 2>/dev/null) csv lines"
cp -r "$W/calibration" "$FINAL/"
gpu_state
tail -12 "$W/calibrate.txt"
