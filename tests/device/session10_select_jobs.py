"""Session 10, issue #13: writes DEST/jobs.txt and DEST/jobs.json for session9_select.sh (CPU).

Which DRAM pricing of 2-CTA clusters selects better on shapes the fits never saw. Forge
binaries given as ROLE=PATH, each selecting from the shipped profile's pool with its own cost
model. First call (sets 6 and 7):
  v0  the shipped model of session 9 (commit 17f0083);
  v1  a cluster's DRAM traffic priced as its 1-CTA twin's; L2 56.50 B/clk/SM, unaligned rows 2.35;
  v3  launch distances in the L2-sharing term counted in CTAs, not cluster tiles (same constants).
Second call (set 8): v0, v1 and
  v1b v1 with L2 64 B/clk/SM and unaligned rows 3.5 (the candidate to ship, then shipped).
Third call (set 9): v0 and the shipped build.
Per shape: each binary's choice, the 1-CTA / 2-CTA twin of each choice, and the union of each
binary's top 6 over the whole space without split-K (what a fresh `forge tune` times first).
Set 6: session 9's eight new shapes and its three shapes timed again; sets 7, 8 and 9: eight
shapes each that nothing had measured.
  PYTHONPATH=tests/device python3 tests/device/session10_select_jobs.py DEST PROFILE SETS ROLE=PATH...
  (SETS: comma-separated, e.g. 6,7)
"""
import sys

from session8_select_jobs import rank, select, write_jobs

SET6 = ("2688x2688x2688 1536x1536x6144 3072x768x3072 640x6144x1536 1280x10240x1280 "
        "12288x512x2048 896x896x14336 4000x4000x800 4608x1536x3072 2500x2500x2500 1100x1100x9000")
SET7 = ("1024x1024x16384 640x1536x8192 2048x1024x6144 1792x1792x1792 3000x2000x1300 "
        "512x8192x3072 4096x2048x1536 1408x1408x5632")
SET8 = ("768x1536x12288 1280x1280x10240 2304x2304x4608 3584x1792x2560 384x12288x4096 "
        "6144x3072x1024 2200x2200x2100 1536x3840x3328")
SET9 = ("1152x1152x12288 896x2048x7168 2560x1536x4096 5120x2560x768 192x16384x6144 "
        "3328x3328x1664 1000x4000x2000 2800x1400x3500")
SETS = {"6": SET6, "7": SET7, "8": SET8, "9": SET9}


def twin(name):
    return name.replace("_c2_", "_c1_") if "_c2_" in name else name.replace("_c1_", "_c2_")


def jobs_for(profile, set_name, shapes, binaries):
    """One job per shape: each binary's choice (role) and its twin, and the union of their top 6."""
    jobs = []
    for s in shapes.split():
        roles = {v: select(profile, s, forge=b) for v, b in binaries.items()}
        for v in list(roles):
            roles[v + "_twin"] = twin(roles[v])
        top = []
        for b in binaries.values():
            top += [x for x in rank(s, 6, forge=b) if x not in top]
        jobs.append(dict(shape=s, set=set_name, roles=roles, top=top))
    return jobs


def main():
    dest, profile, sets = sys.argv[1:4]
    binaries = dict(arg.split("=", 1) for arg in sys.argv[4:])
    jobs = []
    for set_name in sets.split(","):
        jobs += jobs_for(profile, set_name, SETS[set_name], binaries)
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
