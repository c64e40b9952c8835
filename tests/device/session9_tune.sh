#!/usr/bin/env bash
# Session 9, issue #13: `forge tune` (this build: the tuner also times its first pick's cluster
# twin) on the set-6 shapes where the shipped choice was a 2-CTA cluster and its 1-CTA twin
# measured faster (896x896x14336, 12288x512x2048) and on 1100x1100x9000; then the GPU tests of
# this build (tuning on first use takes the twin too). From a `build_drop.sh` folder holding
# device_lib.sh. $OUT: tune/ (profile.toml, report, summary), tune.log, tests*.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s9t
SHAPES=${SHAPES:-896x896x14336,12288x512x2048,1100x1100x9000}
timeout "${TUNE_S:-300}" ./forge tune --arch sm_90a --shapes "$SHAPES" --top 10 --max-seconds 0.5 \
  --no-plots --profile "$W/tune-profile.toml" --run-dir "$W/tune" --require-gpu \
  > "$W/tune.log" 2>&1
echo "tune exit $?"
tail -25 "$W/tune.log"
mkdir -p "$FINAL/tune" && cp -r "$W/tune/." "$FINAL/tune/" && cp "$W/tune-profile.toml" "$FINAL/tune/"
gpu_state
[ "${TESTS:-1}" = 1 ] && gpu_tests
