"""Session 11, issue #13: writes DEST/jobs.txt and DEST/jobs.json for session10_select.sh (CPU).

Set 9 (eight shapes nothing has measured, chosen in session 10 before any choice was looked
at): selection by
  s10      the session-10 build (b324f71) on the profile without its [meta.device] table:
           what a dispatcher selected until now (the cost model priced the sm_90a table, not
           the device);
  shipped  this build: the cost model with the cluster round trip (cluster_stage_clk), pricing
           the device the profile recorded, as a dispatcher now does;
each choice's cluster twin, and the union of the top 6 without split-K of the shipped build
ranking for the device (`forge rank --profile`: what a fresh tune on the device times first)
and of the s10 build ranking the table. Set "r" (a recheck): the shapes of sets 6-8 where the
two builds choose differently (the new choice was never timed), each with the fastest
schedule session 10's screens found there (reports/2026-12-04-h200-session10-screens-decided,
median of its rounds) as "top".
  PYTHONPATH=tests/device python3 tests/device/session11_select_jobs.py DEST PROFILE S10_FORGE SHIPPED_FORGE
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

from session8_select_jobs import select, write_jobs
from session10_select_jobs import SET6, SET7, SET8, SET9, twin

DECIDED = "reports/2026-12-04-h200-session10-screens-decided"


def decided_best():
    """{shape: the fastest schedule of session 10's screens (median of its rounds)}."""
    best = {}
    for part in ("set6", "set7", "set8"):
        for s in json.load(open(os.path.join(DECIDED, part, "calibration.json")))["shapes"]:
            shape = "%dx%dx%d" % (s["shape"]["m"], s["shape"]["n"], s["shape"]["k"])
            timed = [(statistics.median([p["measured"]["median_us"]] + p.get("repeats_us", [])),
                      p["schedule"]) for p in s["points"] if p["gate"] == "pass" and p["measured"]]
            if timed:
                best[shape] = min(timed)[1]
    return best


def rank(shape, top, forge, profile=None):
    """The first `top` schedules that keep the reduction order (no split-K)."""
    cmd = [forge, "rank", "--arch", "sm_90a", "--shapes", shape, "--top", "100000"]
    if profile:
        cmd += ["--profile", profile]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    names = [l.split()[1] for l in out.splitlines() if l.split()[:1] and l.split()[0].isdigit()]
    return [n for n in names if n.endswith("_k1")][:top]


def without_device_table(profile, dest):
    """The profile as the session-10 build reads it: schema version 2, no [meta.device]
    (derived from PROFILE each time, in a temporary folder `dest`)."""
    out, skip = [], False
    for line in open(profile):
        if line.startswith("["):
            skip = line.strip() == "[meta.device]"
        if line.startswith("schema_version = "):
            line = "schema_version = 2\n"
        if not skip:
            out.append(line)
    path = os.path.join(dest, "profile-without-device.toml")
    open(path, "w").write("".join(out))
    return path


def main():
    dest, profile, s10, shipped = sys.argv[1:5]
    os.makedirs(dest, exist_ok=True)
    old_profile = without_device_table(profile, tempfile.mkdtemp(prefix="forge-s10-profile-"))
    jobs = []
    for s in SET9.split():
        roles = {"s10": select(old_profile, s, forge=s10), "shipped": select(profile, s, forge=shipped)}
        for v in list(roles):
            roles[v + "_twin"] = twin(roles[v])
        top = rank(s, 6, shipped, profile)
        top += [x for x in rank(s, 6, s10) if x not in top]
        jobs.append(dict(shape=s, set="9", roles=roles, top=top))
    best = decided_best()
    for s in (SET6 + " " + SET7 + " " + SET8).split():
        roles = {"s10": select(old_profile, s, forge=s10), "shipped": select(profile, s, forge=shipped)}
        if roles["s10"] != roles["shipped"] and s in best:
            jobs.append(dict(shape=s, set="r", roles=roles, top=[best[s]]))
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
