"""Session 35, issue #13 (CPU): reads session36_heat_ab.sh's runs (a folder of
heat<MS>-<round>/calibration.csv, or heat.tgz) and prints, per run, how each confirmed schedule's
first timing (its position in the full list) compares with its confirmation medians (short
lists in rotated orders): the geomean and the spread of first / median(repeats), and the spread
of the repeats themselves. A timing that does not depend on position gives ratios near 1 with a
spread like the repeats'.
  python3 tests/device/heat_ab_table.py DIR_OR_HEAT_TGZ
"""
import csv
import glob
import math
import os
import statistics
import sys
import tarfile
import tempfile


def runs(path):
    if path.endswith(".tgz"):
        tmp = tempfile.mkdtemp()
        with tarfile.open(path) as t:
            t.extractall(tmp, filter="data")
        path = os.path.join(tmp, "heat")
    return sorted(glob.glob(os.path.join(path, "heat*-*", "calibration.csv")))


def row(csv_path):
    first, spread = [], []
    for r in csv.DictReader(open(csv_path)):
        reps = [float(x) for x in r["repeats_us"].split(";") if x]
        if r["gate"] != "pass" or len(reps) < 2:
            continue
        med = statistics.median(reps)
        first.append(math.log(float(r["measured_us"]) / med))
        spread.append((max(reps) - min(reps)) / med)
    if not first:
        return None
    first.sort()
    return (len(first), math.exp(statistics.mean(first)), math.exp(first[0]), math.exp(first[-1]),
            statistics.median(spread))


def main():
    print("| run | confirmed | first / median(repeats): geomean | min | max | repeats' range, median |")
    print("|---|---:|---:|---:|---:|---:|")
    for p in runs(sys.argv[1]):
        r = row(p)
        name = os.path.basename(os.path.dirname(p))
        if r is None:
            print("| %s | 0 | | | | |" % name)
            continue
        print("| %s | %d | %.3f | %.3f | %.3f | %.1f%% |" % (name, r[0], r[1], r[2], r[3], 100 * r[4]))


if __name__ == "__main__":
    main()
