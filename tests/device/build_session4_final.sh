#!/usr/bin/env bash
# CPU machine: builds the merged binaries and assembles the folder session4_final.sh runs in
# (default devdrop/final; carry it and run `cd devdrop/final && bash session4_final.sh`).
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=${1:-devdrop/final}
cargo build --release
source tests/device/test_binary.sh
T=${CARGO_TARGET_DIR:-target}/release
rm -rf "$DEST"; mkdir -p "$DEST"
cp "$T/forge" "$DEST/forge"
cp "$(test_binary gpu)" "$DEST/gpu_tests"
cp "$(test_binary gpu_layouts)" "$DEST/gpu_layouts_tests"
cp "$(test_binary step)" "$DEST/step-tests"
cp profiles/sm_90a-h200.toml tests/device/step.sh tests/device/step_*.py tests/device/multi_gpu.sh \
  tests/device/session4_final.sh "$DEST/"
du -sh "$DEST"
