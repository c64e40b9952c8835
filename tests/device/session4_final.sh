#!/usr/bin/env bash
# Session 4's closing device call, after merging every branch, from a flat folder holding
# forge, gpu_tests, gpu_layouts_tests, step-tests, sm_90a-h200.toml, tests/device/step*.sh|py
# and multi_gpu.sh (`bash tests/device/build_drop.sh devdrop/final session4_final.sh multi_gpu.sh` assembles it). In priority order,
# each part under its own time limit:
#   1. forge step's speed against PyTorch (eager, torch.compile; TF32 and FP32)
#   2. --gpus all against the default (one GPU here: the same run) — issue #16
#   3. the GPU tests of the merged binary (tests/gpu.rs, tests/gpu_layouts.rs, tests/step.rs)
# One tarball final.tgz and the summaries under $OUT.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s4
S=$W/step
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'tar czf "$FINAL/final.tgz" -C "$W" . ; cp "$W"/*.txt "$S"/table.md "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$W/cache
here=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$W/nvidia-smi.txt"
echo "== step speed (${STEP_S:-200} s): forge, then PyTorch eager, then torch.compile"
# The determinism checks and the FP64 reference ran in an earlier call
# (reports/2026-12-03-h200-step); this part measures steps/s, most important first.
mkdir -p "$S"; touch "$S/forge.jsonl" "$S/torch.jsonl"
end=$((SECONDS + ${STEP_S:-200}))
left() { local l=$((end - SECONDS)); [ $l -lt 1 ] && l=1; echo $l; }
forge_time() { # dtype dim batch
  [ "$(left)" -gt 5 ] || return 0
  timeout "$(left)" ./forge step --profile sm_90a-h200.toml --dim "$2" --batch "$3" --steps 3 --dtype "$1" \
    --time 0.3 --json "$S/forge.jsonl" 2>&1 | grep -E "speed|error" | sed "s/^/$1 D=$2 B=$3 /"
}
torch_time() { # dtypes modes configs
  [ "$(left)" -gt 10 ] || return 0
  timeout "$(left)" python3 step_bench.py --configs "$3" --dtypes "$1" --modes "$2" --seconds 0.3 \
    --out "$S/torch.jsonl" --deadline-s "$(left)" 2>&1 | grep -E "torch-|Error"
}
SMALL=768:1:512,768:2:512,768:4:512,768:8:512,1536:1:512,1536:2:512,1536:4:512,1536:8:512
{
  for d in 768 1536; do for b in 1 2 4 8; do forge_time tf32 $d $b; done; done
  forge_time tf32 4096 16
  torch_time tf32 eager "$SMALL,4096:16:512"
  torch_time tf32 compile 4096:16:512
  for c in "768 1" "768 8" "1536 8" "4096 16"; do forge_time fp32 $c; done
  torch_time fp32 eager 768:1:512,768:8:512,1536:8:512,4096:16:512
  torch_time tf32 compile 768:8:512,1536:8:512
  torch_time fp32 compile 4096:16:512
} > "$W/step.txt" 2>&1
python3 step_table.py "$S/forge.jsonl" "$S/torch.jsonl" > "$S/table.md" 2>&1
echo "== --gpus all vs 0"
GPUS=all BIN=$here/forge OUT=$W/multi timeout "${MULTI_S:-80}" bash multi_gpu.sh "${MULTI_SHAPES:-D1024,2048x8192x512}" \
  --top 2 --max-seconds 0.2 > "$W/multi.txt" 2>&1
echo "multi exit $?"
echo "== GPU tests"
for t in gpu_tests gpu_layouts_tests step-tests; do
  FORGE_BIN=$here/forge FORGE_PROFILE=$here/sm_90a-h200.toml timeout "${TEST_S:-40}" ./$t --test-threads=1 \
    > "$W/tests-$t.txt" 2>&1
  echo "$t exit $?: $(grep -h 'test result' "$W/tests-$t.txt")"
done | tee "$W/tests.txt"
echo "== summary"
tail -5 "$W/multi.txt"
cat "$S/table.md" 2>/dev/null | head -40
cat "$W/tests.txt"
