"""Session 36, issue #13 (CPU): judge a cost-model hypothesis registered on a held-out
calibration set. Per shape, the top-1 of the shipped model and of the hypothesis' constants (the
best timed schedule over the time of the model's first choice among the timed, from
`forge calibrate --fit DIRS --sweeps 0 --no-loso`'s residuals.csv), then the rule: the
hypothesis' top-1 at least GAIN x the shipped one's in geomean over the shapes, and on no shape
below FLOOR x the shipped one's.
  python3 tests/device/judge_calibration_hypothesis.py MODEL_TOML PROFILE DIR [DIR ...]
    [--gain 1.01] [--floor 0.95]
DIR: a calibrate output folder (calibration.json or .json.gz), or a .tgz of such folders."""
import argparse
import glob
import os
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "cost_model"))
from accuracy import first_choices, fit, gm  # noqa: E402


def data_dirs(paths, tmp):
    out = []
    for p in paths:
        if p.endswith(".tgz"):
            dest = os.path.join(tmp, "x%d" % len(out))
            with tarfile.open(p) as t:
                t.extractall(dest)
            p = dest
        found = sorted({os.path.dirname(f) for f in glob.glob(p + "/**/calibration.json*",
                                                               recursive=True)})
        out += found
    return out


def top1(dirs, profile, model, tmp):
    """{shape: (top-1, the first choice)} under `model` (None: the build's constants)."""
    out = os.path.join(tmp, "fit-%s" % ("hyp" if model else "shipped"))
    fit(",".join(dirs), out, profile, model)
    return first_choices(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("profile")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--gain", type=float, default=1.01)
    ap.add_argument("--floor", type=float, default=0.95)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = data_dirs(a.dirs, tmp)
        ship = top1(dirs, a.profile, None, tmp)
        hyp = top1(dirs, a.profile, os.path.abspath(a.model), tmp)
    print("| shape | shipped top-1 | its first | hypothesis top-1 | its first | ratio |")
    print("|---|---:|---|---:|---|---:|")
    ratios = []
    for s in sorted(ship, key=lambda s: hyp[s][0] / ship[s][0]):
        r = hyp[s][0] / ship[s][0]
        ratios.append(r)
        print("| %s | %.3f | %s | %.3f | %s | %.3f |" % (
            s, ship[s][0], ship[s][1].replace("wgmma_tf32_", ""), hyp[s][0],
            hyp[s][1].replace("wgmma_tf32_", ""), r))
    g, worst = gm(ratios), min(ratios)
    print("\n%d shapes: shipped top-1 %.4f, hypothesis %.4f; ratio geomean %.4f (rule >= %.2f), "
          "worst %.3f (rule >= %.2f): %s" % (
              len(ratios), gm([v[0] for v in ship.values()]), gm([v[0] for v in hyp.values()]),
              g, a.gain, worst, a.floor,
              "PASSED" if g >= a.gain and worst >= a.floor else "FAILED"))


if __name__ == "__main__":
    main()
