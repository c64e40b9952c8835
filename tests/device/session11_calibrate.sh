#!/usr/bin/env bash
# Session 11, issue #13: calibration set 9 with confirmation rounds (`forge calibrate --repeat
# 4`: the near-best and the model's top 4 timed four more times), so that the fit can report
# ties and the top-4 count's ceiling on a stratified sample. Run after the set-9 selection
# (the shapes are then no longer unseen by anything but the model). From a `build_drop.sh`
# folder holding device_lib.sh (a kernel cache precompiled on the CPU with `forge calibrate …
# --compile-only --cache cache` may sit in ./cache). $OUT: calibration/, calibrate.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s11c
SHAPES=${SHAPES:-1152x1152x12288,896x2048x7168,2560x1536x4096,5120x2560x768,192x16384x6144,\
3328x3328x1664,1000x4000x2000,2800x1400x3500}
timeout "${CAL_S:-500}" ./forge calibrate --arch sm_90a --shapes "$SHAPES" --top 40 --sample 150 \
  --repeat "${REPEAT:-4}" --profile sm_90a-h200.toml --cache ./cache --out "$W/calibration" \
  > "$W/calibrate.txt" 2>&1
echo "calibrate exit $?: $(grep -c . "$W/calibration/calibration.csv" 2>/dev/null) csv lines"
cp -r "$W/calibration" "$FINAL/"
gpu_state
grep "more times" "$W/calibrate.txt"
./forge calibrate --fit "$W/calibration" --sweeps 0 --no-loso --out "$W/fit" | head -4
