#!/usr/bin/env bash
# Session 8, issue #13: every calibration shape timed again on today's kernels (staged epilogue,
# fine widths), so one fit sees one kernel family: set 4 (eight shapes no calibration or tune has
# measured, the held-out set) first, then the twenty shapes of sets 1 and 2. From a
# `build_drop.sh` folder holding device_lib.sh and cache.tar.xz (the kernel cache precompiled on
# the CPU with `forge calibrate … --compile-only`). Results are saved after every shape, so a
# run stopped by CAL_S keeps what it measured. $OUT: calibration-{set4,sets12}/, calibrate-*.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s8c
[ -f cache.tar.xz ] && mkdir -p cache && tar xJf cache.tar.xz -C cache
SET4=${SET4:-3072x3072x3072,1024x16384x1024,256x11008x4096,768x768x12288,2304x9216x768,\
5000x3000x700,1600x6400x1600,3500x2800x2100}
SETS12=${SETS12:-2048x8192x512,3000x5000x1000,1536x6144x2048,640x2560x10240,6000x2000x1500,\
2560x2560x2560,4096x1024x4096,128x5376x7168,256x4096x4096,1024x1024x1024,512x512x512,\
2048x2048x2048,1000x3000x2000,2048x2048x8192,300x7000x2500,4096x4096x4096,4096x4096x512,\
768x3072x768,8192x1024x1024,96x12288x3072}
START=$(date +%s)
calibrate() { # NAME SHAPES SECONDS
  timeout "$3" ./forge calibrate --arch sm_90a --shapes "$2" --top 40 --sample 150 \
    --profile sm_90a-h200.toml --cache ./cache --out "$W/calibration-$1" > "$W/calibrate-$1.txt" 2>&1
  echo "calibrate $1 exit $?: $(grep -c . "$W/calibration-$1/calibration.csv" 2>/dev/null) csv lines"
  cp -r "$W/calibration-$1" "$FINAL/" 2>/dev/null
  grep -c "passed the gate" "$W/calibrate-$1.txt"
}
[ -n "$SET4" ] && calibrate set4 "$SET4" "${SET4_S:-200}"
left=$(( ${CAL_S:-540} - ($(date +%s) - START) ))
[ -n "$SETS12" ] && calibrate sets12 "$SETS12" "$left"
gpu_state
tail -n 30 "$W"/calibrate-*.txt
