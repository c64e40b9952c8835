//! `forge plot`'s pictures: parity maps and tuning reports drawn from a run report, on any
//! machine. Pure Rust (plotters with its bitmap and SVG backends and an embedded font): no
//! system library at build or run time. Every number drawn comes from [`crate::analysis`];
//! this module only draws. [`crate::outputs::render_all`] writes all of them, and the
//! summary, into one directory:
//!
//! * `parity.{png,svg}`: own/cuBLAS speed ratio against problem size, per schedule family
//!   and for the tuned dispatch ([`parity`]);
//! * `winner_map.{png,svg}`: the winning schedule over an (M, N) grid at fixed K, measured
//!   where tuned and predicted elsewhere ([`winner_map`]);
//! * `model_vs_measured.{png,svg}`: cost-model prediction against measurement, with
//!   Spearman ρ and top-1 regret per shape ([`model_accuracy`]);
//! * `determinism.{png,svg}`: the price of the bit-exact gate per shape ([`determinism`]).

pub mod determinism;
pub mod font;
pub mod model_accuracy;
pub mod parity;
pub mod winner_map;

use crate::report::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Width of every picture, pixels (PNG) and user units (SVG).
pub const WIDTH: u32 = 1200;
/// Height of every picture, pixels (PNG) and user units (SVG).
pub const HEIGHT: u32 = 800;
/// Width of the legend panel on the right of each picture.
pub(crate) const LEGEND_WIDTH: u32 = 410;

/// File name of the Markdown summary written beside the pictures (the legends point to it
/// for what does not fit).
pub const SUMMARY_MD: &str = "summary.md";

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(
        "the report has no measured candidates (no shape has a timed schedule), so there is \
         nothing to plot; was it a cost-model-only run (provenance.measured = false) or did \
         every candidate fail to compile or run?"
    )]
    NothingMeasured,
    #[error("cannot write {path}: {cause}")]
    Io {
        path: String,
        /// Printed in the message, so not a `source` (anyhow would print it twice).
        cause: std::io::Error,
    },
    #[error("the embedded plot font could not be loaded")]
    Font,
    #[error("drawing failed: {0}")]
    Draw(String),
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        PlotError::Draw(e.to_string())
    }
}

/// Draws every picture (PNG and SVG) into `out_dir` (created if missing) and returns the
/// written paths. A report without timed candidates gives pictures with nothing in them:
/// [`crate::outputs::render_all`] refuses such a report before calling this.
pub fn render_pictures(report: &RunReport, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    font::register()?;
    std::fs::create_dir_all(out_dir).map_err(|cause| PlotError::Io {
        path: out_dir.display().to_string(),
        cause,
    })?;
    let mut written = Vec::new();
    written.extend(parity::render(report, out_dir)?);
    written.extend(winner_map::render(report, out_dir)?);
    written.extend(model_accuracy::render(report, out_dir)?);
    written.extend(determinism::render(report, out_dir)?);
    Ok(written)
}

/// Draws one picture twice, as `STEM.png` and `STEM.svg`, both [`WIDTH`]×[`HEIGHT`].
pub(crate) fn render_pair(
    out_dir: &Path,
    stem: &str,
    png: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<(), PlotError>,
    svg: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<Vec<PathBuf>, PlotError> {
    let png_path = out_dir.join(format!("{stem}.png"));
    {
        let root = BitMapBackend::new(&png_path, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        png(&root)?;
        root.present()?;
    }
    let svg_path = out_dir.join(format!("{stem}.svg"));
    {
        let root = SVGBackend::new(&svg_path, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        svg(&root)?;
        root.present()?;
    }
    Ok(vec![png_path, svg_path])
}

/// Categorical palette (Tableau 10 without its grey, which marks "other").
pub(crate) const PALETTE: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(214, 39, 40),
];
pub(crate) const GREY: RGBColor = RGBColor(160, 160, 160);
pub(crate) const GATE_RED: RGBColor = RGBColor(220, 20, 20);

pub(crate) fn palette(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

pub(crate) fn title_font() -> TextStyle<'static> {
    ("sans-serif", 26).into_font().color(&BLACK)
}

pub(crate) fn label_font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// A compact human form of a large count: 1.2G, 35M, 4k.
pub(crate) fn si(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e15 {
        (v / 1e15, "P")
    } else if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if (x - x.round()).abs() < 1e-9 || x.abs() >= 100.0 {
        format!("{x:.0}{suffix}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}{suffix}")
    } else {
        format!("{x:.2}{suffix}")
    }
}

/// Tick label for a log axis: only values with leading digit 1, 2 or 5 are written, so
/// the light ticks between them stay unlabelled instead of colliding.
pub(crate) fn log_tick(v: f64, fmt: impl Fn(f64) -> String) -> String {
    if !(v.is_finite() && v > 0.0) {
        return String::new();
    }
    let lead = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|d| (lead - d).abs() < 1e-6)
    {
        fmt(v)
    } else {
        String::new()
    }
}

/// A log-axis range covering `values` with a margin of `pad` (a factor) on each side.
pub(crate) fn log_span(values: impl IntoIterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    (lo / pad, hi * pad)
}

/// One line of a legend panel.
pub(crate) enum Mark {
    Filled(RGBColor),
    Hollow(RGBColor),
    Cross(RGBColor),
    Line(RGBColor, u32),
    Dashed(RGBColor),
    Bar(RGBColor),
    /// Text only, indented like an entry.
    None,
    /// A bold-ish heading line, not indented.
    Heading,
}

pub(crate) struct LegendEntry {
    pub mark: Mark,
    pub text: String,
}

impl LegendEntry {
    pub fn new(mark: Mark, text: impl Into<String>) -> Self {
        LegendEntry {
            mark,
            text: text.into(),
        }
    }
}

/// First legend line's centre, from the top of the legend panel.
const LEGEND_TOP: i32 = 70;
/// Height of one legend line.
const LEGEND_LINE: i32 = 22;
/// Extra space after a heading line.
const LEGEND_HEADING_GAP: i32 = 4;

/// How many more plain (non-heading) lines fit below `entries` in a [`HEIGHT`]-tall legend
/// panel, keeping half a line of margin at the bottom.
pub(crate) fn legend_room(entries: &[LegendEntry]) -> usize {
    let used: i32 = entries
        .iter()
        .map(|e| match e.mark {
            Mark::Heading => LEGEND_LINE + LEGEND_HEADING_GAP,
            _ => LEGEND_LINE,
        })
        .sum();
    let left = HEIGHT as i32 - LEGEND_TOP - LEGEND_LINE / 2 - used;
    if left < 0 {
        0
    } else {
        (left / LEGEND_LINE) as usize + 1
    }
}

/// Draws a legend panel: one entry per line, marker then text, from the top of `area`.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> Result<(), PlotError> {
    const TOP: i32 = LEGEND_TOP;
    const LINE: i32 = LEGEND_LINE;
    let text = label_font(14);
    let heading = label_font(17);
    let mut y = TOP;
    for e in entries {
        let c = y;
        match &e.mark {
            Mark::Filled(col) => {
                area.draw(&Circle::new((22, c), 6, col.filled()))?;
                area.draw(&Circle::new((22, c), 6, BLACK.stroke_width(1)))?;
            }
            Mark::Hollow(col) => area.draw(&Circle::new((22, c), 6, col.stroke_width(2)))?,
            Mark::Cross(col) => area.draw(&Cross::new((22, c), 6, col.stroke_width(3)))?,
            Mark::Line(col, w) => {
                area.draw(&PathElement::new(
                    vec![(8, c), (36, c)],
                    col.stroke_width(*w),
                ))?;
                area.draw(&Circle::new((22, c), 4, col.filled()))?;
            }
            Mark::Dashed(col) => area.draw(&plotters::element::DashedPathElement::new(
                vec![(8, c), (36, c)],
                5,
                4,
                col.stroke_width(2),
            ))?,
            Mark::Bar(col) => {
                area.draw(&Rectangle::new([(12, c - 7), (32, c + 7)], col.filled()))?
            }
            Mark::None | Mark::Heading => {}
        }
        let (x, style) = match e.mark {
            Mark::Heading => (8, &heading),
            _ => (44, &text),
        };
        area.draw(&Text::new(
            e.text.clone(),
            (x, c),
            style.pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            )),
        ))?;
        y += LINE;
        if matches!(e.mark, Mark::Heading) {
            y += LEGEND_HEADING_GAP;
        }
    }
    Ok(())
}

/// Writes a centred note in an area (used when a plot has no data of its kind).
pub(crate) fn draw_note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    note: &str,
) -> Result<(), PlotError> {
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        note.to_string(),
        (w as i32 / 2, h as i32 / 2),
        label_font(20).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Center,
        )),
    ))?;
    Ok(())
}

/// Splits the root into the chart (left) and the legend panel (right).
pub(crate) fn split_with_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    root.split_horizontally(WIDTH - LEGEND_WIDTH)
}

/// The dtypes of the report's shapes, as `tf32` or `tf32, bf16`.
pub(crate) fn dtypes(report: &RunReport) -> String {
    let mut v: Vec<&str> = report
        .shapes
        .iter()
        .map(|s| s.problem.dtype.as_str())
        .collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}

/// "device (arch)" for captions.
pub(crate) fn device(report: &RunReport) -> String {
    let p = &report.provenance;
    match (p.device_name.is_empty(), p.arch.is_empty()) {
        (false, false) => format!("{} ({})", p.device_name, p.arch),
        (false, true) => p.device_name.clone(),
        (true, false) => p.arch.clone(),
        (true, true) => "unknown device".to_string(),
    }
}

/// A schedule name without its dtype (`wgmma_128x256x32_s4_wg2_swz8_pers_c2_k1`), to fit
/// legends; the summary keeps full names.
pub(crate) fn short_name(name: &str) -> String {
    for d in ["_tf32_", "_bf16_", "_fp16_"] {
        if name.contains(d) {
            return name.replacen(d, "_", 1);
        }
    }
    name.to_string()
}
