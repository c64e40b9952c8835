#!/usr/bin/env bash
# Regenerates every fit*.txt of this folder from calibration.json (set 1: 12 shapes) and
# ../2026-12-03-h200-calibration-2/calibration.json (set 2: 8 more shapes, collected 14:57 UTC
# by the lead). CPU only, ~4 min on 2 shared cores. Run from the repository root with a
# release build of forge on PATH or in FORGE.
set -euo pipefail
FORGE=${FORGE:-forge}
D=reports/2026-12-03-h200-calibration
D2=reports/2026-12-03-h200-calibration-2
H=256x4096x4096,1536x6144x2048,4096x1024x4096,6000x2000x1500,640x2560x10240,2560x2560x2560
SWAP=512x512x512,1024x1024x1024,2048x2048x2048,128x5376x7168,3000x5000x1000,2048x8192x512
NEW=4096x4096x4096,96x12288x3072,768x3072x768,2048x2048x8192,8192x1024x1024,300x7000x2500,4096x4096x512,1000x3000x2000
START=tests/fixtures/model-2026-12-02.toml   # the hand-set constants (before any calibration)
P=reports/2026-12-03-h200-suite-rne/profile.toml  # the profile shipped when the calibration data were taken
# Set 1 only: the fixed 6/6 split (continuity with session 4) + leave-one-shape-out (12).
$FORGE calibrate --fit $D --holdout $H --profile $P --start $START --sweeps 80 > $D/fit.txt
# Set 1 only: the swapped split.
$FORGE calibrate --fit $D --holdout $SWAP --profile $P --start $START --sweeps 80 --no-loso \
  --out $D/fit-swapped > $D/fit-swapped.txt
# Trained on set 1, judged on set 2 (8 shapes no fit had seen).
$FORGE calibrate --fit $D,$D2 --holdout $NEW --profile $P --start $START --sweeps 80 --no-loso \
  --out $D/fit-new8 > $D/fit-new8.txt
# Both sets: the fixed split's 6 shapes held out, leave-one-shape-out over all 20.
$FORGE calibrate --fit $D,$D2 --holdout $H --profile $P --start $START --sweeps 80 \
  --out $D/fit-20 > $D/fit-20.txt
# Set 1, every shape trains: the shipped constants (cost_model/model.toml, 4 digits); set 2
# is their out-of-sample test (fit-shipped-new8.txt).
$FORGE calibrate --fit $D --profile $P --start $START --sweeps 80 --no-loso \
  --out $D/fit-all > $D/fit-all.txt
# Both sets, every shape trains (not shipped: smem_bytes_per_clk_per_sm runs to its 512 bound,
# and no shape is left to test it on; its held-out estimate is fit-20.txt's LOSO).
$FORGE calibrate --fit $D,$D2 --profile $P --start $START --sweeps 80 --no-loso \
  --out $D/fit-all20 > $D/fit-all20.txt
# The shipped (rounded) constants as they are (0 sweeps), fixed split and set 2 held out.
$FORGE calibrate --fit $D,$D2 --holdout $H --profile $P --sweeps 0 --no-loso \
  --out $D/fit-shipped > $D/fit-shipped.txt
$FORGE calibrate --fit $D,$D2 --holdout $NEW --profile $P --sweeps 0 --no-loso \
  --out $D/fit-shipped-new8 > $D/fit-shipped-new8.txt
# Selection over the pool of the profile shipped since session 5 (profiles/sm_90a-h200.toml),
# judged on set 2 with the shipped constants (session 6; the data predate that profile).
$FORGE calibrate --fit $D,$D2 --holdout $NEW --profile profiles/sm_90a-h200.toml --sweeps 0 \
  --no-loso --out /tmp/fit-shipped-s5profile-new8 > $D/fit-shipped-s5profile-new8.txt
# Per-point residuals are kept for fit.txt's, fit-20's and fit-all's models only.
for d in fit-swapped fit-new8 fit-shipped fit-shipped-new8 fit-all20; do
  rm -f $D/$d/residuals.csv
done
rm -f $D/fit-shipped/model.fitted.toml $D/fit-shipped-new8/model.fitted.toml
