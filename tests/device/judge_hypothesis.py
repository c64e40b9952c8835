"""Issue #13: judges a held-out set registered for a cost-model hypothesis (CPU).
Reads session9_select_table.py's table (selection.txt) and, per profile (h100, h200) and
hypothesis role (`<profile>_<suffix>`), takes the shapes whose pick the hypothesis moved. On
them it compares the moved pick's time against the shipped pick's (both as the fraction of the
best screened schedule, geomean over the rounds: the "role/all" column) and applies the rule
registered with the set: geomean ≥ GAIN (default 1.02) and no shape below FLOOR (default 0.97).
  python3 tests/device/judge_hypothesis.py selection.txt [GAIN FLOOR] [--rounds A.tgz,B.tgz]
With --rounds (the sel.tgz of several calls of one set, e.g. a set timed over calls cut short),
each role's fraction is recomputed from those calls' rounds put together: the fastest
screened schedule's median over its median (the schedules each role picked are read from
selection.txt).
Exit status 0 when every profile with a moved shape passes, 1 otherwise.
"""
import argparse
import math
import os
import statistics
import sys
import tempfile

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("selection", help="session9_select_table.py's table (selection.txt)")
ap.add_argument("gain", nargs="?", type=float, default=1.02)
ap.add_argument("floor", nargs="?", type=float, default=0.97)
ap.add_argument("--rounds", help="comma-separated sel.tgz of the set's calls, put together")
opts = ap.parse_args()
path, gain, floor, rounds = opts.selection, opts.gain, opts.floor, opts.rounds

# (set, shape) -> role -> (role/all, schedule)
rows = {}
for line in open(path):
    f = line.split()
    if len(f) != 9 or f[0] == "set":
        continue
    try:
        rall = float(f[7])
    except ValueError:
        continue
    rows.setdefault((f[0], f[1]), {})[f[2]] = (rall, f[8])

if rounds:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.join(here, "..", "..", "cost_model")]
    import accuracy  # noqa: E402
    import session18_screens_rank as screens  # noqa: E402
    specs = ",".join(os.path.relpath(os.path.abspath(p), accuracy.ROOT) for p in rounds.split(","))
    times = screens.screened(accuracy.screens_dir(specs, tempfile.mkdtemp()))
    for (st, shape), roles in rows.items():
        med = {n: statistics.median(v) for n, v in times.get(shape, {}).items()}
        fastest = min(med.values(), default=None)
        for role, (_, name) in list(roles.items()):
            if name in med:
                roles[role] = (fastest / med[name], name)

verdicts = []
pairs = sorted({(st, role) for (st, _), roles in rows.items() for role in roles if "_" in role})
for st, hyp in pairs:
    shipped = hyp.split("_")[0]
    moved = []
    for (s, shape), roles in sorted(rows.items()):
        if s != st or hyp not in roles or shipped not in roles:
            continue
        (h, hs), (b, bs) = roles[hyp], roles[shipped]
        if hs != bs:
            moved.append((h / b, shape, b, h))
    if not moved:
        print("set %s %s: no shape moved" % (st, hyp))
        continue
    print("set %s %s against %s, %d moved shapes:" % (st, hyp, shipped, len(moved)))
    for r, shape, b, h in moved:
        print("  %-16s shipped %.3f  moved %.3f  ratio %.3f%s" % (
            shape, b, h, r, "  < %.2f" % floor if r < floor else ""))
    g = math.exp(sum(math.log(r) for r, *_ in moved) / len(moved))
    worst = min(moved)
    ok = g >= gain and worst[0] >= floor
    verdicts.append(ok)
    print("  geomean %.3f (rule ≥ %.2f), worst %.3f at %s (rule ≥ %.2f): %s" % (
        g, gain, worst[0], worst[1], floor, "PASS" if ok else "FAIL"))
sys.exit(0 if verdicts and all(verdicts) else 1)
