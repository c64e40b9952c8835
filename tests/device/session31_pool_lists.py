"""Session 31, issue #13 (CPU): the schedules to gate on the device for a wider selection pool.
A shape the profile does not hold gets the model's best of the profile's pool (schedules that
passed the gate on its device); where the model's first choice over the whole space is not in
the pool, the dispatcher runs a lesser one (held-out screens of sets 21-29: the model's first
choice 0.969 of the best screened, the profile's pick 0.959, worst 0.800, mostly a `pers`
twin or another stage count missing from the pool). Per profile: over the first COUNT shapes
drawn with SEED by session 26's rule, the model's first TOP bit-exact schedules (priced for
the profile's device) that its pool lacks, one name a line, sorted:
  PYTHONPATH=tests/device python3 tests/device/session31_pool_lists.py PROFILE SEED COUNT TOP \
      > LIST
and PROFILE --widen LIST OUT: the profile with LIST as a [[verified]] table (the hypothesis'
pool, before any gate ran: `forge pool` adds only what passes). Session 31's lists: seed 4141,
2,000 shapes, top 3 (tests/device/session31-select/gate_{h100,h200}.txt).
"""
import subprocess
import sys
import tomllib

from session26_select_jobs import draw
from session8_select_jobs import FORGE


def pool(profile):
    """Every schedule name of the profile's pool (entries, runners-up, verified tables)."""
    p = tomllib.load(open(profile, "rb"))
    names = set()
    for e in p.get("entry", []):
        names.add(e["schedule"])
        names.update(e.get("runners_up", []))
    for v in p.get("verified", []):
        names.update(v["schedules"])
    return names


def wanted(profile, seed, count, top):
    gen = draw(seed)
    shapes = [next(gen) for _ in range(count)]
    out = subprocess.run([FORGE, "rank", "--arch", "sm_90a", "--shapes", ",".join(shapes),
                          "--top", "40", "--profile", profile], check=True,
                         capture_output=True, text=True).stdout
    have, per, cur = pool(profile), {}, None
    for line in out.splitlines():
        f = line.split()
        if len(f) > 2 and f[1:3] == ["on", "sm_90a"]:
            cur = per.setdefault(f[0], [])
        elif len(f) > 3 and f[0].isdigit() and f[1].endswith("_k1"):  # split-K changes bits
            cur.append(f[1])
    return sorted({n for names in per.values() for n in names[:top] if n not in have})


def widen(profile, names, out):
    text = open(profile).read().rstrip("\n")
    listed = "".join('    "%s",\n' % n for n in names)
    text += ('\n\n[[verified]]\ndtype = "tf32"\nlayout = "tn"\nsource = "hypothesis (session '
             '31): the model\'s picks missing from the pool, not yet gated"\nschedules = [\n'
             + listed + "]\n")
    open(out, "w").write(text)


def main():
    if sys.argv[2] == "--widen":
        names = [x.strip() for x in open(sys.argv[3]) if x.strip()]
        widen(sys.argv[1], names, sys.argv[4])
        return
    profile, seed, count, top = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print("\n".join(wanted(profile, seed, count, top)))


if __name__ == "__main__":
    main()
