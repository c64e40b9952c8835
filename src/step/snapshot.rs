//! Named host copies of the step's tensors and their comparison (pure): the determinism
//! checks print max |Δ| and the number of elements whose bits differ, per tensor.

use serde::Serialize;

/// Tensors by name, in the order they were added.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub tensors: Vec<(String, Vec<f32>)>,
}

impl Snapshot {
    pub fn push(&mut self, name: String, values: Vec<f32>) {
        self.tensors.push((name, values));
    }

    pub fn get(&self, name: &str) -> Option<&[f32]> {
        self.tensors
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// How one tensor of two snapshots differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    pub name: String,
    pub len: usize,
    /// max |a − b| (infinite when a NaN or an infinity differs).
    pub max_abs: f64,
    /// Elements whose bit patterns differ (so −0 vs +0 counts, although |Δ| = 0).
    pub bits_differ: usize,
}

impl Difference {
    pub fn identical(&self) -> bool {
        self.bits_differ == 0
    }
}

/// The difference of one pair of equally long tensors.
pub fn difference(name: &str, a: &[f32], b: &[f32]) -> Difference {
    assert_eq!(a.len(), b.len(), "{name}: lengths differ");
    let mut max_abs = 0.0f64;
    let mut bits_differ = 0;
    for (&x, &y) in a.iter().zip(b) {
        if x.to_bits() != y.to_bits() {
            bits_differ += 1;
            let d = (x as f64 - y as f64).abs();
            max_abs = max_abs.max(if d.is_nan() { f64::INFINITY } else { d });
        }
    }
    Difference {
        name: name.to_string(),
        len: a.len(),
        max_abs,
        bits_differ,
    }
}

/// Per-tensor differences of every tensor both snapshots hold (by name, in `a`'s order).
pub fn compare(a: &Snapshot, b: &Snapshot) -> Vec<Difference> {
    a.tensors
        .iter()
        .filter_map(|(name, va)| b.get(name).map(|vb| difference(name, va, vb)))
        .collect()
}

/// The largest |Δ| over a comparison (0 when every tensor is identical).
pub fn max_abs(diffs: &[Difference]) -> f64 {
    diffs.iter().map(|d| d.max_abs).fold(0.0, f64::max)
}

/// One line: overall max |Δ|, tensors compared, and the tensors that differ.
pub fn summary_line(diffs: &[Difference]) -> String {
    let differing: Vec<String> = diffs
        .iter()
        .filter(|d| !d.identical())
        .map(|d| {
            format!(
                "{} ({:.3e}, {}/{})",
                d.name, d.max_abs, d.bits_differ, d.len
            )
        })
        .collect();
    let total: usize = diffs.iter().map(|d| d.len).sum();
    if differing.is_empty() {
        format!(
            "max |Δ| = 0 over {} tensors ({total} values), every bit equal",
            diffs.len()
        )
    } else {
        format!(
            "max |Δ| = {:.3e}; differ: {}",
            max_abs(diffs),
            differing.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(values: &[(&str, &[f32])]) -> Snapshot {
        let mut s = Snapshot::default();
        for (n, v) in values {
            s.push(n.to_string(), v.to_vec());
        }
        s
    }

    #[test]
    fn identical_snapshots_report_zero() {
        let a = snap(&[("w", &[1.0, 2.0]), ("loss", &[0.5])]);
        let d = compare(&a, &a.clone());
        assert_eq!(max_abs(&d), 0.0);
        assert!(d.iter().all(Difference::identical));
        assert!(summary_line(&d).starts_with("max |Δ| = 0 over 2 tensors (3 values)"));
    }

    #[test]
    fn differences_are_measured_and_named() {
        let a = snap(&[("w", &[1.0, 2.0]), ("b", &[0.0])]);
        let b = snap(&[("w", &[1.0, 2.5]), ("b", &[-0.0])]);
        let d = compare(&a, &b);
        assert_eq!(d[0].max_abs, 0.5);
        assert_eq!(d[0].bits_differ, 1);
        // −0 and +0: |Δ| = 0, but the bits differ.
        assert_eq!(d[1].max_abs, 0.0);
        assert!(!d[1].identical());
        let line = summary_line(&d);
        assert!(line.contains("max |Δ| = 5.000e-1"), "{line}");
        assert!(line.contains("w (5.000e-1, 1/2)") && line.contains("b (0.000e0, 1/1)"));
    }

    #[test]
    fn a_nan_is_an_infinite_difference() {
        let d = difference("x", &[f32::NAN], &[1.0]);
        assert_eq!(d.max_abs, f64::INFINITY);
    }
}
