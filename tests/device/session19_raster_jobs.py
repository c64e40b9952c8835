"""Session 19, issue #13 (CPU): a raster study for the next device call. On the H100 the raster
of one kernel spreads its time by 10-20% where the H200's spreads 1-2%, and the model still
prices row group 16 ~25% below group 4 on multi-wave shapes where it measures 5-20% above
(reports/notes.md, session 19, items 5-9). Per shape (the H100's selection misses of sets 13 and
14, and multi-wave shapes of its calibration sets 10-11), the kernel each profile chose, with
every raster (groups 1, 2, 4, 8, 16, row and column) and both `np` and `pers` grids; roles: each
profile's choice. Timed in rounds by session10_select.sh, these give twins that differ only in
the visit order, on the card that separates them. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session19_raster_jobs.py DEST
"""
import re
import sys

from session8_select_jobs import select, write_jobs
from session17_select_jobs import PROFILES

SHAPES = ("3328x2816x1536 2560x2048x6144 3840x1792x2816 5120x2304x1792 1408x3200x6656 "
          "2816x5120x1280 2432x2432x3072 3072x2560x4096")
RASTERS = [f"swz{g}{c}" for c in ("", "c") for g in (1, 2, 4, 8, 16)]


def twins(schedule):
    """`schedule` with every raster and both the `np` and `pers` grids (cluster and split-K as
    chosen); a chained-tail (`sk`) or retiled (`rt`) choice keeps its own grid too."""
    grids = ["np", "pers"]
    own = re.search(r"_(np|pers|pp|sk|rt)_c", schedule).group(1)
    if own not in grids:
        grids.append(own)
    out = []
    for grid in grids:
        base = re.sub(r"_(np|pers|pp|sk|rt)_c", f"_{grid}_c", schedule)
        out += [re.sub(r"_swz\d+c?_", f"_{r}_", base) for r in RASTERS]
    return out


def job(shape):
    roles = {role: select(p, shape) for role, p in PROFILES.items()}
    top = []
    for choice in roles.values():
        top += [x for x in twins(choice) if x not in top]
    return dict(shape=shape, set="raster", roles=roles, top=top)


def main():
    write_jobs(sys.argv[1], [job(s) for s in SHAPES.split()])


if __name__ == "__main__":
    main()
