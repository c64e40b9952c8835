#!/usr/bin/env bash
# Session 11, issues #12 and #13: does the tuner's second screen (`forge tune --refine`, the
# launch variants of the first screen's two fastest kernels) find faster schedules? The same
# shapes tuned twice by this build, --refine 0 then --refine 2, each into its own profile and
# run directory; then both choices per shape timed in one worker job, ROUNDS rounds, order
# alternating (a confirmation that does not rest on the two tunes' clocks). From a
# `build_drop.sh` folder holding device_lib.sh. $OUT: tune-r0/, tune-r2/ (reports), profile-r*.toml,
# tune-r*.log, confirm-N.txt, ab.txt, nvidia-smi.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s11t
# Two shapes by default, to stay inside one 600-s call (two tunes of up to TUNE_S each, then
# ROUNDS rounds of one screen job per shape); 768x3072x768 is the next one to add.
SHAPES=${SHAPES:-3000x5000x1000,6144x6144x6144}
for r in 0 2; do
  timeout "${TUNE_S:-170}" ./forge tune --arch sm_90a --shapes "$SHAPES" --top 10 --refine "$r" \
    --max-seconds 0.5 --no-plots --profile "$W/profile-r$r.toml" --run-dir "$W/tune-r$r" \
    --require-gpu > "$W/tune-r$r.log" 2>&1
  echo "tune --refine $r exit $?: $(grep -h 'tune took' "$W/tune-r$r.log")"
  grep -h "launch variants" "$W/tune-r$r.log"
  gpu_state
done
# Both choices of each shape, one job per shape and round.
python3 - "$W" "$SHAPES" > "$W/choices.txt" <<'PY'
import re, sys
w, shapes = sys.argv[1], sys.argv[2].split(",")


def entries(path):
    """The [[entry]] tables of a profile: their plain key = value lines (no TOML library
    needed: python3 there may predate tomllib)."""
    out = []
    for block in open(path).read().split("[[entry]]")[1:]:
        e = {}
        for key, value in re.findall(r"(?m)^(\w+) = (.+)$", block.split("\n[")[0]):
            value = value.strip().strip('"')
            try:
                e[key] = int(value) if value.isdigit() else float(value)
            except ValueError:
                e[key] = value
        out.append(e)
    return out


chosen = {}
for r in ("0", "2"):
    try:
        p = {"entry": entries(f"{w}/profile-r{r}.toml")}
    except OSError:
        continue
    for e in p.get("entry", []):
        chosen.setdefault(f"{e['m']}x{e['n']}x{e['k']}", {})[r] = (
            e["schedule"], e.get("ratio_vs_cublas"), e.get("burst_ratio_vs_cublas"))
for s in shapes:
    c = chosen.get(s, {})
    names = [c[r][0] for r in ("0", "2") if r in c]
    if names:
        print(s.replace("x", " "), *dict.fromkeys(names))
    for r in ("0", "2"):
        if r in c:
            print(f"# {s} refine {r}: {c[r][0]} sustained {c[r][1]} burst {c[r][2]}", file=sys.stderr)
PY
for round in $(seq 1 "${ROUNDS:-3}"); do
  while read -r m n k a b; do
    if [ -z "${b:-}" ]; then screen "$m" "$n" "$k" "$a"
    elif [ $((round % 2)) = 1 ]; then screen "$m" "$n" "$k" "$a" "$b"
    else screen "$m" "$n" "$k" "$b" "$a"; fi
  done < "$W/choices.txt" > "$W/confirm-$round.txt"
done
python3 - "$W" > "$W/ab.txt" <<'PY'
import glob, math, sys, statistics
w = sys.argv[1]
times = {}
for f in sorted(glob.glob(f"{w}/confirm-*.txt")):
    for line in open(f):
        p = line.split()
        if len(p) >= 6 and p[1] != "cublas" and p[-1] == "pass":
            times.setdefault((p[0], p[1]), []).append(float(p[2]))
pairs = [l.split() for l in open(f"{w}/choices.txt")]
print("shape            refine-0 choice / refine-2 choice: median us over rounds, ratio r0/r2")
for p in pairs:
    s = "x".join(p[:3])
    a = statistics.median(times.get((s, p[3]), [math.nan]))
    if len(p) < 5:
        print(f"{s:16} the same choice {p[3]} ({a:.2f} us)")
        continue
    b = statistics.median(times.get((s, p[4]), [math.nan]))
    print(f"{s:16} {p[3]} {a:.2f} / {p[4]} {b:.2f} = {a / b:.3f}")
PY
cp -r "$W/tune-r0" "$W/tune-r2" "$W"/profile-r*.toml "$FINAL/" 2>/dev/null
cat "$W/ab.txt"
