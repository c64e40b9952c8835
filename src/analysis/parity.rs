//! Parity with cuBLAS: how fast forge's own GEMM is relative to cuBLAS, per shape.
//!
//! ratio = cuBLAS median time / own median time (> 1: own is faster). The parity map's
//! points ([`parity_data`]: per schedule family, the tuned dispatch and the gate-rejected
//! schedules, against FLOPs) and the summary's table rows ([`parity_row`], with their
//! [`geometric_mean`]).

use crate::report::{Measurement, RunReport, ShapeReport, Verdict};
use crate::schedule::Schedule;
use std::collections::BTreeMap;

/// own/cuBLAS speed ratio: cuBLAS median time over own median time (> 1: own is faster).
pub fn speed_ratio(cublas_us: f64, own_us: f64) -> f64 {
    cublas_us / own_us
}

/// One point of the parity map.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityPoint {
    /// 2·M·N·K.
    pub flops: f64,
    pub ratio: f64,
    /// Shape label, `MxNxK`.
    pub shape: String,
    pub schedule: String,
}

/// Everything the parity map draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParityData {
    /// Family name → best gate-passing schedule per shape, sorted by size.
    pub families: BTreeMap<String, Vec<ParityPoint>>,
    /// The chosen schedule per shape, sorted by size.
    pub tuned: Vec<ParityPoint>,
    /// Timed schedules whose output bits differ from the canonical output.
    pub rejected: Vec<ParityPoint>,
    /// Shapes that were measured but have no cuBLAS baseline.
    pub without_baseline: usize,
}

/// Collects the parity map's points from a report (shapes without a cuBLAS time are
/// skipped and counted).
pub fn parity_data(report: &RunReport) -> ParityData {
    let mut data = ParityData::default();
    for s in &report.shapes {
        if s.measured().next().is_none() {
            continue;
        }
        let Some(cublas) = &s.cublas else {
            data.without_baseline += 1;
            continue;
        };
        let point = |schedule: &str, own_us: f64| ParityPoint {
            flops: s.problem.shape.flops(),
            ratio: speed_ratio(cublas.median_us, own_us),
            shape: s.problem.shape.to_string(),
            schedule: schedule.to_string(),
        };
        let mut best: BTreeMap<&'static str, (String, f64)> = BTreeMap::new();
        for (c, m) in s.measured() {
            match c.gate.verdict {
                Verdict::Pass => {
                    let e = best
                        .entry(c.schedule.family.as_str())
                        .or_insert((c.schedule.name(), m.median_us));
                    if m.median_us < e.1 {
                        *e = (c.schedule.name(), m.median_us);
                    }
                }
                Verdict::Fail => data.rejected.push(point(&c.schedule.name(), m.median_us)),
                Verdict::NotRun => {}
            }
        }
        for (family, (schedule, us)) in best {
            data.families
                .entry(family.to_string())
                .or_default()
                .push(point(&schedule, us));
        }
        if let Some((schedule, own, cublas)) = s.parity() {
            data.tuned.push(ParityPoint {
                flops: s.problem.shape.flops(),
                ratio: speed_ratio(cublas.median_us, own.median_us),
                shape: s.problem.shape.to_string(),
                schedule: schedule.to_string(),
            });
        }
    }
    let by_size = |a: &ParityPoint, b: &ParityPoint| a.flops.total_cmp(&b.flops);
    for v in data.families.values_mut() {
        v.sort_by(by_size);
    }
    data.tuned.sort_by(by_size);
    data
}

/// One shape's row of the parity table.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityRow<'a> {
    /// The schedule the times belong to (the head-to-head's), else the chosen one.
    pub schedule: Option<Schedule>,
    /// Own and cuBLAS median times, when the shape has both ([`ShapeReport::parity`]).
    pub own: Option<&'a Measurement>,
    pub cublas: Option<&'a Measurement>,
    /// [`speed_ratio`] of the two, when both exist.
    pub ratio: Option<f64>,
}

/// The parity table's row for one shape.
pub fn parity_row(s: &ShapeReport) -> ParityRow<'_> {
    let parity = s.parity();
    ParityRow {
        schedule: parity.map(|(schedule, _, _)| schedule).or(s.chosen),
        own: parity.map(|(_, o, _)| o),
        cublas: parity.map(|(_, _, c)| c),
        ratio: parity.map(|(_, o, c)| speed_ratio(c.median_us, o.median_us)),
    }
}

/// The geometric mean of `values`; `None` when there are none.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    let mut log_sum = 0.0;
    for v in values {
        log_sum += v.ln();
    }
    (!values.is_empty()).then(|| (log_sum / values.len() as f64).exp())
}
