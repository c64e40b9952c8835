#!/usr/bin/env bash
# Session 33, issue #13: held-out calibration set 36, the sampled space of 8 shapes no profile
# entry holds, drawn before any timing (the first 8 of `session26_select_jobs.draw(6161)`:
# M, N log-uniform in 32-24576, K in 256-16384, 2 GFLOP-1.2 TFLOP). One device call from a
# build_drop.sh folder holding cache36.tar.xz (these shapes' kernels compiled on the CPU:
#   forge calibrate --arch sm_90a --shapes $SHAPES --profile profiles/sm_90a-h100.toml \
#     --compile-only --cache DIR; tar cJf cache36.tar.xz -C DIR .):
# `forge calibrate` with its defaults (the model's top 40, 150 sampled, 4 confirmation rounds)
# and this card's profile's candidates; $OUT/cal36/{calibration.json,calibration.csv},
# $OUT/cal36-log.txt, $OUT/gpu.txt. Set 37 (the first 12 of `draw(6262)`, no cache carried: the
# device compiles them in ~30 s): NAME=cal37 SHAPES=896x1856x6144,21536x448x1088,2080x9856x1600,\
#   512x7936x8064,19448x1752x256,13312x88x3696,10624x384x7952,1792x128x15872,1536x128x10432,\
#   3456x1088x9984,5128x216x8264,320x1920x13312 bash session33_calibration.sh
set -uo pipefail
O=${OUT:?OUT must name the results folder}
SHAPES=${SHAPES:-288x3264x2936,9048x32x15488,3424x1024x2496,2688x1408x960,360x10960x576,384x1024x4608,1688x128x14592,22824x128x1280}
NAME=${NAME:-cal36}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$O/gpu.txt" 2>&1
if grep -q H200 "$O/gpu.txt"; then profile=sm_90a-h200.toml; else profile=sm_90a-h100.toml; fi
[ -f "$profile" ] || profile=../../profiles/$profile
mkdir -p cache
# A CPU-compiled cache of this set's kernels, if carried: cache36.tar.xz, or cache40.tar.xz
# for NAME=cal40 (session 34).
[ ! -f "cache${NAME#cal}.tar.xz" ] || tar xJf "cache${NAME#cal}.tar.xz" -C cache
start=$SECONDS
./forge calibrate --arch sm_90a --shapes "$SHAPES" --profile "$profile" --cache cache \
  --repeat "${REPEAT:-4}" --out "$O/$NAME" > "$O/$NAME-log.txt" 2>&1
echo "exit $? after $((SECONDS - start)) s" >> "$O/$NAME-log.txt"
grep -h "cuBLAS\|noise\|exit\|compiled" "$O/$NAME-log.txt" | tail -20
