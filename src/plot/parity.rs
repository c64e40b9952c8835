//! Parity map: how fast forge's own GEMM is relative to cuBLAS, against problem size.
//!
//! y = cuBLAS median / own median (> 1: own is faster), x = FLOPs (2·M·N·K, log axis).
//! One line per schedule family (its best gate-passing schedule per shape), a thick line
//! for the tuned dispatch (the report's chosen schedule), red crosses for timed schedules
//! the bit-exact gate rejected, and the parity line at 1.0. The points are
//! [`crate::analysis::parity::parity_data`]'s.

use super::{
    GATE_RED, GREY, LegendEntry, Mark, PlotError, draw_legend, draw_note, label_font, log_span,
    palette, render_pair, si, split_with_legend, title_font,
};
use crate::analysis::parity::{ParityData, ParityPoint, parity_data};
use crate::report::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

pub(crate) fn render(report: &RunReport, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let data = parity_data(report);
    render_pair(
        out_dir,
        "parity",
        |root| draw(root, report, &data),
        |root| draw(root, report, &data),
    )
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &RunReport,
    data: &ParityData,
) -> Result<(), PlotError> {
    let (chart_area, legend_area) = split_with_legend(root);
    let all: Vec<&ParityPoint> = data
        .families
        .values()
        .flatten()
        .chain(&data.tuned)
        .chain(&data.rejected)
        .collect();
    let caption = format!(
        "Parity with cuBLAS: {}, {}",
        super::device(report),
        super::dtypes(report)
    );
    if all.is_empty() {
        chart_area.titled(&caption, title_font())?;
        draw_note(
            &chart_area,
            "no shape has both a timed own schedule and a cuBLAS baseline",
        )?;
        return Ok(());
    }
    let (x_lo, x_hi) = log_span(all.iter().map(|p| p.flops), 2.0);
    // Start at a power of ten: plotters labels a log axis from the first decade inside it.
    let x_lo = 10f64.powf(x_lo.log10().floor());
    let lo = all.iter().map(|p| p.ratio).fold(1.0f64, f64::min);
    let hi = all.iter().map(|p| p.ratio).fold(1.0f64, f64::max);
    let pad = ((hi - lo) * 0.12).max(0.05);
    let (y_lo, y_hi) = ((lo - pad).max(0.0), hi + pad);

    let mut chart = ChartBuilder::on(&chart_area)
        .caption(caption, title_font())
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), y_lo..y_hi)?;
    chart
        .configure_mesh()
        .x_desc("problem size, FLOPs (2·M·N·K, log scale)")
        .y_desc("cuBLAS time / own time   (> 1: own faster)")
        .x_labels(30)
        .x_label_formatter(&|v| super::log_tick(*v, si))
        .y_label_formatter(&|v| format!("{v:.2}"))
        .axis_desc_style(label_font(18))
        .label_style(label_font(15))
        .light_line_style(TRANSPARENT)
        .draw()?;

    // Parity line.
    chart.draw_series(DashedLineSeries::new(
        vec![(x_lo, 1.0), (x_hi, 1.0)],
        8,
        6,
        GREY.stroke_width(2),
    ))?;

    // The tuned line first and thick, so a family line that coincides with it (the chosen
    // schedule is often its family's best) stays visible on top of it.
    let tuned: Vec<(f64, f64)> = data.tuned.iter().map(|p| (p.flops, p.ratio)).collect();
    chart.draw_series(LineSeries::new(tuned.clone(), BLACK.stroke_width(7)))?;
    chart.draw_series(tuned.iter().map(|&p| Circle::new(p, 9, BLACK.filled())))?;

    let mut legend = vec![
        LegendEntry::new(Mark::Heading, "own / cuBLAS speed"),
        LegendEntry::new(Mark::Line(BLACK, 6), "tuned dispatch (chosen)"),
    ];
    for (i, (family, points)) in data.families.iter().enumerate() {
        let color = palette(i);
        let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.flops, p.ratio)).collect();
        chart.draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))?;
        chart.draw_series(
            xy.iter()
                .map(|&p| TriangleMarker::new(p, 7, color.filled())),
        )?;
        legend.push(LegendEntry::new(
            Mark::Line(color, 2),
            format!("{family}: best gate-passing"),
        ));
    }
    chart.draw_series(
        data.rejected
            .iter()
            .map(|p| Cross::new((p.flops, p.ratio), 8, GATE_RED.stroke_width(3))),
    )?;
    if !data.rejected.is_empty() {
        legend.push(LegendEntry::new(
            Mark::Cross(GATE_RED),
            "gate-rejected (bits differ)",
        ));
    }
    legend.push(LegendEntry::new(Mark::Dashed(GREY), "parity (1.0)"));

    // Shape labels beside the tuned points, while they stay legible.
    if data.tuned.len() <= 12 {
        chart.draw_series(data.tuned.iter().map(|p| {
            EmptyElement::at((p.flops, p.ratio))
                + Text::new(
                    p.shape.clone(),
                    (8, -8),
                    label_font(13).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Bottom,
                    )),
                )
        }))?;
    }

    legend.push(LegendEntry::new(Mark::None, ""));
    legend.push(LegendEntry::new(Mark::Heading, "tuned dispatch per shape"));
    let baseline_note = (data.without_baseline > 0)
        .then(|| format!("{} shape(s) without cuBLAS time", data.without_baseline));
    // Every shape while they fit; otherwise as many as fit and a pointer to the summary.
    let room = super::legend_room(&legend).saturating_sub(usize::from(baseline_note.is_some()));
    let shown = if data.tuned.len() <= room {
        data.tuned.len()
    } else {
        room.saturating_sub(1)
    };
    for p in data.tuned.iter().take(shown) {
        legend.push(LegendEntry::new(
            Mark::None,
            format!("{}: {:.3}×", p.shape, p.ratio),
        ));
    }
    if shown < data.tuned.len() {
        legend.push(LegendEntry::new(
            Mark::None,
            format!(
                "… {} more in {}",
                data.tuned.len() - shown,
                super::SUMMARY_MD
            ),
        ));
    }
    if let Some(note) = baseline_note {
        legend.push(LegendEntry::new(Mark::None, note));
    }
    draw_legend(&legend_area, &legend)
}
