//! Winner map: the winning schedule over an (M, N) grid at fixed K, from
//! [`crate::analysis::winner_map`]: filled markers where the run tuned a shape (measured),
//! hollow ones where the cost model predicts. One color per winning schedule for the
//! [`TOP_COLORS`] most frequent winners, grey for the rest.

use super::{
    GREY, LegendEntry, Mark, PlotError, draw_legend, label_font, palette, render_pair,
    split_with_legend, title_font,
};
use crate::analysis::winner_map::{GRID_MAX, GRID_MIN, WinnerMap, winner_map};
use crate::report::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Winners that get their own color; the others are grey.
pub const TOP_COLORS: usize = 8;

pub(crate) fn render(report: &RunReport, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let map = winner_map(report);
    render_pair(
        out_dir,
        "winner_map",
        |root| draw(root, report, &map),
        |root| draw(root, report, &map),
    )
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &RunReport,
    map: &WinnerMap,
) -> Result<(), PlotError> {
    let (chart_area, legend_area) = split_with_legend(root);
    let ranked = map.ranked_schedules();
    let colors: HashMap<&str, RGBColor> = ranked
        .iter()
        .take(TOP_COLORS)
        .enumerate()
        .map(|(i, (s, _))| (s.as_str(), palette(i)))
        .collect();
    let color_of = |s: &str| colors.get(s).copied().unwrap_or(GREY);

    let lo = map
        .winners
        .iter()
        .flat_map(|w| [w.m, w.n])
        .chain([GRID_MIN])
        .min()
        .unwrap_or(GRID_MIN) as f64;
    let hi = map
        .winners
        .iter()
        .flat_map(|w| [w.m, w.n])
        .chain([GRID_MAX, map.grid_max])
        .max()
        .unwrap_or(GRID_MAX) as f64;
    let (lo, hi) = (lo / 1.3, hi * 1.3);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(
            format!(
                "Winning schedule at K = {}: {}",
                map.k,
                super::device(report)
            ),
            title_font(),
        )
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (lo..hi).log_scale().base(2.0),
            (lo..hi).log_scale().base(2.0),
        )?;
    chart
        .configure_mesh()
        .x_desc("M (log scale)")
        .y_desc("N (log scale)")
        .x_label_formatter(&|v| format!("{:.0}", v))
        .y_label_formatter(&|v| format!("{:.0}", v))
        .axis_desc_style(label_font(18))
        .label_style(label_font(15))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()?;

    chart.draw_series(map.winners.iter().filter(|w| !w.measured).map(|w| {
        Circle::new(
            (w.m as f64, w.n as f64),
            8,
            color_of(&w.schedule).stroke_width(3),
        )
    }))?;
    for w in map.winners.iter().filter(|w| w.measured) {
        let p = (w.m as f64, w.n as f64);
        chart.draw_series([
            Circle::new(p, 11, color_of(&w.schedule).filled()),
            Circle::new(p, 11, BLACK.stroke_width(2)),
        ])?;
        chart.draw_series(std::iter::once(
            EmptyElement::at(p)
                + Text::new(
                    format!("{}x{}", w.m, w.n),
                    (14, -14),
                    label_font(13).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Bottom,
                    )),
                ),
        ))?;
    }

    let mut legend = vec![
        LegendEntry::new(Mark::Heading, "winner (marker style)"),
        LegendEntry::new(Mark::Filled(GREY), "measured: the run's chosen"),
        LegendEntry::new(Mark::Hollow(GREY), "predicted: best bit-exact schedule"),
        LegendEntry::new(Mark::None, "by the cost model (split_k = 1 only:"),
        LegendEntry::new(Mark::None, "split-K never passes the gate)"),
        LegendEntry::new(Mark::None, ""),
        LegendEntry::new(Mark::Heading, "schedule (color; dtype omitted)"),
    ];
    for (s, count) in ranked.iter().take(TOP_COLORS) {
        legend.push(LegendEntry::new(
            Mark::Filled(color_of(s)),
            super::short_name(s),
        ));
        let measured = map
            .winners
            .iter()
            .filter(|w| w.measured && &w.schedule == s)
            .count();
        legend.push(LegendEntry::new(
            Mark::None,
            format!("{count} point(s), {measured} measured"),
        ));
    }
    if ranked.len() > TOP_COLORS {
        legend.push(LegendEntry::new(
            Mark::Filled(GREY),
            format!("{} other schedules", ranked.len() - TOP_COLORS),
        ));
    }
    if let Some(note) = &map.note {
        legend.push(LegendEntry::new(Mark::None, ""));
        legend.push(LegendEntry::new(Mark::None, note.clone()));
    }
    draw_legend(&legend_area, &legend)
}
