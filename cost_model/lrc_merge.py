"""Issue #13 (CPU, any machine): every kernel Nsight Compute measured with the L2 request
coalescer's counters (sessions 26-31), with the launch features a merge-share term would price.
Per kernel: device, shape, schedule, waves (tiles over 132 SMs; one wgmma CTA per SM), the
share of a K step's requests that are for the tile launch-adjacent CTAs share (`adjacent`: row
raster with group 1 and column raster with group >= 2 share A, the others B, after the
degenerate orders of src/cost_model.rs `visit_order`), the merged share measured, the time and
the sectors that reached L2. Then the merged share's mean by persistence, cluster, waves and
stage count, and a least-squares line of merged over those features (a design aid for the
merge term, not a fit the model uses).
  python3 cost_model/lrc_merge.py [--rows]
"""
import argparse
import math
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "device"))
import lrc_table  # noqa: E402

R = "reports/"
SOURCES = [  # (device, Nsight Compute reports: ncu.tgz)
    ("h100", R + "2026-12-06-h100-session26/ncu-lrc/ncu.tgz"),
    ("h100", R + "2026-12-06-h100-session27/lrc-sweep/ncu.tgz"),
    ("h100", R + "2026-12-06-h100-session27/order-sweep/ncu-13680x7872x296.tgz"),
    ("h100", R + "2026-12-06-h100-session27/order-sweep/ncu-6656x4992x1536.tgz"),
    ("h100", R + "2026-12-07-h100-session30/set28/tall/ncu.tgz"),
    ("h200", R + "2026-12-07-h200-session30/set29/cluster/ncu.tgz"),
    ("h100", R + "2026-12-07-h100-session31/set29r/deepk/ncu.tgz"),
    ("h100", R + "2026-12-07-h100-session31/stage/ncu.tgz"),
]
SCHED = re.compile(r"wgmma_tf32_(\d+)x(\d+)x32_s(\d+)_wg(\d)_swz(\d+)(c?)_(\w+?)_c(\d)_k1$")


def features(shape, name):
    m, n, k = map(int, shape.split("x"))
    bm, bn, stages, _, group, col, pers, cluster = SCHED.match(name).groups()
    bm, bn, stages, group, cluster = int(bm), int(bn), int(stages), int(group), int(cluster)
    tiles_m, tiles_n = math.ceil(m / bm), math.ceil(n / bn)
    column = col == "c"
    banded = tiles_n if column else tiles_m
    if group > 1 and banded > 1 and group >= banded:  # visit_order: the other raster, group 1
        column, group = not column, 1
    shares_a = (not column and group == 1) or (column and group > 1)
    return dict(waves=tiles_m * tiles_n / 132, stages=stages, pers=pers, cluster=cluster,
                adjacent=(bm if shares_a else bn) / (bm + bn), tile="%dx%d" % (bm, bn),
                k_tiles=math.ceil(k / 32))


def rows():
    out = []
    for device, path in SOURCES:
        with tempfile.TemporaryDirectory() as tmp:
            for report in lrc_table.reports(os.path.join(ROOT, path), tmp):
                m = lrc_table.NAME.search(os.path.basename(report))
                row = lrc_table.read(report)
                if not m or "requested" not in row or not SCHED.match(m.group(2)):
                    continue
                shape, name = m.groups()
                f = features(shape, name)
                f.update(device=device, shape=shape, name=name, us=row.get("us"),
                         merged=row["merged"] / row["requested"], to_l2=row["to_l2"] / 1e6)
                out.append(f)
    return out


def lstsq(xs, ys):
    """Least squares of ys on the columns of xs (normal equations, Gauss-Jordan)."""
    n = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) for j in range(n)] + [sum(x[i] * y for x, y in zip(xs, ys))]
         for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(a[r][i]))
        a[i], a[p] = a[p], a[i]
        for r in range(n):
            if r != i:
                f = a[r][i] / a[i][i]
                a[r] = [v - f * w for v, w in zip(a[r], a[i])]
    return [a[i][n] / a[i][i] for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", action="store_true", help="print every kernel")
    args = ap.parse_args()
    data = rows()
    if args.rows:
        for r in data:
            print("%s %-16s %-44s waves %5.2f adjacent %.2f merged %5.1f%% %7.1f us"
                  % (r["device"], r["shape"], r["name"][11:], r["waves"], r["adjacent"],
                     100 * r["merged"], r["us"]))

    def group(label, key, kernels):
        g = {}
        for r in kernels:
            g.setdefault(key(r), []).append(r["merged"])
        print(label + ": " + ", ".join("%s %.1f%% (%d)" % (k, 100 * sum(v) / len(v), len(v))
                                       for k, v in sorted(g.items())))
    print("%d kernels" % len(data))
    group("by cluster", lambda r: "c%d" % r["cluster"], data)
    one = [r for r in data if r["cluster"] == 1]
    group("1-CTA by persistence", lambda r: r["pers"], one)
    group("1-CTA by waves", lambda r: "<=1" if r["waves"] <= 1 else "<=4" if r["waves"] <= 4
          else ">4", one)
    group("1-CTA by stages", lambda r: "s%d" % r["stages"], one)
    # merged ~ a + b adjacent + c (one wave) + d stages + e (np past one wave)
    xs = [[1.0, r["adjacent"], float(r["waves"] <= 1), r["stages"],
           float(r["pers"] == "np" and r["waves"] > 1)] for r in one]
    ys = [r["merged"] for r in one]
    coef = lstsq(xs, ys)
    res = [y - sum(c * x for c, x in zip(coef, xr)) for xr, y in zip(xs, ys)]
    print("1-CTA merged ~ %.3f + %.3f adjacent + %.3f one-wave %+.3f/stage %+.3f np-multiwave:"
          " rms residual %.3f over %d kernels (merged itself: sd %.3f)"
          % tuple(coef + [math.sqrt(sum(e * e for e in res) / len(res)), len(res),
                          math.sqrt(sum((y - sum(ys) / len(ys)) ** 2 for y in ys) / len(ys))]))


if __name__ == "__main__":
    main()
