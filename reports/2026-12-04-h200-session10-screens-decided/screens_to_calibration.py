"""Session 10's selection screens as calibration data with repeated timings.

Usage: python3 screens_to_calibration.py SCREENS_DIR SET DEST [SKIP,SHAPES]

SCREENS_DIR holds screens-<round>.txt (one line per timed schedule: shape, schedule, median
µs, "us gate", verdict) and jobs.json (which shape belongs to which set). Every forge schedule
timed in every round becomes one point: its first round's median is the first timing, the
later rounds' medians its repeats (`forge calibrate --repeat`'s format), its gate the worst
of its rounds. The device metadata (arch table as measured, device name, contract) comes from
calibration set 4, measured on the same H200 in the same session series. The screens hold the
schedules the selection study chose to time (each model's choice and its cluster twin, each
model's top 6 without split-K), not a stratified sample: the fit's metrics on them rank the
model among those schedules only.
"""
import glob
import json
import os
import sys

src, wanted, dest = sys.argv[1], sys.argv[2], sys.argv[3]
skip = set(sys.argv[4].split(",")) if len(sys.argv) > 4 else set()
meta = json.load(open(os.path.join(os.path.dirname(__file__), "..",
                                   "2026-12-04-h200-calibration-4", "calibration.json")))
jobs = json.load(open(os.path.join(src, "jobs.json")))
shapes = [j["shape"] for j in jobs if str(j["set"]) == wanted and j["shape"] not in skip]
rounds = sorted(glob.glob(os.path.join(src, "screens-*.txt")),
                key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))
times = {}   # (shape, schedule) -> [(µs or None, verdict)] per round
cublas = {}
for r, path in enumerate(rounds):
    for line in open(path):
        f = line.split()
        if len(f) < 6 or f[0] not in shapes:
            continue
        shape, schedule, us, verdict = f[0], f[1], float(f[2]), f[-1]
        if schedule == "cublas":
            cublas.setdefault(shape, []).append(us)
            continue
        times.setdefault((shape, schedule), [None] * len(rounds))[r] = (us, verdict)

out_shapes = []
for shape in shapes:
    m, n, k = (int(x) for x in shape.split("x"))
    points = []
    for (s, schedule), per_round in sorted(times.items()):
        if s != shape or any(x is None for x in per_round):
            continue
        ok = all(v == "pass" and us == us for us, v in per_round)
        first = per_round[0][0]
        meas = None
        if first == first:
            meas = {"median_us": first, "ci_low_us": first, "ci_high_us": first,
                    "samples": 15, "outliers": 0, "tflops": 2e-6 * m * n * k / first}
        points.append({
            "schedule": schedule, "origin": "top", "predicted_us": 0.0,
            "status": "measured" if meas else "not_run", "measured": meas,
            # A schedule the screens never ran (gate not_run: e.g. a cluster twin the space
            # rejects) is not_run here too, not a gate failure.
            "gate": "pass" if ok else ("fail" if any(v == "fail" for _, v in per_round)
                                       else "not_run"),
            "repeats_us": [us for us, _ in per_round[1:]] if ok else [],
        })
    c = sorted(cublas.get(shape, []))
    out_shapes.append({
        "shape": {"m": m, "n": n, "k": k}, "dtype": "tf32", "layout": "tn",
        "cublas": {"median_us": c[len(c) // 2], "ci_low_us": c[0], "ci_high_us": c[-1],
                   "samples": len(c), "outliers": 0, "tflops": 2e-6 * m * n * k / c[len(c) // 2]}
        if c else None,
        "reference_passed": True,
        "points": points,
    })
data = dict(meta)
data.update(shapes=out_shapes, top=0, sample=0,
            command=f"screens_to_calibration.py {src} {wanted} {dest}",
            date="2026-12-04 (the screens' device call: see SCREENS_DIR/README.md)",
            git_revision="(the screens' builds: see SCREENS_DIR/README.md)")
os.makedirs(dest, exist_ok=True)
json.dump(data, open(os.path.join(dest, "calibration.json"), "w"), indent=1)
print(dest, len(out_shapes), "shapes", sum(len(s["points"]) for s in out_shapes), "points")
