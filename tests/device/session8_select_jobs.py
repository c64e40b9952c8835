"""Session 8, issue #13: writes DEST/jobs.txt and DEST/jobs.json for session8_select.sh (CPU).

Set 5 (six shapes nothing measured): the shipped profile's choice ("shipped", its pool widened
from calibration sets 1+2 retimed, 3 and 4), the session-7 profile's ("before"), and the model's
top 16 over the whole space (a fresh `forge tune` times the top 10). Sets 4 and 3 (held out of
the model fit): the choice of a profile whose pool came from the other sets only ("trainpool"),
the calibration's sampled best, and the model's top 4.
  python3 tests/device/session8_select_jobs.py DEST SHIPPED BEFORE TRAIN_FOR_SET4 TRAIN_FOR_SET3
"""
import csv
import json
import subprocess
import sys

FORGE = "./target/release/forge"
SET5 = "3500x2800x2100 1792x5120x1280 2816x2816x1408 448x14336x2048 4608x1536x3072 1100x1100x9000"
SET4 = "1024x16384x1024 256x11008x4096 768x768x12288 2304x9216x768 5000x3000x700 1600x6400x1600"
SET3 = ("384x8192x2048 1536x4096x1024 64x16384x4096 1920x7680x640 3584x3584x896 1200x4800x3600 "
        "5120x1280x5120 2500x2500x2500")


def select(profile, shape, forge=FORGE, model=None):
    """The profile's choice for `shape` (priced with the constants file `model`, if given)."""
    extra = ["--model", model] if model else []
    out = subprocess.run([forge, "select", "--profile", profile, shape] + extra, check=True,
                         capture_output=True, text=True).stdout
    return out.split()[0]


def rank(shape, top, forge=FORGE):
    """The model's `top` best schedules that keep the reduction order (no split-K: the tuner
    never times those under a bit-exact contract). Asks `forge rank` for the whole ranking: at long K
    and few tiles the model's top 2,000 can be all split-K (session 8 asked for 4x `top`, and
    1100x1100x9000's job got none)."""
    out = subprocess.run([forge, "rank", "--arch", "sm_90a", "--shapes", shape, "--top", "100000"],
                         check=True, capture_output=True, text=True).stdout
    names = [line.split()[1] for line in out.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
    return [n for n in names if n.endswith("_k1")][:top]


def sampled_best(data_dir, shape):
    m, n, k = shape.split("x")
    rows = [r for r in csv.DictReader(open(data_dir + "/calibration.csv"))
            if (r["m"], r["n"], r["k"]) == (m, n, k) and r["gate"] == "pass" and r["status"] == "measured"]
    return min(rows, key=lambda r: float(r["measured_us"]))["schedule"]


def write_jobs(dest, jobs):
    """jobs.json as given; jobs.txt: per job the shape and its schedules, each once."""
    json.dump(jobs, open(dest + "/jobs.json", "w"), indent=1)
    with open(dest + "/jobs.txt", "w") as f:
        for j in jobs:
            names = []
            for x in list(j["roles"].values()) + j["top"]:
                if x not in names:
                    names.append(x)
            f.write(j["shape"].replace("x", " ") + " " + " ".join(names) + "\n")
    print(sum(len(line.split()) - 3 for line in open(dest + "/jobs.txt")), "schedules in", len(jobs), "jobs")


def main():
    dest, shipped, before, train4, train3 = sys.argv[1:6]
    jobs = []
    for s in SET5.split():
        jobs.append(dict(shape=s, set="5", roles={"shipped": select(shipped, s), "before": select(before, s)},
                         top=rank(s, 16)))
    for data, train, shapes, name in [("reports/2026-12-04-h200-calibration-4", train4, SET4, "4"),
                                      ("reports/2026-12-03-h200-calibration-3", train3, SET3, "3")]:
        for s in shapes.split():
            jobs.append(dict(shape=s, set=name, roles={"trainpool": select(train, s),
                                                       "sampled_best": sampled_best(data, s)}, top=rank(s, 4)))
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
