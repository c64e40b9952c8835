//! The numbers behind a run's pictures and tables, computed from its [`RunReport`]: pure
//! data, no drawing and no Markdown. [`crate::plot`] draws them and [`crate::summary`]
//! writes them as tables; those two only lay the numbers out (axes, legends, cells).
//!
//! * [`parity`]: own/cuBLAS speed ratios per shape and per schedule family;
//! * [`verdicts`]: the bit-exact gate's verdict counts and the candidates it did not pass;
//! * [`model_accuracy`]: Spearman ρ and top-1 regret of the cost model per shape;
//! * [`determinism`]: the price of the bit-exact gate per shape;
//! * [`winner_map`]: the winning schedule over an (M, N) grid at fixed K.
//!
//! This file holds the helpers several of them share.

pub mod determinism;
pub mod model_accuracy;
pub mod parity;
pub mod verdicts;
pub mod winner_map;

use crate::report::{Measurement, RunReport};

use crate::shape::Shape;

/// Whether any shape of the report has at least one timed candidate.
pub fn has_measurements(report: &RunReport) -> bool {
    report.shapes.iter().any(|s| s.measured().next().is_some())
}

/// TFLOP/s of a measurement (the report's value, or 2·M·N·K / median when absent).
pub fn tflops(shape: &Shape, m: &Measurement) -> f64 {
    if m.tflops > 0.0 {
        m.tflops
    } else {
        shape.flops() / (m.median_us * 1e-6) / 1e12
    }
}

/// A short axis label for a shape: `D512` for a cube (M = N = K), else `128×5376×7168`.
pub fn axis_label(shape: &Shape) -> String {
    if shape.m == shape.n && shape.n == shape.k {
        format!("D{}", shape.m)
    } else {
        format!("{}×{}×{}", shape.m, shape.n, shape.k)
    }
}
