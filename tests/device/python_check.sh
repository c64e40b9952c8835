#!/usr/bin/env bash
# On the GPU machine (Python with PyTorch, no network, no cargo), from the repository root, after
# `bash tests/device/build_wheel.sh` on the CPU machine:
#   carry: ["target/wheels", "target/release/capi_tests", "target/release/libforge.so"]
#   bash tests/device/python_check.sh
# Unpacks the wheel into a private directory (nothing else is touched), then
# tests/device/python_check.py: forge.linear / forge.mm against torch.matmul (TF32) on a few
# shapes (rel_rms against FP64, bits identical to cuBLAS's, CUDA-event medians), the custom op
# under torch.compile, autograd and the argument checks; then the C-ABI tests where carried.
# Results in $OUT (default ./gpu-out): python_check.txt, python_check.json, capi_tests.txt.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
whl=$(ls target/wheels/forge_gemm-*.whl 2>/dev/null | head -1)
if [ -z "$whl" ]; then
  echo "no target/wheels/forge_gemm-*.whl: run tests/device/build_wheel.sh and carry target/wheels" >&2
  exit 1
fi
SITE=/tmp/forge-python-site
rm -rf "$SITE"
# A wheel is a zip archive: unpacking it is all its installation needs (no pip required).
$PY -m zipfile -e "$whl" "$SITE" || exit 1
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
# A fresh kernel cache per call: the first GEMM of each schedule really compiles.
export FORGE_CACHE=${FORGE_CACHE:-/tmp/forge-cache-py-$(date +%s%N)}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUT/nvidia-smi.txt" 2>&1
status=0
$PY tests/device/python_check.py --profile profiles/sm_90a-h200.toml --json "$OUT/python_check.json" \
  2>&1 | tee "$OUT/python_check.txt"
status=${PIPESTATUS[0]}
if [ -x target/release/capi_tests ]; then
  # No Python to preload NVRTC there: put the directory forge.Dispatcher found it in on the path.
  NVRTC_LIB=$($PY -c 'import forge; d = forge._nvrtc_candidates(); print(d[0] if d else "")' 2>/dev/null)
  LD_LIBRARY_PATH="${NVRTC_LIB:+$NVRTC_LIB:}${LD_LIBRARY_PATH:-}" FORGE_CDYLIB=$PWD/target/release/libforge.so \
    ./target/release/capi_tests --test-threads=1 --nocapture > "$OUT/capi_tests.txt" 2>&1
  capi=$?
  grep -E "^test |test result|capi gemm|SKIPPED|smoke:" "$OUT/capi_tests.txt"
  [ $capi = 0 ] || status=1
fi
echo "python_check exit $status"
exit $status
