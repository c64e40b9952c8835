"""Session 26, issue #13: held-out set 24 for session10_select.sh (CPU), written before any of
its shapes was timed.
Shapes no profile entry holds, drawn with `draw(seed)`: M and N log-uniform in 32-24576 on a
grid of 8, 64 or 128, K log-uniform in 256-16384 on a grid of 8, 64 or 256, kept at 2 GFLOP-1.2
TFLOP (the rule of session 25's set 22):
  - broad: the first six drawn with seed 2626, whatever the models pick: the shipped model's
    reach on shapes no rule chose;
  - moved: every shape among the first 4,000 drawn with seed 2727 and the first 4,000 with
    seed 2828 where `np_later_wave_loss` 0 -> 0.05 (session26-select/model-np05.toml) moves
    either profile's choice (6 of 8,000, all the H100 profile's). 0.05 is the least-squares
    fit of log(measured/priced) over the 978 np/pers twins past one wave in every stored
    screen and calibration set, both cards pooled (H100 alone 0.065, H200 alone 0.030;
    reports/notes.md, session 26).
Roles: h100, h200 (each profile's choice by the shipped model) and h100_np05, h200_np05 (by the
hypothesis), and both models' top 8 priced for each device (split-K excluded); the table's
"fresh tune" is the best of those.
Set 25, the same way for `lrc_small_share_factor` 1 -> 1.04 (session26-select/model-lrc104.toml:
a tile order whose launch-adjacent CTAs share the smaller operand tile priced 4% slower; notes,
session 26, items 7-8): the first six drawn with seed 2929, and the first eight of the first
4,000 drawn with seed 3030 that it moves; roles h100_lrc104 and h200_lrc104.
Writes DEST/jobs.{txt,json}; `--scan` prints the shapes only.
  PYTHONPATH=tests/device python3 tests/device/session26_select_jobs.py DEST 24|25 [--scan]
"""
import math
import random
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor

from session8_select_jobs import select, write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

# set: (hypothesis, role suffix, broad seed, moved seeds, moved shapes kept (None: all))
SETS = {
    "24": ("tests/device/session26-select/model-np05.toml", "_np05", 2626, (2727, 2828), None),
    "25": ("tests/device/session26-select/model-lrc104.toml", "_lrc104", 2929, (3030,), 8),
}


def held_shapes():
    """Shapes some profile entry holds."""
    return {"%dx%dx%d" % (e["m"], e["n"], e["k"])
            for p in PROFILES.values() for e in tomllib.load(open(p, "rb"))["entry"]}


def draw(seed):
    """Endless shapes by the module's rule."""
    rng, held = random.Random(seed), held_shapes()

    def dim(lo, hi, grids):
        g = rng.choice(grids)
        v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        return max(g, int(round(v / g)) * g)
    while True:
        m, n = dim(32, 24576, (8, 64, 128)), dim(32, 24576, (8, 64, 128))
        k = dim(256, 16384, (8, 64, 256))
        shape = "%dx%dx%d" % (m, n, k)
        if 2e9 <= 2.0 * m * n * k <= 1.2e12 and shape not in held:
            yield shape


def moves(shape, model):
    """True where the hypothesis `model` moves either profile's choice."""
    return any(select(p, shape) != select(p, shape, model=model) for p in PROFILES.values())


def drawn_where(seed, count, keep):
    """The shapes among the first `count` of `draw(seed)` for which `keep(shape)` holds, in
    draw order (two at a time: each asks `forge` a few times)."""
    gen = draw(seed)
    shapes = [next(gen) for _ in range(count)]
    with ThreadPoolExecutor(2) as pool:
        return [s for s, kept in zip(shapes, pool.map(keep, shapes)) if kept]


def moved_shapes(seed, count, model):
    """The shapes among the first `count` of `draw(seed)` that the hypothesis moves."""
    return drawn_where(seed, count, lambda shape: moves(shape, model))


def main():
    dest, name = sys.argv[1:3]
    model, suffix, broad_seed, moved_seeds, keep = SETS[name]
    gen = draw(broad_seed)
    broad = [next(gen) for _ in range(6)]
    moved = [s for seed in moved_seeds for s in moved_shapes(seed, 4000, model)]
    print("broad:", " ".join(broad))
    print("moved: %s (%d of %d drawn)" % (" ".join(moved), len(moved), 4000 * len(moved_seeds)))
    moved = moved[:keep]
    if "--scan" in sys.argv:
        return
    write_jobs(dest, [alternative_model_job(name, s, PROFILES, 8, model, suffix)
                      for s in broad + moved])


if __name__ == "__main__":
    main()
