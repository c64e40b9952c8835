"""Session 9, issue #13: writes DEST/jobs.txt and DEST/jobs.json for session8_select.sh (CPU).

Set 6, eight shapes no calibration, tune or screen has measured: the shipped profile's choice
with this build's cost model ("shipped"), the same profile's choice with the session-8 model
("session8", the forge binary OLD_FORGE built at commit 685c5b9), the model's top 10 over the
whole space (what a fresh `forge tune` times) and the session-8 model's top 4. Then the shapes
whose choice this build changed among session 8's selection shapes, and 1100x1100x9000. Where
the shipped choice is a 2-CTA cluster, its 1-CTA twin too ("c1_twin").
  PYTHONPATH=tests/device python3 tests/device/session9_select_jobs.py DEST SHIPPED_PROFILE OLD_FORGE
"""
import sys

from session8_select_jobs import rank, select, write_jobs

SET6 = ("2688x2688x2688 1536x1536x6144 3072x768x3072 640x6144x1536 1280x10240x1280 "
        "12288x512x2048 896x896x14336 4000x4000x800")
AGAIN = "4608x1536x3072 2500x2500x2500 1100x1100x9000"


def main():
    dest, profile, old = sys.argv[1:4]
    jobs = []
    for s in SET6.split():
        top = rank(s, 10)
        top += [x for x in rank(s, 4, forge=old) if x not in top]
        jobs.append(dict(shape=s, set="6", roles={"shipped": select(profile, s),
                                                  "session8": select(profile, s, forge=old)},
                         top=top))
    for s in AGAIN.split():
        roles = {"shipped": select(profile, s), "session8": select(profile, s, forge=old)}
        jobs.append(dict(shape=s, set="again", roles=roles, top=rank(s, 10)))
    for j in jobs:
        # 2-CTA clusters at long K and few tiles are the model's known miss: time the 1-CTA
        # twin of a clustered choice too (at 1100x1100x9000 the best schedule screened).
        if "_c2_" in j["roles"]["shipped"]:
            j["roles"]["c1_twin"] = j["roles"]["shipped"].replace("_c2_", "_c1_")
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
