#!/usr/bin/env bash
# CPU machine: builds `forge` and the tests/step.rs binary and copies them, the shipped profile
# and the step scripts into DIR (default target/step-device), the folder a device call carries.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-target/step-device}
source tests/device/test_binary.sh
cargo build --release --bin forge
tests=$(test_binary step)
mkdir -p "$dir"
cp "${CARGO_TARGET_DIR:-target}/release/forge" "$dir/"
cp "$tests" "$dir/step-tests"
cp profiles/sm_90a-h200.toml tests/device/step.sh tests/device/step_*.py "$dir/"
echo "$dir"
