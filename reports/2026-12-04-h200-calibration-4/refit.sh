#!/usr/bin/env bash
# Session 8/9: regenerates the fit-*.txt, store_pairs.txt and select-trainpool.txt from the stored data (CPU only, a few minutes
# on 2 cores). Run from the repository root (a git checkout: the "before" model and profile are
# read from commit 4d17484) with a release build of forge on PATH or in FORGE.
#   D12: sets 1 + 2 (20 shapes) retimed on 2026-12-04's kernels
#   D3:  set 3 (8 shapes, 2026-12-03)        D4: set 4 (7 shapes, 2026-12-04, this folder)
set -euo pipefail
FORGE=${FORGE:-forge}
D4=reports/2026-12-04-h200-calibration-4
D3=reports/2026-12-03-h200-calibration-3
D12=reports/2026-12-04-h200-calibration-sets12-retimed
S4=3072x3072x3072,1024x16384x1024,256x11008x4096,768x768x12288,2304x9216x768,5000x3000x700,1600x6400x1600
S3=384x8192x2048,1536x4096x1024,64x16384x4096,1920x7680x640,3584x3584x896,1200x4800x3600,5120x1280x5120,2500x2500x2500
DEST=${DEST:-$D4}
mkdir -p "$DEST"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Before session 8: epilogue_staged_factor = 0.77 (hand-set), the session-7 profile (no pool).
git show 4d17484:cost_model/model.toml > "$TMP/model-before.toml"
git show 4d17484:profiles/sm_90a-h200.toml > "$TMP/profile-session7.toml"
P7="$TMP/profile-session7.toml"
# 1. Set 4 held out, constants as they were (0 sweeps).
$FORGE calibrate --fit $D12,$D3,$D4 --holdout $S4 --start "$TMP/model-before.toml" --sweeps 0 \
  --no-loso --profile "$P7" --out "$TMP/f1" > $DEST/fit-before-set4.txt
# 2. The staged factor alone, fitted on the 28 shapes of sets 1-3, judged on set 4.
$FORGE calibrate --fit $D12,$D3,$D4 --holdout $S4 --start "$TMP/model-before.toml" --sweeps 80 \
  --free global.epilogue_staged_factor --no-loso --profile "$P7" --out "$TMP/f2" \
  > $DEST/fit-staged-factor-set4.txt
# 3. Every constant free on the same split (not shipped: it overfits, see notes).
$FORGE calibrate --fit $D12,$D3,$D4 --holdout $S4 --start "$TMP/model-before.toml" --sweeps 80 \
  --no-loso --profile "$P7" --out "$TMP/f3" > $DEST/fit-all-free-set4.txt
# 4. The shipped constants (cost_model/model.toml) as they are, set 4 and set 3 held out.
$FORGE calibrate --fit $D12,$D3,$D4 --holdout $S4 --sweeps 0 --no-loso --profile "$P7" \
  --out "$TMP/f4" > $DEST/fit-shipped-set4.txt
$FORGE calibrate --fit $D12,$D3,$D4 --holdout $S3 --sweeps 0 --no-loso --profile "$P7" \
  --out "$TMP/f5" > $DEST/fit-shipped-set3.txt
$FORGE calibrate --fit $D12,$D3,$D4 --holdout $S3 --start "$TMP/model-before.toml" --sweeps 0 \
  --no-loso --profile "$P7" --out "$TMP/f6" > $DEST/fit-before-set3.txt
# 5. Leave one shape out over all 35, the staged factor alone free, from before and from shipped.
$FORGE calibrate --fit $D12,$D3,$D4 --start "$TMP/model-before.toml" --sweeps 80 \
  --free global.epilogue_staged_factor --out "$TMP/f7" > $DEST/fit-staged-factor-loso35.txt
# 6. Direct vs staged C stores: stage pairs where s -> s+1 turns the stores direct, measured
#    and predicted by the constants before session 8, after it, and now (store_pairs.py).
git show 92585c0:cost_model/model.toml > "$TMP/model-session8.toml"
: > $DEST/store_pairs.txt
for m in model-before model-session8 shipped; do
  start=(--start "$TMP/$m.toml"); [ $m = shipped ] && start=()
  $FORGE calibrate --fit $D12,$D3,$D4 "${start[@]}" --sweeps 0 --no-loso --out "$TMP/p-$m" >/dev/null
  python3 $D4/store_pairs.py "$TMP/p-$m/residuals.csv" "$m" >> $DEST/store_pairs.txt
done
# 7. Selection offline, each held-out set with a profile whose verified pool came from the other
#    sets only (forge pool over the session-7 profile), by each model: select-trainpool.txt.
$FORGE pool --profile "$P7" --from $D12,$D3 --out "$TMP/train4.toml" >/dev/null
$FORGE pool --profile "$P7" --from $D12,$D4 --out "$TMP/train3.toml" >/dev/null
: > $DEST/select-trainpool.txt
for m in model-before model-session8 shipped; do
  start=(--start "$TMP/$m.toml"); [ $m = shipped ] && start=()
  for set in 4 3; do
    H=$S4; [ $set = 3 ] && H=$S3
    echo "== model $m, set $set held out, pool from the other sets" >> $DEST/select-trainpool.txt
    $FORGE calibrate --fit $D12,$D3,$D4 --holdout $H "${start[@]}" --sweeps 0 --no-loso \
      --profile "$TMP/train$set.toml" --out "$TMP/s-$m-$set" \
      | sed -n '/\[after the fit\]/,$p' | grep -v "^\[after\|^$TMP/" >> $DEST/select-trainpool.txt
  done
done
# The reports end with the paths of the temporary outputs: drop them.
sed -i "\#^$TMP/#d" "$DEST"/fit-*.txt
