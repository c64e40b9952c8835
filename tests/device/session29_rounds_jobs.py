"""Session 29, issue #13 (CPU): more rounds for a held-out set's judgment at a fraction of the
device time. From a registered set folder (jobs.json, jobs.txt) and the rounds already timed
(SEL_DIR holding screens-N.txt), writes DEST/jobs.{json,txt} holding per shape only the roles'
schedules and the FASTEST (default 3) schedules of those rounds (medians); the roles and their
picks are unchanged. The judgment (judge_hypothesis.py) compares the roles' times with each
other, so it needs no other schedule; the fastest keep the "role/all" column meaningful.
  PYTHONPATH=tests/device python3 tests/device/session29_rounds_jobs.py SET_DIR SEL_DIR DEST [FASTEST]
"""
import json
import math
import os
import statistics
import sys

from session18_screens_rank import screened

set_dir, sel_dir, dest = sys.argv[1:4]
fastest = int(sys.argv[4]) if len(sys.argv) > 4 else 3
timed = {shape: {n: statistics.median(v) for n, v in ts.items() if not any(map(math.isnan, v))}
         for shape, ts in screened(sel_dir).items()}
jobs = json.load(open(os.path.join(set_dir, "jobs.json")))
os.makedirs(dest, exist_ok=True)
with open(os.path.join(dest, "jobs.txt"), "w") as txt:
    for j in jobs:
        ts = timed.get(j["shape"], {})
        if not ts:
            sys.exit("no timed schedules for %s in %s" % (j["shape"], sel_dir))
        j["top"] = sorted(ts, key=ts.get)[:fastest]
        names = list(dict.fromkeys(list(j["roles"].values()) + j["top"]))
        txt.write(" ".join(j["shape"].split("x") + names) + "\n")
json.dump(jobs, open(os.path.join(dest, "jobs.json"), "w"), indent=1)
print("%s: %d shapes, %d schedules" % (dest, len(jobs), sum(
    len(set(list(j["roles"].values()) + j["top"])) for j in jobs)))
