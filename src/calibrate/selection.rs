//! How well profile selection does on shapes the profile does not hold, judged on calibration
//! data: the measured time of the schedule each rule selects against the fastest measured
//! schedule of the shape (the data's sampled best: the model's top 40 and ~150 more, a wider
//! search than `forge tune`'s). The data holds every profile schedule valid for each shape
//! (`--profile` at collection), so every rule's choice was timed in the same run.
//!
//! Rules compared: the run-time rule ([`Profile::select_by_model`]: the model over the
//! profile's gated pool), the same with each prediction corrected by the profile's own
//! measurements of that schedule on the nearest tuned shapes
//! ([`Profile::measured_correction`]), the nearest entry's schedule, the model's best among
//! the pool schedules the data timed on the shape (a choice the run-time rule makes among
//! schedules nobody timed there cannot be judged), and the best the pool holds (its fastest
//! timed schedule: the ceiling of any rule over that pool).

use super::data::ShapeData;
use crate::arch::Arch;
use crate::cost_model::CostModel;
use crate::profile::{CORRECTION_NEIGHBOURS, Profile, Selection};
use crate::schedule::{Persistence, Raster, Schedule};
use crate::shape::Shape;
use crate::space::{self, Rejection};
use serde::Serialize;

/// One shape: each rule's choice and its measured efficiency (sampled best / its time).
#[derive(Clone, Debug, Serialize)]
pub struct SelectionRow {
    pub shape: Shape,
    pub best_us: f64,
    pub best: String,
    /// The run-time rule (the model over the pool).
    pub model_rule: String,
    /// None when the chosen schedule was not timed (or did not pass) on this shape.
    pub model_rule_efficiency: Option<f64>,
    /// The model corrected by the profile's measurements near the shape.
    pub corrected_rule: String,
    pub corrected_rule_efficiency: Option<f64>,
    pub nearest_rule: String,
    pub nearest_rule_efficiency: Option<f64>,
    /// The model's best among the pool schedules this data timed on the shape (the run-time
    /// rule restricted to what can be judged: every shape gets a number).
    pub model_timed_pool_efficiency: Option<f64>,
    /// The best any rule over this pool could do: its fastest timed schedule on the shape.
    pub pool_best_efficiency: Option<f64>,
}

/// The measured time of `schedule` on the shape, or of the timed schedule it equals there
/// (the space keeps one of each such set): swizzle groups at least as wide as the grid's band
/// dimension order the tiles alike (`forge_swizzle`), and a chained tail with no partial wave
/// runs as plain persistence.
fn measured(s: &ShapeData, schedule: &Schedule, arch: &Arch) -> Option<f64> {
    let shape = &s.problem.shape;
    let key = |x: &Schedule| {
        let grid = x.work_grid(shape);
        let band = match x.raster {
            Raster::Row => grid.tiles_m,
            Raster::Column => grid.tiles_n,
        };
        let no_tail = matches!(
            space::check(arch, x, shape),
            Err(Rejection::NoTailToChain { .. })
        );
        Schedule {
            group: if x.group as u64 >= band { 0 } else { x.group },
            persistence: if no_tail {
                Persistence::Tiles
            } else {
                x.persistence
            },
            ..*x
        }
    };
    s.timed()
        .find(|(p, _)| p.schedule == *schedule)
        .or_else(|| {
            let wanted = key(schedule);
            s.timed().find(|(p, _)| key(&p.schedule) == wanted)
        })
        .map(|(_, t)| t)
}

fn row(
    profile: &Profile,
    model: &CostModel,
    s: &ShapeData,
    data_arch: &Arch,
) -> Option<SelectionRow> {
    let (best, best_us) = s.timed().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let eff = |sel: &Selection| measured(s, &sel.schedule, data_arch).map(|t| best_us / t);
    let arch = profile.arch();
    let by_model = profile.select_by_model(&s.problem, model, arch);
    let corrected = profile.select_by_model_with(&s.problem, model, arch, CORRECTION_NEIGHBOURS);
    let nearest = profile.select_nearest(&s.problem);
    let timed_pool: Vec<(Schedule, f64)> = profile
        .pool(s.problem.dtype, s.problem.layout)
        .iter()
        .filter(|x| space::runnable(arch, x, &s.problem.shape).is_ok())
        .filter_map(|x| measured(s, x, data_arch).map(|t| (*x, t)))
        .collect();
    Some(SelectionRow {
        shape: s.problem.shape,
        best_us,
        best: best.schedule.name(),
        model_rule: by_model.schedule.name(),
        model_rule_efficiency: eff(&by_model),
        corrected_rule: corrected.schedule.name(),
        corrected_rule_efficiency: eff(&corrected),
        nearest_rule: nearest.schedule.name(),
        nearest_rule_efficiency: eff(&nearest),
        model_timed_pool_efficiency: timed_pool
            .iter()
            .map(|(x, t)| {
                let p = model.predict(arch, x, &s.problem.shape, s.problem.layout);
                (p.time_us, *t)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, t)| best_us / t),
        pool_best_efficiency: timed_pool
            .iter()
            .map(|(_, t)| *t)
            .min_by(f64::total_cmp)
            .map(|t| best_us / t),
    })
}

/// Rows for `shapes` (the profile's exact entries are skipped: no rule beyond `Exact` fires).
/// The rules predict as `Profile::select` does: with the profile's arch table (with `model` =
/// the shipped constants it is exactly `select`); `data_arch` (the measured device) only says
/// which timed schedules equal a choice.
pub fn evaluate(
    profile: &Profile,
    model: &CostModel,
    shapes: &[&ShapeData],
    data_arch: &Arch,
) -> Vec<SelectionRow> {
    shapes
        .iter()
        .filter(|s| !profile.entries.iter().any(|e| e.problem() == s.problem))
        .filter_map(|s| row(profile, model, s, data_arch))
        .collect()
}

/// Leave-one-shape-out selection over every shape: each shape judged with the model fitted
/// without it (`models`, from [`super::fit::leave_one_shape_out`]) and the profile without
/// its entry for the shape, if it has one (the pool then lacks that entry's schedules unless
/// another entry holds them), so every shape is one the profile and the model never saw.
pub fn evaluate_loso(
    profile: &Profile,
    models: &[(Shape, CostModel)],
    shapes: &[&ShapeData],
    data_arch: &Arch,
) -> anyhow::Result<Vec<SelectionRow>> {
    let mut rows = vec![];
    for s in shapes {
        let Some((_, model)) = models.iter().find(|(shape, _)| *shape == s.problem.shape) else {
            continue;
        };
        let entries: Vec<_> = profile
            .entries
            .iter()
            .filter(|e| e.problem() != s.problem)
            .cloned()
            .collect();
        let without = Profile::with_pool(profile.meta.clone(), entries, profile.verified.clone())?;
        rows.extend(row(&without, model, s, data_arch));
    }
    Ok(rows)
}

impl SelectionRow {
    fn model(&self) -> Option<f64> {
        self.model_rule_efficiency
    }
    fn corrected(&self) -> Option<f64> {
        self.corrected_rule_efficiency
    }
    fn nearest(&self) -> Option<f64> {
        self.nearest_rule_efficiency
    }
    fn model_timed(&self) -> Option<f64> {
        self.model_timed_pool_efficiency
    }
    fn pool_best(&self) -> Option<f64> {
        self.pool_best_efficiency
    }
}

fn geomean(v: &[f64]) -> f64 {
    let n = v.len().max(1) as f64;
    (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
}

/// Geometric mean, worst, and count of one rule's timed efficiencies.
pub fn rule_summary(
    rows: &[SelectionRow],
    rule: fn(&SelectionRow) -> Option<f64>,
) -> (f64, f64, usize) {
    let v: Vec<f64> = rows.iter().filter_map(rule).collect();
    (
        geomean(&v),
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.len(),
    )
}

/// The rows as a small table.
pub fn text(rows: &[SelectionRow]) -> String {
    use std::fmt::Write;
    if rows.is_empty() {
        return "\nselection: no shape the profile does not hold\n".into();
    }
    let f = |e: Option<f64>| e.map_or("untimed".to_string(), |e| format!("{e:.3}"));
    let mut o = String::from(
        "\nselection on shapes the profile does not hold (sampled best / selected, measured):\n",
    );
    let _ = writeln!(
        o,
        "{:<18} {:>8} {:>9} {:>8} {:>12} {:>9}  model rule's choice",
        "shape", "model", "corrected", "nearest", "model/timed", "pool best"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "{:<18} {:>8} {:>9} {:>8} {:>12} {:>9}  {}",
            r.shape.to_string(),
            f(r.model_rule_efficiency),
            f(r.corrected_rule_efficiency),
            f(r.nearest_rule_efficiency),
            f(r.model_timed_pool_efficiency),
            f(r.pool_best_efficiency),
            r.model_rule
        );
    }
    let mut line = |what: &str, rows: &[SelectionRow]| {
        let _ = write!(o, "{what}:");
        for (name, rule) in [
            (
                "model rule",
                SelectionRow::model as fn(&SelectionRow) -> Option<f64>,
            ),
            ("corrected", SelectionRow::corrected),
            ("nearest rule", SelectionRow::nearest),
            ("model/timed pool", SelectionRow::model_timed),
            ("pool best", SelectionRow::pool_best),
        ] {
            let (g, w, n) = rule_summary(rows, rule);
            let _ = write!(o, " {name} {g:.3} (worst {w:.3}, {n})");
        }
        o.push('\n');
    };
    line("geomean (worst, shapes timed)", rows);
    let common: Vec<SelectionRow> = rows
        .iter()
        .filter(|r| {
            r.model_rule_efficiency.is_some()
                && r.corrected_rule_efficiency.is_some()
                && r.nearest_rule_efficiency.is_some()
        })
        .cloned()
        .collect();
    line("on the shapes where every rule's choice was timed", &common);
    o
}
