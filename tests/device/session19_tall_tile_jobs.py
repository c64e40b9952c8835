"""Session 19, issue #13 (CPU): a probe of 256-row tiles at small M for the next device call.
The stored H200 calibration sets show 256xN tiles measuring 10-54% over their price where M <= 512
(192x16384x6144: 256x128 priced 134 us, measured 173; 128x256 priced 135, measured 131), and
with the visit order (session 19) that miss became the model's first choice at 192x16384x6144
(reports/notes.md, session 19, item 6). Per M in 64 ... 768 at N = 16384, K = 4096: the same
work in 256x128, 128x256, 128x128 and 64x128 tiles (their deepest pipelines, `pers`, raster
swz1c so that every CTA of a tile column is adjacent); roles: each profile's choice. Writes
DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session19_tall_tile_jobs.py DEST
"""
import sys

from session8_select_jobs import select, write_jobs
from session17_select_jobs import PROFILES

MS = (64, 128, 192, 256, 384, 512, 768)
TILES = ("256x128x32_s4_wg2", "128x256x32_s4_wg2", "128x128x32_s6_wg2", "64x128x32_s7_wg1")


def job(m):
    shape = f"{m}x16384x4096"
    roles = {role: select(p, shape) for role, p in PROFILES.items()}
    top = [f"wgmma_tf32_{t}_swz1c_pers_c1_k1" for t in TILES]
    return dict(shape=shape, set="tall", roles=roles, top=[x for x in top if x not in roles.values()])


def main():
    write_jobs(sys.argv[1], [job(m) for m in MS])


if __name__ == "__main__":
    main()
