"""Session 13, issue #13: writes DEST/jobs.txt and DEST/jobs.json for session10_select.sh (CPU).

Selection from the shipped profile's pool after the inward edge tiles (the model and the pool
unchanged; the kernels changed), on the shapes where selection had missed by the most: set 10
(eight shapes, calibrated in session 13 with the overhanging edge tiles) and the one-wave
deep-K shapes of set 9 and of the session-12 recheck. Roles: each binary's choice and its
cluster twin; the union of each binary's top 6 over the whole space without split-K (what a
fresh `forge tune` times first).
  PYTHONPATH=tests/device python3 tests/device/session13_select_jobs.py DEST PROFILE ROLE=PATH...
"""
import sys

from session8_select_jobs import write_jobs
from session10_select_jobs import jobs_for

SET10 = ("1216x1216x11264 1408x1152x9216 896x1664x16384 1344x1344x6144 768x2560x10240 "
         "1088x1600x8192 2304x3072x2048 640x4608x6144")
RECHECK = "1152x1152x12288 896x2048x7168 1280x1280x10240 768x1536x12288"


def main():
    dest, profile = sys.argv[1:3]
    binaries = dict(arg.split("=", 1) for arg in sys.argv[3:])
    write_jobs(dest, jobs_for(profile, "10", SET10, binaries) + jobs_for(profile, "r", RECHECK, binaries))


if __name__ == "__main__":
    main()
