//! Winner map data: which schedule wins over an (M, N) grid at fixed K (the report's most
//! common K). Measured where the run tuned a shape (the report's chosen schedule),
//! predicted elsewhere: the shipped cost model's best *bit-exact* schedule (one that keeps
//! the reduction order, split_k = 1; split-K can never pass the bit-exact gate and is never
//! dispatched) over a log grid of M and N from [`GRID_MIN`] to [`grid_max`] (at least
//! [`GRID_MAX`], extended so every tuned shape at K lies inside).

use crate::arch::{Arch, MeasuredProperties};
use crate::cost_model::CostModel;
use crate::report::RunReport;
use crate::schedule::{Dtype, Layout};
use crate::shape::Shape;
use std::collections::HashMap;

/// Smallest M and N of the predicted grid.
pub const GRID_MIN: u32 = 128;
/// Largest M and N of the predicted grid, unless a tuned shape lies beyond it
/// (see [`grid_max`]).
pub const GRID_MAX: u32 = 16384;

/// Largest M and N of the predicted grid: [`GRID_MAX`], or the largest tuned M or N
/// rounded up to a power of two when that is larger, so tuned shapes sit inside the grid.
pub fn grid_max(tuned: impl IntoIterator<Item = u32>) -> u32 {
    tuned
        .into_iter()
        .map(|v| v.max(1).checked_next_power_of_two().unwrap_or(1 << 31))
        .fold(GRID_MAX, u32::max)
}

/// Points per axis for a half-octave log grid from [`GRID_MIN`] to `hi` (a power of two).
pub fn grid_steps(hi: u32) -> usize {
    let octaves = (hi.max(GRID_MIN) as f64 / GRID_MIN as f64).log2().round() as usize;
    2 * octaves + 1
}

/// The most common K among the report's shapes (ties: the smaller K); `None` when the
/// report has no shapes.
pub fn most_common_k(report: &RunReport) -> Option<u32> {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for s in &report.shapes {
        *counts.entry(s.problem.shape.k).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(k, _)| k)
}

/// `steps` values from `lo` to `hi` spaced evenly on a log scale, rounded to integers.
pub fn log_grid(lo: u32, hi: u32, steps: usize) -> Vec<u32> {
    if steps < 2 {
        return vec![lo];
    }
    let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
    let mut v: Vec<u32> = (0..steps)
        .map(|i| (l + (h - l) * i as f64 / (steps - 1) as f64).exp().round() as u32)
        .collect();
    v.dedup();
    v
}

/// One marker of the winner map.
#[derive(Clone, Debug, PartialEq)]
pub struct Winner {
    pub m: u32,
    pub n: u32,
    pub schedule: String,
    /// True for a tuned shape (the report's chosen), false for a cost-model prediction.
    pub measured: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WinnerMap {
    pub k: u32,
    pub winners: Vec<Winner>,
    /// Largest M and N of the predicted grid ([`grid_max`]).
    pub grid_max: u32,
    /// Why there are no predictions, when there are none.
    pub note: Option<String>,
}

impl WinnerMap {
    /// Winning schedules with their point counts: measured winners first (so that they
    /// always get a color), then by frequency, then by name.
    pub fn ranked_schedules(&self) -> Vec<(String, usize)> {
        let mut counts: HashMap<&str, (bool, usize)> = HashMap::new();
        for w in &self.winners {
            let e = counts.entry(&w.schedule).or_default();
            e.0 |= w.measured;
            e.1 += 1;
        }
        let mut v: Vec<(&str, (bool, usize))> = counts.into_iter().collect();
        v.sort_by(|a, b| (b.1).cmp(&a.1).then(a.0.cmp(b.0)));
        v.into_iter()
            .map(|(s, (_, c))| (s.to_string(), c))
            .collect()
    }
}

/// Measured winners at K plus the cost model's best bit-exact schedule (split_k = 1) at
/// every other grid point. The architecture comes from the report's provenance (its table,
/// with the device's SM count, L2 size and clock when recorded); dtype and layout from the
/// first shape at K.
pub fn winner_map(report: &RunReport) -> WinnerMap {
    let Some(k) = most_common_k(report) else {
        return WinnerMap {
            note: Some("the report has no shapes".to_string()),
            ..Default::default()
        };
    };
    let at_k: Vec<_> = report
        .shapes
        .iter()
        .filter(|s| s.problem.shape.k == k)
        .collect();
    let mut winners: Vec<Winner> = at_k
        .iter()
        .filter_map(|s| {
            Some(Winner {
                m: s.problem.shape.m,
                n: s.problem.shape.n,
                schedule: s.chosen?.name(),
                measured: true,
            })
        })
        .collect();
    let (dtype, layout) = at_k.first().map_or((Dtype::Tf32, Layout::Tn), |s| {
        (s.problem.dtype, s.problem.layout)
    });
    let hi = grid_max(winners.iter().flat_map(|w| [w.m, w.n]));
    let mut note = None;
    let p = &report.provenance;
    match Arch::by_name(&p.arch) {
        Ok(arch) => {
            // The device's own numbers, when the report has them, as the run used them.
            let arch = arch.with_measured(&MeasuredProperties {
                sm_count: (p.sm_count > 0).then_some(p.sm_count),
                l2_bytes: (p.l2_bytes > 0).then_some(p.l2_bytes),
                boost_clock_mhz: (p.sm_clock_mhz > 0.0).then_some(p.sm_clock_mhz),
                ..Default::default()
            });
            let grid = log_grid(GRID_MIN, hi, grid_steps(hi));
            let shapes: Vec<Shape> = grid
                .iter()
                .flat_map(|&m| grid.iter().map(move |&n| Shape::new(m, n, k)))
                .filter(|s| !winners.iter().any(|w| w.m == s.m && w.n == s.n))
                .collect();
            let ranked = CostModel::shipped().rank_many(&arch, dtype, layout, &shapes);
            for (shape, ranked) in shapes.iter().zip(ranked) {
                // Split-K changes the reduction order: it never passes the bit-exact gate,
                // so it is never dispatched and cannot be the predicted winner.
                if let Some(first) = ranked
                    .iter()
                    .find(|r| !r.schedule.changes_reduction_order())
                {
                    winners.push(Winner {
                        m: shape.m,
                        n: shape.n,
                        schedule: first.schedule.name(),
                        measured: false,
                    });
                }
            }
        }
        Err(e) => note = Some(format!("no predictions: {e}")),
    }
    WinnerMap {
        k,
        winners,
        grid_max: hi,
        note,
    }
}
