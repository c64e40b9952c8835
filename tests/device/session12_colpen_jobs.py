"""Session 12, issue #13: adds the column-raster hypothesis to the set-9 jobs (CPU), before any
of them is measured.

Session 11 wrote tests/device/session11-set9/jobs.* (set 9: eight shapes nothing has measured;
set r: a recheck of four set 6-8 shapes). Session 12 found that pricing column-raster wgmma
schedules 0.6% slower (cost model `global.column_raster_factor` = 1.006) ranks the decided
screens of sets 6-8 better, but sets 6-8 chose it. Set 9 judges it: this script adds, per job,
  colpen       the choice of `forge select --model MODEL` (the shipped profile, the model with
               the factor set), as a role;
  and the top 6 without split-K of `forge rank --model MODEL --profile PROFILE` to the job's
  screened schedules,
so that the selection table (session9_select_table.py) rates the hypothesis's choices beside
session 10's and session 11's, and the repeated rounds decide its ranking. Nothing else
changes: the session-11 roles and schedules stay, in their order.
  PYTHONPATH=tests/device python3 tests/device/session12_colpen_jobs.py SRC DEST PROFILE MODEL FORGE
e.g. SRC tests/device/session11-set9, DEST tests/device/session12-set9, MODEL a copy of
cost_model/model.toml with column_raster_factor = 1.006.
"""
import json
import os
import subprocess
import sys

from session8_select_jobs import write_jobs


def select(profile, shape, model, forge):
    out = subprocess.run([forge, "select", "--profile", profile, "--model", model, shape],
                         check=True, capture_output=True, text=True).stdout
    return out.split()[0]


def rank(shape, top, profile, model, forge):
    out = subprocess.run([forge, "rank", "--arch", "sm_90a", "--shapes", shape, "--top", "100000",
                          "--profile", profile, "--model", model],
                         check=True, capture_output=True, text=True).stdout
    names = [l.split()[1] for l in out.splitlines() if l.split()[:1] and l.split()[0].isdigit()]
    return [n for n in names if n.endswith("_k1")][:top]


def main():
    src, dest, profile, model, forge = sys.argv[1:6]
    os.makedirs(dest, exist_ok=True)
    jobs = json.load(open(os.path.join(src, "jobs.json")))
    added = 0
    for j in jobs:
        screened = set(j["roles"].values()) | set(j["top"])
        j["roles"]["colpen"] = select(profile, j["shape"], model, forge)
        for name in [j["roles"]["colpen"]] + rank(j["shape"], 6, profile, model, forge):
            if name not in screened:
                j["top"].append(name)
                screened.add(name)
                added += 1
    write_jobs(dest, jobs)
    print(added, "schedules added to the session-11 jobs")


if __name__ == "__main__":
    main()
