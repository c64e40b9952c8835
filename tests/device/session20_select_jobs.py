"""Session 20, issue #13: held-out set 15 for session10_select.sh (CPU), written before any of
these shapes was timed. Ten shapes that no profile entry, calibration set, selection screen or
report of this repository holds, each with M or N smaller than the tall tiles (a wgmma tile
larger than the matrix keeps its overhang: kernels/common.cuh `forge_inward`). It judges the
hypothesis `tma_oob_dram_factor = 0.5` (tests/device/session20-select/model-oob.toml: each
zero-filled byte of such a tile's TMA boxes is charged as half a DRAM byte), formed from the
stored H200 calibration sets and session 20's tall-tile probe on an H100. Roles:
  h100, h200          each profile's choice as shipped when written (b7f509c: the factor at 0);
  h100_oob, h200_oob  the same profiles' choices with the hypothesis;
and both models' top 8 priced for each device (split-K excluded); the table's "fresh tune" is
the best of those. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session20_select_jobs.py DEST

Held-out set 16 (`... DEST 16`), written after set 15 was judged and the factor shipped at 0.25
(chosen after seeing set 15, so set 15 no longer judges it): ten more such shapes; roles each
profile's choice as shipped (0.25) and with the factor off (`h100_off`, `h200_off`:
tests/device/session20-select/model-off.toml), and both models' top 8.
"""
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

SET15 = ("40x14336x4096 80x8192x8192 112x16384x2048 160x12288x4096 176x5120x10240 "
         "224x14336x2048 200x20480x3072 144x28672x4096 12288x112x4096 16384x176x2048")
SET16 = ("48x16384x6144 96x8192x6144 120x11008x4096 208x16384x3072 232x12288x2048 "
         "64x28672x2048 136x6144x12288 8192x96x8192 20480x208x2048 184x18432x4096")
OOB = "tests/device/session20-select/model-oob.toml"
OFF = "tests/device/session20-select/model-off.toml"


def main():
    if sys.argv[2:] == ["16"]:
        jobs = [alternative_model_job("16", s, PROFILES, 8, OFF, "_off") for s in SET16.split()]
    else:
        jobs = [alternative_model_job("15", s, PROFILES, 8, OOB, "_oob") for s in SET15.split()]
    write_jobs(sys.argv[1], jobs)


if __name__ == "__main__":
    main()
