"""Session 20, issue #13 (CPU): the overhang probe for session10_select.sh. A wgmma tile larger
than M keeps its overhang (kernels/common.cuh `forge_inward`) and its TMA box zero-fills the rows
past M; the tall-tile probe (session19_tall_tile_jobs.py) showed 256x128 tiles losing up to 57%
there at 128 CTAs. These shapes separate the overhang from the CTA count: the same three
`swz1c_pers` kernels at M = 64, 96, 128 and 256 with 32, 64 and 128 CTAs of 256x128 tiles
(N = 4096, 8192, 16384; K = 4096). No roles. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session20_oob_jobs.py DEST
"""
import sys

from session8_select_jobs import write_jobs

SHAPES = ("64x4096x4096 64x8192x4096 96x16384x4096 128x4096x4096 256x4096x4096 256x8192x4096 "
          "128x8192x4096")
KERNELS = ("256x128x32_s4_wg2", "128x128x32_s6_wg2", "64x128x32_s7_wg1")


def main():
    top = [f"wgmma_tf32_{k}_swz1c_pers_c1_k1" for k in KERNELS]
    write_jobs(sys.argv[1], [dict(shape=s, set="oob", roles={}, top=top) for s in SHAPES.split()])


if __name__ == "__main__":
    main()
