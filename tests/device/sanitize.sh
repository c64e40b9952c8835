#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every schedule of a
# profile: its canonical schedule and every chosen one (RUNNERS_UP=1: the runners-up too), each
# on the smallest shape that exercises all its features (`forge launch --plan`: full tiles both
# ways, two trips around the pipeline, two tiles per CTA when persistent, a partial wave for a
# chained tail) and on ragged shapes (1000x1000x1000; 257x513x1028 for TMA schedules, K % 4 == 0;
# 257x513x1025 for mma_sync ones). One process per (tool, schedule, shape): `forge launch` fills
# the inputs, runs the schedule once and compares its bits with the canonical output (computed
# once per shape without a sanitizer, read from a file under it, so a sanitizer sees only the
# schedule's kernel and the input fill).
#
# Usage on the GPU machine, from the repository root, with the forge binary carried:
#   carry: ["target/release/forge"]      (build here first: cargo build --release)
#   bash tests/device/sanitize.sh [PROFILE]          (default profiles/sm_90a-h200.toml)
# Knobs: JOBS (parallel launches, default 6), BUDGET_S (whole script, default 420),
# PER_LAUNCH_S (one launch, default 150), TOOLS (default all four), RUNNERS_UP=1.
# Results under $OUT (at most 8 files come back): sanitize-summary.md (tool × schedule × shape
# → errors), sanitize-summary.tsv, sanitize-baseline.txt (bits without a sanitizer), and
# sanitize-logs.tgz (every sanitizer log). Exit code 0 when every launch ran clean.
set -uo pipefail
cd "$(dirname "$0")/../.."
PROFILE=${1:-profiles/sm_90a-h200.toml}
FINAL=${OUT:-$PWD/gpu-out}
WORK=${WORK:-/tmp/forge-sanitize}
JOBS=${JOBS:-6}
BUDGET_S=${BUDGET_S:-420}
PER_LAUNCH_S=${PER_LAUNCH_S:-150}
TOOLS=${TOOLS:-memcheck racecheck synccheck initcheck}
BIN=${FORGE_BIN:-$PWD/target/release/forge}
export FORGE_CACHE=${FORGE_CACHE:-/tmp/forge-cache-sanitize}
START=$(date +%s)
DEADLINE=$((START + BUDGET_S))
rm -rf "$WORK"
mkdir -p "$WORK/golden" "$WORK/results" "$WORK/logs/baseline" "$FINAL"
for t in $TOOLS; do mkdir -p "$WORK/logs/$t"; done

SAN=$(command -v compute-sanitizer || true)
if [ -z "$SAN" ]; then
  SAN=$(ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer \
    /usr/local/cuda*/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
fi
if [ ! -x "$BIN" ]; then echo "no $BIN: carry target/release/forge" >&2; exit 2; fi
if [ -z "$SAN" ]; then echo "compute-sanitizer not found" >&2; exit 2; fi
"$SAN" --version | head -2 | tee "$WORK/sanitizer-version.txt"

summarize() {
  python3 - "$WORK" "$FINAL" "$START" "$TOOLS" <<'PY'
import glob, os, sys, time
work, final, start, tools = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
rows = {}
for f in glob.glob(os.path.join(work, "results", "*.tsv")):
    for line in open(f):
        p = line.rstrip("\n").split("\t")
        if len(p) >= 8:
            rows[(p[1], p[2], p[0])] = p
pairs = []
plan = os.path.join(work, "plan.txt")
for line in open(plan) if os.path.exists(plan) else []:
    s, shape, kind = line.split()
    pairs.append((s, shape, kind))
baseline = {}
bl = os.path.join(work, "baseline.txt")
if os.path.exists(bl):
    for line in open(bl):
        p = line.rstrip("\n").split("\t")
        if len(p) == 3:
            baseline[(p[0], p[1])] = p[2]
def cell(r):
    if r is None:
        return "not run"
    status, errors, warnings, secs = r[3], r[4], r[5], r[6]
    if status == "ok":
        return "0" + (f" ({warnings} warn)" if warnings not in ("", "0") else "") + f" · {secs}s"
    if status == "errors":
        return f"**{errors} errors**" + (f", {warnings} warn" if warnings not in ("", "0") else "") + f" · {secs}s"
    return f"**{status}**" + (f" ({errors} errors)" if errors not in ("", "0") else "") + f" · {secs}s"
bad = 0
with open(os.path.join(final, "sanitize-summary.tsv"), "w") as tsv:
    tsv.write("tool\tschedule\tshape\tstatus\terrors\twarnings\tseconds\tbits\n")
    for (s, shape, _) in pairs:
        for t in tools:
            r = rows.get((s, shape, t))
            if r is None:
                tsv.write(f"{t}\t{s}\t{shape}\tnot run\t\t\t\t\n")
            else:
                tsv.write("\t".join(r[:8]) + "\n")
            if r is None or r[3] != "ok":
                bad += 1
with open(os.path.join(final, "sanitize-summary.md"), "w") as md:
    md.write(f"# compute-sanitizer over {len(pairs)} (schedule, shape) pairs\n\n")
    md.write(f"Tools: {', '.join(tools)}. Wall time {int(time.time()) - start} s. ")
    md.write(f"Cells: errors found (0 = clean) · seconds; {bad} cell(s) not clean or not run.\n\n")
    md.write("| schedule | shape | bits (no sanitizer) | " + " | ".join(tools) + " |\n")
    md.write("|---|---|---|" + "---|" * len(tools) + "\n")
    for (s, shape, kind) in pairs:
        b = baseline.get((s, shape), "not run")
        cells = [cell(rows.get((s, shape, t))) for t in tools]
        md.write(f"| `{s}` | {shape} ({kind}) | {b} | " + " | ".join(cells) + " |\n")
print(open(os.path.join(final, "sanitize-summary.md")).read())
sys.exit(1 if bad else 0)
PY
}
finish() {
  summarize
  local rc=$?
  tar czf "$FINAL/sanitize-logs.tgz" -C "$WORK" logs results plan.txt sanitizer-version.txt 2>/dev/null
  cp "$WORK/baseline.txt" "$FINAL/sanitize-baseline.txt" 2>/dev/null
  exit $rc
}
trap finish EXIT

plan_args=()
[ "${RUNNERS_UP:-0}" = 1 ] && plan_args+=(--runners-up)
"$BIN" launch --plan "$PROFILE" "${plan_args[@]}" > "$WORK/plan.txt" || exit 2
echo "$(wc -l < "$WORK/plan.txt") (schedule, shape) pairs from $PROFILE; tools: $TOOLS; budget ${BUDGET_S}s, ${JOBS} at a time"

# 1. Without a sanitizer: the canonical output of every shape (written once, read by every
#    later launch), then every pair's bits; this also fills the kernel cache.
canonical=$(head -1 "$WORK/plan.txt" | cut -d' ' -f1)
for shape in $(cut -d' ' -f2 "$WORK/plan.txt" | sort -u); do
  timeout "$PER_LAUNCH_S" "$BIN" launch --schedule "$canonical" --shape "$shape" \
    --golden "$WORK/golden/$shape.bin" > "$WORK/logs/baseline/canonical.$shape.txt" 2>&1
done
baseline_one() { # schedule shape
  local out="$WORK/logs/baseline/$1.$2.txt" bits
  timeout "$PER_LAUNCH_S" "$BIN" launch --schedule "$1" --shape "$2" --golden "$WORK/golden/$2.bin" > "$out" 2>&1
  case $? in
    0) bits=PASS ;;
    124|137) bits=timeout ;;
    *) if grep -q ": FAIL:" "$out"; then bits="**FAIL** $(grep -o '[0-9]* of [0-9]* elements differ' "$out")"; else bits="**error** $(tail -1 "$out" | cut -c1-120)"; fi ;;
  esac
  printf '%s\t%s\t%s\n' "$1" "$2" "$bits"
}
export -f baseline_one
export BIN WORK PER_LAUNCH_S
cut -d' ' -f1,2 "$WORK/plan.txt" | xargs -P "$JOBS" -L 1 bash -c 'baseline_one "$@"' _ > "$WORK/baseline.txt"
echo "baseline: $(grep -c PASS "$WORK/baseline.txt") of $(wc -l < "$WORK/plan.txt") bit-identical, $(( $(date +%s) - START ))s"

# 2. One sanitizer process per (tool, schedule, shape): the small shapes of every tool first,
#    then the ragged ones, so a cut budget still covers every schedule with every tool.
run_job() { # tool schedule shape
  local tool=$1 s=$2 shape=$3
  local log="$WORK/logs/$tool/$s.$shape.log" res="$WORK/results/$tool.$s.$shape.tsv"
  local left=$((DEADLINE - $(date +%s)))
  if (( left < 20 )); then
    printf '%s\t%s\t%s\tskipped (budget)\t\t\t0\t\n' "$tool" "$s" "$shape" > "$res"
    return
  fi
  local limit=$PER_LAUNCH_S
  (( left - 10 < limit )) && limit=$((left - 10))
  local t0 t1 rc errors warnings status bits
  t0=$(date +%s)
  timeout -k 5 "$limit" "$SAN" --tool "$tool" --error-exitcode 99 --print-limit 50 \
    --log-file "$log" "$BIN" launch --schedule "$s" --shape "$shape" \
    --golden "$WORK/golden/$shape.bin" > "$log.out" 2>&1
  rc=$?
  t1=$(date +%s)
  if [ "$tool" = racecheck ]; then
    errors=$(grep -oE '\(([0-9]+) errors' "$log" 2>/dev/null | grep -oE '[0-9]+' | tail -1)
    warnings=$(grep -oE '([0-9]+) warnings\)' "$log" 2>/dev/null | grep -oE '[0-9]+' | tail -1)
  else
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" 2>/dev/null | grep -oE '[0-9]+' | tail -1)
    warnings=""
  fi
  case $rc in
    0) status=ok ;;
    99) status=errors ;;
    124|137) status=timeout ;;
    *) status="failed (exit $rc)" ;;
  esac
  if [ "$status" = ok ] && [ -n "$errors" ] && [ "$errors" != 0 ]; then status=errors; fi
  bits=$(grep -oE ': (PASS|FAIL)' "$log.out" | tr -d ': ' | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$s" "$shape" "$status" "${errors:-}" \
    "${warnings:-}" "$((t1 - t0))" "${bits:-none}" > "$res"
  echo "$tool $s $shape: $status ${errors:+($errors errors)} $((t1 - t0))s"
}
export -f run_job
export SAN DEADLINE
for kind in small ragged; do
  for t in $TOOLS; do
    awk -v k="$kind" -v t="$t" '$3 == k { print t, $1, $2 }' "$WORK/plan.txt"
  done
done > "$WORK/jobs.txt"
echo "$(wc -l < "$WORK/jobs.txt") sanitizer launches"
xargs -P "$JOBS" -L 1 bash -c 'run_job "$@"' _ < "$WORK/jobs.txt"
echo "sanitizers done, $(( $(date +%s) - START ))s"
