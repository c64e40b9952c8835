#!/usr/bin/env bash
# On the CPU machine: build the forge Python wheel (abi3, CPython >= 3.9) into target/wheels/, and
# the C-ABI tests with libforge.so into target/release/, for python_check.sh on a GPU machine
# (which has no cargo and no network):
#   carry: ["target/wheels", "target/release/capi_tests", "target/release/libforge.so"]
# maturin comes from $MATURIN, else PATH, else a virtual environment in target/pyenv.
set -euo pipefail
cd "$(dirname "$0")/../.."
# One target directory for the forge crate and the Python extension (it builds forge again).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
MATURIN="${MATURIN:-$(command -v maturin || true)}"
if [ -z "$MATURIN" ]; then
  PYENV="$PWD/target/pyenv"
  [ -x "$PYENV/bin/python" ] || python3 -m venv "$PYENV"
  "$PYENV/bin/pip" install --quiet "maturin>=1.9,<2"
  MATURIN="$PYENV/bin/maturin"
fi
mkdir -p target/wheels target/release
rm -f target/wheels/forge_gemm-*.whl
"$MATURIN" build --release --manifest-path python/Cargo.toml --out target/wheels
if [ "${WHEEL_ONLY:-0}" != 1 ]; then
  # The C-ABI tests (tests/capi.rs): a GEMM through forge_gemm on the device, and the C smoke
  # test where the device machine has gcc.
  source tests/device/test_binary.sh
  bin=$(test_binary capi)
  cp "$bin" target/release/capi_tests
  cp "$(dirname "$bin")/libforge.so" target/release/libforge.so
  ls -la target/release/capi_tests target/release/libforge.so
fi
ls -la target/wheels/forge_gemm-*.whl
