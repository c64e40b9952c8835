"""Issue #13 (CPU, any machine): twin schedules the stored selection screens and calibration sets
timed on the same shape, measured against priced. Two kinds of twin:
  - cluster: a 2-CTA cluster and its 1-CTA twin (the same schedule with `_c1_` for `_c2_`);
  - stage: a wgmma schedule of s+1 stages and its twin of s (where the deeper one has no room
    for the staged C buffer, `Schedule::staged_epilogue`, the group says "lost staging").
Per pair: the shape, the tile, the operands' row-pitch class (K x 4 bytes: `line` a multiple of
128, `split` of 32 only, `unal` neither), the measured time ratio (the first schedule's over its
twin's, medians over the rounds), the priced ratio (`forge rank`, each set priced for its own
device, with the constants file MODEL if given) and the error log(measured/priced). Then the
error's median and mean by group (tile width and pitch class; for stages also the stage pair
and the staging), the view that sorts what a term must price.
  python3 cost_model/twins.py [--kind cluster|stage] [--model MODEL_TOML] [--pairs]
      [--sets "set 28,cal set 10"]
(needs target/release/forge, or FORGE=<a forge build>)
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

TILE = re.compile(r"_(\d+)x(\d+)x32_")
STAGES = re.compile(r"_s(\d+)_wg(\d)_")
# src/schedule.rs: STAGED_EPILOGUE_PITCH, SMEM_OPT_IN_BYTES and `staged_epilogue`.
EPILOGUE_PITCH, SMEM_OPT_IN = 40, 232448


def staged(name):
    """Whether a wgmma schedule has room for the staged C buffers (Schedule::staged_epilogue)."""
    bm, bn = map(int, TILE.search(name).groups())
    stages, workers = map(int, STAGES.search(name).groups())
    buffers = workers * 4 * 16 * EPILOGUE_PITCH * 4
    return stages * (bm + bn) * 32 * 4 + 1024 + buffers + 24 * stages + 64 <= SMEM_OPT_IN


def cluster_twin(name):
    return name.replace("_c2_", "_c1_") if "_c2_" in name else None


def stage_twin(name):
    m = STAGES.search(name)
    if not name.startswith("wgmma") or not m or int(m.group(1)) < 3:
        return None
    return name[:m.start()] + "_s%d" % (int(m.group(1)) - 1) + name[m.end(1):]


def stage_group(name):
    s = int(STAGES.search(name).group(1))
    lost = staged(stage_twin(name)) and not staged(name)
    return "s%d>s%d%s" % (s - 1, s, " lost staging" if lost else "")


def pitch_class(shape):
    k_bytes = int(shape.split("x")[2]) * 4
    return "line" if k_bytes % 128 == 0 else "split" if k_bytes % 32 == 0 else "unal"


def width_group(name):
    """Tiles by the B (N) width a cluster multicasts: the small tiles of session 30's misses
    (N <= 128), the middle (<= 192) and the wide."""
    bm, bn = map(int, TILE.search(name).groups())
    return "%s N<=128" % ("M64" if bm == 64 else "M128+") if bn <= 128 else \
        "N<=192" if bn <= 192 else "N>192"


def calibrated(dirs):
    """{shape: {schedule: measured µs}} of a calibration set's gate-passing schedules."""
    meds = {}
    for d in dirs.split(","):
        with open(os.path.join(accuracy.ROOT, d, "calibration.csv")) as f:
            for row in csv.DictReader(f):
                if row["gate"] == "pass" and row["status"] == "measured":
                    shape = "%sx%sx%s" % (row["m"], row["n"], row["k"])
                    meds.setdefault(shape, {})[row["schedule"]] = float(row["measured_us"])
    return meds


def pairs(meds, device, model, twin_of):
    """(shape, name, measured name/twin, priced name/twin) for every timed twin pair of `meds`
    ({shape: {schedule: µs}}), `twin_of(name)` naming the twin (None: no twin)."""
    shapes = sorted(s for s, t in meds.items() if any(twin_of(n) in t for n in t))
    if not shapes:
        return
    pred = accuracy.screens.ranked(shapes, os.path.join(accuracy.ROOT,
                                                        accuracy.PROFILES[device]), model)
    for shape in shapes:
        price = dict(pred[shape])
        for name, t2 in sorted(meds[shape].items()):
            twin = twin_of(name)
            if twin in meds[shape] and name in price and twin in price:
                yield shape, name, t2 / meds[shape][twin], price[name] / price[twin]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=("cluster", "stage"), default="cluster")
    ap.add_argument("--model", help="constants file (default: the build's cost_model/model.toml)")
    ap.add_argument("--pairs", action="store_true", help="print every pair, not only the groups")
    ap.add_argument("--sets", help="comma-separated set names as accuracy.py names them, "
                    "calibration sets prefixed `cal ` (default: all)")
    args = ap.parse_args()
    model = os.path.abspath(args.model) if args.model else None
    wanted = set(args.sets.split(",")) if args.sets else None
    groups = {}
    with tempfile.TemporaryDirectory() as tmp:
        sets = [(name, device, meds)
                for name, device, _, meds in accuracy.screen_medians(tmp, wanted=wanted)]
        sets += [("cal " + name, device, calibrated(dirs))
                 for name, device, _, dirs in accuracy.CALIBRATION
                 if not wanted or "cal " + name in wanted]
        for name, device, meds in sets:
            twin_of = cluster_twin if args.kind == "cluster" else stage_twin
            for shape, sched, meas, priced in pairs(meds, device, model, twin_of):
                err = math.log(meas / priced)
                key = (device, width_group(sched), pitch_class(shape))
                if args.kind == "stage":
                    key += (stage_group(sched),)
                groups.setdefault(key, []).append(err)
                if args.pairs:
                    print("%-10s %-4s %-17s %-46s %-5s meas %.3f priced %.3f  err %+.3f"
                          % (name, device, shape, sched, pitch_class(shape), meas, priced, err))
    print("%-4s %-11s %-5s %5s %8s %8s %8s %8s  %s" % ("dev", "tile", "pitch", "pairs", "median",
                                                       "mean", "min", "max", "stages"))
    for key in sorted(groups):
        e = groups[key]
        print("%-4s %-11s %-5s %5d %+8.3f %+8.3f %+8.3f %+8.3f  %s"
              % (key[:3] + (len(e), statistics.median(e), statistics.mean(e), min(e), max(e))
                 + (key[3] if len(key) > 3 else "",)))
    every = [x for e in groups.values() for x in e]
    print("all pairs %d: rms error %.3f, median %+.3f"
          % (len(every), math.sqrt(sum(x * x for x in every) / len(every)),
             statistics.median(every)))


if __name__ == "__main__":
    main()
