"""Session 36, issue #13 (CPU): session36_pitch.sh's timings side by side. For each shape
family (M x N), each schedule timed at every K of the family: measured and priced µs per K, and
the row pitch class of each K (accuracy.pitch_class).
  python3 tests/device/session36_pitch_table.py CALIBRATION_CSV [--all]
Without --all, only the schedules of session36_pitch_list.txt and each K's fastest."""
import collections
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "session36_pitch_list.txt")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "cost_model"))
from accuracy import pitch_class  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    listed = {x.strip() for x in open(LIST) if x.strip() and not x.startswith("#")}
    fam = collections.defaultdict(dict)  # (m, n) -> {k: {schedule: (measured, predicted)}}
    for r in rows:
        if r["status"] != "measured":
            continue
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        fam[(m, n)].setdefault(k, {})[r["schedule"]] = (float(r["measured_us"]),
                                                         float(r["predicted_us"]))
    for (m, n), ks in sorted(fam.items()):
        order = sorted(ks)
        fastest = {min(ks[k], key=lambda s: ks[k][s][0]) for k in order}
        keep = set().union(*[set(ks[k]) for k in order])
        if "--all" not in sys.argv:
            keep = {s for s in keep if s in listed or s in fastest}
        print("\n%dx%d: " % (m, n) + ", ".join("K=%d (%s)" % (k, pitch_class(k)) for k in order))
        print("| schedule | " + " | ".join("K=%d meas / priced" % k for k in order) + " |")
        print("|---|" + "---|" * len(order))
        for s in sorted(keep, key=lambda s: ks[order[0]].get(s, (1e9,))[0]):
            cells = ["%.1f / %.1f%s" % (ks[k][s][0], ks[k][s][1], " *" if s == min(
                ks[k], key=lambda x: ks[k][x][0]) else "") if s in ks[k] else "-" for k in order]
            print("| %s | %s |" % (s.replace("wgmma_tf32_", ""), " | ".join(cells)))


if __name__ == "__main__":
    main()
