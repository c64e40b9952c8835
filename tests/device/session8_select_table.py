"""Session 8, issue #13: the selection table from session8_select.sh's screens (CPU).
Per shape: what each rule's choice measured against the best the same worker job timed of
(a) the model's top 10 (what a fresh `forge tune` times) and (b) everything screened
(sets 3 and 4 include the calibration's sampled best).
  python3 tests/device/session8_select_table.py REPORT_DIR   (holding jobs.json, screen-*.jsonl)
"""
import json
import math
import sys

d = sys.argv[1]
jobs = json.load(open(d + "/jobs.json"))
print("%-4s %-16s %-12s %9s %9s %9s %9s  %s" % ("set", "shape", "rule", "rule µs", "tune10 µs",
                                                 "rule/t10", "rule/all", "choice"))
by_rule = {}
for j in jobs:
    t = {}
    cublas = float("nan")
    for line in open("%s/screen-%s.jsonl" % (d, j["shape"])):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        m = e.get("measured") or e.get("measurement") or {}
        if e.get("event") == "cublas":
            cublas = m.get("median_us", cublas)
        elif e.get("event") == "result" and e.get("gate", {}).get("verdict") == "pass":
            t[e["schedule"]] = m["median_us"]
    timed10 = [t[s] for s in j["top"][:10] if s in t]
    tune10 = min(timed10) if timed10 else float("nan")
    best = min(t.values())
    for role, s in j["roles"].items():
        if role == "sampled_best" or s not in t:
            continue
        r10, rall = tune10 / t[s], best / t[s]
        by_rule.setdefault((j["set"], role), []).append((r10, rall, j["shape"]))
        print("%-4s %-16s %-12s %9.2f %9.2f %9.3f %9.3f  %s (cuBLAS %.2f µs)" % (
            j["set"], j["shape"], role, t[s], tune10, r10, rall, s, cublas))
print()
for (st, role), v in sorted(by_rule.items()):
    v10 = [x for x in v if not math.isnan(x[0])]
    g10 = math.exp(sum(math.log(a) for a, _, _ in v10) / len(v10))
    gall = math.exp(sum(math.log(b) for _, b, _ in v) / len(v))
    w10 = min(v10)
    wall = min(v, key=lambda x: x[1])
    print("set %s %-10s %d shapes: vs fresh tune (top 10, %d shapes) geomean %.3f, worst %.3f (%s); "
          "vs best screened geomean %.3f, worst %.3f (%s)" % (st, role, len(v), len(v10), g10, w10[0], w10[2],
                                                             gall, wall[1], wall[2]))
