#!/usr/bin/env bash
# Session 17, call 3 (the drop of session17_call1.sh, plus session11_calibrate.sh). On an H200:
# call 1's work (issue #12's bars repeated, then set 11's held-out selection). On any other card
# calibration on set 11's shapes (`forge calibrate --top 40 --sample 150 --repeat 4`; the
# shapes no fit has seen: after the set-11 selection, so held out for the constants only),
# CAL_S default 300 s. $OUT: call 1's files, or calibration/ + calibrate.txt.
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash session17_call1.sh
else
  SHAPES=${SHAPES:-1152x1408x8192,960x1920x12288,2432x2432x3072,3072x2560x4096,4096x3072x768,\
2816x5120x1280,2048x11008x4096,512x4096x11008,8192x256x4096,777x1999x1501} \
    CAL_S=${CAL_S:-300} bash session11_calibrate.sh
  nvidia-smi --query-gpu=name --format=csv,noheader
fi
