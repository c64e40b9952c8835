"""Direct vs staged C stores in the calibration data: pairs of one schedule at s and s+1
stages (wgmma), grouped by whether the step leaves room for the staged epilogue buffers
(`Schedule::staged_epilogue`, src/schedule.rs, restated below for TF32). Prints the median
measured and predicted time ratio (s+1 / s) per group.
  python3 store_pairs.py residuals.csv [LABEL]
(residuals.csv from `forge calibrate --fit DATA --sweeps 0 --no-loso --out DIR`)."""
import csv
import math
import re
import statistics
import sys
from collections import defaultdict

STAGED_EPILOGUE_PITCH, SMEM_OPT_IN_BYTES = 40, 232_448  # src/schedule.rs


def staged(r, stages):
    buffers = int(r["workers"]) * 4 * 16 * STAGED_EPILOGUE_PITCH * 4
    stage_bytes = (int(r["bm"]) + int(r["bn"])) * 32 * 4
    return stages * stage_bytes + 1024 + buffers + 24 * stages + 64 <= SMEM_OPT_IN_BYTES


rows = list(csv.DictReader(open(sys.argv[1])))
label = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
by = {(r["m"], r["n"], r["k"], r["schedule"]): r for r in rows}
groups = defaultdict(list)
for (m, n, k, s), r in by.items():
    stages = re.search(r"_s(\d+)_", s)
    if r["family"] != "wgmma" or not stages:
        continue
    st = int(stages.group(1))
    deeper = by.get((m, n, k, s.replace("_s%d_" % st, "_s%d_" % (st + 1))))
    if deeper is None:
        continue
    assert "x32_" in s and int(r["n"]) % 4 == 0  # BK = 32 (TF32), N % 4 == 0: the rule applies
    turns_direct = staged(r, st) and not staged(r, st + 1)
    kind = "staged -> direct" if turns_direct else "same stores     "
    ratio = lambda col: math.log(float(deeper[col]) / float(r[col]))
    groups[(kind, st)].append((ratio("measured_us"), ratio("predicted_us")))
print("model: %s" % label)
print("stores            s -> s+1  pairs  measured  predicted")
for (kind, st), v in sorted(groups.items()):
    med = lambda i: math.exp(statistics.median(x[i] for x in v)) - 1
    print("%s  %d -> %d   %5d   %+6.1f%%   %+6.1f%%" % (kind, st, st + 1, len(v), 100 * med(0),
                                                       100 * med(1)))
