"""Session 29, issue #13 (CPU): more rounds for a held-out set's judgment at a fraction of the
device time. From a registered set folder (jobs.json, jobs.txt) and a round already timed
(screens-N.txt), writes DEST/jobs.{json,txt} holding per shape only the roles' schedules and the
FASTEST (default 3) schedules that round timed; the roles and their picks are unchanged. The
judgment (judge_hypothesis.py) compares the roles' times with each other, so it needs no other
schedule; the fastest keep the "role/all" column meaningful.
  python3 tests/device/session29_rounds_jobs.py SET_DIR SCREENS_TXT DEST [FASTEST]
"""
import json
import math
import os
import sys

set_dir, screens_txt, dest = sys.argv[1:4]
fastest = int(sys.argv[4]) if len(sys.argv) > 4 else 3
timed = {}
for line in open(screens_txt):
    f = line.split()
    if len(f) >= 6 and f[3] == "us" and f[1] != "cublas" and f[5] == "pass" \
            and not math.isnan(float(f[2])):
        timed.setdefault(f[0], {})[f[1]] = float(f[2])
jobs = json.load(open(os.path.join(set_dir, "jobs.json")))
os.makedirs(dest, exist_ok=True)
with open(os.path.join(dest, "jobs.txt"), "w") as txt:
    for j in jobs:
        ts = timed.get(j["shape"], {})
        if not ts:
            sys.exit("no timed schedules for %s in %s" % (j["shape"], screens_txt))
        j["top"] = sorted(ts, key=ts.get)[:fastest]
        names = list(dict.fromkeys(list(j["roles"].values()) + j["top"]))
        txt.write(" ".join(j["shape"].split("x") + names) + "\n")
json.dump(jobs, open(os.path.join(dest, "jobs.json"), "w"), indent=1)
print("%s: %d shapes, %d schedules" % (dest, len(jobs), sum(
    len(set(list(j["roles"].values()) + j["top"])) for j in jobs)))
