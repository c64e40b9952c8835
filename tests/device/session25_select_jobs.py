"""Session 25, issue #13: held-out set 22 for session10_select.sh (CPU), written before any of
its shapes was timed. Twelve shapes no profile entry, calibration set, selection screen or
report of this repository held, drawn with seed 2525 (M and N log-uniform in 32-24576 on a grid
of 8, 64 or 128, K log-uniform in 256-16384 on a grid of 8, 64 or 256; 2 GFLOP-1.2 TFLOP):
  - broad: the first six drawn, whatever the models pick: the shipped model's reach on shapes
    not chosen by any rule;
  - moved: the first six of the rest where `l2_bytes_per_clk_per_sm.sm_90a` 64 -> 56
    (session25-select/model-l2-56.toml, session 24 notes item 7) moves the H100 profile's
    choice (16 of 394 drawn).
Roles: h100, h200 (each profile's choice by the shipped model) and h100_l2w56, h200_l2w56 (by
the hypothesis), and both models' top 8 priced for each device (split-K excluded); the
table's "fresh tune" is the best of those. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session25_select_jobs.py DEST
"""
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

BROAD = "7552x3904x2480 9592x1216x7040 272x320x15280 2000x872x3072 2048x1728x1232 3912x4560x320"
MOVED = ("128x8192x11520 1952x448x2048 9216x1216x14080 416x2464x12480 12312x15176x768 "
         "12512x10048x712")
ALT_MODEL = "tests/device/session25-select/model-l2-56.toml"


def main():
    write_jobs(sys.argv[1], [alternative_model_job("22", s, PROFILES, 8, ALT_MODEL, "_l2w56")
                             for s in (BROAD + " " + MOVED).split()])


if __name__ == "__main__":
    main()
