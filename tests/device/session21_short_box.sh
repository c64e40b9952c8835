#!/usr/bin/env bash
# Session 21: short TMA boxes (kernels/ABI.md "Short boxes"). From a `build_drop.sh` folder
# holding device_lib.sh, session10_select.sh, session9_select_table.py and the job folders
# `oob` (tests/device/session20-oob) and `tall` (tests/device/session19-select/tall):
#  1. with TESTS=1 (default) the GPU tests of this build (bits against the mma_sync canonical);
#  2. the overhang and tall-tile probes timed with the full, zero-filled boxes
#     (FORGE_FULL_TMA_BOX=1) and with the short ones, alternating, ROUNDS rounds each (default 2);
#     the worker gates every timed schedule against the canonical output.
# $OUT: gpu.txt, tests.txt, short_box.tgz (each run's screens), short_box.txt (the table).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
here=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader > "$O/gpu.txt" 2>&1
cat "$O/gpu.txt"
for d in oob tall; do
  [ -s "$d/jobs.txt" ] || { echo "no jobs: $d/jobs.txt is missing or empty" >&2; exit 2; }
done
cat oob/jobs.txt tall/jobs.txt > jobs.txt
python3 -c 'import json
json.dump(json.load(open("oob/jobs.json")) + json.load(open("tall/jobs.json")), open("jobs.json", "w"))'
if [ "${TESTS:-1}" = 1 ]; then
  source ./device_lib.sh
  device_setup s21t
  TEST_S=${TEST_S:-110} gpu_tests > "$O/tests.txt"
  cat "$O/tests.txt"
  cd "$here"
fi
mkdir -p "$O/runs"
for r in $(seq "${ROUNDS:-2}"); do
  for mode in full short; do
    if [ $mode = full ]; then export FORGE_FULL_TMA_BOX=1; else unset FORGE_FULL_TMA_BOX; fi
    OUT=$O/runs/$mode-$r TESTS=0 ROUND_BUDGET_S=1 bash session10_select.sh > /dev/null 2>&1
    echo "$mode round $r: $(grep -c 'gate pass' "$O/runs/$mode-$r/screens-1.txt") gate-passing, $(grep -c 'gate fail' "$O/runs/$mode-$r/screens-1.txt") failing"
  done
done
unset FORGE_FULL_TMA_BOX
python3 - "$O/runs" > "$O/short_box.txt" <<'PY'
import glob, statistics, sys
t = {}
for path in glob.glob(sys.argv[1] + "/*/screens-1.txt"):
    mode = path.split("/")[-2].split("-")[0]
    for line in open(path):
        f = line.split()
        if len(f) >= 6 and f[3] == "us" and f[1] != "cublas":
            t.setdefault((f[0], f[1]), {}).setdefault(mode, []).append((float(f[2]), f[5]))
print("%-16s %-48s %9s %9s %6s  gate" % ("shape", "schedule", "full µs", "short µs", "ratio"))
for (shape, sched), v in sorted(t.items(), key=lambda x: (int(x[0][0].split("x")[0]), x[0])):
    if "full" not in v or "short" not in v:
        continue
    full = statistics.median(x for x, _ in v["full"])
    short = statistics.median(x for x, _ in v["short"])
    gates = sorted({g for m in v.values() for _, g in m})
    print("%-16s %-48s %9.2f %9.2f %6.3f  %s" % (shape, sched, full, short, short / full, ",".join(gates)))
PY
tar czf "$O/short_box.tgz" -C "$O" runs && rm -rf "$O/runs"
cat "$O/short_box.txt"
