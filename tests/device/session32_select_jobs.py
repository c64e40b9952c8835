"""Session 32, issue #13: held-out set 33 for session10_select.sh (CPU), written before any of
its shapes was timed and before its lists were gated. Hypothesis: past one wave, the profile's
pick launched persistently (its `pers` twin, `_pers_` for `_np_`: the same tile, stages, workers
and tile order) runs faster than the non-persistent pick.
Why: at the held-out screens' worst profile picks (sets 21-32, H100), 11 of the 30 lowest are an
`np` schedule where a `pers` one was the fastest, at 9 of them the model's own first choice is
the pick's `pers` twin, which the pool lacks (402 of the H100 pool's 935 `np` members have no
`pers` twin, 487 of the H200 pool's 1,589). Measured past one wave, `np` over `pers` has median
1.034 over 762 stored H100 twin pairs (5% of them below 0.965) and 1.024 over 436 H200 ones,
where the model prices them 1.00-1.02. Repricing every `np` schedule (`np_later_wave_loss`,
sets 23-24) and widening the pool with the twins (checked on the stored screens before this
set was drawn: 12 moved picks 1.080x, but one 0.910x, a `pers` s4 -> `pers` s5 move) both let
the model move to other stage counts; a swap to the twin keeps the model's tile, stages and
order and changes the launch only.
Shapes no profile entry holds, drawn by session 26's rule:
  - broad: the first six drawn with seed 4949, whatever the profiles pick;
  - moved: the first eight of the first 4,000 drawn with seed 5050 where the swap moves either
    profile's choice (the pick is a non-persistent wgmma schedule whose twin runs the shape and
    the model counts more than one wave).
Roles: h100, h200 (each shipped profile's choice) and h100_perswap, h200_perswap (the swap), and
the model's top 8 priced for each device; the table's "fresh tune" is the best of those.
Registered rule (before timing), as for sets 26-32: on each card that runs it, the moved picks
>= 1.02x the shipped picks in geomean and none below 0.97x, for each profile. The swap ships
only with its twins gated on the device (DEST/gate_{h100,h200}.txt: every `pers` twin of a pool
`np` member the pool lacks; `forge pool` from the gate run).
  PYTHONPATH=tests/device python3 tests/device/session32_select_jobs.py DEST [--scan]
writes DEST/gate_{h100,h200}.txt and DEST/jobs.*.
Outcome (H100, 9 rounds): all 402 H100 twins passed the gate; the H100 profile's 7 moved picks
1.013x, worst 0.969x: FAILED, not shipped (reports/notes.md, session 32, item 4).
"""
import os
import re
import subprocess
import sys

from session17_select_jobs import PROFILES
from session31_pool_lists import pool
from session31_select_jobs import write_set
from session8_select_jobs import FORGE, select

SUFFIX, BROAD_SEED, MOVED_SEED = "_perswap", 4949, 5050


def persistent_twins(profile):
    """The `pers` twins of the pool's non-persistent wgmma schedules that the pool lacks."""
    have = pool(profile)
    return sorted({n.replace("_np_", "_pers_") for n in have
                   if n.startswith("wgmma") and "_np_" in n} - have)


def persistent_swap(profile, shape, pick):
    """The profile's pick for `shape`, or its `pers` twin where the pick is a non-persistent
    wgmma schedule, the twin runs the shape and the model counts more than one wave."""
    if not (pick.startswith("wgmma") and "_np_" in pick):
        return pick
    twin = pick.replace("_np_", "_pers_")
    out = subprocess.run([FORGE, "rank", "--arch", "sm_90a", "--shapes", shape, "--profile",
                          profile, "--explain", twin], check=True, capture_output=True,
                         text=True).stdout
    waves = re.search(r"([\d.]+) waves", out)
    return twin if ": valid" in out and waves and float(waves.group(1)) > 1 else pick


def main():
    dest = sys.argv[1]
    os.makedirs(dest, exist_ok=True)
    for role, p in PROFILES.items():
        names = persistent_twins(p)
        with open(os.path.join(dest, "gate_%s.txt" % role), "w") as f:
            f.write("".join(n + "\n" for n in names))
        print("%s: %d persistent twins to gate" % (role, len(names)))

    def moves(shape):
        picks = [(p, select(p, shape)) for p in PROFILES.values()]
        return any(persistent_swap(p, shape, pick) != pick for p, pick in picks)
    write_set(dest, "33", BROAD_SEED, MOVED_SEED, moves,
              lambda s: {role + SUFFIX: persistent_swap(p, s, select(p, s))
                         for role, p in PROFILES.items()})


if __name__ == "__main__":
    main()
