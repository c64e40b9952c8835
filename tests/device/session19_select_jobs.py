"""Session 19, issue #13: held-out set 14 for session10_select.sh (CPU), written before any of
these shapes was timed. Ten shapes that no profile entry, calibration set, selection screen or
report of this repository holds. It judges the raster visit order (`visit_order` in
src/cost_model.rs: a swizzle band as tall as the banded dimension is priced as the plain order
the kernel then visits). Roles:
  h100, h200          each profile's choice at this revision;
  h100_s18, h200_s18  the same profiles' choices by FORGE_OLD, a build of session 18's
                      revision (1fa2a8b);
and both builds' top 8 priced for each device (split-K excluded); the table's "fresh tune" is the
best of those. Writes DEST/jobs.{txt,json}.
  FORGE_OLD=/tmp/forge-old PYTHONPATH=tests/device python3 tests/device/session19_select_jobs.py DEST
"""
import os
import sys

from session8_select_jobs import FORGE, select, write_jobs
from session15_select_jobs import held_out_job
from session17_select_jobs import PROFILES

SET14 = ("2304x2560x3584 3840x1792x2816 1408x3200x6656 5120x2304x1792 2944x2944x2048 "
         "768x5632x5632 4096x2816x1024 1792x1792x9216 2500x1800x3300 10240x640x2560")


def job(shape, old):
    s18 = {role + "_s18": select(p, shape, forge=old) for role, p in PROFILES.items()}
    return held_out_job("14", shape, PROFILES, PROFILES.values(), 8, s18, forges=(FORGE, old))


def main():
    old = os.environ["FORGE_OLD"]
    write_jobs(sys.argv[1], [job(s, old) for s in SET14.split()])


if __name__ == "__main__":
    main()
