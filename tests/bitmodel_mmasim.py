#!/usr/bin/env python3
"""Fixtures for forge::bitmodel from MMA-Sim, the bit-accurate tensor-core model.

MMA-Sim (P. Xie et al., 2025; PyPI `mmasim`) is the oracle: this script builds seeded A (M×K)
and B (N×K), computes C = A·Bᵀ with mmasim's TF32 models for Hopper
(`WGMMA("Hopper", "m64n8k8.f32.tf32.tf32")`) and Ampere (`MMA("Ampere",
"m16n8k8.f32.tf32.tf32.f32")`, which mmasim runs as two steps of 4), and writes

    tests/fixtures/bitmodel/<case>.a.f32, .b.f32, .c.f32   raw little-endian f32
    tests/fixtures/bitmodel/<case>.json                    m, n, k, arch, rounding, ...

`tests/bitmodel.rs` then checks that the Rust model reproduces every element of C bit for bit,
with no Python in CI.

How C is formed (as forge's kernels do): K is zero-padded to a multiple of 8 (the device
zero-fills out-of-range K) and each output element chains `dpa` over the k8 chunks in
increasing K order, starting from a +0.0 accumulator. For the `nearest_even` contract the
inputs are first rounded to TF32 with round-to-nearest-even here (numpy, float64 arithmetic:
an implementation independent of the Rust bit trick); mmasim's own truncation to TF32 is then
a no-op. For `truncate`, the raw f32 inputs go to mmasim, which truncates them itself.

Setup used to run it (only PyPI was reachable; there is no CPU-only torch wheel on PyPI for
x86_64, so the default CUDA build was installed, about 3 GB with its nvidia-* wheels, a couple
of minutes; mmasim JIT-builds a small C++ extension at import, which needs ninja on PATH):

    python3 -m venv /tmp/mm
    /tmp/mm/bin/pip install torch numpy ninja mmasim==2.1.1
    PATH=/tmp/mm/bin:$PATH python tests/bitmodel_mmasim.py

Run with torch 2.15.0 and mmasim 2.1.1 on CPU. Output is deterministic (fixed seeds).
"""

import json
import os
import sys

import numpy as np
import torch

import mmasim
from mmasim.nv_ptx import MMA, WGMMA

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "bitmodel")
CHUNK = 8

OPS = {
    "hopper": ("WGMMA Hopper m64n8k8.f32.tf32.tf32", WGMMA("Hopper", "m64n8k8.f32.tf32.tf32")),
    "ampere": ("MMA Ampere m16n8k8.f32.tf32.tf32.f32", MMA("Ampere", "m16n8k8.f32.tf32.tf32.f32")),
}


def f32_from_bits(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def bits_of(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def round_tf32_rne(x):
    """Round-to-nearest-even to 10 mantissa bits, as PTX cvt.rn.tf32.f32 (NaN → 0x7FFFFFFF,
    Inf stays, overflow → Inf). Computed in float64: scale by the TF32 quantum of x's binade,
    np.rint (ties to even), scale back; the float64 → float32 cast is exact or overflows."""
    x = np.asarray(x, dtype=np.float32)
    out = np.empty_like(x)
    nan = np.isnan(x)
    inf = np.isinf(x)
    fin = ~(nan | inf)
    v = x[fin].astype(np.float64)
    _, e = np.frexp(v)  # v = m·2^e, 0.5 ≤ |m| < 1, so the leading bit is 2^(e−1)
    lead = np.maximum(e - 1, -126)  # subnormals share the quantum of 2⁻¹²⁶
    quantum = np.ldexp(1.0, lead - 10)
    r = np.rint(v / quantum) * quantum
    with np.errstate(over="ignore"):
        out[fin] = r.astype(np.float32)
    out[inf] = x[inf]
    out[nan] = f32_from_bits(0x7FFFFFFF)
    return out


def round_tf32_rne_bits(x):
    """The same rounding by integer arithmetic, to cross-check round_tf32_rne."""
    b = bits_of(x).astype(np.uint64)
    r = ((b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000).astype(np.uint32)
    r[np.isnan(np.asarray(x, dtype=np.float32))] = 0x7FFFFFFF
    return r.view(np.float32)


def mmasim_gemm(op, a, b):
    """C = A·Bᵀ with op.dpa chained over zero-padded k8 chunks from C = +0."""
    m, k = a.shape
    n = b.shape[0]
    kp = -(-k // CHUNK) * CHUNK
    ap = np.zeros((m, kp), np.float32)
    bp = np.zeros((n, kp), np.float32)
    ap[:, :k] = a
    bp[:, :k] = b
    at = torch.from_numpy(ap)
    bt = torch.from_numpy(bp)
    c = torch.zeros((m, n), dtype=torch.float32)
    for s in range(0, kp, CHUNK):
        av = at[:, None, s : s + CHUNK].expand(m, n, CHUNK).contiguous()
        bv = bt[None, :, s : s + CHUNK].expand(m, n, CHUNK).contiguous()
        c = op.dpa(av, bv, c)
        assert c.dtype == torch.float32 and c.shape == (m, n)
    return c.numpy().copy()


# ---------------------------------------------------------------- input sets


def uniform(rng, shape):
    # 24 random bits in [-1, 1), like forge's reference inputs.
    return (rng.integers(0, 1 << 24, size=shape) * (2.0 / (1 << 24)) - 1.0).astype(np.float32)


def from_parts(rng, shape, exp_lo, exp_hi):
    """sign·(1 + random 23-bit fraction)·2^e, e uniform in [exp_lo, exp_hi] (normal f32)."""
    sign = rng.integers(0, 2, size=shape, dtype=np.uint32) << 31
    e = rng.integers(exp_lo, exp_hi + 1, size=shape) + 127
    frac = rng.integers(0, 1 << 23, size=shape, dtype=np.uint32)
    return f32_from_bits(sign | (e.astype(np.uint32) << 23) | frac)


def subnormals(rng, shape):
    sign = rng.integers(0, 2, size=shape, dtype=np.uint32) << 31
    frac = rng.integers(1, 1 << 23, size=shape, dtype=np.uint32)
    return f32_from_bits(sign | frac)


def with_low_bits(rng, x, choices):
    """Replace the 13 bits TF32 drops with one of `choices` (ties, just above/below)."""
    low = np.asarray(choices, dtype=np.uint32)[rng.integers(0, len(choices), size=x.shape)]
    return f32_from_bits((bits_of(x) & 0xFFFFE000) | low)


SPECIAL_BITS = [
    0x00000000, 0x80000000,  # ±0
    0x7F800000, 0xFF800000,  # ±Inf
    0x7FC00000, 0xFFC00000, 0x7FFFFFFF,  # quiet NaNs
    0x7F800001, 0xFF801FFF,  # NaNs with payload only in the low 13 bits (Inf once truncated)
    0x7F801000,  # NaN, low bits a tie
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FF000, 0x7F7FE000,  # MAX, the RNE-overflow tie, TF32 MAX
    0x00000001, 0x00001000, 0x00002000, 0x00003000, 0x007FF000, 0x807FFFFF,  # subnormal edges
    0x00800000, 0x3F801000, 0x3F803000, 0x3FFFF000, 0xBF803000,  # min normal, ties, carries
]


def special(rng, shape):
    """Mostly ordinary values with a sprinkling of every special class."""
    x = uniform(rng, shape)
    u = rng.random(shape)

    def pick(lo, hi):
        return (u >= lo) & (u < hi)

    signed_zero = f32_from_bits(np.where(rng.random(shape) < 0.5, 0, 0x80000000).astype(np.uint32))
    signed_inf = f32_from_bits(np.where(rng.random(shape) < 0.5, 0x7F800000, 0xFF800000).astype(np.uint32))
    table = f32_from_bits(np.asarray(SPECIAL_BITS, dtype=np.uint32))
    x = np.where(pick(0.50, 0.60), from_parts(rng, shape, -126, 60), x)
    x = np.where(pick(0.60, 0.61), from_parts(rng, shape, 60, 127), x)  # some overflow
    x = np.where(pick(0.62, 0.70), subnormals(rng, shape), x)
    x = np.where(pick(0.70, 0.78), signed_zero, x)
    x = np.where(pick(0.78, 0.90), with_low_bits(rng, x, [0x1000, 0x0FFF, 0x1001]), x)
    x = np.where(pick(0.90, 0.915), table[rng.integers(0, len(table), size=shape)], x)
    # Rare Infs and NaNs so that most outputs stay finite.
    x = np.where(pick(0.915, 0.918), signed_inf, x)
    x = np.where(pick(0.918, 0.920), f32_from_bits(np.uint32(0x7F800001)), x)
    x = np.where(pick(0.920, 0.922), f32_from_bits(np.uint32(0xFFC00000)), x)
    return x.astype(np.float32)


def make_inputs(kind, rng, m, n, k):
    if kind == "uniform":
        return uniform(rng, (m, k)), uniform(rng, (n, k))
    if kind == "wide":  # wide exponent range, occasional overflow
        return from_parts(rng, (m, k), -100, 66), from_parts(rng, (n, k), -100, 66)
    if kind == "tiny":  # products between 2⁻¹⁷⁰ and 2⁻¹²⁴: subnormal and zero results
        lo = -85 if k > 8 else -88
        return from_parts(rng, (m, k), lo, -62), from_parts(rng, (n, k), lo, -62)
    if kind == "subnormal":  # subnormal A against large B, and a few normal A
        a = subnormals(rng, (m, k))
        a = np.where(rng.random((m, k)) < 0.2, uniform(rng, (m, k)) * np.float32(2.0**-120), a)
        return a.astype(np.float32), from_parts(rng, (n, k), 60, 126)
    if kind == "cancel":  # second half ≈ −(first half): heavy cancellation, tiny results
        h = k // 2
        a0 = uniform(rng, (m, h))
        b0 = uniform(rng, (n, h))
        pert = (1.0 + uniform(rng, (m, h)).astype(np.float64) * 2.0**-12).astype(np.float32)
        return np.concatenate([a0, a0 * pert], 1), np.concatenate([b0, -b0], 1)
    if kind == "ties":  # every input sits on, just below or just above a TF32 rounding boundary
        lows = [0x1000, 0x0FFF, 0x1001, 0x1FFF, 0x0001]
        return with_low_bits(rng, uniform(rng, (m, k)), lows), with_low_bits(rng, uniform(rng, (n, k)), lows)
    if kind == "special":
        return special(rng, (m, k)), special(rng, (n, k))
    raise ValueError(kind)


# (input set, m, n, k): small K tails, a long K, a wide output, and the special sets.
CASES = [
    ("uniform", 8, 8, 1),
    ("uniform", 8, 8, 7),
    ("uniform", 8, 8, 9),
    ("uniform", 8, 8, 64),
    ("uniform", 2, 3, 1025),
    ("uniform", 48, 48, 12),
    ("wide", 12, 12, 24),
    ("tiny", 12, 12, 19),
    ("tiny", 16, 16, 6),
    ("subnormal", 12, 12, 16),
    ("cancel", 12, 12, 32),
    ("ties", 12, 12, 20),
    ("special", 24, 24, 13),
    ("special", 8, 8, 37),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    total_elems = 0
    total_bytes = 0
    for ci, (kind, m, n, k) in enumerate(CASES):
        seed = 1000 + ci
        rng = np.random.default_rng(seed)
        a, b = make_inputs(kind, rng, m, n, k)
        assert a.dtype == np.float32 and b.dtype == np.float32
        for rounding in ("truncate", "nearest_even"):
            if rounding == "nearest_even":
                ar, br = round_tf32_rne(a), round_tf32_rne(b)
                for x, xr in ((a, ar), (b, br)):
                    assert np.array_equal(bits_of(xr), bits_of(round_tf32_rne_bits(x))), "RNE paths disagree"
            else:
                ar, br = a, b
            for arch, (op_name, op) in OPS.items():
                c = mmasim_gemm(op, ar, br)
                name = f"{arch}_{rounding}_{kind}_m{m}n{n}k{k}"
                base = os.path.join(OUT, name)
                # The fixture keeps the raw (unrounded) inputs: the model applies `rounding`.
                for suffix, arr in (("a", a), ("b", b), ("c", c)):
                    arr.astype("<f4").tofile(f"{base}.{suffix}.f32")
                    total_bytes += arr.size * 4
                meta = {
                    "m": m, "n": n, "k": k,
                    "arch": arch,
                    "rounding": rounding,
                    "inputs": kind,
                    "seed": seed,
                    "oracle": f"mmasim {mmasim_version()} {op_name}, dpa chained over zero-padded k8 chunks from +0",
                    "nan_outputs": int(np.isnan(c).sum()),
                    "inf_outputs": int(np.isinf(c).sum()),
                    "zero_outputs": int((c == 0).sum()),
                    "subnormal_outputs": int(((c != 0) & (np.abs(c) < np.float32(2.0**-126))).sum()),
                }
                with open(base + ".json", "w") as fh:
                    json.dump(meta, fh, indent=1, sort_keys=True)
                    fh.write("\n")
                total_elems += c.size
                print(f"{name}: {c.size} elements, nan {meta['nan_outputs']}, inf {meta['inf_outputs']}, "
                      f"zero {meta['zero_outputs']}, subnormal {meta['subnormal_outputs']}")
    print(f"{total_elems} C elements, {total_bytes} bytes of f32 data in {OUT}")
    assert total_bytes < 300_000, "fixtures too large"


def mmasim_version():
    try:
        from importlib.metadata import version
        return version("mmasim")
    except Exception:  # pragma: no cover
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
