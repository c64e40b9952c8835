"""Issue #13 (CPU, any machine): how well the cost model chooses a tile order (raster swizzle
group and direction) among schedules that differ in nothing else. Per stored selection screen
(accuracy.py's SCREENS), per shape, each family of schedules equal but for `swzG[c]` with at
least three orders timed (medians over the rounds, at least two rounds): the fastest order's
time over the time of the order the model prices fastest. Prints per device and use the
geomean, the share of families where the model's order is the fastest, the count below 0.95
and the worst; with --misses, every held-out family below 0.95.
  python3 cost_model/order_choice.py [--model MODEL_TOML] [--misses]
(needs target/release/forge, or FORGE=<a forge build>)
"""
import argparse
import collections
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

ORDER = re.compile(r"_swz(\d+c?)_")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="constants file (default: the build's cost_model/model.toml)")
    ap.add_argument("--misses", action="store_true", help="list held-out families below 0.95")
    args = ap.parse_args()
    model = os.path.abspath(args.model) if args.model else None
    ratios = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for name, device, use, meds in accuracy.screen_medians(tmp, min_rounds=2):
            pred = accuracy.screens.ranked(
                sorted(meds), os.path.join(accuracy.ROOT, accuracy.PROFILES[device]), model)
            for shape, measured in sorted(meds.items()):
                price = dict(pred[shape])
                families = collections.defaultdict(list)
                for n in measured:
                    if n in price and ORDER.search(n):
                        families[ORDER.sub("_swzX_", n)].append(n)
                for family, names in sorted(families.items()):
                    if len(names) < 3:
                        continue
                    fastest = min(names, key=measured.get)
                    chosen = min(names, key=price.get)
                    r = measured[fastest] / measured[chosen]
                    ratios[(device, use)].append(r)
                    if args.misses and use == "held out" and r < 0.95:
                        print("%-10s %-17s %.3f chosen %-4s fastest %-4s %s"
                              % (name, shape, r, ORDER.search(chosen).group(1),
                                 ORDER.search(fastest).group(1), family))
    for (device, use), rs in sorted(ratios.items()):
        print("%s %-8s families %3d: geomean %.4f, the model's order fastest in %.0f%%, "
              "%d below 0.95, worst %.3f"
              % (device, use, len(rs), math.exp(sum(map(math.log, rs)) / len(rs)),
                 100.0 * sum(r > 0.999 for r in rs) / len(rs), sum(r < 0.95 for r in rs),
                 min(rs)))


if __name__ == "__main__":
    main()
