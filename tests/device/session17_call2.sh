#!/usr/bin/env bash
# Session 17, call 2 (the drop of session17_call1.sh, plus session5_suite.sh). On an H200:
# call 1's work (issue #12's bars repeated, then set 11's held-out selection). On any other card
# the small items left from session 15: a tune of 2500×6000×2000 (cuBLAS 15% ahead of the one
# schedule timed there on the H100) and of 1216×1216×11264 and 1280×1280×10240 (the H100 ran
# swz1 1.3× slower than swz2 there; the tune's refine times the launch variants), each choice
# head to head against cuBLAS in both regimes (`session5_suite.sh`, SUITE_LIMIT default 200 s).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash session17_call1.sh
else
  SUITE_SHAPES=${SUITE_SHAPES:-2500x6000x2000,1216x1216x11264,1280x1280x10240} \
    SUITE_LIMIT=${SUITE_LIMIT:-200} bash session5_suite.sh --top 8 --max-seconds 0.5
  nvidia-smi --query-gpu=name --format=csv,noheader
  cat "$O/summary.md" 2>/dev/null | tail -20
fi
