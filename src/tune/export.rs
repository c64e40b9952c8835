//! The run report on disk: `report.json` (everything) and `report.csv` (one row per
//! candidate, CUTLASS-profiler-like columns), staged together into one
//! [`Commit`](crate::durable::Commit) after every shape, so the two always agree.

use crate::durable::Commit;
use crate::report::{REPORT_CSV, REPORT_JSON, RunReport, Status};
use std::path::Path;

/// Stages report.json and report.csv of `dir` into `commit` (the caller holds the run
/// directory's lock and commits).
pub fn stage_report(commit: &mut Commit, dir: &Path, report: &RunReport) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(report)?;
    let csv = report_csv(report)?;
    commit.stage(&dir.join(REPORT_JSON), json.as_bytes(), None)?;
    commit.stage(&dir.join(REPORT_CSV), &csv, None)?;
    Ok(())
}

/// The report as CSV, one row per candidate. `RatioVsCublas` is the screen's; the last two
/// columns are the candidate's head-to-head ratios (sustained, burst) where it had one (the
/// chosen schedule's confirmation, else its finalist round).
pub fn report_csv(report: &RunReport) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(vec![]);
    w.write_record([
        "Problem",
        "Operation",
        "m",
        "n",
        "k",
        "tile",
        "stages",
        "workers",
        "swizzle",
        "persistent",
        "cluster",
        "split_k",
        "Status",
        "Gate",
        "Differing",
        "RelRms",
        "PredictedRank",
        "PredictedUs",
        "Runtime",
        "CiLow",
        "CiHigh",
        "GFLOPs",
        "CublasRuntime",
        "CublasGFLOPs",
        "RatioVsCublas",
        "HeadToHeadSustained",
        "HeadToHeadBurst",
        "Screen",
    ])?;
    for (problem, s) in report.shapes.iter().enumerate() {
        for c in &s.candidates {
            let x = &c.schedule;
            let m = c.measured.as_ref();
            let cub = s.cublas.as_ref();
            let h2h = s
                .head_to_head
                .iter()
                .chain(&s.finalists)
                .find(|h| h.schedule == c.schedule);
            let status = match &c.status {
                Status::Measured => "measured".to_string(),
                other => format!("{other:?}"),
            };
            w.write_record([
                problem.to_string(),
                c.schedule.name(),
                s.problem.shape.m.to_string(),
                s.problem.shape.n.to_string(),
                s.problem.shape.k.to_string(),
                format!("{}x{}x{}", x.tile.bm, x.tile.bn, x.tile.bk),
                x.stages.to_string(),
                x.workers.to_string(),
                format!("{}{:?}", x.group, x.raster),
                x.persistence.as_str().to_string(),
                x.cluster.to_string(),
                x.split_k.to_string(),
                status,
                format!("{:?}", c.gate.verdict),
                c.gate.differing.to_string(),
                format!("{:e}", c.gate.rel_rms),
                c.predicted_rank.to_string(),
                format!("{:.3}", c.predicted_us),
                m.map_or(String::new(), |m| format!("{:.3}", m.median_us)),
                m.map_or(String::new(), |m| format!("{:.3}", m.ci_low_us)),
                m.map_or(String::new(), |m| format!("{:.3}", m.ci_high_us)),
                m.map_or(String::new(), |m| format!("{:.1}", m.tflops * 1e3)),
                cub.map_or(String::new(), |c| format!("{:.3}", c.median_us)),
                cub.map_or(String::new(), |c| format!("{:.1}", c.tflops * 1e3)),
                match (m, cub) {
                    (Some(m), Some(c)) => format!("{:.4}", c.median_us / m.median_us),
                    _ => String::new(),
                },
                h2h.map_or(String::new(), |h| format!("{:.4}", h.ratio())),
                h2h.and_then(|h| h.burst_ratio())
                    .map_or(String::new(), |r| format!("{r:.4}")),
                if c.second_screen { "2" } else { "1" }.to_string(),
            ])?;
        }
    }
    Ok(w.into_inner()?)
}
