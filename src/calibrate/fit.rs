//! Fitting the cost model's constants to a calibration data set, and the ranking metrics the
//! fit is judged by. Pure: runs on any machine from `calibration.json`.
//!
//! The model stays the analytical one of `cost_model/README.md`; only its constants move.
//! Each free constant ([`FREE`]) is searched within physical bounds by coordinate descent on
//! multiplicative steps (deterministic, no gradients: the model has max/floor kinks), to
//! minimise the mean over training shapes of the weighted mean squared log error
//! `(ln predicted − ln measured)²` of the shape's gate-passing points. Points near the shape's
//! best are weighted up ([`weight`]): the ranking near the top is what selection uses.

use super::data::{CalibrationData, ShapeData};
use super::noise;
use crate::analysis::model_accuracy::spearman;
use crate::arch::Arch;
use crate::cost_model::CostModel;
use crate::schedule::{one_per_kernel, same_kernel};
use crate::shape::Shape;
use serde::Serialize;

/// One free constant: its key in model.toml (`{arch}` stands for the data set's arch) and its
/// search bounds.
#[derive(Clone, Copy, Debug)]
pub struct Free {
    pub key: &'static str,
    pub lo: f64,
    pub hi: f64,
}

const fn free(key: &'static str, lo: f64, hi: f64) -> Free {
    Free { key, lo, hi }
}

/// The constants a calibration moves. Structural ones (register granularity, reserved shared
/// memory, register overheads) are facts of the hardware and the kernels, not fitted; the
/// transpose, pad and split-K constants are not exercised by the data (TN, K % 4 = 0, no
/// split-K: they are set from their own measurements, cost_model/model.toml). Two bounds are
/// physical limits the free fit ran past (it traded them against the fill and epilogue terms):
/// the persistent scheduler's cost per extra unit is index math and a barrier (≤ 500 clk, it
/// went to 2,100–4,150), and C leaves an SM at most at its 128 B/clk L1/shared-memory port (it
/// went to the 1,024 bound, pricing the epilogue's stores at nothing). The shared-memory
/// bandwidth is bounded by the same 128 B/clk (32 banks × 4 B): with the multicast term the
/// free fit ran it to 512, pricing ping-pong's second read of B at nothing (measured: pp
/// 1.08–1.22× the cooperative kernel's time).
pub const FREE: [Free; 33] = [
    free("global.launch_us", 0.5, 10.0),
    free("global.dram_efficiency", 0.5, 1.0),
    free("global.l2_effective_fraction", 0.2, 1.0),
    free("global.overlap_loss", 0.0, 0.5),
    free("global.load_latency_clk", 100.0, 10000.0),
    free("global.pipeline_latency_clk", 100.0, 4000.0),
    free("global.epilogue_fixed_clk", 0.0, 5000.0),
    free("global.epilogue_bytes_per_clk_per_sm", 16.0, 128.0),
    free("global.epilogue_staged_factor", 0.1, 1.2),
    free("global.smem_bytes_per_clk_per_sm", 32.0, 128.0),
    free("global.persistent_unit_clk", 0.0, 500.0),
    free("global.l2_port_bytes_per_clk_per_sm", 16.0, 1024.0),
    free("global.l2_share_loss_per_doubling", 0.0, 0.5),
    free("global.unaligned_row_l2_factor", 1.0, 4.0),
    free("global.multicast_l2_saving", 0.0, 1.0),
    free("global.pingpong_lone_tile_factor", 0.8, 1.25),
    free("global.resource_norm", 1.0, 64.0),
    free("l2_bytes_per_clk_per_sm.{arch}", 8.0, 512.0),
    free("family.mma_sync.efficiency.{arch}", 0.05, 1.0),
    free("family.mma_sync.issue_fraction.4", 0.1, 1.0),
    free("family.mma_sync.issue_fraction.8", 0.1, 1.0),
    free("family.mma_sync.cta_prologue_clk", 0.0, 5000.0),
    free("family.mma_sync.fill_hidden_persistent", 0.0, 1.0),
    free("family.mma_sync.epilogue_overlap_persistent", 0.0, 1.0),
    free("family.wgmma.efficiency.{arch}", 0.3, 0.8),
    free("family.wgmma.issue_fraction.1", 0.1, 1.0),
    free("family.wgmma.issue_fraction.2", 0.1, 1.0),
    free("family.wgmma.cta_prologue_clk", 0.0, 5000.0),
    free("family.wgmma.fill_hidden_persistent", 0.0, 1.0),
    free("family.wgmma.epilogue_overlap_persistent", 0.0, 1.0),
    free("family.wgmma.cluster_ktile_clk", 0.0, 1000.0),
    free("family.wgmma.cluster_fill_clk", 0.0, 10000.0),
    free("family.wgmma.cluster_stage_clk", 0.0, 10000.0),
];

/// The free constants named by `keys` (as [`FREE`] spells them, `{arch}` included), in
/// [`FREE`]'s order; an unknown key is an error that names it and the known ones.
pub fn free_constants(keys: &[String]) -> Result<Vec<Free>, String> {
    // `l2_bytes_per_clk_per_sm.{arch}` also answers to `l2_bytes_per_clk_per_sm.sm_90a`.
    let names = |f: &Free, k: &str| {
        f.key == k
            || f.key
                .strip_suffix("{arch}")
                .and_then(|p| k.strip_prefix(p))
                .is_some_and(|arch| !arch.is_empty() && !arch.contains('.'))
    };
    for k in keys {
        if !FREE.iter().any(|f| names(f, k)) {
            let known: Vec<&str> = FREE.iter().map(|f| f.key).collect();
            return Err(format!(
                "`{k}` is not a fitted constant; known: {}",
                known.join(", ")
            ));
        }
    }
    Ok(FREE
        .iter()
        .filter(|f| keys.iter().any(|k| names(f, k)))
        .copied()
        .collect())
}

/// A model as a TOML table, so a constant can be read and written by its dotted key.
fn table_of(model: &CostModel) -> toml::Table {
    toml::Table::try_from(model).expect("a cost model serializes")
}

fn slot<'a>(t: &'a mut toml::Table, key: &str) -> &'a mut toml::Value {
    let mut parts = key.split('.').peekable();
    let mut table = t;
    loop {
        let part = parts.next().expect("non-empty key");
        if parts.peek().is_none() {
            return table
                .entry(part.to_string())
                .or_insert(toml::Value::Float(0.0));
        }
        table = table
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("model.toml keys are tables down to the constant");
    }
}

fn get(t: &toml::Table, key: &str) -> f64 {
    let mut v: Option<&toml::Value> = None;
    let mut table = Some(t);
    for part in key.split('.') {
        v = table.and_then(|t| t.get(part));
        table = v.and_then(|v| v.as_table());
    }
    match v {
        Some(toml::Value::Float(f)) => *f,
        Some(toml::Value::Integer(i)) => *i as f64,
        _ => f64::NAN,
    }
}

/// The free constants' values in `model` for `arch` (a missing per-arch key reads its
/// `default`).
pub fn values(model: &CostModel, arch: &str) -> Vec<f64> {
    let t = table_of(model);
    FREE.iter()
        .map(|f| {
            let key = f.key.replace("{arch}", arch);
            let v = get(&t, &key);
            if v.is_nan() {
                get(&t, &f.key.replace("{arch}", "default"))
            } else {
                v
            }
        })
        .collect()
}

/// `model` with the free constants set to `x`.
pub fn with_values(model: &CostModel, arch: &str, x: &[f64]) -> CostModel {
    let mut t = table_of(model);
    for (f, v) in FREE.iter().zip(x) {
        *slot(&mut t, &f.key.replace("{arch}", arch)) = toml::Value::Float(*v);
    }
    t.try_into()
        .expect("the free constants keep the model's form")
}

/// A point's weight: 3 within 10% of the shape's best, else 1 (the ranking near the top
/// decides selection), so the fit cannot buy the tail's accuracy with the top's. (A steeper
/// 10/3/1 weighting fitted the top better on training shapes and worse on held-out ones.)
pub fn weight(measured_us: f64, best_us: f64) -> f64 {
    if measured_us <= best_us * 1.10 {
        3.0
    } else {
        1.0
    }
}

/// The fit's objective: the mean over shapes of the weighted mean squared log error.
pub fn loss(model: &CostModel, arch: &Arch, shapes: &[&ShapeData]) -> f64 {
    let mut total = 0.0;
    let mut n = 0;
    for s in shapes {
        let timed: Vec<_> = s.timed().collect();
        let Some(best) = timed.iter().map(|(_, t)| *t).min_by(f64::total_cmp) else {
            continue;
        };
        let (mut sum, mut wsum) = (0.0, 0.0);
        for (p, t) in &timed {
            let pred = model
                .predict(arch, &p.schedule, &s.problem.shape, s.problem.layout)
                .time_us;
            let w = weight(*t, best);
            sum += w * (pred.ln() - t.ln()).powi(2);
            wsum += w;
        }
        total += sum / wsum;
        n += 1;
    }
    if n == 0 { 0.0 } else { total / n as f64 }
}

/// What a fit did.
#[derive(Clone, Debug)]
pub struct FitResult {
    pub model: CostModel,
    pub loss_before: f64,
    pub loss_after: f64,
    pub sweeps: usize,
    /// (key, before, after) of every free constant.
    pub changes: Vec<(String, f64, f64)>,
}

/// Coordinate descent: each sweep tries every constant × (1 ± step) (clamped to its bounds;
/// fractions that start at 0 step additively), keeping any change that lowers the loss; the
/// step halves after a sweep without improvement, down to 0.5%.
pub fn fit(
    start: &CostModel,
    arch: &Arch,
    train: &[&ShapeData],
    max_sweeps: usize,
    free: &[Free],
) -> FitResult {
    let name = arch.name.as_str();
    let mut x = values(start, name);
    let before = x.clone();
    let eval = |x: &[f64]| loss(&with_values(start, name, x), arch, train);
    let loss_before = eval(&x);
    let mut best = loss_before;
    let mut step = 0.3;
    let mut sweeps = 0;
    while sweeps < max_sweeps && step >= 0.005 {
        sweeps += 1;
        let mut improved = false;
        for (i, f) in FREE.iter().enumerate() {
            if !free.iter().any(|g| g.key == f.key) {
                continue;
            }
            // A constant whose 0 means "off" below its bounds (`resource_norm`) stays off.
            if x[i] == 0.0 && f.lo > 0.0 {
                continue;
            }
            for dir in [1.0, -1.0] {
                let old = x[i];
                let moved = if old.abs() < 1e-9 {
                    dir * step * (f.hi - f.lo) * 0.1
                } else {
                    old * (1.0 + dir * step)
                };
                let new = moved.clamp(f.lo, f.hi);
                if (new - old).abs() < 1e-12 {
                    continue;
                }
                x[i] = new;
                let l = eval(&x);
                if l < best - 1e-12 {
                    best = l;
                    improved = true;
                    break;
                }
                x[i] = old;
            }
        }
        if !improved {
            step *= 0.5;
        }
    }
    let model = with_values(start, name, &x);
    FitResult {
        model,
        loss_before,
        loss_after: best,
        sweeps,
        changes: FREE
            .iter()
            .zip(before.iter().zip(&x))
            .map(|(f, (b, a))| (f.key.replace("{arch}", name), *b, *a))
            .collect(),
    }
}

/// The ranking metrics of one model on one shape's gate-passing points.
#[derive(Clone, Debug, Serialize)]
pub struct ShapeMetrics {
    pub shape: Shape,
    pub points: usize,
    /// Measured time of the fastest point / measured time of the model's #1 (≤ 1).
    pub top1: f64,
    /// The fastest point is among the model's 4 (16) lowest predictions.
    pub best_in_top4: bool,
    pub best_in_top16: bool,
    /// Fastest / the fastest of the model's top 4 (what a 4-candidate tune reaches).
    pub top4_efficiency: f64,
    /// The fastest point's kernel is among the model's 4 best-ranked kernels, launch variants
    /// (raster, swizzle group, plain / persistent / chained-tail grid) counted as one kernel
    /// ([`crate::schedule::same_kernel`]): what a tune that screens the model's diverse
    /// picks and then times the launch variants of the fastest (`--refine`) can find.
    pub best_kernel_in_top4: bool,
    /// Fastest / the fastest timed point of those 4 kernels (any launch in the data).
    pub top4_kernels_efficiency: f64,
    pub rho: Option<f64>,
    /// median |predicted / measured − 1|.
    pub median_abs_rel_error: f64,
    pub model_pick: String,
    pub measured_best: String,
    /// Where the data hold repeated timings (`calibrate --repeat`): one timing's noise, the
    /// model's top 4 holds the fastest point or one not told apart from it
    /// ([`noise::slower_than_best`]), and the strict count's ceiling ([`noise::top4_ceiling`]).
    pub noise_sigma: Option<f64>,
    pub tie_in_top4: Option<bool>,
    pub top4_ceiling: Option<f64>,
    /// The pessimistic estimate of that ceiling ([`noise::top4_split_halves`]).
    pub split_halves_ceiling: Option<f64>,
}

pub fn shape_metrics(model: &CostModel, arch: &Arch, s: &ShapeData) -> Option<ShapeMetrics> {
    let timed: Vec<_> = s.timed().collect();
    if timed.is_empty() {
        return None;
    }
    let pred: Vec<f64> = timed
        .iter()
        .map(|(p, _)| {
            model
                .predict(arch, &p.schedule, &s.problem.shape, s.problem.layout)
                .time_us
        })
        .collect();
    let meas: Vec<f64> = timed.iter().map(|(_, t)| *t).collect();
    let mut order: Vec<usize> = (0..timed.len()).collect();
    // Ties in prediction: by name, as `CostModel::rank` breaks them.
    order.sort_by(|&a, &b| {
        pred[a]
            .total_cmp(&pred[b])
            .then_with(|| timed[a].0.schedule.name().cmp(&timed[b].0.schedule.name()))
    });
    let best = (0..meas.len())
        .min_by(|&a, &b| meas[a].total_cmp(&meas[b]))
        .expect("non-empty");
    let pos = order.iter().position(|&i| i == best).expect("present");
    let best_of = |k: usize| {
        order
            .iter()
            .take(k)
            .map(|&i| meas[i])
            .fold(f64::INFINITY, f64::min)
    };
    let kernels = one_per_kernel(order.iter().map(|&i| timed[i].0.schedule), 4);
    let in_top_kernels = |i: usize| kernels.iter().any(|k| same_kernel(k, &timed[i].0.schedule));
    let best_of_kernels = (0..meas.len())
        .filter(|&i| in_top_kernels(i))
        .map(|i| meas[i])
        .fold(f64::INFINITY, f64::min);
    let mut errors: Vec<f64> = pred
        .iter()
        .zip(&meas)
        .map(|(p, m)| (p / m - 1.0).abs())
        .collect();
    errors.sort_by(f64::total_cmp);
    let noise = noise::shape_noise(s);
    let counts: Vec<usize> = timed.iter().map(|(p, _)| noise::timings(p)).collect();
    let tie_in_top4 = noise.map(|n| {
        order
            .iter()
            .take(4)
            .any(|&i| !noise::slower_than_best(&n, meas[i], counts[i], meas[best], counts[best]))
    });
    let top4_ceiling = noise.map(|n| {
        let points: Vec<(f64, usize)> = meas.iter().copied().zip(counts.iter().copied()).collect();
        noise::top4_ceiling(&points, &n, CEILING_SEED)
    });
    let split_halves_ceiling = noise.and_then(|_| {
        let points: Vec<&super::data::Point> = timed.iter().map(|(p, _)| *p).collect();
        noise::top4_split_halves(&points, CEILING_SEED)
    });
    Some(ShapeMetrics {
        shape: s.problem.shape,
        points: timed.len(),
        top1: meas[best] / meas[order[0]],
        best_in_top4: pos < 4,
        best_in_top16: pos < 16,
        top4_efficiency: meas[best] / best_of(4),
        best_kernel_in_top4: in_top_kernels(best),
        top4_kernels_efficiency: meas[best] / best_of_kernels,
        rho: spearman(&pred, &meas),
        median_abs_rel_error: errors[errors.len() / 2],
        model_pick: timed[order[0]].0.schedule.name(),
        measured_best: timed[best].0.schedule.name(),
        noise_sigma: noise.map(|n| n.sigma),
        tie_in_top4,
        top4_ceiling,
        split_halves_ceiling,
    })
}

/// The Monte Carlo seed of the ceiling (the report is reproducible).
const CEILING_SEED: u64 = 20261204;

/// "Near the best": measured within this factor of the fastest point (1%).
pub const NEAR_BEST: f64 = 1.01;

/// Metrics over a set of shapes.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub shapes: Vec<ShapeMetrics>,
    /// Geometric mean of top1.
    pub top1_geomean: f64,
    pub worst_top1: f64,
    /// Fraction of shapes whose fastest point is in the model's top 4 (16).
    pub best_in_top4: f64,
    pub best_in_top16: f64,
    /// Fraction of shapes whose model top 4 holds a point measured within 1% of the fastest
    /// (a tolerant companion of `best_in_top4`, which counts only the fastest point itself:
    /// 1–29 schedules per shape measure within 3% of the best, so the strict count hinges on
    /// near-ties).
    pub near_best_in_top4: f64,
    pub top4_efficiency_geomean: f64,
    /// Fraction of shapes whose fastest point's kernel is among the model's 4 best-ranked
    /// kernels, and the geomean and worst of [`ShapeMetrics::top4_kernels_efficiency`].
    pub best_kernel_in_top4: f64,
    pub top4_kernels_efficiency_geomean: f64,
    pub worst_top4_kernels_efficiency: f64,
    /// Median over shapes of ρ.
    pub rho_median: f64,
    pub rho_min: f64,
    /// Median over shapes of the per-shape median |pred/meas − 1|.
    pub median_abs_rel_error: f64,
    /// Shapes with repeated timings, and over those: the strict count, the count with ties,
    /// the mean ceiling of the strict count, the median noise of one timing.
    pub decided_shapes: usize,
    pub decided_best_in_top4: f64,
    pub decided_tie_in_top4: f64,
    pub decided_top4_ceiling: f64,
    /// Over the shapes where it is defined: the mean pessimistic ceiling
    /// ([`noise::top4_split_halves`]), and how many shapes that is.
    pub decided_split_halves_ceiling: f64,
    pub decided_split_halves_shapes: usize,
    pub decided_noise_sigma: f64,
}

fn median(v: Vec<f64>) -> f64 {
    crate::stats::median(&v).unwrap_or(f64::NAN)
}

pub fn summarize(model: &CostModel, arch: &Arch, shapes: &[&ShapeData]) -> Summary {
    summary_of(
        shapes
            .iter()
            .filter_map(|s| shape_metrics(model, arch, s))
            .collect(),
    )
}

/// The summary of per-shape metrics (each shape may have been judged by another model, as in
/// [`leave_one_shape_out`]).
pub fn summary_of(m: Vec<ShapeMetrics>) -> Summary {
    let n = m.len().max(1) as f64;
    let geo =
        |f: &dyn Fn(&ShapeMetrics) -> f64| (m.iter().map(|x| f(x).ln()).sum::<f64>() / n).exp();
    let rhos: Vec<f64> = m.iter().filter_map(|x| x.rho).collect();
    let decided: Vec<&ShapeMetrics> = m.iter().filter(|x| x.noise_sigma.is_some()).collect();
    let share = |f: &dyn Fn(&ShapeMetrics) -> bool| {
        decided.iter().filter(|x| f(x)).count() as f64 / decided.len().max(1) as f64
    };
    Summary {
        top1_geomean: geo(&|x| x.top1),
        worst_top1: m.iter().map(|x| x.top1).fold(f64::INFINITY, f64::min),
        best_in_top4: m.iter().filter(|x| x.best_in_top4).count() as f64 / n,
        best_in_top16: m.iter().filter(|x| x.best_in_top16).count() as f64 / n,
        near_best_in_top4: m
            .iter()
            .filter(|x| x.top4_efficiency * NEAR_BEST >= 1.0)
            .count() as f64
            / n,
        top4_efficiency_geomean: geo(&|x| x.top4_efficiency),
        best_kernel_in_top4: m.iter().filter(|x| x.best_kernel_in_top4).count() as f64 / n,
        top4_kernels_efficiency_geomean: geo(&|x| x.top4_kernels_efficiency),
        worst_top4_kernels_efficiency: m
            .iter()
            .map(|x| x.top4_kernels_efficiency)
            .fold(f64::INFINITY, f64::min),
        rho_median: median(rhos.clone()),
        rho_min: rhos.iter().copied().fold(f64::INFINITY, f64::min),
        median_abs_rel_error: median(m.iter().map(|x| x.median_abs_rel_error).collect()),
        decided_shapes: decided.len(),
        decided_best_in_top4: share(&|x| x.best_in_top4),
        decided_tie_in_top4: share(&|x| x.tie_in_top4 == Some(true)),
        decided_top4_ceiling: decided.iter().filter_map(|x| x.top4_ceiling).sum::<f64>()
            / decided.len().max(1) as f64,
        decided_split_halves_ceiling: {
            let v: Vec<f64> = decided
                .iter()
                .filter_map(|x| x.split_halves_ceiling)
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        },
        decided_split_halves_shapes: decided
            .iter()
            .filter(|x| x.split_halves_ceiling.is_some())
            .count(),
        decided_noise_sigma: median(decided.iter().filter_map(|x| x.noise_sigma).collect()),
        shapes: m,
    }
}

/// How a model prices 2-CTA clusters against their 1-CTA twins (the same schedule with one
/// CTA per cluster) where the data timed both: the cluster size is the choice the model missed
/// most (reports/notes.md, sessions 9 and 10).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterPairs {
    pub pairs: usize,
    /// Shapes with at least one pair.
    pub shapes: usize,
    /// RMS over shapes of the shape's mean error ln(pred c2/c1) − ln(meas c2/c1).
    pub rms_error: f64,
    /// Pairs whose measured times differ by more than 5%, and of those the ones where the
    /// model has the faster of the two right.
    pub clear: usize,
    pub direction_right: usize,
}

pub fn cluster_pairs(model: &CostModel, arch: &Arch, shapes: &[&ShapeData]) -> ClusterPairs {
    let mut r = ClusterPairs {
        pairs: 0,
        shapes: 0,
        rms_error: 0.0,
        clear: 0,
        direction_right: 0,
    };
    let mut sum_sq = 0.0;
    for s in shapes {
        let timed: Vec<_> = s.timed().collect();
        let predict = |sched: &crate::schedule::Schedule| {
            model
                .predict(arch, sched, &s.problem.shape, s.problem.layout)
                .time_us
        };
        let mut errors = vec![];
        for (p, t) in timed.iter().filter(|(p, _)| p.schedule.cluster == 2) {
            let twin = crate::schedule::Schedule {
                cluster: 1,
                ..p.schedule
            };
            let Some((_, t1)) = timed.iter().find(|(q, _)| q.schedule == twin) else {
                continue;
            };
            let measured = (t / t1).ln();
            let predicted = (predict(&p.schedule) / predict(&twin)).ln();
            errors.push(predicted - measured);
            if measured.abs() > 0.05 {
                r.clear += 1;
                r.direction_right += usize::from(measured.signum() == predicted.signum());
            }
        }
        if !errors.is_empty() {
            let mean = errors.iter().sum::<f64>() / errors.len() as f64;
            sum_sq += mean * mean;
            r.pairs += errors.len();
            r.shapes += 1;
        }
    }
    r.rms_error = (sum_sq / r.shapes.max(1) as f64).sqrt();
    r
}

/// One row of `residuals.csv`: a point's prediction, its terms and the measurement, so the
/// residual ln(pred/meas) can be grouped by any schedule attribute.
pub fn residuals_csv(model: &CostModel, arch: &Arch, shapes: &[&ShapeData]) -> String {
    use std::fmt::Write;
    let mut o = String::from(
        "m,n,k,schedule,family,bm,bn,stages,workers,group,raster,persistence,cluster,split_k,\
         predicted_us,measured_us,log_residual,rel_to_best,mainloop_us,tail_wave_us,latency_us,\
         epilogue_us,launch_us,transpose_us,compute_us,smem_us,l2_us,dram_us,waves,ctas_per_sm,\
         dominant\n",
    );
    for s in shapes {
        let timed: Vec<_> = s.timed().collect();
        let Some(best) = timed.iter().map(|(_, t)| *t).min_by(f64::total_cmp) else {
            continue;
        };
        let sh = s.problem.shape;
        for (p, t) in &timed {
            let x = &p.schedule;
            let pr = model.predict(arch, x, &sh, s.problem.layout);
            let tt = &pr.terms;
            let _ = writeln!(
                o,
                "{},{},{},{},{},{},{},{},{},{},{:?},{},{},{},{:.3},{:.3},{:.4},{:.4},{:.3},{:.3},\
                 {:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{:?}",
                sh.m,
                sh.n,
                sh.k,
                x.name(),
                x.family.as_str(),
                x.tile.bm,
                x.tile.bn,
                x.stages,
                x.workers,
                x.group,
                x.raster,
                x.persistence.as_str(),
                x.cluster,
                x.split_k,
                pr.time_us,
                t,
                (pr.time_us / t).ln(),
                t / best,
                tt.mainloop_us,
                tt.tail_wave_us,
                tt.latency_us,
                tt.epilogue_us,
                tt.launch_us,
                tt.transpose_us,
                tt.compute_us,
                tt.smem_us,
                tt.l2_us,
                tt.dram_us,
                tt.waves,
                tt.ctas_per_sm,
                pr.dominant
            );
        }
    }
    o
}

/// Leave-one-shape-out cross-validation: for each shape, the model fitted (from `start`) on
/// every other shape, and that model's metrics on the shape it never saw. A more robust
/// held-out measure than one fixed split: every shape is held out once. Fits run in parallel.
pub struct Loso {
    /// (held-out shape, the model fitted without it), in data order.
    pub models: Vec<(Shape, CostModel)>,
    pub heldout: Summary,
}

pub fn leave_one_shape_out(
    start: &CostModel,
    arch: &Arch,
    shapes: &[&ShapeData],
    max_sweeps: usize,
    free: &[Free],
) -> Loso {
    use rayon::prelude::*;
    let fitted: Vec<(Shape, CostModel, Option<ShapeMetrics>)> = (0..shapes.len())
        .into_par_iter()
        .map(|i| {
            let train: Vec<&ShapeData> = shapes
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, s)| *s)
                .collect();
            let model = fit(start, arch, &train, max_sweeps, free).model;
            let metrics = shape_metrics(&model, arch, shapes[i]);
            (shapes[i].problem.shape, model, metrics)
        })
        .collect();
    let heldout = summary_of(fitted.iter().filter_map(|(_, _, m)| m.clone()).collect());
    Loso {
        models: fitted.into_iter().map(|(s, m, _)| (s, m)).collect(),
        heldout,
    }
}

/// Training and held-out shapes of a data set: held out are the shapes in `holdout`; the
/// rest train.
pub fn split<'a>(
    data: &'a CalibrationData,
    holdout: &[Shape],
) -> (Vec<&'a ShapeData>, Vec<&'a ShapeData>) {
    data.shapes
        .iter()
        .filter(|s| s.reference_passed)
        .partition(|s| !holdout.contains(&s.problem.shape))
}

/// Everything `forge calibrate --fit` reports (and writes as fit.json).
#[derive(Clone, Debug, Serialize)]
pub struct FitReport {
    pub device_name: String,
    pub arch: String,
    pub train_shapes: Vec<Shape>,
    pub heldout_shapes: Vec<Shape>,
    pub loss_before: f64,
    pub loss_after: f64,
    pub heldout_loss_before: f64,
    pub heldout_loss_after: f64,
    pub sweeps: usize,
    pub train_before: Summary,
    pub train_after: Summary,
    /// Clusters against their 1-CTA twins over every shape (training and held out), with the
    /// start model and the fitted one.
    pub cluster_pairs_before: ClusterPairs,
    pub cluster_pairs_after: ClusterPairs,
    pub heldout_before: Option<Summary>,
    pub heldout_after: Option<Summary>,
    /// (key, before, after).
    pub changes: Vec<(String, f64, f64)>,
    /// Profile selection on the held-out shapes, with the model before and after the fit.
    pub selection: Vec<(String, Vec<super::selection::SelectionRow>)>,
    /// Leave-one-shape-out over every shape: the start model's metrics on all shapes, and each
    /// shape judged by the model fitted without it.
    pub loso_before: Option<Summary>,
    pub loso_after: Option<Summary>,
}

impl FitReport {
    pub fn new(
        start: &CostModel,
        r: &FitResult,
        data: &CalibrationData,
        train: &[&ShapeData],
        test: &[&ShapeData],
    ) -> FitReport {
        let arch = &data.arch;
        let held = |m: &CostModel| (!test.is_empty()).then(|| summarize(m, arch, test));
        let all: Vec<&ShapeData> = train.iter().chain(test).copied().collect();
        FitReport {
            device_name: data.device_name.clone(),
            arch: arch.name.clone(),
            train_shapes: train.iter().map(|s| s.problem.shape).collect(),
            heldout_shapes: test.iter().map(|s| s.problem.shape).collect(),
            loss_before: r.loss_before,
            loss_after: r.loss_after,
            heldout_loss_before: loss(start, arch, test),
            heldout_loss_after: loss(&r.model, arch, test),
            sweeps: r.sweeps,
            train_before: summarize(start, arch, train),
            cluster_pairs_before: cluster_pairs(start, arch, &all),
            cluster_pairs_after: cluster_pairs(&r.model, arch, &all),
            train_after: summarize(&r.model, arch, train),
            heldout_before: held(start),
            heldout_after: held(&r.model),
            changes: r.changes.clone(),
            selection: vec![],
            loso_before: None,
            loso_after: None,
        }
    }

    /// Adds the leave-one-shape-out result (`all`: every shape it ran over).
    pub fn with_loso(
        mut self,
        start: &CostModel,
        arch: &Arch,
        all: &[&ShapeData],
        loso: &Loso,
    ) -> FitReport {
        self.loso_before = Some(summarize(start, arch, all));
        self.loso_after = Some(loso.heldout.clone());
        self
    }

    /// The human-readable report.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "fit on {} ({}): {} training shapes, {} held out; {} sweeps; loss (mean sq. log \
             error, weighted) train {:.4} -> {:.4}, held out {:.4} -> {:.4}",
            self.device_name,
            self.arch,
            self.train_shapes.len(),
            self.heldout_shapes.len(),
            self.sweeps,
            self.loss_before,
            self.loss_after,
            self.heldout_loss_before,
            self.heldout_loss_after
        );
        let line = |o: &mut String, what: &str, s: &Summary| {
            let _ = writeln!(
                o,
                "{what:<20} top-1 {:.3} (worst {:.3})  best in top-4 {:>3.0}%  top-16 {:>3.0}%  \
                 (within 1% of best in top-4 {:>3.0}%)  top-4 eff. {:.3}  rho median {:.2} \
                 (min {:.2})  median |pred/meas-1| {:.1}%",
                s.top1_geomean,
                s.worst_top1,
                s.best_in_top4 * 100.0,
                s.best_in_top16 * 100.0,
                s.near_best_in_top4 * 100.0,
                s.top4_efficiency_geomean,
                s.rho_median,
                s.rho_min,
                s.median_abs_rel_error * 100.0
            );
            let _ = writeln!(
                o,
                "{what:<20} the best's kernel among the model's 4 best-ranked kernels {:>3.0}% \
                 (launch variants as one kernel; the best timed launch of those 4 / the best: \
                 geomean {:.3}, worst {:.3})",
                s.best_kernel_in_top4 * 100.0,
                s.top4_kernels_efficiency_geomean,
                s.worst_top4_kernels_efficiency
            );
        };
        let decided = |o: &mut String, what: &str, s: &Summary| {
            if s.decided_shapes > 0 {
                let _ = writeln!(
                    o,
                    "{what:<20} {} shapes with repeated timings (one timing's noise {:.2}%, \
                     median): best in top-4 {:.0}%, the best or a tie of it {:.0}%; a model \
                     that knew every true time, estimated: {} (split halves, pessimistic) to \
                     {:.0}% (re-timings around the decided times, optimistic){}",
                    s.decided_shapes,
                    s.decided_noise_sigma * 100.0,
                    s.decided_best_in_top4 * 100.0,
                    s.decided_tie_in_top4 * 100.0,
                    if s.decided_split_halves_shapes > 0 {
                        format!(
                            "{:.0}% over {} shapes",
                            s.decided_split_halves_ceiling * 100.0,
                            s.decided_split_halves_shapes
                        )
                    } else {
                        "-".to_string()
                    },
                    s.decided_top4_ceiling * 100.0,
                    if s.decided_split_halves_shapes > 0
                        && s.decided_split_halves_ceiling > s.decided_top4_ceiling
                    {
                        " (the estimates cross: too few shapes to tell)"
                    } else {
                        ""
                    },
                );
            }
        };
        line(&mut o, "train, before", &self.train_before);
        line(&mut o, "train, after", &self.train_after);
        decided(&mut o, "train, after", &self.train_after);
        for (what, c) in [
            ("before", &self.cluster_pairs_before),
            ("after", &self.cluster_pairs_after),
        ] {
            let _ = writeln!(
                o,
                "2-CTA clusters vs their 1-CTA twins, {what:<6} {} pairs on {} shapes (all): \
                 error rms {:.3}, the faster right in {} of {} pairs that differ by > 5%",
                c.pairs, c.shapes, c.rms_error, c.direction_right, c.clear
            );
        }
        if let (Some(b), Some(a)) = (&self.heldout_before, &self.heldout_after) {
            line(&mut o, "held out, before", b);
            line(&mut o, "held out, after", a);
            decided(&mut o, "held out, before", b);
            decided(&mut o, "held out, after", a);
            let _ = writeln!(
                o,
                "\n{:<18} {:>6} {:>7} {:>7} {:>6} {:>6} {:>7} {:>7}  model's #1 after",
                "held-out shape", "points", "top1 b", "top1 a", "rho b", "rho a", "err b", "err a"
            );
            for (x, y) in b.shapes.iter().zip(&a.shapes) {
                let _ = writeln!(
                    o,
                    "{:<18} {:>6} {:>7.3} {:>7.3} {:>6} {:>6} {:>6.1}% {:>6.1}%  {}",
                    x.shape.to_string(),
                    x.points,
                    x.top1,
                    y.top1,
                    x.rho.map_or("n/a".into(), |r| format!("{r:.2}")),
                    y.rho.map_or("n/a".into(), |r| format!("{r:.2}")),
                    x.median_abs_rel_error * 100.0,
                    y.median_abs_rel_error * 100.0,
                    y.model_pick
                );
            }
        }
        if let (Some(b), Some(a)) = (&self.loso_before, &self.loso_after) {
            let _ = writeln!(
                o,
                "\nleave-one-shape-out ({} shapes; each judged by the model fitted on the others):",
                a.shapes.len()
            );
            line(&mut o, "all, start model", b);
            line(&mut o, "LOSO held out", a);
            decided(&mut o, "LOSO held out", a);
            let _ = writeln!(
                o,
                "{:<18} {:>6} {:>7} {:>5} {:>6} {:>7}  model's #1 (LOSO) / measured best",
                "shape", "points", "top1", "rank4", "rho", "err"
            );
            for x in &a.shapes {
                let _ = writeln!(
                    o,
                    "{:<18} {:>6} {:>7.3} {:>5} {:>6} {:>6.1}%  {} / {}",
                    x.shape.to_string(),
                    x.points,
                    x.top1,
                    if x.best_in_top4 { "yes" } else { "no" },
                    x.rho.map_or("n/a".into(), |r| format!("{r:.2}")),
                    x.median_abs_rel_error * 100.0,
                    x.model_pick,
                    x.measured_best
                );
            }
        }
        let _ = writeln!(o, "\nconstants (before -> after):");
        for (k, b, a) in &self.changes {
            let mark = if (a - b).abs() > 1e-9 * b.abs().max(1.0) {
                "*"
            } else {
                " "
            };
            let _ = writeln!(o, "{mark} {k:<48} {b:>10.4} -> {a:.4}");
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::data::Point;
    use crate::calibrate::sample::Origin;
    use crate::contract::Contract;
    use crate::device::timing::TimingConfig;
    use crate::problem::Problem;
    use crate::report::{Measurement, Verdict};
    use crate::schedule::{Dtype, Layout, Schedule};

    /// One TN shape's points, the reference check passed.
    fn shape_data(shape: Shape, points: Vec<Point>) -> ShapeData {
        ShapeData {
            problem: Problem::new(Dtype::Tf32, Layout::Tn, shape),
            cublas: None,
            reference_passed: true,
            points,
        }
    }

    /// A data set "measured" by a model with other constants (every 7th valid schedule).
    fn synthetic(truth: &CostModel, arch: &Arch, shapes: &[Shape]) -> CalibrationData {
        let shapes = shapes
            .iter()
            .map(|&shape| {
                let ranked = truth.rank(arch, Dtype::Tf32, Layout::Tn, &shape);
                let points = ranked
                    .iter()
                    .filter(|r| !r.schedule.changes_reduction_order())
                    .step_by(7)
                    .map(|r| Point {
                        schedule: r.schedule,
                        origin: Origin::Sample,
                        predicted_us: 0.0,
                        status: "measured".into(),
                        measured: Some(Measurement {
                            median_us: r.prediction.time_us,
                            ci_low_us: r.prediction.time_us,
                            ci_high_us: r.prediction.time_us,
                            samples: 7,
                            outliers: 0,
                            tflops: r.prediction.tflops,
                        }),
                        gate: Verdict::Pass,
                        repeats_us: vec![],
                    })
                    .collect();
                shape_data(shape, points)
            })
            .collect();
        CalibrationData {
            arch: arch.clone(),
            device_name: "synthetic".into(),
            cublas_version: String::new(),
            contract: Contract::default(),
            timing: TimingConfig::default(),
            top: 0,
            sample: 0,
            seed: 0,
            forge_version: String::new(),
            git_revision: String::new(),
            date: String::new(),
            command: String::new(),
            shapes,
        }
    }

    #[test]
    fn free_constants_are_named_by_their_keys() {
        let keys = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let got = free_constants(&keys(&[
            "l2_bytes_per_clk_per_sm.sm_90a",
            "global.launch_us",
        ]))
        .unwrap();
        let names: Vec<&str> = got.iter().map(|f| f.key).collect();
        assert_eq!(
            names,
            ["global.launch_us", "l2_bytes_per_clk_per_sm.{arch}"]
        );
        let err = free_constants(&keys(&["global.nonsense"])).unwrap_err();
        assert!(
            err.contains("`global.nonsense` is not a fitted constant"),
            "{err}"
        );
        assert!(free_constants(&keys(&["l2_bytes_per_clk_per_sm."])).is_err());
    }

    #[test]
    fn constants_round_trip_through_their_keys() {
        let m = CostModel::shipped();
        let x = values(&m, "sm_90a");
        assert!(x.iter().all(|v| v.is_finite()), "{x:?}");
        assert_eq!(with_values(&m, "sm_90a", &x), m);
        let mut y = x.clone();
        y[0] *= 2.0;
        let moved = with_values(&m, "sm_90a", &y);
        assert_eq!(moved.global.launch_us, 2.0 * m.global.launch_us);
        // A key for an arch the table lacks is added beside `default`.
        let other = with_values(&m, "sm_100", &values(&m, "sm_100"));
        assert_eq!(
            other.family.wgmma.efficiency["sm_100"],
            m.family.wgmma.efficiency["default"]
        );
    }

    #[test]
    fn the_fit_recovers_a_model_that_generated_the_data() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let start = CostModel::shipped();
        let mut truth = start.clone();
        truth.global.launch_us = 5.0;
        truth.family.wgmma.efficiency.insert("sm_90a".into(), 0.62);
        truth.global.pipeline_latency_clk = 1100.0;
        let shapes = [
            Shape::new(512, 512, 512),
            Shape::new(2048, 2048, 2048),
            Shape::new(128, 5376, 7168),
            Shape::new(1536, 6144, 2048),
        ];
        let data = synthetic(&truth, &arch, &shapes);
        let (train, test) = split(&data, &[Shape::new(1536, 6144, 2048)]);
        assert_eq!((train.len(), test.len()), (3, 1));
        let r = fit(&start, &arch, &train, 12, &FREE);
        assert!(
            r.loss_after < 0.2 * r.loss_before,
            "{} -> {}",
            r.loss_before,
            r.loss_after
        );
        let (held_before, held_after) = (loss(&start, &arch, &test), loss(&r.model, &arch, &test));
        assert!(
            held_after < 0.5 * held_before,
            "{held_before} -> {held_after}"
        );
        // Reproducible: the same data gives the same constants.
        assert_eq!(fit(&start, &arch, &train, 12, &FREE).model, r.model);
    }

    #[test]
    fn the_fit_leaves_an_off_resource_norm_off_and_moves_an_on_one() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let shipped = CostModel::shipped();
        assert!(shipped.global.resource_norm > 0.0);
        let mut truth = shipped.clone();
        truth.global.resource_norm = 4.0;
        let shapes = [Shape::new(2688, 2176, 2560), Shape::new(1536, 6144, 2048)];
        let data = synthetic(&truth, &arch, &shapes);
        let train: Vec<&ShapeData> = data.shapes.iter().collect();
        let norm = free_constants(&["global.resource_norm".to_string()]).unwrap();
        let moved = fit(&shipped, &arch, &train, 20, &norm);
        assert!(
            (moved.model.global.resource_norm - 4.0).abs() < 1.0,
            "{}",
            moved.model.global.resource_norm
        );
        let mut off = shipped.clone();
        off.global.resource_norm = 0.0;
        assert_eq!(fit(&off, &arch, &train, 20, &norm).model, off);
    }

    #[test]
    fn leave_one_shape_out_judges_each_shape_by_a_model_that_never_saw_it() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let start = CostModel::shipped();
        let mut truth = start.clone();
        truth.global.launch_us = 5.0;
        truth.global.pipeline_latency_clk = 1100.0;
        // Small shapes, so that both constants weigh on each of them.
        let shapes = [
            Shape::new(512, 512, 512),
            Shape::new(768, 768, 768),
            Shape::new(1024, 1024, 1024),
        ];
        let data = synthetic(&truth, &arch, &shapes);
        let all: Vec<&ShapeData> = data.shapes.iter().collect();
        let l = leave_one_shape_out(&start, &arch, &all, 12, &FREE);
        assert_eq!(l.heldout.shapes.len(), 3);
        for (i, (shape, model)) in l.models.iter().enumerate() {
            assert_eq!(*shape, shapes[i]);
            // The model of shape i is the fit on the other two, exactly.
            let others: Vec<&ShapeData> = all
                .iter()
                .copied()
                .filter(|s| s.problem.shape != *shape)
                .collect();
            assert_eq!(*model, fit(&start, &arch, &others, 12, &FREE).model);
            // And it predicts the shape it never saw better than the start did.
            let held = [all[i]];
            assert!(
                loss(model, &arch, &held) < loss(&start, &arch, &held),
                "{shape}"
            );
        }
    }

    #[test]
    fn metrics_of_a_perfect_model_are_perfect() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let m = CostModel::shipped();
        let data = synthetic(&m, &arch, &[Shape::new(1024, 1024, 1024)]);
        let s = summarize(&m, &arch, &data.shapes.iter().collect::<Vec<_>>());
        assert_eq!(s.top1_geomean, 1.0);
        assert_eq!(s.best_in_top4, 1.0);
        assert!(
            s.rho_median > 0.999 && s.median_abs_rel_error < 1e-12,
            "{s:?}"
        );
    }

    #[test]
    fn the_best_kernel_counts_its_launch_variants_as_one() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let model = CostModel::shipped();
        let shape = Shape::new(2048, 2048, 2048);
        let ranked: Vec<Schedule> = model
            .rank(&arch, Dtype::Tf32, Layout::Tn, &shape)
            .iter()
            .map(|r| r.schedule)
            .filter(|s| !s.changes_reduction_order())
            .collect();
        let kernels = one_per_kernel(ranked.iter().copied(), 4);
        // Timed: the ranking down to the fourth kernel's first schedule, and the first schedule
        // of a fifth kernel; the fastest is either the last launch variant of the first kernel
        // in that prefix (below the model's top 4) or the fifth kernel's.
        let fourth = ranked.iter().position(|s| *s == kernels[3]).unwrap();
        let prefix = &ranked[..=fourth];
        let variant = prefix
            .iter()
            .rposition(|s| same_kernel(s, &kernels[0]))
            .unwrap();
        assert!(variant >= 4, "the variant must rank below the top 4");
        let fifth = *ranked
            .iter()
            .find(|s| !kernels.iter().any(|k| same_kernel(k, s)))
            .expect("a fifth kernel");
        let point = |schedule: Schedule, t: f64| Point {
            schedule,
            origin: Origin::Top,
            predicted_us: 0.0,
            status: "measured".into(),
            measured: Some(Measurement {
                median_us: t,
                ci_low_us: t,
                ci_high_us: t,
                samples: 7,
                outliers: 0,
                tflops: 1.0,
            }),
            gate: Verdict::Pass,
            repeats_us: vec![],
        };
        let data = |variant_us: f64, fifth_us: f64| {
            let mut points: Vec<Point> = prefix
                .iter()
                .enumerate()
                .map(|(i, &s)| point(s, if i == variant { variant_us } else { 110.0 }))
                .collect();
            points.push(point(fifth, fifth_us));
            shape_data(shape, points)
        };
        let found = shape_metrics(&model, &arch, &data(100.0, 105.0)).unwrap();
        assert!(!found.best_in_top4 && found.best_kernel_in_top4);
        assert_eq!(found.top4_kernels_efficiency, 1.0);
        let missed = shape_metrics(&model, &arch, &data(105.0, 100.0)).unwrap();
        assert!(!missed.best_kernel_in_top4);
        assert!((missed.top4_kernels_efficiency - 100.0 / 105.0).abs() < 1e-12);
        let summary = summary_of(vec![found, missed]);
        assert_eq!(summary.best_kernel_in_top4, 0.5);
        assert_eq!(summary.worst_top4_kernels_efficiency, 100.0 / 105.0);
    }

    #[test]
    fn a_tie_of_the_best_counts_only_where_repeats_cannot_tell_them_apart() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let model = CostModel::shipped();
        let shape = Shape::new(2048, 2048, 2048);
        let ranked = model.rank(&arch, Dtype::Tf32, Layout::Tn, &shape);
        // The model's 12 best; the fastest measured is its #7, its #1 is `first_us`.
        let data = |first_us: f64| {
            let points = ranked[..12]
                .iter()
                .enumerate()
                .map(|(rank, r)| {
                    let t = match rank {
                        0 => first_us,
                        6 => 100.0,
                        _ => 103.0 + rank as f64,
                    };
                    // Six timings spread ±0.3% around t.
                    let v: Vec<f64> = [-0.3, -0.1, 0.0, 0.05, 0.1, 0.3]
                        .iter()
                        .map(|d| t * (1.0 + d / 100.0))
                        .collect();
                    Point {
                        schedule: r.schedule,
                        origin: Origin::Top,
                        predicted_us: 0.0,
                        status: "measured".into(),
                        measured: Some(Measurement {
                            median_us: v[2],
                            ci_low_us: v[2],
                            ci_high_us: v[2],
                            samples: 7,
                            outliers: 0,
                            tflops: 1.0,
                        }),
                        gate: Verdict::Pass,
                        repeats_us: v
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != 2)
                            .map(|(_, t)| *t)
                            .collect(),
                    }
                })
                .collect();
            shape_data(shape, points)
        };
        let tied = shape_metrics(&model, &arch, &data(100.1)).unwrap();
        assert!(!tied.best_in_top4);
        assert_eq!(tied.tie_in_top4, Some(true));
        let sigma = tied.noise_sigma.unwrap();
        assert!((0.001..0.004).contains(&sigma), "sigma {sigma}");
        // The two near-tied points are the two fastest decided times: a model that knew
        // them holds whichever one more timing finds fastest in its top 4.
        let ceiling = tied.top4_ceiling.unwrap();
        assert!(ceiling > 0.9, "ceiling {ceiling}");
        let apart = shape_metrics(&model, &arch, &data(101.5)).unwrap();
        assert_eq!(apart.tie_in_top4, Some(false));
        let summary = summary_of(vec![tied, apart]);
        assert_eq!(summary.decided_shapes, 2);
        assert_eq!(summary.decided_best_in_top4, 0.0);
        assert_eq!(summary.decided_tie_in_top4, 0.5);
    }
}
