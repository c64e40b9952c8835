//! How well profile selection does on shapes the profile does not hold, judged on calibration
//! data: the measured time of the schedule each rule selects against the fastest measured
//! schedule of the shape (the data's sampled best: the model's top 40 and ~150 more, a wider
//! search than `forge tune`'s). The data holds every profile schedule valid for each shape
//! (`--profile` at collection), so both rules' choices were timed in the same run.

use super::data::ShapeData;
use crate::cost_model::CostModel;
use crate::profile::{Profile, Selection};
use crate::schedule::Schedule;
use crate::shape::Shape;
use serde::Serialize;

/// One shape: each rule's choice and its measured efficiency (sampled best / its time).
#[derive(Clone, Debug, Serialize)]
pub struct SelectionRow {
    pub shape: Shape,
    pub best_us: f64,
    pub best: String,
    pub model_rule: String,
    /// None when the chosen schedule was not timed (or did not pass) on this shape.
    pub model_rule_efficiency: Option<f64>,
    pub nearest_rule: String,
    pub nearest_rule_efficiency: Option<f64>,
}

fn measured(s: &ShapeData, schedule: &Schedule) -> Option<f64> {
    s.timed()
        .find(|(p, _)| p.schedule == *schedule)
        .map(|(_, t)| t)
}

/// Rows for `shapes` (the profile's exact entries are skipped: no rule beyond `Exact` fires).
/// The model rule predicts as `Profile::select` does: with the profile's arch table (with
/// `model` = the shipped constants it is exactly `select`).
pub fn evaluate(profile: &Profile, model: &CostModel, shapes: &[&ShapeData]) -> Vec<SelectionRow> {
    shapes
        .iter()
        .filter(|s| !profile.entries.iter().any(|e| e.problem() == s.problem))
        .filter_map(|s| {
            let (best, best_us) = s.timed().min_by(|a, b| a.1.total_cmp(&b.1))?;
            let eff = |sel: &Selection| measured(s, &sel.schedule).map(|t| best_us / t);
            let by_model = profile.select_by_model(&s.problem, model, profile.arch());
            let nearest = profile.select_nearest(&s.problem);
            Some(SelectionRow {
                shape: s.problem.shape,
                best_us,
                best: best.schedule.name(),
                model_rule: by_model.schedule.name(),
                model_rule_efficiency: eff(&by_model),
                nearest_rule: nearest.schedule.name(),
                nearest_rule_efficiency: eff(&nearest),
            })
        })
        .collect()
}

/// The rows as a small table.
pub fn text(rows: &[SelectionRow]) -> String {
    use std::fmt::Write;
    let f = |e: Option<f64>| e.map_or("untimed".to_string(), |e| format!("{e:.3}"));
    let mut o = String::from(
        "\nselection on shapes the profile does not hold (sampled best / selected, measured):\n",
    );
    let _ = writeln!(
        o,
        "{:<18} {:>8} {:>8}  model rule's choice",
        "shape", "model", "nearest"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "{:<18} {:>8} {:>8}  {}",
            r.shape.to_string(),
            f(r.model_rule_efficiency),
            f(r.nearest_rule_efficiency),
            r.model_rule
        );
    }
    let geo = |v: Vec<f64>| {
        let n = v.len().max(1) as f64;
        (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
    };
    let m: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.model_rule_efficiency)
        .collect();
    let n: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.nearest_rule_efficiency)
        .collect();
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let _ = writeln!(
        o,
        "geomean: model rule {:.3} (worst {:.3}, {} shapes), nearest rule {:.3} (worst {:.3}, {} shapes)",
        geo(m.clone()),
        min(&m),
        m.len(),
        geo(n.clone()),
        min(&n),
        n.len()
    );
    o
}
