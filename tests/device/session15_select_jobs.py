"""Session 15, issue #13: writes DEST/jobs.txt and DEST/jobs.json for session10_select.sh (CPU).

Selection with each device's own profile, written before any measurement of these choices:
the shapes of session 13's selection jobs (set 10 and the one-wave deep-K recheck r), each job
holding
  h200        the H200 profile's choice (profiles/sm_90a-h200.toml, pool of 3,950);
  h100        the H100 profile's choice (profiles/sm_90a-h100.toml: pool widened from its suite
              run, 589 schedules);
  h100_entries  the same profile before the widening (its 80 entries and runners-up,
              reports/2026-12-05-h100-session15/suite/profile_suite.toml);
  s15_best    the fastest schedule of that shape in session 15's H100 selection screens (a
              reference that was measured, on the H100);
and the model's top 6 priced for each profile's device (what a fresh tune times first).
On whichever card runs it, the choice of that card's profile is the one #13's goal judges.
  PYTHONPATH=tests/device python3 tests/device/session15_select_jobs.py DEST
"""
import glob
import statistics
import subprocess
import sys

from session8_select_jobs import FORGE, select, write_jobs

SET10 = ("1216x1216x11264 1408x1152x9216 896x1664x16384 1344x1344x6144 768x2560x10240 "
         "1088x1600x8192 2304x3072x2048 640x4608x6144")
RECHECK = "1152x1152x12288 896x2048x7168 1280x1280x10240 768x1536x12288"
PROFILES = {"h200": "profiles/sm_90a-h200.toml", "h100": "profiles/sm_90a-h100.toml",
            "h100_entries": "reports/2026-12-05-h100-session15/suite/profile_suite.toml"}
S15 = "reports/2026-12-05-h100-session15/call1/forge-s10s/screens-*.txt"


def s15_best(shape):
    """The gate-passing schedule with the smallest median over session 15's rounds (timed in all)."""
    times = {}
    files = sorted(glob.glob(S15))
    for f in files:
        for line in open(f):
            p = line.split()
            if len(p) >= 6 and p[0] == shape and p[1] != "cublas" and p[-1] == "pass":
                times.setdefault(p[1], []).append(float(p[2]))
    full = {s: statistics.median(v) for s, v in times.items() if len(v) == len(files)}
    return min(full, key=full.get)


def rank_for(profile, shape, top, model=None, forge=FORGE):
    """The model's `top` best schedules without split-K, priced for the profile's device (with
    the constants file `model`, if given; by the build `forge`)."""
    extra = ["--model", model] if model else []
    out = subprocess.run([forge, "rank", "--arch", "sm_90a", "--shapes", shape, "--top", "100000",
                          "--profile", profile] + extra, check=True, capture_output=True,
                         text=True).stdout
    names = [line.split()[1] for line in out.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
    return [n for n in names if n.endswith("_k1")][:top]


def held_out_job(set_name, shape, profiles, ranked_by, top_n, extra_roles=None, models=(None,),
                 forges=(FORGE,)):
    """One selection job: each profile's choice (then `extra_roles`, role -> schedule) and, for
    each build of `forges` and each constants file of `models` in turn (None: the shipped one),
    the model's `top_n` best priced for each profile of `ranked_by` in turn, each schedule once."""
    roles = {role: select(p, shape) for role, p in profiles.items()}
    roles.update(extra_roles or {})
    top = []
    for forge in forges:
        for model in models:
            for p in ranked_by:
                top += [x for x in rank_for(p, shape, top_n, model, forge) if x not in top]
    return dict(shape=shape, set=set_name, roles=roles, top=top)


def alternative_model_job(set_name, shape, profiles, top_n, model, suffix, forge=None):
    """A held-out job judging the constants file `model` (or, with `model` None, the build
    `forge`) against the shipped model of this build: each profile's choice with either (the
    alternative's roles named role + `suffix`) and both models' `top_n` best priced for each
    profile's device."""
    other = {role + suffix: select(p, shape, forge=forge or FORGE, model=model)
             for role, p in profiles.items()}
    models = (None, model) if model else (None,)
    forges = (FORGE, forge) if forge else (FORGE,)
    return held_out_job(set_name, shape, profiles, profiles.values(), top_n, other, models, forges)


def main():
    dest = sys.argv[1]
    jobs = [held_out_job(set_name, s, PROFILES, (PROFILES["h200"], PROFILES["h100"]), 6,
                         {"s15_best": s15_best(s)})
            for set_name, shapes in [("10", SET10), ("r", RECHECK)] for s in shapes.split()]
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
