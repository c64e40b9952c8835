"""Session 16, issue #13: held-out set 11 for session10_select.sh (CPU), written before any of
these choices was timed. Ten shapes no profile entry, calibration or selection screen has held
(one-wave deep K, medium, short K, LLM linears, tall-skinny, K % 4 != 0), each job holding
  h100_wide  the H100 profile's choice after its pool was widened with calibration set 10
             (profiles/sm_90a-h100.toml at this commit; reports/2026-12-05-h100-session16);
  h100_s15   the same profile as session 15 shipped it (pool of 589; git show bfa69f8:…);
  h200       the H200 profile's choice as shipped before session 16 (session 7's suite and a
             pool of 3,950; git show 2ad9ce7:profiles/sm_90a-h200.toml);
  h200_s16   the H200 profile tuned again in session 16 (profiles/sm_90a-h200.toml, pool 4,957:
             calibration sets 1-4, 9, 10 and its suite run), added after that tune, before any
             timing of set 11;
  h100_pp    h100_wide's pool ranked with the ping-pong lone-tile hypothesis (model-pp.toml:
             `pingpong_lone_tile_factor` 1.02, shipped 1), added before any timing;
and the model's top 8 priced for the H100, then for the H200 (what a fresh tune times first),
split-K excluded.
  PYTHONPATH=tests/device python3 tests/device/session16_select_jobs.py DEST H100_S15_TOML H200_S7_TOML
"""
import sys

from session8_select_jobs import select, write_jobs
from session15_select_jobs import held_out_job

SET11 = ("1152x1408x8192 960x1920x12288 2432x2432x3072 3072x2560x4096 4096x3072x768 "
         "2816x5120x1280 2048x11008x4096 512x4096x11008 8192x256x4096 777x1999x1501")


def main():
    dest, h100_s15, h200_s7 = sys.argv[1:4]
    profiles = {"h100_wide": "profiles/sm_90a-h100.toml", "h100_s15": h100_s15,
                "h200": h200_s7, "h200_s16": "profiles/sm_90a-h200.toml"}
    ranked_by = (profiles["h100_wide"], profiles["h200_s16"])
    jobs = [held_out_job("11", s, profiles, ranked_by, 8, {
        "h100_pp": select(profiles["h100_wide"], s, model=dest + "/model-pp.toml")})
        for s in SET11.split()]
    write_jobs(dest, jobs)


if __name__ == "__main__":
    main()
