"""Session 23, issue #13: held-out set 19 for session10_select.sh (CPU), written before any of
these shapes was timed. Twelve shapes that no profile entry, calibration set, selection screen
or report of this repository holds, drawn (seeded) from 700 random shapes with one dimension
40-1280 and the other 2560-24576, three per band of the small dimension (<= 104, <= 264,
<= 640, <= 1280) among the 109 where `l2_own_keep_fraction` (an operand that by itself fits in
0.2 x the usable L2 is re-read from L2) moves a profile's choice. Roles:
  h100, h200            each profile's choice by this build's model (the rule on);
  h100_prev, h200_prev  the same profiles' choices by the session-22 constants
                        (session23-select/model-prev.toml: the rule off);
and both models' top 8 priced for each device (split-K excluded); the table's "fresh tune" is
the best of those. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session23_select_jobs.py DEST
"""
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

SET19 = ("72x7168x8192 104x4864x2048 7168x72x2048 136x18432x3072 232x6144x2048 168x10240x4096 "
         "640x14336x1024 6144x416x1536 640x24576x1024 768x18432x1536 14336x1024x1024 "
         "8704x768x1024")
PREV_MODEL = "tests/device/session23-select/model-prev.toml"


def main():
    jobs = [alternative_model_job("19", s, PROFILES, 8, PREV_MODEL, "_prev")
            for s in SET19.split()]
    write_jobs(sys.argv[1], jobs)


if __name__ == "__main__":
    main()
