"""Session 37, issue #13 (CPU): session37_paired_k.sh's runs side by side. Per shape and tile:
the base and paired runs' measured µs (each run's median over its confirmation rounds), the
ratio base / paired (geomean of the two runs of each), and the scatter between the two runs of
one kind (the larger of |base1/base2 - 1| and |paired1/paired2 - 1|), plus every run's gate.
  python3 tests/device/session37_paired_k_table.py PK_DIR     (the unpacked pk/ folder)"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "cost_model"))
from accuracy import gm, pitch_class  # noqa: E402

RUNS = ("base1", "paired1", "paired2", "base2")


def load(path):
    out, gates = {}, []
    for r in csv.DictReader(open(path)):
        if r["status"] != "measured":
            continue
        key = (int(r["m"]), int(r["n"]), int(r["k"]), r["schedule"])
        out[key] = float(r["measured_us"])
        gates.append(r["gate"])
    return out, gates


def main():
    runs = {}
    for run in RUNS:
        path = os.path.join(sys.argv[1], run, "calibration.csv")
        if os.path.exists(path):
            runs[run], gates = load(path)
            bad = [g for g in gates if g != "pass"]
            print("%s: %d timings, gate %s" % (run, len(gates), "all pass" if not bad else bad))
    keys = sorted(set.intersection(*[set(v) for v in runs.values()]))
    by_class = {}
    print("| shape (pitch) | tile | base µs | paired µs | base/paired | scatter |")
    print("|---|---|---:|---:|---:|---:|")
    for m, n, k, s in keys:
        b = [runs[r][(m, n, k, s)] for r in RUNS if r.startswith("base") and r in runs]
        p = [runs[r][(m, n, k, s)] for r in RUNS if r.startswith("paired") and r in runs]
        ratio = gm(b) / gm(p)
        spread = max(abs(x[0] / x[-1] - 1) for x in (b, p))
        cls = pitch_class(k)
        by_class.setdefault(cls, []).append(ratio)
        print("| %dx%dx%d (%s) | %s | %.1f | %.1f | %.3f | %.1f%% |" % (
            m, n, k, cls, s.replace("wgmma_tf32_", ""), gm(b), gm(p), ratio, 100 * spread))
    for cls, rs in sorted(by_class.items()):
        print("%s: base/paired geomean %.3f over %d (min %.3f, max %.3f)" % (
            cls, gm(rs), len(rs), min(rs), max(rs)))


if __name__ == "__main__":
    main()
