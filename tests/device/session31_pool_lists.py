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
import sys
import tomllib

from session18_screens_rank import ranked
from session26_select_jobs import draw


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
    have = pool(profile)
    per = ranked(shapes, profile, None, top=40)
    # Split-K changes the bits: a bit-exact pool never holds it.
    firsts = ([n for n, _ in names if n.endswith("_k1")][:top] for names in per.values())
    return sorted({n for names in firsts for n in names if n not in have})


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
