//! What a tune leaves behind: provenance, the profile's entries (assembled from the report
//! and merged into an existing profile), and the one write path that both the measured and
//! the cost-model-only run end with (report, profile, summary and plots).

use super::{TuneOptions, TuneOutcome, export};
use crate::device::DeviceInfo;
use crate::device::cublas::CUBLAS_MODE;
use crate::profile::{Entry, Gate, Metadata, Profile};
use crate::report::{Provenance, RunReport, ShapeReport, Verdict};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A device name as a file-name part: `NVIDIA H200` → `h200`.
pub fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty() && *p != "nvidia")
        .collect::<Vec<_>>()
        .join("-")
}

/// The profile's metadata for this run (`info` is None for a cost-model-only run).
pub fn metadata(opts: &TuneOptions, info: Option<&DeviceInfo>) -> Metadata {
    let measured = info.is_some();
    let mut meta =
        Metadata::now(&opts.arch.name, opts.dtype(), measured).with_contract(opts.contract);
    meta.device_name = info.map_or("none (cost model only)".into(), |i| i.name.clone());
    if let Some(i) = info {
        meta.driver_version = i.driver_version.clone();
        meta.nvrtc_version = i.nvrtc_version.clone();
        meta.cublas_mode = CUBLAS_MODE.into();
    }
    meta
}

/// Where and how the report's numbers were taken.
pub fn provenance(
    opts: &TuneOptions,
    info: Option<&DeviceInfo>,
    cublas_version: &str,
) -> Provenance {
    let measured = info.is_some();
    Provenance {
        device_name: info.map_or("none".into(), |i| i.name.clone()),
        arch: opts.arch.name.clone(),
        sm_count: info.map_or(0, |i| i.sm_count),
        l2_bytes: info.map_or(0, |i| i.l2_bytes),
        sm_clock_mhz: info.map_or(0.0, |i| i.sm_clock_mhz),
        driver_version: info.map_or(String::new(), |i| i.driver_version.clone()),
        nvrtc_version: info.map_or(String::new(), |i| i.nvrtc_version.clone()),
        cublas_version: cublas_version.into(),
        forge_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: crate::util::git_revision().into(),
        date: crate::util::now_rfc3339(),
        command: opts.command.clone(),
        numerical_contract: opts.contract.name().into(),
        measured,
        timing_method: if measured {
            opts.timing.describe()
        } else {
            "none: cost-model predictions".into()
        },
        cublas_mode: if measured {
            CUBLAS_MODE.into()
        } else {
            String::new()
        },
    }
}

/// The profile entry of one measured shape: its chosen schedule with the head-to-head (or
/// screen) numbers, and the next gate-passing schedules as runners-up. None when nothing
/// passed.
pub fn measured_entry(s: &ShapeReport) -> Option<Entry> {
    let (chosen, own, cublas) = s.parity()?;
    let predicted_us = s
        .candidates
        .iter()
        .find(|c| c.schedule == chosen)
        .map_or(0.0, |c| c.predicted_us);
    let mut passing: Vec<_> = s
        .measured()
        .filter(|(c, _)| c.gate.verdict == Verdict::Pass && c.schedule != chosen)
        .collect();
    passing.sort_by(|a, b| a.1.median_us.total_cmp(&b.1.median_us));
    let mut entry = Entry::predicted(s.problem, &chosen, predicted_us);
    entry.measured_us = Some(own.median_us);
    entry.tflops = Some(own.tflops);
    entry.cublas_us = Some(cublas.median_us);
    entry.cublas_tflops = Some(cublas.tflops);
    entry.ratio_vs_cublas = Some(cublas.median_us / own.median_us);
    entry.gate = Gate::Passed;
    entry.runners_up = passing
        .iter()
        .take(3)
        .map(|(c, _)| c.schedule.name())
        .collect();
    Some(entry)
}

/// Writes (or merges into) the profile: entries for other problems already in the file are
/// kept when it was tuned for the same architecture and contract and with the same `measured`
/// flag.
fn write_profile(path: &Path, meta: Metadata, entries: Vec<Entry>) -> anyhow::Result<()> {
    let mut merged = BTreeMap::new();
    if let Ok(old) = Profile::load(path)
        && old.meta.arch == meta.arch
        && old.meta.numerical_contract == meta.numerical_contract
        && old.meta.measured == meta.measured
    {
        for e in old.entries {
            merged.insert(e.problem(), e);
        }
    }
    for e in entries {
        merged.insert(e.problem(), e);
    }
    Profile::new(meta, merged.into_values().collect())?.save(path)?;
    Ok(())
}

/// Writes the plots and summary.md; a cost-model-only report gets the summary alone.
fn write_summary_and_plots(run_dir: &Path, report: &RunReport) -> anyhow::Result<()> {
    match crate::outputs::render_all(report, run_dir) {
        Ok(_) => {}
        Err(crate::plot::PlotError::NothingMeasured) => {
            let summary = crate::summary::summary_markdown(report);
            crate::util::write_atomically(
                &run_dir.join(crate::plot::SUMMARY_MD),
                summary.as_bytes(),
            )?;
        }
        Err(e) => eprintln!("plots not drawn: {e}"),
    }
    Ok(())
}

/// The end of every tune: report, profile (merged), then summary and plots.
pub fn finish(
    opts: &TuneOptions,
    run_dir: PathBuf,
    profile_path: PathBuf,
    meta: Metadata,
    report: RunReport,
    entries: Vec<Entry>,
) -> anyhow::Result<TuneOutcome> {
    let measured = meta.measured;
    export::write_report(&run_dir, &report)?;
    write_profile(&profile_path, meta, entries)?;
    if opts.plots {
        write_summary_and_plots(&run_dir, &report)?;
    }
    eprintln!(
        "wrote {}{} and {}",
        profile_path.display(),
        if measured { "" } else { " (measured = false)" },
        run_dir.display()
    );
    Ok(TuneOutcome {
        profile_path,
        run_dir,
        report,
    })
}

/// Prints one shape's finalists and choice.
pub fn print_shape(s: &ShapeReport) {
    let shape = s.problem.shape;
    for f in &s.finalists {
        eprintln!(
            "{shape}: finalist {} own {:.1} µs, cuBLAS {:.1} µs, own/cuBLAS {:.3}x",
            f.schedule,
            f.own.median_us,
            f.cublas.median_us,
            f.ratio()
        );
    }
    match s.parity() {
        Some((chosen, own, cublas)) => eprintln!(
            "{shape}: chosen {chosen} {:.1} µs {:.1} TFLOP/s | cuBLAS {:.1} µs {:.1} TFLOP/s | own/cuBLAS {:.3}x{}",
            own.median_us,
            own.tflops,
            cublas.median_us,
            cublas.tflops,
            cublas.median_us / own.median_us,
            if s.head_to_head.is_some() {
                " (head-to-head)"
            } else {
                " (screen)"
            }
        ),
        None => eprintln!("{shape}: no gate-passing candidate was measured"),
    }
}
