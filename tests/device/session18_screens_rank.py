"""Session 18, issue #13 (CPU): the cost model's order among the schedules a selection run's
screens timed, per shape: the model's first choice among the screened (over the whole space,
priced for PROFILE's device, with the constants file MODEL if given) against the fastest
screened (median over the rounds, timed in at least MIN_ROUNDS, default 4), whether that fastest is among the
model's first 4 screened, and Spearman's rho over the screened.
  [FORGE=<a forge build>] python3 tests/device/session18_screens_rank.py SEL_DIR PROFILE [MODEL]
(SEL_DIR holds screens-N.txt; e.g. session 18's sel.tgz, unpacked.)
"""
import glob
import math
import os
import statistics
import subprocess
import sys

FORGE = os.environ.get("FORGE", "target/release/forge")
MIN_ROUNDS = int(os.environ.get("MIN_ROUNDS", "4"))


def screened(sel_dir):
    """{shape: {schedule: [µs per round]}} of gate-passing own schedules."""
    t = {}
    for path in sorted(glob.glob(sel_dir + "/screens-*.txt")):
        for line in open(path):
            f = line.split()
            if len(f) >= 6 and f[3] == "us" and f[1] != "cublas" and f[5] == "pass":
                t.setdefault(f[0], {}).setdefault(f[1], []).append(float(f[2]))
    return t


def ranked(shapes, profile, model, top=100000):
    """{shape: [(schedule, predicted µs)]} in the model's order over the whole space (its
    first `top`)."""
    extra = ["--model", model] if model else []
    out = subprocess.run([FORGE, "rank", "--arch", "sm_90a", "--shapes", ",".join(shapes), "--top",
                          str(top), "--profile", profile] + extra, check=True,
                         capture_output=True, text=True).stdout
    pred, cur = {}, None
    for line in out.splitlines():
        f = line.split()
        if len(f) > 2 and f[1:3] == ["on", "sm_90a"]:
            cur = f[0]
            pred[cur] = []
        elif len(f) > 3 and f[0].isdigit():
            pred[cur].append((f[1], float(f[2])))
    return pred


def spearman(a, b):
    """Pearson's r of the ranks, tied values sharing their average rank (launch variants are
    often priced alike)."""
    def ranks(x):
        r = [0.0] * len(x)
        order = sorted(range(len(x)), key=lambda i: x[i])
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
                j += 1
            for k in order[i:j + 1]:
                r[k] = (i + j) / 2
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    sa = math.sqrt(sum((x - ma) ** 2 for x in ra))
    sb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (sa * sb) if sa and sb else float("nan")


def scored(times, pred, min_rounds=MIN_ROUNDS):
    """Per shape timed in at least `min_rounds` rounds, in name order: (shape, the medians of
    its screened schedules, their names in the model's order, the fastest's name, its rank in
    the whole space, Spearman's rho of price against time)."""
    for shape in sorted(times):
        order = {name: i for i, (name, _) in enumerate(pred[shape])}
        price = dict(pred[shape])
        meas = {n: statistics.median(v) for n, v in times[shape].items()
                if len(v) >= min_rounds and n in order}
        if not meas:
            continue
        names = sorted(meas, key=order.get)
        best = min(meas, key=meas.get)
        rho = spearman([price[n] for n in names], [meas[n] for n in names])
        yield shape, meas, names, best, order[best], rho


def main():
    sel_dir, profile = sys.argv[1:3]
    model = sys.argv[3] if len(sys.argv) > 3 else None
    times = screened(sel_dir)
    pred = ranked(sorted(times), profile, model)
    eff, rhos, in4 = [], [], 0
    for shape, meas, names, best, rank, rho in scored(times, pred):
        eff.append(meas[best] / meas[names[0]])
        in4 += best in names[:4]
        rhos.append(rho)
        print("%-16s %3d screened  model's first %-46s %.3f of the best (rank %d)  rho %.2f"
              % (shape, len(names), names[0], eff[-1], rank, rho))
    if not eff:
        sys.exit("session18_screens_rank.py: no shape of %s was timed in %d rounds (MIN_ROUNDS)"
                 % (sel_dir, MIN_ROUNDS))
    print("first choice among the screened: geomean %.3f, worst %.3f; the best in the model's "
          "first 4 screened %d/%d; rho median %.2f"
          % (math.exp(sum(map(math.log, eff)) / len(eff)), min(eff), in4, len(eff),
             statistics.median(rhos)))


if __name__ == "__main__":
    main()
