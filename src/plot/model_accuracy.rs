//! The cost model against measurement: predicted against measured time for every timed
//! candidate (log-log, with the y = x line), and per shape the Spearman rank correlation
//! between prediction and measurement and the top-1 regret (how much slower the model's
//! first pick among the timed candidates is than the fastest timed candidate).

use super::{
    GREY, LegendEntry, Mark, PlotError, draw_legend, label_font, log_span, palette, render_pair,
    split_with_legend, title_font,
};
use crate::report::{RunReport, ShapeReport};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

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

pub(crate) fn render(report: &RunReport, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let acc = accuracy(report);
    render_pair(
        out_dir,
        "model_vs_measured",
        |root| draw(root, report, &acc),
        |root| draw(root, report, &acc),
    )
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &RunReport,
    acc: &[ShapeAccuracy],
) -> Result<(), PlotError> {
    let (chart_area, legend_area) = split_with_legend(root);
    let values = acc
        .iter()
        .flat_map(|a| a.points.iter().flat_map(|p| [p.0, p.1]));
    let (lo, hi) = log_span(values, 1.5);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(
            format!("Cost model vs measurement: {}", super::device(report)),
            title_font(),
        )
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("predicted time, µs (log)")
        .y_desc("measured median time, µs (log)")
        .x_labels(30)
        .y_labels(30)
        .x_label_formatter(&|v| super::log_tick(*v, fmt_us))
        .y_label_formatter(&|v| super::log_tick(*v, fmt_us))
        .axis_desc_style(label_font(18))
        .label_style(label_font(15))
        .light_line_style(TRANSPARENT)
        .draw()?;
    chart.draw_series(DashedLineSeries::new(
        vec![(lo, lo), (hi, hi)],
        8,
        6,
        GREY.stroke_width(2),
    ))?;

    let mut legend = vec![
        LegendEntry::new(Mark::Heading, "per shape: Spearman ρ, top-1 regret"),
        LegendEntry::new(Mark::Dashed(GREY), "y = x (perfect prediction)"),
        LegendEntry::new(Mark::Hollow(BLACK), "model's first pick"),
    ];
    for (i, a) in acc.iter().enumerate() {
        let color = palette(i);
        chart.draw_series(
            a.points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 5, color.filled())),
        )?;
        if let Some(p) = a.points.iter().find(|p| p.2 == a.model_pick) {
            chart.draw_series(std::iter::once(Circle::new(
                (p.0, p.1),
                10,
                BLACK.stroke_width(2),
            )))?;
        }
        if i < 14 {
            legend.push(LegendEntry::new(
                Mark::Filled(color),
                format!("{} ({} timed)", a.shape, a.n),
            ));
            legend.push(LegendEntry::new(
                Mark::None,
                format!(
                    "ρ = {}   regret = {}",
                    fmt_rho(a.rho),
                    fmt_regret(a.regret_pct)
                ),
            ));
        }
    }
    if acc.len() > 14 {
        legend.push(LegendEntry::new(
            Mark::None,
            format!("… {} more shapes in summary.md", acc.len() - 14),
        ));
    }
    draw_legend(&legend_area, &legend)
}

/// Axis label for a time in µs.
fn fmt_us(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
