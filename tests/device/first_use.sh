#!/usr/bin/env bash
# Issue #13: tuning on first use on one GPU. Run from a directory holding the release test
# binary of tests/gpu.rs as ./gpu_tests (source tests/device/test_binary.sh; test_binary gpu)
# and a kernel cache in ./cache.
set -euo pipefail
cd "$(dirname "$0")"
FORGE_CACHE=${FORGE_CACHE:-$PWD/cache} ./gpu_tests --test-threads 1 --nocapture tune_on_first_use 2>&1
