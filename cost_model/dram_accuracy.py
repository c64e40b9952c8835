"""Issue #13 (CPU, any machine): the cost model's operand DRAM bytes against the bytes Nsight
Compute read (`dram__bytes_read`) in every stored report of one of forge's kernels
(reports/**/ncu*.tgz holding `ncu_own_SHAPE_SCHEDULE.txt`, H100, sessions 21-27). Per distinct
kernel (one K split, repeats averaged): the read MB, the priced MB (`forge rank --explain`,
H100 profile: its DRAM figure less C's writes M*N*4) and their ratio; last, the bias and rms of
log(priced/read) for each constants file.
  python3 cost_model/dram_accuracy.py [MODEL ...]
MODEL: a constants file, or KEY=VALUE[,KEY=VALUE] for the shipped cost_model/model.toml with
those [global] constants added (e.g. wave_reuse_capacity_fraction=0.9, session 28's walk);
default: this build's constants.
(needs target/release/forge, or FORGE=<a forge build>)
"""
import glob
import math
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "device"))
import hypothesis_model  # noqa: E402
from lrc_table import NAME, read  # noqa: E402

FORGE = os.environ.get("FORGE", os.path.join(ROOT, "target", "release", "forge"))
PROFILE = os.path.join(ROOT, "profiles", "sm_90a-h100.toml")


def measured():
    """{(shape, schedule): [MB read, ...]} over every stored report."""
    reads = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "reports", "**", "ncu*.tgz"), recursive=True)):
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(path) as t:
                t.extractall(tmp, filter="data")
            for report in glob.glob(os.path.join(tmp, "**", "ncu_own_*.txt"), recursive=True):
                m = NAME.search(os.path.basename(report))
                row = read(report)
                if m and "dram_read" in row and m.group(2).endswith("_k1"):
                    reads.setdefault((m.group(1), m.group(2)), []).append(row["dram_read"])
    return reads


def priced(shape, schedule, model):
    """The model's operand DRAM MB for one kernel."""
    cmd = [FORGE, "rank", "--explain", schedule, "--shapes", shape, "--arch", "sm_90a",
           "--profile", PROFILE] + (["--model", model] if model else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m, n, _ = map(int, shape.split("x"))
    return float(re.search(r"DRAM ([0-9.]+) MB", out).group(1)) - m * n * 4 / 1e6


def model_file(arg, tmp):
    """A constants file for `arg` (see the module's usage)."""
    if "=" not in arg:
        return arg
    overrides = dict(kv.strip().split("=", 1) for kv in arg.split(","))
    path = os.path.join(tmp, "model-%d.toml" % abs(hash(arg)))
    return hypothesis_model.write(path, {k.strip(): float(v) for k, v in overrides.items()})


def main():
    args = sys.argv[1:] or [None]
    reads = measured()
    kernels = sorted(reads)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        models = [model_file(a, tmp) if a else None for a in args]
        prices = [list(pool.map(lambda k: priced(k[0], k[1], mdl), kernels)) for mdl in models]
    print("| shape | schedule | read MB | " + " | ".join("priced MB, ratio (%s)" % (
        a or "build") for a in args) + " |")
    print("|---|---|---:|" + "---:|" * len(models))
    errors = [[] for _ in models]
    for i, (shape, schedule) in enumerate(kernels):
        read_mb = sum(reads[(shape, schedule)]) / len(reads[(shape, schedule)])
        cells = []
        for j, p in enumerate(prices):
            errors[j].append(math.log(max(p[i], 1e-3) / read_mb))
            cells.append("%.0f, %.2f" % (p[i], p[i] / read_mb))
        print("| %s | %s | %.0f | %s |" % (shape, schedule, read_mb, " | ".join(cells)))
    print()
    for a, e in zip(args, errors):
        print("%s: %d kernels, log(priced/read) bias %+.3f, rms %.3f" % (
            a or "this build's constants", len(e), sum(e) / len(e),
            math.sqrt(sum(x * x for x in e) / len(e))))


if __name__ == "__main__":
    main()
