#!/usr/bin/env bash
# On the CPU machine: build the forge binary and the GPU integration tests, and copy the test
# binary to target/release/gpu_tests so that a device call can carry both:
#   carry: ["target/release/forge", "target/release/gpu_tests"]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release
bin=$(cargo test --release --no-run --test gpu --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        print(m["executable"])')
cp "$bin" target/release/gpu_tests
ls -la target/release/forge target/release/gpu_tests
