"""Session 18, issue #13: held-out set 13 for session10_select.sh (CPU), written before any of
these shapes was timed, and set 12 again for the H100 ("12h", whose profile's choices the
resource norm changed at 4 of its 10 shapes; set 12 was timed on the H200 only). Set 13: ten
shapes that no profile entry, calibration set, selection screen or report of this repository
holds (one-wave deep K, medium, short K, LLM linears, tall and skinny, K % 4 != 0). Roles:
  h100, h200          each profile's choice as shipped (cost model with `resource_norm = 8`);
  h100_lin, h200_lin  the same profiles' choices with the linear mix shipped before session 18
                      (tests/device/session18-select/model-linear.toml);
and the top 8 of each model priced for each device (what a fresh tune times first), split-K
excluded; the table's "fresh tune" is the best of those. Set 12h holds the H100 roles only.
Writes DEST/set13/jobs.{txt,json} and DEST/set12h/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session18_select_jobs.py DEST
"""
import os
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import alternative_model_job
from session17_select_jobs import SET12

SET13 = ("1024x1408x12288 1792x2304x5120 3328x2816x1536 2048x14336x4096 384x11008x4096 "
         "12288x768x3072 2000x3000x1234 1536x2560x2560 2560x2048x6144 896x3584x8192")
PROFILES = {"h100": "profiles/sm_90a-h100.toml", "h200": "profiles/sm_90a-h200.toml"}
LINEAR = "tests/device/session18-select/model-linear.toml"


def job(set_name, shape, profiles, top_n):
    """Each profile's choice with the shipped model and with the linear one, and each model's
    `top_n` best priced for each profile's device, each schedule once."""
    return alternative_model_job(set_name, shape, profiles, top_n, LINEAR, "_lin")


def main():
    dest = sys.argv[1]
    h100 = {"h100": PROFILES["h100"]}
    os.makedirs(dest + "/set13", exist_ok=True)
    os.makedirs(dest + "/set12h", exist_ok=True)
    write_jobs(dest + "/set13", [job("13", s, PROFILES, 8) for s in SET13.split()])
    write_jobs(dest + "/set12h", [job("12h", s, h100, 8) for s in SET12.split()])


if __name__ == "__main__":
    main()
