//! A bit-exact CPU model of the TF32 tensor-core GEMM C = A·Bᵀ (std only).
//!
//! The arithmetic follows MMA-Sim (P. Xie et al., 2025; PyPI package `mmasim` 2.1.1,
//! `mmasim/arithmetic/fdpa.py`, `t_fdpa` / `MMA_T_FDPA`, with the per-architecture tables in
//! `mmasim/nv_ptx/sim.py`). On an H200, `nv_ptx.sim.WGMMA("Hopper",
//! "m64n8k8.f32.tf32.tf32").dpa` chained over K reproduces forge's device output bit for bit;
//! this module is an independent integer re-implementation of that model, checked against
//! mmasim by the fixtures in `tests/fixtures/bitmodel` (`tests/bitmodel_mmasim.py` makes them,
//! `tests/bitmodel.rs` checks them).
//!
//! # The model
//! One output element accumulates its K products in chunks of [`MmaParams::group`] (8 on
//! Hopper, 4 on Ampere) in increasing K order, into one f32 accumulator `c` that starts at
//! +0.0. A K tail shorter than a group is zero-padded. One chunk is one fused step:
//!
//! 1. **Inputs.** A and B are first rounded to TF32 with [`round_tf32`] (the tensor core itself
//!    ignores the low 13 bits, i.e. truncates; the `NearestEven` contract rounds before).
//! 2. **Decomposition.** Every finite value x is written as x = s·2ᵉ with 1 ≤ |s| < 2 when x is
//!    normal, and e = −126, |s| < 1 when x is subnormal (subnormals are kept, never flushed).
//!    A product aᵢ·bᵢ is the exact pair (sₐ·s_b, eₐ + e_b), so its significand lies in [1, 4)
//!    for normal operands and is not renormalized. The accumulator c contributes (s_c, e_c).
//! 3. **Zeros.** A term whose significand is zero (a zero operand, a zero-padded slot, or
//!    c = ±0) gets the fixed exponent [`MmaParams::zero_exponent`] (−133 Hopper, −132 Ampere).
//!    It adds nothing, but it takes part in the maximum below. A non-zero c has e_c ≥ −126,
//!    so e_max ≥ zero exponent in every step: it only bounds how fine the window gets for
//!    tiny sums (e.g. with c = 0, Hopper keeps nothing below 2⁻¹⁵⁸). For the same reason a
//!    zero-padded K tail gives the same result as a shorter group.
//! 4. **Alignment.** e_max is the largest exponent of the group+1 terms. Each term's
//!    significand is scaled by 2^(e − e_max) and truncated toward zero to
//!    [`MmaParams::fraction_bits`] fractional bits (25 Hopper, 24 Ampere): no guard, round or
//!    sticky bits survive. The truncated terms are summed exactly.
//! 5. **Rounding.** The exact sum S·2^(e_max − F) is normalized once and rounded toward zero
//!    to f32: 24 significant bits for normal results, multiples of 2⁻¹⁴⁹ for subnormal
//!    results. A result of 2¹²⁸ or more becomes ±Inf (not ±MAX as IEEE round-toward-zero
//!    would give). A zero result is always +0.0, whatever the signs of the terms.
//! 6. **Special values.** After the TF32 rounding, NaN in any input or in c, Inf·0, or Infs of
//!    both signs among the products and c give NaN, always returned as 0x7FFF_FFFF; otherwise
//!    any Inf gives that Inf. Truncating a NaN whose payload sits only in the low 13 bits
//!    (e.g. 0x7F80_0001) leaves an Inf, which the model then treats as Inf.
//!
//! Ampere (`mma.sync` on sm_80) differs only in the parameters: groups of 4, 24 fractional
//! bits, zero exponent −132 ([`AMPERE`]). Hopper (`wgmma`, and per mmasim also `mma.sync`
//! m16n8k8 run on sm_90) uses groups of 8, 25 bits, −133 ([`HOPPER`]).
//!
//! # What is not modelled
//! Other input types (f16, bf16, fp8), f16 accumulators, `mma.sync` m16n8k4 (a group of 4 on
//! Hopper), split-K or any other reduction order than one accumulator per element walking K
//! upwards, and NaN payloads (every NaN output is 0x7FFF_FFFF; the NaN that
//! `cvt.rn.tf32.f32` returns is taken to be 0x7FFF_FFFF too, which only matters as "a NaN").
//! The Hopper parameters are device-validated (forge on an H200, through mmasim); the Ampere
//! parameters are mmasim's tables, checked here against mmasim only, not against an sm_80.

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::path::Path;

/// How A and B are rounded to TF32 before the tensor cores see them: the numerical
/// contract's rounding ([`crate::contract::Rounding`]).
pub use crate::contract::Rounding as InputRounding;

/// Tensor-core parameters of the fused dot-product-add step (MMA-Sim's `L_max`, `F`,
/// `e_zero` for TF32 inputs and an f32 accumulator, rounded toward zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmaParams {
    /// Products fused per step (MMA-Sim `L_max` = bytes per step / 4).
    pub group: usize,
    /// Fractional bits each aligned term keeps after truncation (MMA-Sim `F`).
    pub fraction_bits: u32,
    /// Exponent given to zero terms (MMA-Sim `e_zero` for an f32 output).
    pub zero_exponent: i32,
}

/// The parameters for an NVRTC target forge compiles for, where the model knows them: Hopper
/// (device-validated on an H200) and Ampere sm_80/sm_86 (MMA-Sim's tables, not validated on
/// a device by forge). None for targets MMA-Sim's tables do not give forge (Ada, Blackwell).
pub fn params_for_arch(arch: &str) -> Option<MmaParams> {
    match arch {
        "sm_90a" | "sm_90" => Some(HOPPER),
        "sm_80" | "sm_86" => Some(AMPERE),
        _ => None,
    }
}

/// Hopper (sm_90) TF32 `wgmma`: 8 products per step, 25 fractional bits, zeros at 2⁻¹³³.
pub const HOPPER: MmaParams = MmaParams {
    group: 8,
    fraction_bits: 25,
    zero_exponent: -133,
};

/// Ampere (sm_80) TF32 `mma.sync`: 4 products per step, 24 fractional bits, zeros at 2⁻¹³².
pub const AMPERE: MmaParams = MmaParams {
    group: 4,
    fraction_bits: 24,
    zero_exponent: -132,
};

/// The NaN every NaN result is returned as.
pub const CANONICAL_NAN_BITS: u32 = 0x7FFF_FFFF;

/// The low f32 mantissa bits that TF32 drops.
const TF32_LOW_MASK: u32 = 0x1FFF;

/// Rounds `x` to TF32 (10 mantissa bits), returned as the f32 with the low 13 bits zero.
/// A NaN input gives 0x7FFF_FFFF under `NearestEven` (any NaN behaves the same in the model)
/// and keeps its bits, low 13 cleared, under `Truncate` (which may turn it into an Inf).
pub fn round_tf32(x: f32, rounding: InputRounding) -> f32 {
    let bits = x.to_bits();
    match rounding {
        InputRounding::Truncate => f32::from_bits(bits & !TF32_LOW_MASK),
        InputRounding::NearestEven => {
            if x.is_nan() {
                return f32::from_bits(CANONICAL_NAN_BITS);
            }
            // Adding half an ulp minus one, plus the kept lsb, carries exactly when the dropped
            // part is above half or is a tie with an odd kept part. A carry out of the mantissa
            // bumps the exponent (subnormal to normal, MAX to Inf) as it should; |x| ≤ Inf
            // keeps the sum below 2³².
            let lsb = (bits >> 13) & 1;
            f32::from_bits((bits + 0x0FFF + lsb) & !TF32_LOW_MASK)
        }
    }
}

/// A finite f32 as (negative, significand integer m, exponent e): |x| = m·2^(e − 23), with
/// m ≥ 2²³ for normals and e = −126, m < 2²³ for subnormals and zeros.
fn decode(x: f32) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let negative = bits >> 31 != 0;
    let biased = ((bits >> 23) & 0xFF) as i32;
    let fraction = (bits & 0x7F_FFFF) as u64;
    if biased == 0 {
        (negative, fraction, -126)
    } else {
        (negative, fraction | (1 << 23), biased - 127)
    }
}

/// One term of a fused step: |value| = sig·2^(exp − scale), exp being the alignment exponent.
#[derive(Clone, Copy)]
struct Term {
    negative: bool,
    sig: u64,
    scale: i32,
    exp: i32,
}

fn product_term(a: f32, b: f32, zero_exponent: i32) -> Term {
    let (na, ma, ea) = decode(a);
    let (nb, mb, eb) = decode(b);
    let sig = ma * mb; // < 2⁴⁸, exact
    Term {
        negative: na != nb,
        sig,
        scale: 46,
        exp: if sig == 0 { zero_exponent } else { ea + eb },
    }
}

fn accumulator_term(c: f32, zero_exponent: i32) -> Term {
    let (negative, sig, e) = decode(c);
    Term {
        negative,
        sig,
        scale: 23,
        exp: if sig == 0 { zero_exponent } else { e },
    }
}

/// trunc(v·2^shift) toward zero, for an integer v.
fn shift_truncate(v: u128, shift: i32) -> u128 {
    if shift >= 0 {
        v << shift as u32
    } else if shift <= -128 {
        0
    } else {
        v >> (-shift) as u32
    }
}

/// IEEE special-value outcome of a step, if any operand or c is NaN or Inf.
fn special_result(a: &[f32], b: &[f32], c: f32) -> Option<f32> {
    let nan = f32::from_bits(CANONICAL_NAN_BITS);
    let (mut pos_inf, mut neg_inf) = (false, false);
    let mut note_inf = |negative: bool| {
        if negative {
            neg_inf = true
        } else {
            pos_inf = true
        }
    };
    if c.is_nan() {
        return Some(nan);
    }
    if c.is_infinite() {
        note_inf(c.is_sign_negative());
    }
    for (&x, &y) in a.iter().zip(b) {
        if x.is_nan() || y.is_nan() {
            return Some(nan);
        }
        if x.is_infinite() || y.is_infinite() {
            if x == 0.0 || y == 0.0 {
                return Some(nan);
            }
            note_inf(x.is_sign_negative() != y.is_sign_negative());
        }
    }
    match (pos_inf, neg_inf) {
        (true, true) => Some(nan),
        (true, false) => Some(f32::INFINITY),
        (false, true) => Some(f32::NEG_INFINITY),
        (false, false) => None,
    }
}

/// Rounds sign·mag·2^exp toward zero to f32 (subnormals kept, ≥ 2¹²⁸ → Inf, 0 → +0.0).
fn round_toward_zero_f32(negative: bool, mag: u128, exp: i32) -> f32 {
    if mag == 0 {
        return 0.0;
    }
    let msb = 127 - mag.leading_zeros() as i32;
    let lead = msb + exp; // exponent of the leading bit
    let sign = if negative { 1u32 << 31 } else { 0 };
    if lead > 127 {
        return f32::from_bits(sign | 0x7F80_0000);
    }
    let bits = if lead >= -126 {
        let m = shift_truncate(mag, 23 - msb); // 24 bits, leading one at bit 23
        (((lead + 127) as u32) << 23) | (m as u32 & 0x7F_FFFF)
    } else {
        shift_truncate(mag, exp + 149) as u32 // multiples of 2⁻¹⁴⁹, < 2²³
    };
    if bits == 0 {
        return 0.0; // underflowed to zero: always +0.0
    }
    f32::from_bits(sign | bits)
}

/// One fused dot-product-add step: c + Σ aᵢ·bᵢ over one group, as the tensor core computes
/// it. `a` and `b` must already be TF32 values (low 13 bits zero, or NaN) of equal length;
/// slices shorter than `params.group` are treated as zero-padded to the group.
pub fn fused_step(a: &[f32], b: &[f32], c: f32, params: &MmaParams) -> f32 {
    assert_eq!(a.len(), b.len(), "fused_step: a and b differ in length");
    debug_assert!(
        a.iter()
            .chain(b)
            .all(|x| x.is_nan() || x.to_bits() & TF32_LOW_MASK == 0),
        "fused_step: inputs must be TF32 values"
    );
    assert!(
        params.fraction_bits <= 64,
        "fused_step: fraction_bits above 64 is not supported"
    );
    if let Some(special) = special_result(a, b, c) {
        return special;
    }
    let f = params.fraction_bits as i32;
    let z = params.zero_exponent;
    let acc = accumulator_term(c, z);
    let mut e_max = acc.exp;
    if a.len() < params.group {
        e_max = e_max.max(z); // the zero-padded slots
    }
    for (&x, &y) in a.iter().zip(b) {
        e_max = e_max.max(product_term(x, y, z).exp);
    }
    let aligned = |t: Term| -> i128 {
        let v = shift_truncate(t.sig as u128, t.exp - e_max + f - t.scale) as i128;
        if t.negative { -v } else { v }
    };
    let mut sum = aligned(acc);
    for (&x, &y) in a.iter().zip(b) {
        sum += aligned(product_term(x, y, z));
    }
    round_toward_zero_f32(sum < 0, sum.unsigned_abs(), e_max - f)
}

/// One output element: Σₖ a[k]·b[k] with `params.group` products per step in increasing K
/// order, from a +0.0 accumulator, inputs first rounded with `rounding`. A K tail that is not
/// a multiple of the group is zero-padded. An empty K gives +0.0.
pub fn dot(a: &[f32], b: &[f32], params: &MmaParams, rounding: InputRounding) -> f32 {
    assert_eq!(a.len(), b.len(), "dot: a and b differ in length");
    assert!(params.group > 0, "dot: group must be positive");
    let g = params.group;
    let mut ra = vec![0.0f32; g];
    let mut rb = vec![0.0f32; g];
    let mut c = 0.0f32;
    for start in (0..a.len()).step_by(g) {
        let end = (start + g).min(a.len());
        for slot in 0..g {
            let kk = start + slot;
            (ra[slot], rb[slot]) = if kk < end {
                (round_tf32(a[kk], rounding), round_tf32(b[kk], rounding))
            } else {
                (0.0, 0.0)
            };
        }
        c = fused_step(&ra, &rb, c, params);
    }
    c
}

/// C[i][j] for row-major A (M×K) and B (N×K), C = A·Bᵀ.
pub fn element(
    a: &[f32],
    b: &[f32],
    k: usize,
    i: usize,
    j: usize,
    params: &MmaParams,
    rounding: InputRounding,
) -> f32 {
    dot(
        &a[i * k..(i + 1) * k],
        &b[j * k..(j + 1) * k],
        params,
        rounding,
    )
}

/// The whole M×N row-major C = A·Bᵀ under the model.
pub fn matmul(
    a: &[f32],
    b: &[f32],
    m: usize,
    n: usize,
    k: usize,
    params: &MmaParams,
    rounding: InputRounding,
) -> Vec<f32> {
    assert_eq!(a.len(), m * k, "matmul: A is not M×K");
    assert_eq!(b.len(), n * k, "matmul: B is not N×K");
    let mut c = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            c.push(element(a, b, k, i, j, params, rounding));
        }
    }
    c
}

/// How many mismatches [`check_sampled`] records.
pub const MAX_RECORDED_MISMATCHES: usize = 16;

/// Result of comparing device output with the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BitCheck {
    /// Positions compared.
    pub checked: usize,
    /// Positions whose bits agree.
    pub equal: usize,
    /// The first mismatches in row-major order (up to [`MAX_RECORDED_MISMATCHES`]):
    /// (i, j, device bits, model bits).
    pub first_mismatches: Vec<(usize, usize, u32, u32)>,
}

impl BitCheck {
    /// Every compared position agrees (and at least one was compared).
    pub fn all_equal(&self) -> bool {
        self.checked > 0 && self.equal == self.checked
    }
}

/// splitmix64.
fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// `samples` distinct positions in 0..total, sorted; all of them when samples ≥ total.
fn sample_positions(total: usize, samples: usize, seed: u64) -> Vec<usize> {
    if samples >= total {
        return (0..total).collect();
    }
    let mut state = seed;
    let mut next = |bound: usize| {
        state = state.wrapping_add(1);
        (mix64(state) % bound as u64) as usize
    };
    let mut picked: Vec<usize> = if samples.saturating_mul(2) >= total {
        // Dense: partial Fisher–Yates.
        let mut all: Vec<usize> = (0..total).collect();
        for t in 0..samples {
            let r = t + next(total - t);
            all.swap(t, r);
        }
        all.truncate(samples);
        all
    } else {
        let mut seen = HashSet::with_capacity(samples);
        let mut out = Vec::with_capacity(samples);
        while out.len() < samples {
            let p = next(total);
            if seen.insert(p) {
                out.push(p);
            }
        }
        out
    };
    picked.sort_unstable();
    picked
}

/// Compares device output `c` (M×N row-major) with the model at `samples` distinct
/// pseudo-random positions drawn from `seed` (every position when samples ≥ M·N). Equality
/// is bitwise, so a NaN matches only the same NaN bits and −0.0 differs from +0.0.
#[allow(clippy::too_many_arguments)]
pub fn check_sampled(
    a: &[f32],
    b: &[f32],
    c: &[f32],
    m: usize,
    n: usize,
    k: usize,
    samples: usize,
    seed: u64,
    params: &MmaParams,
    rounding: InputRounding,
) -> BitCheck {
    assert_eq!(a.len(), m * k, "check_sampled: A is not M×K");
    assert_eq!(b.len(), n * k, "check_sampled: B is not N×K");
    assert_eq!(c.len(), m * n, "check_sampled: C is not M×N");
    let mut check = BitCheck::default();
    for p in sample_positions(m * n, samples, seed) {
        let (i, j) = (p / n, p % n);
        let device = c[p].to_bits();
        let model = element(a, b, k, i, j, params, rounding).to_bits();
        check.checked += 1;
        if device == model {
            check.equal += 1;
        } else if check.first_mismatches.len() < MAX_RECORDED_MISMATCHES {
            check.first_mismatches.push((i, j, device, model));
        }
    }
    check
}

/// Reads raw little-endian f32 values (no header).
pub fn read_f32_file(path: impl AsRef<Path>) -> io::Result<Vec<f32>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path.as_ref())?.read_to_end(&mut bytes)?;
    if bytes.len() % 4 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: {} bytes is not a whole number of f32 values",
                path.as_ref().display(),
                bytes.len()
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}

/// Writes raw little-endian f32 values (no header).
pub fn write_f32_file(path: impl AsRef<Path>, values: &[f32]) -> io::Result<()> {
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::File::create(path)?.write_all(&bytes)
}

#[cfg(test)]
mod tests {
    //! Every expected value here is derived by hand from the algorithm in the module docs
    //! (the derivation is in the comment next to it), never taken from the model's output.
    use super::*;
    use InputRounding::{NearestEven, Truncate};

    /// Exactly 2^e for −149 ≤ e ≤ 127.
    fn p2(e: i32) -> f32 {
        assert!((-149..=127).contains(&e));
        if e >= -126 {
            f32::from_bits(((e + 127) as u32) << 23)
        } else {
            f32::from_bits(1 << (e + 149))
        }
    }

    fn fb(bits: u32) -> f32 {
        f32::from_bits(bits)
    }

    fn dot_bits(a: &[f32], b: &[f32], params: &MmaParams) -> u32 {
        dot(a, b, params, Truncate).to_bits()
    }

    fn ones(k: usize) -> Vec<f32> {
        vec![1.0; k]
    }

    const NAN: u32 = CANONICAL_NAN_BITS;
    const ONE_MINUS_ULP: u32 = 0x3F7F_FFFF; // 1 − 2⁻²⁴

    #[test]
    fn parameters_match_mmasim_tables() {
        // sim.py: WGMMA tf32 → F = 25, L_max = 32 // 4, e_zero = −133 (f32 output);
        // MMA Ampere → F = 24, L_max = 16 // 4, e_zero = −132.
        assert_eq!(
            (HOPPER.group, HOPPER.fraction_bits, HOPPER.zero_exponent),
            (8, 25, -133)
        );
        assert_eq!(
            (AMPERE.group, AMPERE.fraction_bits, AMPERE.zero_exponent),
            (4, 24, -132)
        );
    }

    #[test]
    fn exact_small_sums() {
        // 1.5·2 + 2·(−0.25) = 2.5, all terms exact.
        assert_eq!(dot(&[1.5, 2.0], &[2.0, -0.25], &HOPPER, Truncate), 2.5);
        assert_eq!(dot(&[3.0], &[-0.5], &AMPERE, Truncate), -1.5);
        assert_eq!(dot(&[], &[], &HOPPER, Truncate).to_bits(), 0);
    }

    #[test]
    fn small_integers_are_exact_at_any_k() {
        // Independent oracle: products of integers |x| ≤ 63 and their sums (< 2²⁴) are exact,
        // so every truncation step is lossless and the result is the integer sum.
        let mut state = 7u64;
        for &k in &[1usize, 3, 7, 8, 9, 31, 64, 100, 1025] {
            let mut next = || {
                state = mix64(state);
                (state % 127) as i64 - 63
            };
            let a: Vec<i64> = (0..k).map(|_| next()).collect();
            let b: Vec<i64> = (0..k).map(|_| next()).collect();
            let exact: i64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let af: Vec<f32> = a.iter().map(|&x| x as f32).collect();
            let bf: Vec<f32> = b.iter().map(|&x| x as f32).collect();
            for params in [&HOPPER, &AMPERE] {
                for r in [Truncate, NearestEven] {
                    let got = dot(&af, &bf, params, r);
                    // +0.0 for a zero sum, never −0.0.
                    assert_eq!(got.to_bits(), (exact as f32).to_bits(), "k={k}");
                }
            }
        }
    }

    #[test]
    fn alignment_truncates_each_term_without_sticky_bits() {
        // Hopper: 1 − 1.5·2⁻²⁵ − 1.5·2⁻²⁵. e_max = 0, each small term keeps 25 fractional
        // bits: trunc(−1.5) = −1 each, S = 2²⁵ − 2, value 1 − 2⁻²⁴ exactly (0x3F7FFFFF).
        // The exact sum 1 − 3·2⁻²⁵ rounded toward zero would be 1 − 2⁻²³ (0x3F7FFFFE).
        let t = -1.5 * p2(-25);
        assert_eq!(dot_bits(&[1.0, t, t], &ones(3), &HOPPER), ONE_MINUS_ULP);
        // Ampere keeps 24 bits: trunc(−0.75) = 0 for both, so the result is exactly 1.0.
        assert_eq!(dot_bits(&[1.0, t, t], &ones(3), &AMPERE), 0x3F80_0000);
    }

    #[test]
    fn tiny_addend_below_the_window_is_lost() {
        // 1 − 2⁻²⁶: trunc(−2⁻²⁶·2²⁵) = trunc(−0.5) = 0 → exactly 1.0 (IEEE RZ: 0x3F7FFFFF).
        assert_eq!(dot_bits(&[1.0, -p2(-26)], &ones(2), &HOPPER), 0x3F80_0000);
        // 1 − 2⁻²⁵ is kept (t = −1) and then rounded toward zero to 1 − 2⁻²⁴.
        assert_eq!(dot_bits(&[1.0, -p2(-25)], &ones(2), &HOPPER), ONE_MINUS_ULP);
        // Ampere's window ends one bit earlier: 1 − 2⁻²⁵ stays 1.0, 1 − 2⁻²⁴ is kept.
        assert_eq!(dot_bits(&[1.0, -p2(-25)], &ones(2), &AMPERE), 0x3F80_0000);
        assert_eq!(dot_bits(&[1.0, -p2(-24)], &ones(2), &AMPERE), ONE_MINUS_ULP);
    }

    #[test]
    fn final_rounding_is_toward_zero() {
        // 1 + 1 + 1.5·2⁻²² (t = trunc(1.5·2³) = 12, exact in the window). The f32 ulp in
        // [2, 4) is 2⁻²²: toward zero gives 2 + 2⁻²² (RNE would give 2 + 2⁻²¹).
        let t = 1.5 * p2(-22);
        assert_eq!(dot_bits(&[1.0, 1.0, t], &ones(3), &HOPPER), 0x4000_0001);
        assert_eq!(dot_bits(&[-1.0, -1.0, -t], &ones(3), &HOPPER), 0xC000_0001);
    }

    #[test]
    fn cancellation() {
        // Exact cancellation gives +0.0, never −0.0.
        assert_eq!(dot_bits(&[1.0, -1.0], &[1.0, 1.0], &HOPPER), 0);
        assert_eq!(dot_bits(&[-1.0, 1.0], &[1.0, 1.0], &AMPERE), 0);
        // (1 + 2⁻¹⁰) − 1 = 2⁻¹⁰ exactly, renormalized: 0x3A800000.
        assert_eq!(
            dot_bits(&[1.0 + p2(-10), -1.0], &ones(2), &HOPPER),
            0x3A80_0000
        );
        // 2²⁰⁰ − 2²⁰⁰ + 1: e_max = 200, the 1 is truncated to nothing → +0.0 (exact: 1.0).
        let big = p2(100);
        assert_eq!(dot_bits(&[big, big, 1.0], &[big, -big, 1.0], &HOPPER), 0);
    }

    #[test]
    fn negative_zero_products_give_positive_zero() {
        assert_eq!(dot_bits(&[-0.0], &[1.0], &HOPPER), 0);
        assert_eq!(dot_bits(&[-0.0, 0.0, -2.0], &[1.0, -3.0, 0.0], &AMPERE), 0);
        assert_eq!(dot(&[-0.0], &[1.0], &HOPPER, NearestEven).to_bits(), 0);
    }

    #[test]
    fn product_significands_in_two_to_four_align_at_the_nominal_exponent() {
        // 1.5·1.5 has s = 2.25, e = 0 (not renormalized to 1.125·2¹). The small term
        // −1.5·2⁻²⁵ aligns to e_max = 0: t = trunc(−1.5) = −1, so 2.25 − 2⁻²⁵, rounded toward
        // zero at ulp 2⁻²² → 2.25 − 2⁻²² = 0x400FFFFF. (Aligned to 2¹ it would vanish.)
        assert_eq!(
            dot_bits(&[1.5, -1.5 * p2(-25)], &[1.5, 1.0], &HOPPER),
            0x400F_FFFF
        );
        // One bit further down, trunc(−0.75) = 0: exactly 2.25.
        assert_eq!(
            dot_bits(&[1.5, -1.5 * p2(-26)], &[1.5, 1.0], &HOPPER),
            0x4010_0000
        );
    }

    #[test]
    fn subnormal_results() {
        // 2⁻⁷⁰·2⁻⁷⁰ = 2⁻¹⁴⁰: e_max = −133 (c = 0), t = 2¹⁸, exact subnormal 2⁹·2⁻¹⁴⁹.
        assert_eq!(dot_bits(&[p2(-70)], &[p2(-70)], &HOPPER), 0x200);
        // (1.5·2⁻⁷⁵)² = 1.125·2⁻¹⁴⁹ → toward zero 2⁻¹⁴⁹, sign kept.
        let x = 1.5 * p2(-75);
        assert_eq!(dot_bits(&[x], &[x], &HOPPER), 0x1);
        assert_eq!(dot_bits(&[-x], &[x], &HOPPER), 0x8000_0001);
        // −2⁻¹⁵⁰ rounds toward zero to zero, which is +0.0.
        assert_eq!(dot_bits(&[p2(-75)], &[-p2(-75)], &HOPPER), 0);
        assert_eq!(dot_bits(&[p2(-75)], &[-p2(-75)], &AMPERE), 0);
    }

    #[test]
    fn subnormal_inputs() {
        // 2⁻¹³⁰ (subnormal f32 0x00080000, a TF32 value) · 2¹⁰ = 2⁻¹²⁰ = 0x03800000.
        assert_eq!(
            dot_bits(&[fb(0x0008_0000)], &[p2(10)], &HOPPER),
            0x0380_0000
        );
        // A subnormal operand keeps e = −126 and s < 1, so its product anchors the window
        // above its true magnitude. 2⁻¹³⁶ (s = 2⁻¹⁰) · 2¹⁰⁰ has e = −26, value 2⁻³⁶;
        // (1 + 2⁻¹⁰)·2⁻⁴⁵ aligns to −26: t = trunc((1 + 2⁻¹⁰)·2⁶) = 64, the 2⁻⁵⁵ bit is lost.
        // Result 2⁻³⁶ + 2⁻⁴⁵ = (1 + 2⁻⁹)·2⁻³⁶; exact RZ would keep 2⁻⁵⁵ (ulp 2⁻⁵⁹).
        let a = [fb(0x0000_2000), (1.0 + p2(-10)) * p2(-45)];
        let expected = (((-36 + 127) as u32) << 23) | (1 << 14);
        assert_eq!(dot_bits(&a, &[p2(100), 1.0], &HOPPER), expected);
    }

    #[test]
    fn zero_exponent_sets_the_window_for_tiny_sums() {
        // c = 0 has e = e_zero = −133, so with tiny products e_max = −133 and the window ends
        // at 2^(−133−25) = 2⁻¹⁵⁸. 2⁻⁷⁵·2⁻⁷⁴ = 2⁻¹⁴⁹ plus −2⁻¹⁵⁸ (kept, t = −1) is just below
        // 2⁻¹⁴⁹ → rounds to +0; plus −2⁻¹⁵⁹ (t = trunc(−0.5) = 0) stays exactly 2⁻¹⁴⁹.
        let a = [p2(-75), -p2(-80)];
        assert_eq!(dot_bits(&a, &[p2(-74), p2(-78)], &HOPPER), 0);
        assert_eq!(dot_bits(&a, &[p2(-74), p2(-79)], &HOPPER), 0x1);
        // Ampere: e_zero = −132 and 24 bits end the window at 2⁻¹⁵⁶.
        assert_eq!(dot_bits(&a, &[p2(-74), p2(-76)], &AMPERE), 0);
        assert_eq!(dot_bits(&a, &[p2(-74), p2(-77)], &AMPERE), 0x1);
        assert_eq!(dot_bits(&a, &[p2(-74), p2(-78)], &AMPERE), 0x1);
        // With a zero exponent far below, e_max = −149 and −2⁻¹⁵⁹ is kept → +0.
        let low = MmaParams {
            zero_exponent: -200,
            ..HOPPER
        };
        assert_eq!(dot_bits(&a, &[p2(-74), p2(-79)], &low), 0);
    }

    #[test]
    fn infinities_and_nan() {
        let inf = f32::INFINITY;
        // Inf·0 = NaN, canonical bits.
        assert_eq!(dot_bits(&[inf, 1.0], &[0.0, 1.0], &HOPPER), NAN);
        assert_eq!(dot_bits(&[-0.0], &[-inf], &AMPERE), NAN);
        // Inf + (−Inf) = NaN.
        assert_eq!(dot_bits(&[inf, inf], &[1.0, -1.0], &HOPPER), NAN);
        // Inf times anything non-zero, even a subnormal, keeps the product's sign.
        assert_eq!(dot_bits(&[inf, 1.0], &[2.0, 1.0], &HOPPER), inf.to_bits());
        assert_eq!(
            dot_bits(&[-inf], &[2.0], &HOPPER),
            f32::NEG_INFINITY.to_bits()
        );
        assert_eq!(
            dot_bits(&[inf], &[-fb(0x0000_2000)], &HOPPER),
            f32::NEG_INFINITY.to_bits()
        );
        // Any NaN, of either sign, gives 0x7FFFFFFF.
        assert_eq!(dot_bits(&[fb(0xFFC0_0000)], &[1.0], &HOPPER), NAN);
        assert_eq!(dot_bits(&[1.0, 2.0], &[fb(0x7FC0_0000), 0.0], &AMPERE), NAN);
        // A NaN whose payload is only in the low 13 bits truncates to Inf; RNE keeps it NaN.
        assert_eq!(dot_bits(&[fb(0x7F80_0001)], &[1.0], &HOPPER), inf.to_bits());
        assert_eq!(dot_bits(&[fb(0xFF80_0FFF)], &[1.0], &HOPPER), 0xFF80_0000);
        assert_eq!(
            dot(&[fb(0x7F80_0001)], &[1.0], &HOPPER, NearestEven).to_bits(),
            NAN
        );
    }

    #[test]
    fn specials_carry_across_chunks() {
        // Inf from the first chunk of 8 meets −Inf in the second: NaN; meets 1: stays Inf.
        let mut a = vec![0.0f32; 9];
        a[0] = f32::INFINITY;
        a[8] = f32::NEG_INFINITY;
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), NAN);
        a[8] = 1.0;
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), f32::INFINITY.to_bits());
        // A NaN in the first chunk stays NaN.
        a[0] = f32::NAN;
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), NAN);
    }

    #[test]
    fn overflow_goes_to_infinity() {
        // 2¹⁰⁰·2¹⁰⁰ = 2²⁰⁰ is held exactly inside the step, then overflows to Inf.
        assert_eq!(dot_bits(&[p2(100)], &[p2(100)], &HOPPER), 0x7F80_0000);
        assert_eq!(dot_bits(&[p2(100)], &[-p2(100)], &AMPERE), 0xFF80_0000);
        // The largest TF32 value passes through unchanged...
        let tf32_max = fb(0x7F7F_E000);
        assert_eq!(dot_bits(&[tf32_max], &[1.0], &HOPPER), 0x7F7F_E000);
        // ...but twice it is (2 − 2⁻¹⁰)·2¹²⁸ ≥ 2¹²⁸: Inf, where IEEE round-toward-zero would
        // give MAX.
        assert_eq!(
            dot_bits(&[tf32_max, tf32_max], &[1.0, 1.0], &HOPPER),
            0x7F80_0000
        );
        // Overflow in one chunk is not undone by the next: 2¹²⁷ + 2¹²⁷ → Inf, − 2¹²⁷ → Inf.
        let mut a = vec![0.0f32; 9];
        a[0] = p2(127);
        a[1] = p2(127);
        a[8] = -p2(127);
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), 0x7F80_0000);
        // Within one chunk the same three terms are exact: 2¹²⁷.
        a[2] = -p2(127);
        a[8] = 0.0;
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), 0x7F00_0000);
        // Accumulation across chunks: 2¹²⁷ then + 2¹²⁷ in the next chunk → Inf.
        let mut a = vec![0.0f32; 16];
        a[0] = p2(127);
        a[8] = p2(127);
        assert_eq!(dot_bits(&a, &ones(16), &HOPPER), 0x7F80_0000);
    }

    #[test]
    fn k_tail_chunking_hopper() {
        // K = 9: [1, t, 0…, t] with t = −1.5·2⁻²⁵. Chunk 1: 2²⁵ − 1 → 1 − 2⁻²⁵ → RZ 1 − 2⁻²⁴.
        // Chunk 2 (the tail k = 8, zero-padded): c = (2 − 2⁻²³)·2⁻¹, e_max = −1,
        // t_c = 2²⁶ − 4, t = trunc(−1.5·2) = −3 → (2²⁶ − 7)·2⁻²⁶ = 1 − 1.75·2⁻²⁴
        // → RZ 1 − 2⁻²³ = 0x3F7FFFFE.
        let t = -1.5 * p2(-25);
        let mut a = vec![0.0f32; 9];
        a[0] = 1.0;
        a[1] = t;
        a[8] = t;
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), 0x3F7F_FFFE);
        // Both small terms in the first chunk: 2²⁵ − 2 → exactly 1 − 2⁻²⁴.
        a[8] = 0.0;
        a[7] = t;
        assert_eq!(dot_bits(&a, &ones(9), &HOPPER), ONE_MINUS_ULP);
        // K = 7 (one partial chunk) behaves like the zero-padded group.
        assert_eq!(dot_bits(&a[..7], &ones(7), &HOPPER), ONE_MINUS_ULP);
        assert_eq!(
            dot_bits(&[1.0, t, 0.0, 0.0, 0.0, 0.0, t], &ones(7), &HOPPER),
            ONE_MINUS_ULP
        );
        // K = 1.
        assert_eq!(dot_bits(&[t], &[1.0], &HOPPER), t.to_bits());
    }

    #[test]
    fn k_tail_chunking_ampere() {
        // Groups of 4. [1, t, 0, 0, t], t = −1.5·2⁻²⁴. Chunk 1: 2²⁴ − 1 → 1 − 2⁻²⁴ exactly.
        // Chunk 2: t_c = 2²⁵ − 2, t = trunc(−1.5·2) = −3 → (2²⁵ − 5)·2⁻²⁵ = 1 − 2.5·2⁻²⁴
        // → RZ 1 − 3·2⁻²⁴ = 0x3F7FFFFD.
        let t = -1.5 * p2(-24);
        assert_eq!(
            dot_bits(&[1.0, t, 0.0, 0.0, t], &ones(5), &AMPERE),
            0x3F7F_FFFD
        );
        // Same chunk: 2²⁴ − 2 → 1 − 2⁻²³ = 0x3F7FFFFE.
        assert_eq!(
            dot_bits(&[1.0, t, t, 0.0, 0.0], &ones(5), &AMPERE),
            0x3F7F_FFFE
        );
        // Hopper puts all five in one group and keeps 25 bits: t = trunc(−1.5·2) = −3 each
        // → 2²⁵ − 6 → 1 − 3·2⁻²⁴ = 0x3F7FFFFD, this time exactly.
        assert_eq!(
            dot_bits(&[1.0, t, 0.0, 0.0, t], &ones(5), &HOPPER),
            0x3F7F_FFFD
        );
    }

    #[test]
    fn k_1025() {
        // 1024 products cancelling in pairs, then the tail k = 1024 alone in chunk 129.
        let k = 1025;
        let a: Vec<f32> = (0..k)
            .map(|i| match i {
                1024 => 0.5,
                _ if i % 2 == 0 => 1.0,
                _ => -1.0,
            })
            .collect();
        for params in [&HOPPER, &AMPERE] {
            assert_eq!(dot(&a, &ones(k), params, Truncate), 0.5);
            assert_eq!(dot(&ones(k), &ones(k), params, Truncate), 1025.0);
        }
        // c = 1 after 1024 terms, the tail adds −1.5·2⁻²⁵: Hopper t = −1 → 1 − 2⁻²⁵ → RZ
        // 0x3F7FFFFF; Ampere t = trunc(−0.75) = 0 → 1.0.
        let mut a = vec![0.0f32; k];
        a[0] = 1.0;
        a[1024] = -1.5 * p2(-25);
        assert_eq!(dot_bits(&a, &ones(k), &HOPPER), ONE_MINUS_ULP);
        assert_eq!(dot_bits(&a, &ones(k), &AMPERE), 0x3F80_0000);
    }

    #[test]
    fn round_tf32_truncate() {
        for (x, want) in [
            (0x3F80_1FFF, 0x3F80_0000),
            (0xBF80_3000, 0xBF80_2000),
            (0x7F7F_FFFF, 0x7F7F_E000),
            (0x0000_1FFF, 0x0000_0000),
            (0x8000_0000, 0x8000_0000),
            (0x7F80_0000, 0x7F80_0000),
            (0x7FC0_1234, 0x7FC0_0000),
            (0x7F80_0001, 0x7F80_0000), // NaN with low payload only → Inf
        ] {
            assert_eq!(round_tf32(fb(x), Truncate).to_bits(), want, "{x:#010x}");
        }
    }

    #[test]
    fn round_tf32_nearest_even() {
        for (x, want) in [
            (0x3F80_1000, 0x3F80_0000), // 1 + 2⁻¹¹: tie, even is down
            (0x3F80_3000, 0x3F80_4000), // tie with odd kept lsb: up
            (0x3F80_1001, 0x3F80_2000), // above the tie: up
            (0x3F80_0FFF, 0x3F80_0000), // below the tie: down
            (0x3F80_2FFF, 0x3F80_2000),
            (0xBF80_3000, 0xBF80_4000), // negative ties mirror
            (0xBF80_1000, 0xBF80_0000),
            (0x3FFF_F000, 0x4000_0000), // carry into the exponent: 2.0
            (0x7F7F_F000, 0x7F80_0000), // tie above TF32 MAX, odd: Inf
            (0x7F7F_FFFF, 0x7F80_0000), // f32 MAX → Inf
            (0xFF7F_FFFF, 0xFF80_0000),
            (0x7F7F_EFFF, 0x7F7F_E000), // just below the tie: stays MAX
            (0x0000_1000, 0x0000_0000), // subnormal tie, even: 0
            (0x0000_3000, 0x0000_4000), // subnormal tie, odd: up
            (0x007F_F000, 0x0080_0000), // subnormal rounds up to the smallest normal
            (0x8000_0000, 0x8000_0000), // −0 stays −0
            (0x7F80_0000, 0x7F80_0000),
            (0xFF80_0000, 0xFF80_0000),
        ] {
            assert_eq!(round_tf32(fb(x), NearestEven).to_bits(), want, "{x:#010x}");
        }
        for nan in [0x7F80_0001u32, 0x7FC0_0000, 0xFFC0_0000, 0xFF80_1000] {
            assert!(round_tf32(fb(nan), NearestEven).is_nan(), "{nan:#010x}");
        }
    }

    #[test]
    fn input_rounding_reaches_the_products() {
        // a = 1 + 3·2⁻¹¹ (0x3F803000): RNE → 1 + 2⁻⁹, truncation → 1 + 2⁻¹⁰.
        let a = [fb(0x3F80_3000)];
        assert_eq!(dot(&a, &[1.0], &HOPPER, NearestEven).to_bits(), 0x3F80_4000);
        assert_eq!(dot(&a, &[1.0], &HOPPER, Truncate).to_bits(), 0x3F80_2000);
        // (1 + 2⁻¹¹ − 2⁻²³)·(1 + 2⁻¹¹ + 2⁻²³): truncation gives 1·1; RNE rounds the first
        // down (below the tie) and the second up (above it): product 1 + 2⁻¹⁰.
        let a = [fb(0x3F80_0FFF)];
        let b = [fb(0x3F80_1001)];
        assert_eq!(dot(&a, &b, &HOPPER, Truncate).to_bits(), 0x3F80_0000);
        assert_eq!(dot(&a, &b, &HOPPER, NearestEven).to_bits(), 0x3F80_2000);
        // RNE overflow of an input: f32 MAX → Inf, times 0 → NaN; truncated it is finite.
        let a = [fb(0x7F7F_FFFF), 1.0];
        let b = [0.0, 1.0];
        assert_eq!(dot(&a, &b, &HOPPER, NearestEven).to_bits(), NAN);
        assert_eq!(dot(&a, &b, &HOPPER, Truncate).to_bits(), 0x3F80_0000);
    }

    #[test]
    fn element_indexes_row_major_operands() {
        // A 2×3, B 2×3: C[1][0] = A[1]·B[0] = 4·1 + 5·0 + 6·(−1) = −2.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [1.0, 0.0, -1.0, 0.5, 0.5, 0.5];
        assert_eq!(element(&a, &b, 3, 1, 0, &HOPPER, Truncate), -2.0);
        assert_eq!(element(&a, &b, 3, 0, 1, &HOPPER, Truncate), 3.0);
        let c = matmul(&a, &b, 2, 2, 3, &HOPPER, Truncate);
        assert_eq!(c, vec![-2.0, 3.0, -2.0, 7.5]);
    }

    #[test]
    fn check_sampled_counts_and_reports_mismatches() {
        let (m, n, k) = (5, 7, 3);
        let a: Vec<f32> = (0..m * k).map(|i| i as f32 - 6.0).collect();
        let b: Vec<f32> = (0..n * k).map(|i| 0.5 * i as f32 - 4.0).collect();
        // Hand-independent C: small exact values, computed in f64.
        let mut c: Vec<f32> = (0..m * n)
            .map(|p| {
                let (i, j) = (p / n, p % n);
                (0..k)
                    .map(|kk| a[i * k + kk] as f64 * b[j * k + kk] as f64)
                    .sum::<f64>() as f32
            })
            .collect();
        let full = check_sampled(&a, &b, &c, m, n, k, usize::MAX, 1, &HOPPER, Truncate);
        assert_eq!((full.checked, full.equal), (35, 35));
        assert!(full.all_equal() && full.first_mismatches.is_empty());

        let good = c[2 * n + 3];
        c[2 * n + 3] = f32::from_bits(good.to_bits() ^ 1);
        c[4 * n] = -0.0; // model gives +0.0 or something else: a bitwise mismatch
        let model_4_0 = element(&a, &b, k, 4, 0, &HOPPER, Truncate).to_bits();
        let r = check_sampled(&a, &b, &c, m, n, k, 35, 1, &HOPPER, Truncate);
        assert_eq!((r.checked, r.equal), (35, 33));
        assert!(!r.all_equal());
        assert_eq!(
            r.first_mismatches,
            vec![
                (2, 3, good.to_bits() ^ 1, good.to_bits()),
                (4, 0, 0x8000_0000, model_4_0)
            ]
        );

        // Sampling: distinct positions, deterministic per seed, count as asked.
        let s1 = check_sampled(&a, &b, &c, m, n, k, 10, 42, &HOPPER, Truncate);
        let s2 = check_sampled(&a, &b, &c, m, n, k, 10, 42, &HOPPER, Truncate);
        assert_eq!(s1, s2);
        assert_eq!(s1.checked, 10);
        for (samples, seed) in [(3, 5u64), (20, 5), (34, 9)] {
            let pos = sample_positions(35, samples, seed);
            assert_eq!(pos.len(), samples);
            assert!(pos.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
            assert!(pos.iter().all(|&p| p < 35));
        }
    }

    #[test]
    fn check_sampled_compares_nan_bits() {
        // Inf·0 → model 0x7FFFFFFF. The device NaN 0x7FC00000 is a mismatch, the same bits not.
        let a = [f32::INFINITY];
        let b = [0.0];
        let same = check_sampled(&a, &b, &[fb(NAN)], 1, 1, 1, 1, 0, &HOPPER, Truncate);
        assert!(same.all_equal());
        let other = check_sampled(&a, &b, &[fb(0x7FC0_0000)], 1, 1, 1, 1, 0, &HOPPER, Truncate);
        assert_eq!(other.equal, 0);
        assert_eq!(other.first_mismatches, vec![(0, 0, 0x7FC0_0000, NAN)]);
    }

    #[test]
    fn f32_files_round_trip_raw_little_endian() {
        let dir = std::env::temp_dir().join(format!("forge-bitmodel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.f32");
        let values = [
            1.0f32,
            -0.0,
            fb(0x7FC0_1234),
            fb(0x0000_0001),
            f32::NEG_INFINITY,
        ];
        write_f32_file(&path, &values).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 20);
        assert_eq!(&bytes[..4], &[0x00, 0x00, 0x80, 0x3F]); // 1.0 little-endian
        let back = read_f32_file(&path).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back), bits(&values));
        std::fs::write(&path, [1u8, 2, 3, 4, 5]).unwrap();
        assert_eq!(
            read_f32_file(&path).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
