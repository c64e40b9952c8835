"""Session 31, issue #13: held-out set 30 for session10_select.sh (CPU), written before any of
its shapes was timed and before the pool lists were gated. Hypothesis: a selection pool widened
with the model's missing picks (tests/device/session31_pool_lists.py, seed 4141, 2,000 shapes,
the first 3 bit-exact per shape: 295 schedules for the H100 profile, 157 for the H200 one,
tests/device/session31-select/gate_{h100,h200}.txt) picks faster schedules for shapes the
profile does not hold. Shapes no profile entry holds, drawn by session 26's rule:
  - broad: the first six drawn with seed 4343, whatever the pools pick;
  - moved: the first eight of the first 4,000 drawn with seed 4444 where the widened pool moves
    either profile's choice.
Roles: h100, h200 (each shipped profile's choice) and h100_pool, h200_pool (the widened
profiles', DEST/sm_90a-{h100,h200}-pool.toml), and the model's top 8 priced for each device;
the table's "fresh tune" is the best of those.
Registered rule (before timing), as for sets 26-29: on each card that runs it, the moved picks
>= 1.02x the shipped picks in geomean and none below 0.97x, for each profile. A widened pool
ships only for the device whose gate passed its list (`forge pool` from the gate run).
Set 31, after set 30 failed its rule (H100, 13 rounds: H100 profile 1.021x, worst 0.931x; H200
profile 1.071x, worst 0.962x; of the six moved picks below 0.97x or near it, four were chained
tails, `sk`, which the stored screens' misses also favour): the same lists without their `sk`
schedules (189 for the H100 profile, 65 for the H200 one); broad seed 4545, moved seed 4646,
roles h100_poolnosk and h200_poolnosk, the same rule.
  PYTHONPATH=tests/device python3 tests/device/session31_select_jobs.py DEST SET [--scan]
"""
import os
import sys

from session15_select_jobs import held_out_job
from session17_select_jobs import PROFILES
from session26_select_jobs import draw, drawn_where
from session31_pool_lists import widen
from session8_select_jobs import select, write_jobs

HERE = os.path.dirname(os.path.abspath(__file__))

# set: (keeps a listed name, role suffix, broad seed, moved seed)
SETS = {
    "30": (lambda name: True, "_pool", 4343, 4444),
    "31": (lambda name: "_sk_" not in name, "_poolnosk", 4545, 4646),
}


def write_set(dest, set_name, broad_seed, moved_seed, moves, other_roles):
    """A held-out set by session 26's draw: the first six shapes drawn with `broad_seed` and
    the first eight of the first 4,000 drawn with `moved_seed` where `moves(shape)`; each job
    holds both profiles' choices, `other_roles(shape)` (role -> schedule) and the model's top 8
    priced for each device. With `--scan` on the command line, the shapes only."""
    gen = draw(broad_seed)
    broad = [next(gen) for _ in range(6)]
    moved = drawn_where(moved_seed, 4000, moves)
    print("broad:", " ".join(broad))
    print("moved: %s (%d of 4000 drawn)" % (" ".join(moved[:8]), len(moved)))
    if "--scan" in sys.argv:
        return
    write_jobs(dest, [held_out_job(set_name, s, PROFILES, PROFILES.values(), 8, other_roles(s))
                      for s in broad + moved[:8]])


def main():
    dest, name = sys.argv[1:3]
    keep, suffix, broad_seed, moved_seed = SETS[name]
    os.makedirs(dest, exist_ok=True)
    wide = {}
    for role, p in PROFILES.items():
        names = [x.strip() for x in open(os.path.join(HERE, "session31-select",
                                                      "gate_%s.txt" % role))
                 if x.strip() and keep(x.strip())]
        wide[role] = os.path.join(dest, "sm_90a-%s-%s.toml" % (role, suffix.lstrip("_")))
        widen(p, names, wide[role])

    def moves(shape):
        return any(select(PROFILES[r], shape) != select(wide[r], shape) for r in PROFILES)
    write_set(dest, name, broad_seed, moved_seed, moves,
              lambda s: {role + suffix: select(wide[role], s) for role in PROFILES})


if __name__ == "__main__":
    main()
