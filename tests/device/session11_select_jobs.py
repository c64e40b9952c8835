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
and of the s10 build ranking the table.
  PYTHONPATH=tests/device python3 tests/device/session11_select_jobs.py DEST PROFILE S10_FORGE SHIPPED_FORGE
"""
import os
import subprocess
import sys

from session8_select_jobs import select, write_jobs
from session10_select_jobs import SET9, twin


def rank(shape, top, forge, profile=None):
    """The first `top` schedules that keep the reduction order (no split-K)."""
    cmd = [forge, "rank", "--arch", "sm_90a", "--shapes", shape, "--top", "100000"]
    if profile:
        cmd += ["--profile", profile]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    names = [l.split()[1] for l in out.splitlines() if l.split()[:1] and l.split()[0].isdigit()]
    return [n for n in names if n.endswith("_k1")][:top]


def without_device_table(profile, dest):
    """The profile as the session-10 build reads it: no [meta.device] table."""
    out, skip = [], False
    for line in open(profile):
        if line.startswith("["):
            skip = line.strip() == "[meta.device]"
        if not skip:
            out.append(line)
    path = os.path.join(dest, "profile-without-device.toml")
    open(path, "w").write("".join(out))
    return path


def main():
    dest, profile, s10, shipped = sys.argv[1:5]
    os.makedirs(dest, exist_ok=True)
    old_profile = without_device_table(profile, dest)
    jobs = []
    for s in SET9.split():
        roles = {"s10": select(old_profile, s, forge=s10), "shipped": select(profile, s, forge=shipped)}
        for v in list(roles):
            roles[v + "_twin"] = twin(roles[v])
        top = rank(s, 6, shipped, profile)
        top += [x for x in rank(s, 6, s10) if x not in top]
        jobs.append(dict(shape=s, set="9", roles=roles, top=top))
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
