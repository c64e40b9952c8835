//! The cost model against measurement: predicted against measured time for every timed
//! candidate (log-log, with the y = x line), and per shape the Spearman ρ and top-1 regret
//! of [`crate::analysis::model_accuracy`] in the legend.

use super::{
    GREY, LegendEntry, Mark, PlotError, draw_legend, label_font, log_span, palette, render_pair,
    split_with_legend, title_font,
};
use crate::analysis::model_accuracy::{ShapeAccuracy, accuracy, fmt_regret, fmt_rho};
use crate::report::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

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
