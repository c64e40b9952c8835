//! The price of determinism, per shape: the fastest gate-passing (bit-exact) schedule
//! against the fastest timed schedule of any kind (split-K included), with cuBLAS beside
//! them, and the price (how much slower bit-exactness is).

use super::{axis_label, tflops};
use crate::report::{Candidate, Measurement, RunReport, ShapeReport};

/// The price of determinism in percent: how much longer the fastest bit-exact schedule
/// takes than the fastest schedule overall (0 when the fastest is bit-exact).
pub fn price_pct(passing_us: f64, overall_us: f64) -> f64 {
    (passing_us / overall_us - 1.0) * 100.0
}

/// One timed kernel: schedule (or `cuBLAS`), median µs, TFLOP/s.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    pub name: String,
    pub us: f64,
    pub tflops: f64,
}

/// One shape's bars.
#[derive(Clone, Debug, PartialEq)]
pub struct DeterminismRow {
    /// `MxNxK`.
    pub shape: String,
    /// [`axis_label`] of the shape.
    pub label: String,
    pub passing: Option<Timed>,
    pub overall: Option<Timed>,
    pub cublas: Option<Timed>,
    /// [`price_pct`] of `passing` against `overall`, when both exist.
    pub price_pct: Option<f64>,
}

/// The row of one shape; `None` when nothing was timed.
pub fn determinism_row(s: &ShapeReport) -> Option<DeterminismRow> {
    let timed = |(c, m): (&Candidate, &Measurement)| Timed {
        name: c.schedule.name(),
        us: m.median_us,
        tflops: tflops(&s.problem.shape, m),
    };
    let overall = s.fastest_overall().map(timed)?;
    let passing = s.fastest_passing().map(timed);
    let cublas = s.cublas.as_ref().map(|m| Timed {
        name: "cuBLAS".to_string(),
        us: m.median_us,
        tflops: tflops(&s.problem.shape, m),
    });
    Some(DeterminismRow {
        shape: s.problem.shape.to_string(),
        label: axis_label(&s.problem.shape),
        price_pct: passing.as_ref().map(|p| price_pct(p.us, overall.us)),
        passing,
        overall: Some(overall),
        cublas,
    })
}

/// Rows for every shape with a timed candidate, in report order.
pub fn determinism_rows(report: &RunReport) -> Vec<DeterminismRow> {
    report.shapes.iter().filter_map(determinism_row).collect()
}
