#!/usr/bin/env bash
# Issue #13: the calibration data set on one GPU (run from a directory holding the release
# `forge` binary, a warm kernel cache in ./cache and the profile; see the report for the call).
#   per shape: the cost model's top 40, a stratified sample of 150 more valid schedules, every
#   schedule the shipped profile holds that is valid for it, and the canonical; each gated
#   against the canonical output and timed quickly (CUDA events, ≥ 7 batches of ≥ 300 µs after
#   5 ms warm-up, inputs rotated past the L2), cuBLAS once per shape.
# Writes $OUT/calibration/{calibration.json,calibration.csv} and $OUT/calibrate.log.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/forge-calibrate}
mkdir -p "$OUT"
# Training shapes (the profile holds them) and held-out shapes (it does not), interleaved so a
# run cut short keeps both kinds.
SHAPES=${SHAPES:-512x512x512,256x4096x4096,1024x1024x1024,1536x6144x2048,2048x2048x2048,\
4096x1024x4096,128x5376x7168,6000x2000x1500,3000x5000x1000,640x2560x10240,2048x8192x512,\
2560x2560x2560,4096x4096x4096,96x12288x3072}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv || true
# exec: a `timeout` around this script then stops forge itself (the data is saved per shape).
exec ./forge calibrate --arch sm_90a --shapes "$SHAPES" --top 40 --sample 150 \
    --profile sm_90a-h200.toml --cache ./cache --out "$OUT/calibration" > "$OUT/calibrate.log" 2>&1
