#!/usr/bin/env bash
# Regenerates every fit*.txt of this folder from calibration.json (CPU only, ~1 min on 2 cores).
# Run from the repository root with a release build of forge on PATH or in FORGE.
set -euo pipefail
FORGE=${FORGE:-forge}
D=reports/2026-12-03-h200-calibration
H=256x4096x4096,1536x6144x2048,4096x1024x4096,6000x2000x1500,640x2560x10240,2560x2560x2560
SWAP=512x512x512,1024x1024x1024,2048x2048x2048,128x5376x7168,3000x5000x1000,2048x8192x512
START=tests/fixtures/model-2026-12-02.toml   # the hand-set constants (before any calibration)
P=profiles/sm_90a-h200.toml
# The fixed 6/6 split (continuity with session 4) + leave-one-shape-out + selection.
$FORGE calibrate --fit $D --holdout $H --profile $P --start $START --sweeps 80 > $D/fit.txt
# The swapped split.
$FORGE calibrate --fit $D --holdout $SWAP --profile $P --start $START --sweeps 80 --no-loso \
  --out $D/fit-swapped > $D/fit-swapped.txt
# All 12 shapes: the shipped constants (cost_model/model.toml, rounded to 4 digits).
$FORGE calibrate --fit $D --profile $P --start $START --sweeps 80 --no-loso \
  --out $D/fit-all > $D/fit-all.txt
# The shipped (rounded) constants as they are, on the fixed split (0 sweeps).
$FORGE calibrate --fit $D --holdout $H --profile $P --sweeps 0 --no-loso \
  --out $D/fit-shipped > $D/fit-shipped.txt
# Per-point residuals are kept for fit.txt's and fit-all's models only.
rm -f $D/fit-swapped/residuals.csv $D/fit-shipped/residuals.csv $D/fit-shipped/model.fitted.toml
