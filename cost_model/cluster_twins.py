"""Issue #13 (CPU, any machine): every 2-CTA cluster the stored selection screens timed beside
its 1-CTA twin (the same schedule with `_c1_` for `_c2_`), measured against priced.
Per pair: the shape, the tile, the operands' row-pitch class (K x 4 bytes: `line` a multiple of
128, `split` of 32 only, `unal` neither), the measured time ratio c2/c1 (medians over the
rounds), the priced ratio (`forge rank`, each set priced for its own device, with the
constants file MODEL if given) and the error log(measured/priced). Then the error's median and
mean by tile width group and pitch class, the view that sorts what a cluster term must price.
  python3 cost_model/cluster_twins.py [--model MODEL_TOML] [--pairs] [--sets "set 28,set 29"]
(needs target/release/forge, or FORGE=<a forge build>)
"""
import argparse
import math
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

TILE = re.compile(r"_(\d+)x(\d+)x32_")


def pitch_class(shape):
    k_bytes = int(shape.split("x")[2]) * 4
    return "line" if k_bytes % 128 == 0 else "split" if k_bytes % 32 == 0 else "unal"


def width_group(name):
    """Tiles by the B (N) width a cluster multicasts: the small tiles of session 30's misses
    (N <= 128), the middle (<= 192) and the wide."""
    bm, bn = map(int, TILE.search(name).groups())
    return "%s N<=128" % ("M64" if bm == 64 else "M128+") if bn <= 128 else \
        "N<=192" if bn <= 192 else "N>192"


def pairs(sel_dir, device, model):
    """(shape, c2 name, measured c2/c1, priced c2/c1) for every timed twin pair."""
    times = accuracy.screens.screened(sel_dir)
    meds = {s: {n: statistics.median(v) for n, v in t.items()} for s, t in times.items()}
    shapes = sorted(s for s, t in meds.items()
                    if any("_c2_" in n and n.replace("_c2_", "_c1_") in t for n in t))
    if not shapes:
        return
    pred = accuracy.screens.ranked(shapes, os.path.join(accuracy.ROOT,
                                                        accuracy.PROFILES[device]), model)
    for shape in shapes:
        price = dict(pred[shape])
        for name, t2 in sorted(meds[shape].items()):
            twin = name.replace("_c2_", "_c1_")
            if "_c2_" in name and twin in meds[shape] and name in price and twin in price:
                yield shape, name, t2 / meds[shape][twin], price[name] / price[twin]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="constants file (default: the build's cost_model/model.toml)")
    ap.add_argument("--pairs", action="store_true", help="print every pair, not only the groups")
    ap.add_argument("--sets", help="comma-separated screen set names (default: all)")
    args = ap.parse_args()
    model = os.path.abspath(args.model) if args.model else None
    wanted = set(args.sets.split(",")) if args.sets else None
    groups = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, device, _, path) in enumerate(accuracy.SCREENS):
            if wanted and name not in wanted:
                continue
            sel_dir = accuracy.screens_dir(path, os.path.join(tmp, str(i)))
            for shape, c2, meas, priced in pairs(sel_dir, device, model):
                err = math.log(meas / priced)
                key = (device, width_group(c2), pitch_class(shape))
                groups.setdefault(key, []).append(err)
                if args.pairs:
                    print("%-10s %-4s %-17s %-46s %-5s meas %.3f priced %.3f  err %+.3f"
                          % (name, device, shape, c2, pitch_class(shape), meas, priced, err))
    print("%-4s %-11s %-5s %5s %8s %8s %8s %8s" % ("dev", "tile", "pitch", "pairs", "median",
                                                   "mean", "min", "max"))
    for key in sorted(groups):
        e = groups[key]
        print("%-4s %-11s %-5s %5d %+8.3f %+8.3f %+8.3f %+8.3f"
              % (key + (len(e), statistics.median(e), statistics.mean(e), min(e), max(e))))
    every = [x for e in groups.values() for x in e]
    print("all pairs %d: rms error %.3f, median %+.3f"
          % (len(every), math.sqrt(sum(x * x for x in every) / len(every)),
             statistics.median(every)))


if __name__ == "__main__":
    main()
