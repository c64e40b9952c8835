#!/usr/bin/env bash
# Issue #12's bars, repeated: the shipped H200 profile's choice (schedule and launch order, read
# from sm_90a-h200.toml in the drop) at each shape of SHAPES (default: the squares 2048…8192 and
# the two LLM linears nearest parity in session 16's run; `all`: every TN entry of the profile)
# timed head to head against cuBLAS, both regimes, ROUNDS (default 3) times each in turn, to
# show whether each lead outlasts the run-to-run spread. From a `build_drop.sh` folder holding
# device_lib.sh. $OUT: h2h.txt (one line per head-to-head), summary.txt (per shape: the rounds'
# lowest and median ratios), s16r.tgz.
set -uo pipefail
source ./device_lib.sh
device_setup s16r
SHAPES=${SHAPES:-"2048x2048x2048 3072x3072x3072 4096x4096x4096 6144x6144x6144 8192x8192x8192 4096x21504x5376 128x5376x7168"}
if [ "$SHAPES" = all ]; then
  # Every TN entry of the profile: the whole suite, head to head (session 18).
  SHAPES=$(python3 -c 'import sys, tomllib
print(" ".join("%dx%dx%d" % (e["m"], e["n"], e["k"]) for e in tomllib.load(open(sys.argv[1], "rb"))["entry"]
               if e.get("layout", "tn") == "tn"))' sm_90a-h200.toml)
fi
for round in $(seq "${ROUNDS:-3}"); do
  for s in $SHAPES; do
    read -r sched launch < <(python3 - sm_90a-h200.toml "$s" <<'PY'
import sys, tomllib
m, n, k = (int(x) for x in sys.argv[2].split("x"))
for e in tomllib.load(open(sys.argv[1], "rb"))["entry"]:
    if (e["m"], e["n"], e["k"]) == (m, n, k) and e.get("layout", "tn") == "tn":
        print(e["schedule"], e.get("launch", "serial")); break
PY
)
    LAUNCH=$launch h2h ${s//x/ } "$sched"
  done
  gpu_state
done 2>&1 | tee "$W/h2h.txt"
python3 - "$W/h2h.txt" <<'PY' | tee "$W/summary.txt"
import statistics, sys
r = {}
for line in open(sys.argv[1]):
    p = line.split()
    if "sustained" in p:
        i = p.index("sustained")
        r.setdefault(p[0], []).append((float(p[i + 5]), float(p[i + 12])))
for s, v in r.items():
    sus, bur = [x[0] for x in v], [x[1] for x in v]
    print("%-16s %d rounds  sustained lowest %.3f median %.3f | burst lowest %.3f median %.3f"
          % (s, len(v), min(sus), statistics.median(sus), min(bur), statistics.median(bur)))
PY
