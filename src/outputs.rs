//! A run's analysis outputs in one directory: every picture of [`crate::plot`] and the
//! Markdown tables of [`crate::summary`] (`summary.md`), both drawn from
//! [`crate::analysis`]. Written by `forge plot` and at the end of `forge tune`.

use crate::analysis::has_measurements;
use crate::plot::{self, PlotError, SUMMARY_MD};
use crate::report::RunReport;
use crate::summary::summary_markdown;
use std::path::{Path, PathBuf};

/// Draws every plot (PNG and SVG) and writes `summary.md` into `out_dir` (created if
/// missing). Returns the written paths. A report without any timed candidate is refused
/// with [`PlotError::NothingMeasured`] rather than drawn as empty pictures.
pub fn render_all(report: &RunReport, out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    if !has_measurements(report) {
        return Err(PlotError::NothingMeasured);
    }
    let mut written = plot::render_pictures(report, out_dir)?;
    let summary = out_dir.join(SUMMARY_MD);
    std::fs::write(&summary, summary_markdown(report)).map_err(|cause| PlotError::Io {
        path: summary.display().to_string(),
        cause,
    })?;
    written.push(summary);
    Ok(written)
}
