#!/usr/bin/env bash
# Numerical contract v2, one device call: the GPU tests; H200 outputs for `forge verify-bits`
# fixtures (each a schedule's launch whose bits equal the canonical output written to the
# fixture); and the benchmark suite tuned under the contract (default tf32-rne-k8-inorder),
# whose profile is the one forge ships. Usage on the GPU machine:
#   [CONTRACT=tf32-rne-k8-inorder] bash tests/device/contract_suite.sh [extra tune args]
# Everything is in $OUT/results.tgz; the profile and the text logs are also copied to $OUT.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-contract-suite
rm -rf "$W"; mkdir -p "$W/fixtures" "$FINAL"
trap 'tar czf "$FINAL/results.tgz" -C "$W" . ; cp "$W"/profile_suite.toml "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=${FORGE_CACHE:-/tmp/forge-cache-suite}
CONTRACT=${CONTRACT:-tf32-rne-k8-inorder}
B=./target/release/forge
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$W/nvidia-smi.txt"
if [ -x ./target/release/gpu_tests ]; then
  FORGE_BIN=$PWD/$B timeout 240 ./target/release/gpu_tests --test-threads=1 --nocapture > "$W/gpu_tests.txt" 2>&1
  echo "gpu tests exit $?"; grep -E "^test result|panicked" "$W/gpu_tests.txt"
fi
for spec in "wgmma_tf32_64x64x32_s4_wg1_swz1_np_c1_k1 96x80x100 tf32-rne-k8-inorder" \
            "wgmma_tf32_64x64x32_s4_wg1_swz1_np_c1_k1 96x80x100 tf32-trunc-k8-inorder" \
            "mma_sync_tf32_64x64x16_s3_w4_swz2c_pers_c1_k1 64x48x37 tf32-rne-k8-inorder"; do
  read -r schedule shape contract <<< "$spec"
  $B launch --schedule "$schedule" --shape "$shape" --contract "$contract" --seed 7 \
    --golden "$W/fixtures/h200_${contract}_$shape.c.f32" 2>&1 | tee -a "$W/fixtures.txt"
done
SHAPES=D512,D768,D1024,D1536,D2048,D3072,D4096,D6144,D8192
for m in 128 4096; do
  SHAPES+=",${m}x21504x5376,${m}x5376x7168,${m}x28672x5376,${m}x5376x14336"
done
SHAPES+=",${EXTRA_SHAPES:-3000x5000x1000,2048x8192x512,257x513x1025}"
timeout "${SUITE_LIMIT:-400}" $B tune --arch sm_90a --contract "$CONTRACT" --shapes "$SHAPES" \
  --run-dir "$W/run_suite" --profile "$W/profile_suite.toml" "$@" > "$W/tune_suite.txt" 2>&1
echo "suite exit $?"
grep -hE "chosen|no gate|error|differs" "$W/tune_suite.txt"
