#!/usr/bin/env bash
# CPU machine: builds the release binaries and assembles a flat folder for one device call:
# forge, the GPU test binaries (gpu_tests, gpu_layouts_tests, step-tests), the shipped profile,
# the step scripts, the device library (device_lib.sh, worker_job.sh) and the device scripts
# named on the command line. Carry the folder and run
# e.g. `cd devdrop/s5a && bash session5_probe.sh`. A kernel cache already in DEST is kept.
#   bash tests/device/build_drop.sh DEST script.sh [script.sh …]
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=${1:?usage: build_drop.sh DEST script.sh ...}; shift
cargo build --release
source tests/device/test_binary.sh
T=${CARGO_TARGET_DIR:-target}/release
mkdir -p "$DEST"
find "$DEST" -maxdepth 1 -type f -delete
cp "$T/forge" "$DEST/forge"
cp "$(test_binary gpu)" "$DEST/gpu_tests"
cp "$(test_binary gpu_layouts)" "$DEST/gpu_layouts_tests"
cp "$(test_binary step)" "$DEST/step-tests"
cp profiles/sm_90a-h200.toml tests/device/step.sh tests/device/step_*.py tests/device/worker_job.sh \
  tests/device/device_lib.sh "$DEST/"
for s in "$@"; do cp "tests/device/$s" "$DEST/"; done
# Symbols are not needed there, and a call carries the working tree and the drop in 64 MiB.
strip "$DEST/forge" "$DEST/gpu_tests" "$DEST/gpu_layouts_tests" "$DEST/step-tests"
du -sh "$DEST"
# What a call carries: the working tree (tracked and untracked-not-ignored files) and the drop.
tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
drop=$(du -sb "$DEST" | cut -f1)
echo "a call carries $(( (tree + drop) >> 20 )) MiB (tree $((tree >> 20)), drop $((drop >> 20))) of 64"
[ $((tree + drop)) -lt $((64 << 20)) ] || { echo "build_drop.sh: over the 64 MiB a call carries" >&2; exit 1; }
