//! The cost model against measurement, per shape: the Spearman rank correlation between
//! predicted and measured time over the timed candidates, and the top-1 regret (how much
//! slower the model's first pick among the timed candidates is than the fastest timed
//! candidate).

use crate::report::{RunReport, ShapeReport};

/// 1-based ranks of `values` in ascending order; tied values share the average of the
/// ranks they span (`[10, 20, 20, 30]` → `[1, 2.5, 2.5, 4]`). NaNs sort last.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && values[order[j]] == values[order[i]] {
            j += 1;
        }
        // Positions i..j (0-based) hold equal values: ranks i+1 ..= j, averaged.
        let rank = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = rank;
        }
        i = j;
    }
    ranks
}

/// Spearman's rank correlation ρ of two paired samples: the Pearson correlation of their
/// average ranks (so ties are handled exactly). `None` when the lengths differ, there are
/// fewer than two pairs, a value is not finite, or either side is constant (ρ undefined).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let (rx, ry) = (average_ranks(x), average_ranks(y));
    let n = x.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// Top-1 regret in percent over timed candidates given as (model rank, measured time):
/// how much slower the best-ranked candidate is than the fastest one. 0 when the model's
/// pick is the fastest; `None` without candidates.
pub fn top1_regret_pct(candidates: &[(u32, f64)]) -> Option<f64> {
    let pick = candidates.iter().min_by_key(|(rank, _)| *rank)?;
    let best = candidates.iter().map(|(_, t)| *t).min_by(f64::total_cmp)?;
    Some((pick.1 / best - 1.0) * 100.0)
}

/// The cost model's accuracy on one shape's timed candidates.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeAccuracy {
    /// Shape label, `MxNxK`.
    pub shape: String,
    /// Timed candidates.
    pub n: usize,
    /// Spearman ρ between predicted and measured time (None below two candidates).
    pub rho: Option<f64>,
    pub regret_pct: Option<f64>,
    /// The model's first pick among the timed candidates.
    pub model_pick: String,
    /// The fastest timed candidate.
    pub measured_best: String,
    /// (predicted µs, measured median µs, schedule) per timed candidate.
    pub points: Vec<(f64, f64, String)>,
}

/// Accuracy on one shape; `None` when no candidate was timed.
pub fn shape_accuracy(s: &ShapeReport) -> Option<ShapeAccuracy> {
    let timed: Vec<_> = s.measured().collect();
    let (pick, _) = timed.iter().min_by_key(|(c, _)| c.predicted_rank)?;
    let (best, _) = timed
        .iter()
        .min_by(|a, b| a.1.median_us.total_cmp(&b.1.median_us))?;
    let predicted: Vec<f64> = timed.iter().map(|(c, _)| c.predicted_us).collect();
    let measured: Vec<f64> = timed.iter().map(|(_, m)| m.median_us).collect();
    let ranked: Vec<(u32, f64)> = timed
        .iter()
        .map(|(c, m)| (c.predicted_rank, m.median_us))
        .collect();
    Some(ShapeAccuracy {
        shape: s.problem.shape.to_string(),
        n: timed.len(),
        rho: spearman(&predicted, &measured),
        regret_pct: top1_regret_pct(&ranked),
        model_pick: pick.schedule.name(),
        measured_best: best.schedule.name(),
        points: timed
            .iter()
            .map(|(c, m)| (c.predicted_us, m.median_us, c.schedule.name()))
            .collect(),
    })
}

/// Accuracy for every shape with timed candidates, in report order.
pub fn accuracy(report: &RunReport) -> Vec<ShapeAccuracy> {
    report.shapes.iter().filter_map(shape_accuracy).collect()
}

/// `0.83` or `n/a`.
pub fn fmt_rho(rho: Option<f64>) -> String {
    rho.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}"))
}

/// `4.2%` or `n/a`.
pub fn fmt_regret(regret: Option<f64>) -> String {
    regret.map_or_else(|| "n/a".to_string(), |r| format!("{r:.1}%"))
}
