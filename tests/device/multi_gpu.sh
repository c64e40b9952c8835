#!/usr/bin/env bash
# Issue #16 on a GPU machine: the same shapes tuned on device 0 alone and with --gpus $GPUS
# (default all), each from a cold kernel cache; wall times, and the chosen schedule and ratio
# per shape side by side (choices should agree within noise: a schedule within ~3% of another
# may swap). On a one-GPU machine this checks that --gpus all equals the default run.
# Usage: GPUS=all bash tests/device/multi_gpu.sh [SHAPES] [extra tune args]
# Carry ["target/release/forge"] (or set BIN). One tarball and multi_gpu.txt under $OUT.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
OUT=/tmp/forge-multi-gpu
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
trap 'tar czf "$FINAL/multi_gpu.tgz" -C "$OUT" . ; cp "$OUT"/multi_gpu.txt "$FINAL"/ 2>/dev/null' EXIT
SHAPES=${1:-D512,D1024,D2048,D4096,D8192,128x21504x5376,4096x5376x7168,3000x5000x1000}
shift || true
BIN=${BIN:-./target/release/forge}
GPUS=${GPUS:-all}
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw --format=csv > "$OUT/nvidia-smi.txt"
run() { # name gpus
  local t0 t1
  t0=$(date +%s%N)
  FORGE_CACHE=/tmp/forge-cache-$1-$(date +%s%N) $BIN tune --arch sm_90a --shapes "$SHAPES" \
    --gpus "$2" --run-dir "$OUT/run_$1" --profile "$OUT/profile_$1.toml" --no-plots "${@:3}" \
    > "$OUT/tune_$1.txt" 2>&1
  echo "exit $? for --gpus $2"
  t1=$(date +%s%N)
  echo "$1 (--gpus $2): $(( (t1 - t0) / 1000000 )) ms" >> "$OUT/times.txt"
}
run one 0 "$@"
run many "$GPUS" "$@"
{
  echo "# --gpus 0 vs --gpus $GPUS on $(head -2 "$OUT/nvidia-smi.txt" | tail -1 | cut -d, -f2)"
  echo "GPUs: $(( $(wc -l < "$OUT/nvidia-smi.txt") - 1 ))"
  cat "$OUT/times.txt"
  echo "| shape | schedule (0) | ratio (0) | schedule ($GPUS) | ratio ($GPUS) | same |"
  echo "|---|---|---:|---|---:|---|"
  python3 - "$OUT/profile_one.toml" "$OUT/profile_many.toml" <<'PY'
import sys, tomllib
one, many = (tomllib.load(open(p, "rb")) for p in sys.argv[1:3])
key = lambda e: (e["m"], e["n"], e["k"])
b = {key(e): e for e in many["entry"]}
for e in one["entry"]:
    f = b.get(key(e), {})
    print(f"| {e['m']}x{e['n']}x{e['k']} | {e['schedule']} | {e.get('ratio_vs_cublas', 0):.3f} | "
          f"{f.get('schedule', '-')} | {f.get('ratio_vs_cublas', 0):.3f} | {e['schedule'] == f.get('schedule')} |")
PY
} > "$OUT/multi_gpu.txt"
cat "$OUT/multi_gpu.txt"
