#!/usr/bin/env bash
# Session 31, issue #13, one device call (from a build_drop.sh folder holding session30_call.sh
# and its scripts, the pool lists gate_h100.txt and gate_h200.txt, the set folders SETS names
# and, optionally, cache.tar.xz: kernels compiled on the CPU, unpacked into ./cache):
#   1. the gate of this card's pool list (gate_h200.txt on an H200, else gate_h100.txt: the
#      model's picks its profile's pool lacks, tests/device/session31_pool_lists.py): `forge
#      calibrate` of the listed schedules alone at GATE_SHAPE (default 4096x4096x4096), once
#      each, gated against the canonical output; $OUT/gate/{calibration.json,calibration.csv}
#      and $OUT/gate-log.txt (the verdict counts last), for `forge pool --from` on the CPU;
#      only on a card whose name holds a word of GATE_CARDS (default "H100 H200");
#   2. `session30_call.sh` with SETS (default set30), ROUND_BUDGET_S (default 300), no lists:
#      $OUT/{gpu.txt,sel.tgz,selection.txt,select-log.txt}.
set -uo pipefail
O=${OUT:?OUT must name the results folder}
nvidia-smi --query-gpu=name --format=csv,noheader > "$O/gpu.txt" 2>&1
if grep -q H200 "$O/gpu.txt"; then list=gate_h200.txt; else list=gate_h100.txt; fi
[ -s "$list" ] || { echo "session31_call.sh: $list is missing or empty" >&2; exit 2; }
if [ -f cache.tar.xz ]; then mkdir -p cache && tar xJf cache.tar.xz -C cache; fi
gate=0
for card in ${GATE_CARDS-H100 H200}; do grep -q "$card" "$O/gpu.txt" && gate=1; done
if [ $gate = 1 ]; then
  start=$SECONDS
  ./forge calibrate --arch sm_90a --shapes "${GATE_SHAPE:-4096x4096x4096}" --top 0 --sample 0 \
    --repeat 0 --schedules "$list" --cache cache --out "$O/gate" > "$O/gate-log.txt" 2>&1
  echo "exit $? after $((SECONDS - start)) s" >> "$O/gate-log.txt"
  python3 - "$O/gate/calibration.csv" "$list" >> "$O/gate-log.txt" <<'PY'
import collections, csv, sys
listed = {x.strip() for x in open(sys.argv[2]) if x.strip()}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["schedule"] in listed]
count = collections.Counter((r["gate"], r["status"]) for r in rows)
print("%s: %d of %d listed timed; gate/status %s"
      % (sys.argv[2], len(rows), len(listed), dict(count)))
PY
  tail -2 "$O/gate-log.txt"
fi
OUT=$O SETS=${SETS:-set30} ROUND_BUDGET_S=${ROUND_BUDGET_S:-300} LISTS= bash session30_call.sh
