//! The bit-exact gate: a candidate passes if and only if every element's bit pattern equals
//! the canonical output's. Unwritten elements keep the NaN poison and fail.

use crate::report::{GateResult, Verdict};

/// The poison written into every output buffer before a candidate runs: a quiet NaN with a
/// payload no arithmetic produces.
pub const POISON_BITS: u32 = 0x7fc0_dead;

/// What [`compare`] gives for bit-identical outputs (a pass, nothing differing).
pub fn identical() -> GateResult {
    GateResult {
        verdict: Verdict::Pass,
        differing: 0,
        max_abs_diff: 0.0,
        rel_rms: 0.0,
    }
}

/// Compares a candidate's output with the golden output C₀, bit for bit.
pub fn compare(golden: &[f32], candidate: &[f32]) -> GateResult {
    assert_eq!(golden.len(), candidate.len(), "outputs of different sizes");
    let mut differing = 0u64;
    let mut max_abs = 0f64;
    let (mut diff2, mut ref2) = (0f64, 0f64);
    for (&g, &c) in golden.iter().zip(candidate) {
        ref2 += (g as f64) * (g as f64);
        if g.to_bits() != c.to_bits() {
            differing += 1;
            let d = c as f64 - g as f64;
            // A NaN (unwritten) element is an infinite difference.
            let d = if d.is_nan() { f64::INFINITY } else { d.abs() };
            max_abs = max_abs.max(d);
            diff2 += d * d;
        }
    }
    let rel_rms = if differing == 0 {
        0.0
    } else if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else {
        f64::INFINITY
    };
    GateResult {
        verdict: if differing == 0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        differing,
        max_abs_diff: max_abs,
        rel_rms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_bits_pass() {
        let a = vec![1.0f32, -2.5, 3.25];
        let r = compare(&a, &a.clone());
        assert_eq!(r.verdict, Verdict::Pass);
        assert_eq!((r.differing, r.rel_rms), (0, 0.0));
        let i = identical();
        assert_eq!(
            (i.verdict, i.differing, i.max_abs_diff, i.rel_rms),
            (r.verdict, r.differing, r.max_abs_diff, r.rel_rms)
        );
    }

    #[test]
    fn one_ulp_in_one_element_fails() {
        let a = vec![1.0f32; 1000];
        let mut b = a.clone();
        b[517] = f32::from_bits(b[517].to_bits() + 1);
        let r = compare(&a, &b);
        assert_eq!(r.verdict, Verdict::Fail);
        assert_eq!(r.differing, 1);
        assert!(r.rel_rms > 0.0 && r.max_abs_diff > 0.0);
    }

    #[test]
    fn signed_zero_and_poison_fail() {
        let r = compare(&[0.0], &[-0.0]);
        assert_eq!(r.verdict, Verdict::Fail);
        let r = compare(&[1.0], &[f32::from_bits(POISON_BITS)]);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.rel_rms.is_infinite());
    }
}
