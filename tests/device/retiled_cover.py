#!/usr/bin/env python3
"""CPU: the retiled tail's unit decode (kernels/common.cuh: forge_rt_unit, forge_rt_narrow,
forge_swizzle, forge_inward) and the epilogue's own-origin bounds (kernels/wgmma_tf32.cu),
written again in Python, store every element of C exactly once, on aligned, ragged and
all-narrow shapes. A check of the design, not of the CUDA: the GPU test (tests/gpu.rs,
retiled_tail_is_bit_identical_and_reruns_identically) checks the kernel. Needs numpy.
    python3 tests/device/retiled_cover.py"""
import math

import numpy as np


def inward(origin, tile, extent):
    """forge_inward: a tile that would overhang starts at extent - tile instead."""
    return extent - tile if origin + tile > extent and extent >= tile else origin


def swizzle(t, tiles_m, tiles_n, group, raster_n):
    """forge_swizzle: unit t -> (tm, tn)."""
    group = max(group, 1)
    major, minor = (tiles_m, tiles_n) if raster_n else (tiles_n, tiles_m)
    band = group * minor
    first = (t // band) * group
    size = min(major - first, group)
    a, b = first + (t % band) % size, (t % band) // size
    return (a, b) if raster_n else (b, a)


def stores(m, n, bm, bn, tail_bn, rows, group, raster_n):
    """How many times each element of C is stored by a launch that retiles `rows` tile-rows."""
    tiles_m, tiles_n = math.ceil(m / bm), math.ceil(n / bn)
    rows = min(max(rows, 0), tiles_m)
    main_rows = tiles_m - rows
    main, tail_n = main_rows * tiles_n, math.ceil(n / tail_bn)
    count = np.zeros((m, n), np.int32)
    for u in range(main + rows * tail_n):
        if u < main:
            tm, tn = swizzle(u, main_rows, tiles_n, group, raster_n)
        else:
            tm, tn = main_rows + (u - main) // tail_n, (u - main) % tail_n
        width = tail_bn if tm >= tiles_m - rows else bn
        own_r0, own_c0 = tm * bm, tn * width
        r0, c0 = inward(own_r0, bm, m), inward(own_c0, width, n)
        count[max(r0, own_r0):min(r0 + bm, m), max(c0, own_c0):min(c0 + width, n)] += 1
    return count


CASES = [  # m, n, bm, bn, rows, group, raster_n
    (6144, 6144, 128, 256, 4, 8, 1),
    (6000, 6100, 128, 256, 3, 8, 1),
    (2500, 6000, 128, 224, 11, 4, 0),
    (1900, 2900, 128, 128, 4, 2, 1),
    (1900, 2901, 128, 128, 4, 1, 1),
    (1000, 1000, 128, 128, 8, 1, 1),  # every tile-row narrow
    (300, 700, 128, 256, 3, 1, 1),
    (5000, 5000, 128, 200, 14, 16, 1),
]
bad = 0
for m, n, bm, bn, rows, group, raster_n in CASES:
    tail_bn = (bn * 3 // 4) // 8 * 8
    c = stores(m, n, bm, bn, tail_bn, rows, group, raster_n)
    print(f"{m}x{n} {bm}x{bn} (narrow {tail_bn}) rows {rows}: stored {c.min()}..{c.max()} times")
    bad += (c.min(), c.max()) != (1, 1)
print("shapes with an element stored other than once:", bad)
raise SystemExit(1 if bad else 0)
