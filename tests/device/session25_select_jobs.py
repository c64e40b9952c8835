"""Session 25, issue #13: held-out sets 22 and 23 for session10_select.sh (CPU), each written
before any of its shapes was timed.
Set 22: twelve shapes no profile entry, calibration set, selection screen or
report of this repository held, drawn with seed 2525 (M and N log-uniform in 32-24576 on a grid
of 8, 64 or 128, K log-uniform in 256-16384 on a grid of 8, 64 or 256; 2 GFLOP-1.2 TFLOP):
  - broad: the first six drawn, whatever the models pick: the shipped model's reach on shapes
    not chosen by any rule;
  - moved: the first six of the rest where `l2_bytes_per_clk_per_sm.sm_90a` 64 -> 56
    (session25-select/model-l2-56.toml, session 24 notes item 7) moves the H100 profile's
    choice (16 of 394 drawn).
Roles: h100, h200 (each profile's choice by the shipped model) and h100_l2w56, h200_l2w56 (by
the hypothesis), and both models' top 8 priced for each device (split-K excluded); the
table's "fresh tune" is the best of those.
Set 23: `np_later_wave_loss` 0 -> 0.1 (session25-select/model-np10.toml: a non-persistent
grid's later waves priced 10% slower, from the np/pers twins of the stored screens and set 22):
the four of 2,994 shapes drawn as for set 22 (seed 2627) where it moves a profile's choice
(the H100 profile's, each time from `np` to a persistent schedule). Roles h100, h200 and
h100_np10, h200_np10, and both models' top 8.
Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session25_select_jobs.py DEST 22|23
"""
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

BROAD = "7552x3904x2480 9592x1216x7040 272x320x15280 2000x872x3072 2048x1728x1232 3912x4560x320"
MOVED = ("128x8192x11520 1952x448x2048 9216x1216x14080 416x2464x12480 12312x15176x768 "
         "12512x10048x712")
SETS = {
    "22": (BROAD + " " + MOVED, "tests/device/session25-select/model-l2-56.toml", "_l2w56"),
    "23": ("7608x800x5752 8192x1408x6400 4224x1408x7040 6432x968x7936",
           "tests/device/session25-select/model-np10.toml", "_np10"),
}


def main():
    dest, name = sys.argv[1:3]
    shapes, model, suffix = SETS[name]
    write_jobs(dest, [alternative_model_job(name, s, PROFILES, 8, model, suffix)
                      for s in shapes.split()])


if __name__ == "__main__":
    main()
