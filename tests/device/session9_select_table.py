"""Session 9, issue #13: the selection table from session9_select.sh's two rounds (CPU).
Per shape and round: each role's choice against the best the same worker job timed of
(a) the model's top 10 over the whole space (what a fresh `forge tune` times: "t10") and
(b) everything screened ("all"); then the two rounds' geometric mean per shape, and per set
and role the geomean and the worst shape.
  python3 tests/device/session9_select_table.py REPORT_DIR [TOP]  (jobs.json, screens-*.txt)
TOP (default 10) is how many of each job's "top" list count as the fresh tune's candidates
(session 10's jobs list each model's top 6 as one list: pass 100 to count all of it). Every
screens-N.txt is a round.
"""
import glob
import json
import math
import sys

d = sys.argv[1]
TOP = int(sys.argv[2]) if len(sys.argv) > 2 else 10
jobs = json.load(open(d + "/jobs.json"))


def read(path):
    """{shape: {schedule: µs}} of gate-passing results, plus cuBLAS's time per shape."""
    t, cublas = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) < 6 or f[3] != "us":
            continue
        shape, sched, us, verdict = f[0], f[1], float(f[2]), f[5]
        if sched == "cublas":
            cublas[shape] = us
        elif verdict == "pass" and not math.isnan(us):
            t.setdefault(shape, {})[sched] = us
    return t, cublas


rounds = [read(p) for p in sorted(glob.glob(d + "/screens-*.txt"))]
gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
print("%-5s %-16s %-9s %8s %8s %8s %8s %8s  %s" % ("set", "shape", "role", "µs r1", "µs last",
                                                   "top µs", "role/top", "role/all", "schedule"))
pooled = {}
for j in jobs:
    shape = j["shape"]
    per_round = []
    for t, cublas in rounds:
        ts = t.get(shape, {})
        top = [ts[s] for s in j["top"][:TOP] if s in ts]
        per_round.append((ts, min(top) if top else float("nan"), min(ts.values()), cublas.get(shape)))
    for role, s in j["roles"].items():
        if any(s not in ts for ts, _, _, _ in per_round):
            print("%-5s %-16s %-9s not timed in every round: %s" % (j["set"], shape, role, s))
            continue
        r10 = gm([t10 / ts[s] for ts, t10, _, _ in per_round])
        rall = gm([best / ts[s] for ts, _, best, _ in per_round])
        t10 = gm([t10 for _, t10, _, _ in per_round])
        pooled.setdefault((j["set"], role), []).append((r10, rall, shape))
        print("%-5s %-16s %-9s %8.2f %8.2f %8.2f %8.3f %8.3f  %s" % (
            j["set"], shape, role, per_round[0][0][s], per_round[-1][0][s], t10, r10, rall, s))
    cub = [c for _, _, _, c in per_round if c]
    if cub:
        best = gm([b for _, _, b, _ in per_round])
        print("%-5s %-16s %-9s %8.2f %8.2f %8s %8s %8s  (cuBLAS / best screened: %.3f)" % (
            j["set"], shape, "cuBLAS", cub[0], cub[-1], "", "", "", gm(cub) / best))
print()
for (st, role), v in sorted(pooled.items()):
    w10 = min(v)
    wall = min(v, key=lambda x: x[1])
    print("set %-5s %-9s %2d shapes: vs fresh tune (top %d) geomean %.3f, worst %.3f (%s); "
          "vs best screened geomean %.3f, worst %.3f (%s)" % (
              st, role, len(v), TOP, gm([x[0] for x in v]), w10[0], w10[2], gm([x[1] for x in v]),
              wall[1], wall[2]))
