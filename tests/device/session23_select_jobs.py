"""Sessions 23-24, issue #13: held-out sets 19, 20 and 21 for session10_select.sh (CPU), each
written before any of its shapes was timed; set 18 (session 22, `session22_select_jobs.py`) is
here too, one table for the sets that judge a model against the constants before it. Twelve
shapes per set that no profile entry, calibration set, selection screen or report of this
repository held, drawn with a fixed seed from random shapes, a few per band of the small
dimension, among those where the set's rule moves a profile's choice:
  19  `l2_own_keep_fraction` (an operand that by itself fits in 0.2 x the usable L2 is re-read
      from L2): 700 shapes with one dimension 40-1280 and the other 2560-24576, three per band
      (<= 104, <= 264, <= 640, <= 1280) of the 109 that move; the rule off in
      session23-select/model-prev.toml (the session-22 constants);
  20  `whole_band_passes` (the streamed operand read once per pass, a partial last pass
      included): 500 shapes with one dimension 384-3328 and the other 2560-24576, four per
      band (<= 768, <= 1664, larger) of the 82 that move; the rule off in
      session23-select/model-set20-prev.toml (set 19's model);
  21  (session 24) `l2_own_keep_fraction` 0.2 -> 0.35: 450 shapes with one dimension 256-1536
      and the other 4096-24576, four per band (<= 512, <= 896, larger) of the 58 that move;
      the session-23 constants in session24-select/model-prev.toml.
Roles: h100, h200 (each profile's choice by this build's model) and h100_prev, h200_prev (by
the set's previous constants), and both models' top 8 priced for each device (split-K
excluded); the table's "fresh tune" is the best of those. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session23_select_jobs.py DEST SET
"""
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import PROFILES

SETS = {
    "18": ("40x24576x1024 56x14336x3072 40x14336x6144 136x20480x6144 72x18432x768 "
           "416x2560x6144 8704x216x1536 8704x264x5120 18432x88x5120 20480x56x5120 "
           "6144x416x3072 10240x232x3072",
           "tests/device/session22-select/model-prev.toml"),
    "19": ("72x7168x8192 104x4864x2048 7168x72x2048 136x18432x3072 232x6144x2048 "
           "168x10240x4096 640x14336x1024 6144x416x1536 640x24576x1024 768x18432x1536 "
           "14336x1024x1024 8704x768x1024",
           "tests/device/session23-select/model-prev.toml"),
    "20": ("24576x640x2048 6144x768x4096 8704x512x5120 18432x768x12288 4864x896x12288 "
           "1408x6144x768 10240x896x4096 7168x896x1536 2304x6144x4096 1920x10240x6144 "
           "3584x1920x2048 3584x1920x6144",
           "tests/device/session23-select/model-set20-prev.toml"),
    "21": ("384x4096x5120 384x4096x6144 18432x512x4096 14336x256x6144 14336x768x2048 "
           "12288x832x3072 896x20480x3072 832x20480x1536 12288x1024x1024 1280x14336x1536 "
           "1536x14336x768 10240x1024x2048",
           "tests/device/session24-select/model-prev.toml"),
}


def write_set(dest, name):
    shapes, prev_model = SETS[name]
    write_jobs(dest, [alternative_model_job(name, s, PROFILES, 8, prev_model, "_prev")
                      for s in shapes.split()])


if __name__ == "__main__":
    write_set(sys.argv[1], sys.argv[2])
