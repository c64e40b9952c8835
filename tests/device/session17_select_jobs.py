"""Session 17, issue #13: held-out set 12 for session10_select.sh (CPU), written before any of
these shapes was timed. Ten shapes that no profile entry, calibration set, selection screen or
report of this repository holds (one-wave deep K, medium, short K, an LLM linear, tall-skinny,
K % 4 != 0), each job holding
  h100  the H100 profile's choice as shipped at session 17's end (profiles/sm_90a-h100.toml:
        24 entries, a pool of 2,966 gate-passing schedules);
  h200  the H200 profile's choice (profiles/sm_90a-h200.toml: session 16's suite, pool 4,957);
and the model's top 8 priced for the H100, then for the H200 (what a fresh tune times first),
split-K excluded. The table's "fresh tune" is the best of those 16.
  PYTHONPATH=tests/device python3 tests/device/session17_select_jobs.py DEST
"""
import sys

from session8_select_jobs import write_jobs
from session15_select_jobs import held_out_job

SET12 = ("1088x1344x10240 1600x1600x6400 2688x2176x2560 3584x3584x1024 5632x1536x2048 "
         "4096x11008x2048 256x8192x8192 16384x512x2048 1500x2500x999 640x6400x4480")
PROFILES = {"h100": "profiles/sm_90a-h100.toml", "h200": "profiles/sm_90a-h200.toml"}


def main():
    dest = sys.argv[1]
    ranked_by = (PROFILES["h100"], PROFILES["h200"])
    write_jobs(dest, [held_out_job("12", s, PROFILES, ranked_by, 8) for s in SET12.split()])


if __name__ == "__main__":
    main()
