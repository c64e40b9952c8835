"""Session 37, issue #13 (CPU): what a quarter-line row pitch costs each tile, measured against
priced. From session37_paired_k.sh's two base runs (the shipped kernels): per shape family and
tile, the measured time at the aligned twin and at the quarter-line K (geomean of the runs),
their ratio, and the same ratio as the shipped cost model prices it (`forge calibrate --fit
--sweeps 0`: this build's constants), with the priced bound at each K.
  python3 tests/device/session37_pitch_cost.py PK_DIR     (the unpacked pk/ folder; FORGE=<forge>)"""
import collections
import csv
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "cost_model"))
from accuracy import fit, gm, pitch_class  # noqa: E402


def residuals(run_dir, tmp):
    out = os.path.join(tmp, os.path.basename(run_dir))
    fit(run_dir, out)
    return list(csv.DictReader(open(os.path.join(out, "residuals.csv"))))


def main():
    times, priced, bound = collections.defaultdict(list), {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in ("base1", "base2"):
            for r in residuals(os.path.join(sys.argv[1], run), tmp):
                key = (int(r["m"]), int(r["n"]), int(r["k"]), r["schedule"])
                times[key].append(float(r["measured_us"]))
                priced[key], bound[key] = float(r["predicted_us"]), r["dominant"]
    families = collections.defaultdict(set)
    for m, n, k, _ in times:
        families[(m, n)].add(k)
    pairs = []
    for (m, n), ks in sorted(families.items()):
        q = next(k for k in ks if pitch_class(k) == "quarter-line")
        a = next(k for k in ks if pitch_class(k) == "aligned")
        print("\n%dx%d, K = %d (aligned) and %d (quarter-line)\n" % (m, n, a, q))
        print("| tile | measured µs a / q | ratio | priced µs a / q | ratio | priced bound a → q |")
        print("|---|---|---:|---|---:|---|")
        for s in sorted({s for (mm, nn, _, s) in times if (mm, nn) == (m, n)}):
            ka, kq = (m, n, a, s), (m, n, q, s)
            if ka not in times or kq not in times:
                continue
            ma, mq = gm(times[ka]), gm(times[kq])
            pa, pq = priced[ka], priced[kq]
            pairs.append((mq / ma, pq / pa))
            print("| %s | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f | %s → %s |" % (
                s.replace("wgmma_tf32_", ""), ma, mq, mq / ma, pa, pq, pq / pa, bound[ka],
                bound[kq]))
    print("\n%d tile-shape pairs: measured quarter/aligned geomean %.3f, priced %.3f" % (
        len(pairs), gm([p[0] for p in pairs]), gm([p[1] for p in pairs])))


if __name__ == "__main__":
    main()
