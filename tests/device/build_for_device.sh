#!/usr/bin/env bash
# On the CPU machine: build the forge binary and the GPU integration tests, and copy the test
# binary to target/release/gpu_tests so that a device call can carry both:
#   carry: ["target/release/forge", "target/release/gpu_tests"]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release
source tests/device/test_binary.sh
bin=$(test_binary gpu)
cp "$bin" target/release/gpu_tests
ls -la target/release/forge target/release/gpu_tests
