#!/usr/bin/env bash
# Device run of `forge step` (issue #11), from a directory holding `forge`, `step-tests` (the
# release binary of tests/step.rs), the profile and tests/device/step_{reference,bench,table}.py.
#   bash step.sh check OUT   GPU tests; determinism checks (tf32, fp32); FP64 PyTorch reference
#   bash step.sh bench OUT   steps/s of forge and PyTorch (eager, compile; tf32, fp32)
#   bash step.sh quick OUT S the most important parts of both, in priority order, within S seconds
set -uo pipefail
mode=$1
out=$2
mkdir -p "$out"
export FORGE_CACHE=$PWD/cache
P=${PROFILE:-sm_90a-h200.toml}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >"$out/device.txt" 2>&1
status=0
case $mode in
check)
  FORGE_PROFILE=$PWD/$P ./step-tests --test-threads=1 2>&1 | tail -12 | tee "$out/gpu_tests.txt" || status=1
  for dt in tf32 fp32; do
    IFS=';' read -ra cfgs <<<"${CHECK_CONFIGS:---dim 768 --batch 4;--dim 1536 --batch 8}"
    for cfg in "${cfgs[@]}"; do
      # shellcheck disable=SC2086
      ./forge step --profile "$P" $cfg --steps 20 --dtype $dt --check --check-micro-batches 4 \
        --json "$out/check.jsonl" 2>&1 | tee -a "$out/check.txt" || status=1
    done
    ./forge step --profile "$P" --dim 768 --batch 1 --steps 20 --dtype $dt --dump "dump-$dt" \
      --json "$out/ref-$dt.jsonl" >/dev/null 2>&1 || status=1
    python3 step_reference.py "dump-$dt" "$out/ref-$dt.jsonl" --out "$out/reference-$dt.json" 2>&1 |
      tee -a "$out/reference.txt" || status=1
  done
  ;;
bench)
  configs=""
  for dt in tf32 fp32; do
    for d in 768 1536; do
      for b in 1 2 4 8; do
        ./forge step --profile "$P" --dim $d --batch $b --steps 3 --dtype $dt --time "${SECONDS_PER:-1.0}" \
          --json "$out/forge.jsonl" 2>&1 | grep -E "speed|error" | sed "s/^/$dt D=$d B=$b /" || status=1
      done
    done
    ./forge step --profile "$P" --dim 4096 --batch 16 --steps 3 --dtype $dt --time "${SECONDS_PER:-1.0}" \
      --json "$out/forge.jsonl" 2>&1 | grep -E "speed|error" | sed "s/^/$dt D=4096 B=16 /" || status=1
  done
  for d in 768 1536; do for b in 1 2 4 8; do configs="$configs,$d:$b:512"; done; done
  configs="${configs#,},4096:16:512"
  python3 step_bench.py --configs "$configs" --out "$out/torch.jsonl" --seconds "${SECONDS_PER:-1.0}" \
    --deadline-s "${TORCH_DEADLINE_S:-300}" 2>&1 | grep -v Warning | tail -40 || status=1
  python3 step_table.py "$out/forge.jsonl" "$out/torch.jsonl" | tee "$out/table.md"
  ;;
quick)
  end=$((SECONDS + $3))
  touch "$out/forge.jsonl" "$out/torch.jsonl"
  left() { local l=$((end - SECONDS)); [ $l -lt 1 ] && l=1; echo $l; } # never 0: timeout 0 waits forever
  forge_time() { # dtype dim batch
    [ "$(left)" -gt 5 ] || return 0
    timeout "$(left)" ./forge step --profile "$P" --dim $2 --batch $3 --steps 3 --dtype $1 --time 0.2 \
      --json "$out/forge.jsonl" 2>&1 | grep -E "speed|error" | sed "s/^/$1 D=$2 B=$3 /" || status=1
  }
  timeout "$(left)" ./forge step --profile "$P" --dim 768 --batch 4 --steps 20 --dtype tf32 --check \
    --check-micro-batches 4 --json "$out/check.jsonl" 2>&1 | tee -a "$out/check.txt" || status=1
  for dt in tf32 fp32; do
    timeout "$(left)" ./forge step --profile "$P" --dim 768 --batch 1 --steps 20 --dtype $dt \
      --dump "dump-$dt" --json "$out/ref-$dt.jsonl" >/dev/null 2>&1 || status=1
    timeout "$(left)" python3 step_reference.py "dump-$dt" "$out/ref-$dt.jsonl" \
      --out "$out/reference-$dt.json" 2>&1 | tee -a "$out/reference.txt" || status=1
  done
  for b in 1 2 4 8; do forge_time tf32 768 $b; done
  forge_time tf32 4096 16
  timeout "$(left)" python3 step_bench.py --configs 768:1:512,768:2:512,768:4:512,768:8:512,4096:16:512 \
    --dtypes tf32 --modes eager --seconds 0.2 --out "$out/torch.jsonl" --deadline-s "$(left)" 2>&1 | grep torch-
  timeout "$(left)" python3 step_bench.py --configs 4096:16:512 --dtypes tf32 --modes compile --seconds 0.2 \
    --out "$out/torch.jsonl" --deadline-s "$(left)" 2>&1 | grep torch-
  for b in 1 2 4 8; do forge_time tf32 1536 $b; done
  timeout "$(left)" python3 step_bench.py --configs 1536:1:512,1536:2:512,1536:4:512,1536:8:512 \
    --dtypes tf32 --modes eager --seconds 0.2 --out "$out/torch.jsonl" --deadline-s "$(left)" 2>&1 | grep torch-
  forge_time fp32 768 1; forge_time fp32 768 8; forge_time fp32 4096 16
  timeout "$(left)" python3 step_bench.py --configs 768:1:512,768:8:512,4096:16:512 --dtypes fp32 --modes eager \
    --seconds 0.2 --out "$out/torch.jsonl" --deadline-s "$(left)" 2>&1 | grep torch-
  [ "$(left)" -gt 20 ] && timeout "$(left)" ./forge step --profile "$P" --dim 768 --batch 4 --steps 20 \
    --dtype fp32 --check --check-micro-batches 4 --json "$out/check.jsonl" 2>&1 | tee -a "$out/check.txt"
  [ "$(left)" -gt 15 ] && FORGE_PROFILE=$PWD/$P timeout "$(left)" ./step-tests --test-threads=1 2>&1 |
    tail -12 >"$out/gpu_tests.txt"
  python3 step_table.py "$out/forge.jsonl" "$out/torch.jsonl" | tee "$out/table.md"
  ;;
esac
exit $status
