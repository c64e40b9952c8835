"""Session 21, issue #13: held-out set 17 for session10_select.sh (CPU), written before any of
these shapes was timed. Ten shapes that no profile entry, calibration set, selection screen or
report of this repository holds, each with M or N smaller than the tall or wide tiles. Since
session 21 such a tile loads a short TMA box (kernels/ABI.md "Short boxes") and the cost model
prices it by the same rule (`Schedule::short_tma_boxes`: no overhang charge). Roles:
  h100, h200            each profile's choice by this build (the short-box model);
  h100_prev, h200_prev  the same profiles' choices by the build PREV (default target/prev21/
                        forge: commit 9494b8e, short-box kernels but the session-20 pricing,
                        which charges every zero-filled overhang byte as 0.25 DRAM bytes);
and both builds' top 8 priced for each device (split-K excluded); the table's "fresh tune" is
the best of those. Every kernel is timed with short boxes. Writes DEST/jobs.{txt,json}.
  PREV=<build of 9494b8e> PYTHONPATH=tests/device python3 tests/device/session21_select_jobs.py DEST
"""
import os
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

SET17 = ("56x12288x4096 72x16384x3072 104x24576x2048 152x8192x8192 200x14336x4096 "
         "240x10240x5120 16384x72x4096 12288x152x3072 28672x200x2048 88x20480x4096")
PREV = os.environ.get("PREV", "target/prev21/forge")


def main():
    jobs = [alternative_model_job("17", s, PROFILES, 8, None, "_prev", forge=PREV)
            for s in SET17.split()]
    write_jobs(sys.argv[1], jobs)


if __name__ == "__main__":
    main()
