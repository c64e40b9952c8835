//! The price of determinism: per shape, the throughput of the fastest gate-passing
//! (bit-exact) schedule against the fastest timed schedule of any kind (split-K included),
//! with cuBLAS as a third bar, and the price (how much slower bit-exactness is) on top; the
//! numbers are [`crate::analysis::determinism`]'s.

use super::{
    LegendEntry, Mark, PlotError, draw_legend, draw_note, label_font, render_pair,
    split_with_legend, title_font,
};
use crate::analysis::determinism::{DeterminismRow, determinism_rows};
use crate::report::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

const PASSING: RGBColor = RGBColor(31, 119, 180);
const OVERALL: RGBColor = RGBColor(255, 127, 14);
const CUBLAS: RGBColor = RGBColor(110, 110, 110);

pub(crate) fn render(report: &RunReport, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let rows = determinism_rows(report);
    render_pair(
        out_dir,
        "determinism",
        |root| draw(root, report, &rows),
        |root| draw(root, report, &rows),
    )
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &RunReport,
    rows: &[DeterminismRow],
) -> Result<(), PlotError> {
    let (chart_area, legend_area) = split_with_legend(root);
    let caption = format!("Price of determinism: {}", super::device(report));
    if rows.is_empty() {
        chart_area.titled(&caption, title_font())?;
        return draw_note(&chart_area, "no timed candidates");
    }
    let n = rows.len();
    let top = rows
        .iter()
        .flat_map(|r| [&r.passing, &r.overall, &r.cublas])
        .flatten()
        .map(|t| t.tflops)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    // Crowded: small labels turned to read upwards; otherwise level under each group.
    let rotate = n > 8;
    let label_size = if n > 8 { 12 } else { 14 };
    let longest = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0) as u32;
    let label_area = if rotate {
        // About 0.62 em per character of DejaVu Sans digits, plus the axis title below.
        (longest * label_size * 62 / 100 + 48).max(64)
    } else {
        64
    };
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(caption, title_font())
        .margin(16)
        .x_label_area_size(label_area)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..n as f64, 0.0..top * 1.2)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("shape (M×N×K; Dn = n×n×n)")
        .y_desc("throughput, TFLOP/s (higher is better)")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .axis_desc_style(label_font(18))
        .label_style(label_font(15))
        .light_line_style(TRANSPARENT)
        .draw()?;
    // Shape names under their groups.
    for (i, r) in rows.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let style = label_font(label_size);
        let text = if rotate {
            // Rotated a quarter turn counter-clockwise: the label's end sits under the axis.
            Text::new(
                r.label.clone(),
                (x, y + 6),
                style
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            )
        } else {
            Text::new(
                r.label.clone(),
                (x, y + 8),
                style.pos(Pos::new(HPos::Center, VPos::Top)),
            )
        };
        chart_area.draw(&text)?;
    }

    for (i, r) in rows.iter().enumerate() {
        let x = i as f64;
        for (j, (bar, color)) in [
            (&r.passing, PASSING),
            (&r.overall, OVERALL),
            (&r.cublas, CUBLAS),
        ]
        .into_iter()
        .enumerate()
        {
            let x0 = x + 0.12 + 0.26 * j as f64;
            match bar {
                Some(t) => {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, 0.0), (x0 + 0.24, t.tflops)],
                        color.filled(),
                    )))?;
                }
                None => {
                    // A missing bar is said, not left blank.
                    chart.draw_series(std::iter::once(
                        EmptyElement::at((x0 + 0.12, 0.0))
                            + Text::new(
                                "none",
                                (0, -4),
                                label_font(12).pos(Pos::new(HPos::Center, VPos::Bottom)),
                            ),
                    ))?;
                }
            }
        }
        let group_top = [&r.passing, &r.overall, &r.cublas]
            .into_iter()
            .flatten()
            .map(|t| t.tflops)
            .fold(0.0f64, f64::max);
        // Only a non-zero price is written; the legend says unlabelled groups cost 0%.
        let price = match r.price_pct {
            Some(p) if p.abs() < 0.05 => None,
            Some(p) => Some((format!("{p:+.1}%"), 13)),
            None => Some(("no exact".to_string(), 11)),
        };
        if let Some((price, size)) = price {
            chart.draw_series(std::iter::once(
                EmptyElement::at((x + 0.5, group_top))
                    + Text::new(
                        price,
                        (0, -6),
                        label_font(size).pos(Pos::new(HPos::Center, VPos::Bottom)),
                    ),
            ))?;
        }
    }

    let mut legend = vec![
        LegendEntry::new(Mark::Heading, "fastest timed schedule"),
        LegendEntry::new(Mark::Bar(PASSING), "gate-passing (bit-exact)"),
        LegendEntry::new(Mark::Bar(OVERALL), "overall (split-K included)"),
        LegendEntry::new(Mark::Bar(CUBLAS), "cuBLAS"),
        LegendEntry::new(Mark::None, "price (on top) = passing time / overall − 1"),
        LegendEntry::new(Mark::None, "unlabelled groups: price 0% (fastest is exact)"),
        LegendEntry::new(Mark::None, ""),
    ];
    // Schedules only where bit-exactness costs something: elsewhere both bars are the
    // same kernel (the summary lists every shape).
    let differ: Vec<&DeterminismRow> = rows
        .iter()
        .filter(|r| match (&r.passing, &r.overall) {
            (Some(p), Some(o)) => p.name != o.name,
            _ => true,
        })
        .collect();
    let same = rows.len() - differ.len();
    legend.push(LegendEntry::new(
        Mark::Heading,
        if differ.is_empty() {
            "every shape: fastest is bit-exact".to_string()
        } else {
            "shapes where exact ≠ fastest".to_string()
        },
    ));
    let mut room = super::legend_room(&legend).saturating_sub(1);
    let mut left_out = 0;
    for r in &differ {
        let lines: Vec<String> = [("exact", &r.passing), ("any", &r.overall)]
            .into_iter()
            .map(|(what, t)| match t {
                Some(t) => format!("{what}: {}", super::short_name(&t.name)),
                None => format!("{what}: none timed"),
            })
            .collect();
        if room < 1 + lines.len() + 1 {
            left_out += 1;
            continue;
        }
        room -= 1 + lines.len();
        let price = r
            .price_pct
            .map_or(String::new(), |p| format!(" (price {p:+.1}%)"));
        legend.push(LegendEntry::new(Mark::None, format!("{}{price}", r.shape)));
        for l in lines {
            legend.push(LegendEntry::new(Mark::None, format!("   {l}")));
        }
    }
    if left_out > 0 {
        legend.push(LegendEntry::new(
            Mark::None,
            format!("… {left_out} more in {}", super::SUMMARY_MD),
        ));
    }
    if same > 0 {
        legend.push(LegendEntry::new(
            Mark::None,
            format!("{same} shape(s): same schedule (bit-exact)"),
        ));
    }
    draw_legend(&legend_area, &legend)
}
