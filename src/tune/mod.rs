//! `forge tune`: rank with the cost model, compile the top picks, gate and time them beside
//! cuBLAS in worker processes, and write the dispatch profile and the run report.
//!
//! Per problem the run reads top to bottom as [`picks`] (what to time) → [`supervisor`]
//! (worker processes under a watchdog; [`worker`] is their side, [`protocol`] the wire) →
//! [`record`] (profile entries, provenance, the rules for files already there and the one
//! locked, journaled write path; [`export`] renders the report files). [`launch`] is the
//! hidden `forge launch`: one schedule, one shape, one process (for compute-sanitizer).

pub mod export;
pub mod first_use;
pub mod launch;
pub mod picks;
mod progress;
pub mod protocol;
pub mod record;
pub mod supervisor;
pub mod worker;

pub use picks::{PER_TILE, pick_diverse};

use crate::arch::Arch;
use crate::contract::Contract;
use crate::cost_model::CostModel;
use crate::device::cache::KernelCache;
use crate::device::timing::TimingConfig;
use crate::device::{DeviceInfo, Gpu};
use crate::problem::Problem;
use crate::profile::Entry;
use crate::report::{RunReport, ShapeReport, Status};
use crate::schedule::{Dtype, Schedule};
use anyhow::{Context, bail};
use std::path::PathBuf;

/// Screen winners re-timed head to head against cuBLAS before one is chosen.
pub const FINALISTS: usize = 3;

/// What `forge tune` was asked to do.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    pub arch: Arch,
    /// The problems to tune, in order (one dtype and layout per run).
    pub problems: Vec<Problem>,
    /// The numerical contract every kernel of the run follows (and the profile records).
    pub contract: Contract,
    /// Candidates benchmarked per shape besides the canonical one.
    pub top: usize,
    pub exhaustive: bool,
    pub require_gpu: bool,
    pub profile: Option<PathBuf>,
    pub run_dir: Option<PathBuf>,
    /// Re-measure shapes the run directory already holds.
    pub force: bool,
    pub seed: u64,
    /// Seconds without worker output before a candidate is declared hung.
    pub watchdog_s: u64,
    pub cache_dir: PathBuf,
    pub timing: TimingConfig,
    pub plots: bool,
    pub command: String,
}

impl TuneOptions {
    /// The element type of the run (whose canonical schedule the profile names).
    pub fn dtype(&self) -> Dtype {
        self.problems.first().map_or(Dtype::Tf32, |p| p.dtype)
    }
}

/// Where the results went.
#[derive(Debug)]
pub struct TuneOutcome {
    pub profile_path: PathBuf,
    pub run_dir: PathBuf,
    pub report: RunReport,
}

/// Runs the whole job: measured on a GPU of `--arch`, else (unless `--require-gpu`) a
/// cost-model-only profile.
pub fn tune(opts: &TuneOptions) -> anyhow::Result<TuneOutcome> {
    let model = CostModel::shipped();
    match open_device(opts)? {
        Some(info) => tune_measured(opts, &info, &model),
        None => tune_model_only(opts, &model),
    }
}

fn open_device(opts: &TuneOptions) -> anyhow::Result<Option<DeviceInfo>> {
    let info = match Gpu::open(0) {
        Ok(gpu) => gpu.info.clone(),
        Err(e) if opts.require_gpu => bail!("--require-gpu: {e}"),
        Err(e) => {
            eprintln!("==================================================================");
            eprintln!(" forge tune: {e}.");
            eprintln!(" Writing a COST-MODEL-ONLY profile (measured = false): the choices");
            eprintln!(" are predictions, not measurements. Run on a GPU to measure them.");
            eprintln!("==================================================================");
            return Ok(None);
        }
    };
    if info.arch != opts.arch.name {
        bail!(
            "the device is {} ({}), but --arch is {}: forge can only measure the \
             architecture it runs on",
            info.name,
            info.arch,
            opts.arch.name
        );
    }
    Ok(Some(info))
}

/// The profile a run writes: `--profile`, else `profiles/<arch>-<name>.toml`.
fn profile_path(opts: &TuneOptions, name: &str) -> PathBuf {
    opts.profile
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("profiles/{}-{name}.toml", opts.arch.name)))
}

/// The run directory: `--run-dir`, else `reports/<kind>-<arch>[-<device>]-<date>`.
fn run_dir_path(opts: &TuneOptions, kind: &str, device: Option<&str>) -> PathBuf {
    opts.run_dir.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "reports/{kind}-{}{}-{}",
            opts.arch.name,
            device.map(|d| format!("-{d}")).unwrap_or_default(),
            chrono::Utc::now().format("%Y%m%d")
        ))
    })
}

fn tune_model_only(opts: &TuneOptions, model: &CostModel) -> anyhow::Result<TuneOutcome> {
    let arch = &opts.arch;
    let target = record::Target {
        arch: arch.name.clone(),
        contract: opts.contract,
        measured: false,
        force: opts.force,
    };
    let (files, _) = record::RunFiles::open(
        opts,
        target,
        run_dir_path(opts, "model", None),
        profile_path(opts, "model"),
    )?;
    let mut entries = Vec::new();
    let provenance = record::provenance(opts, None, "");
    let mut shapes = vec![];
    for problem in &opts.problems {
        let shape = problem.shape;
        let ranked = model.rank(arch, problem.dtype, problem.layout, &shape);
        // Only schedules that keep the canonical reduction order can honour "bitexact".
        let exact: Vec<_> = ranked
            .iter()
            .filter(|r| !r.schedule.changes_reduction_order())
            .collect();
        let Some(best) = exact.first() else {
            bail!("no valid schedule for {shape} on {}", arch.name);
        };
        let mut entry = Entry::predicted(*problem, &best.schedule, best.prediction.time_us);
        entry.runners_up = exact[1..exact.len().min(4)]
            .iter()
            .map(|r| r.schedule.name())
            .collect();
        entries.push(entry);
        let mut shape_report = ShapeReport::new(*problem, opts.seed);
        shape_report.candidates = ranked
            .iter()
            .take(opts.top.max(1))
            .enumerate()
            .map(|(i, r)| picks::candidate(i, r, Status::Predicted))
            .collect();
        shapes.push(shape_report);
        eprintln!(
            "{shape}: predicted best {} ({:.1} µs, {:.0} TFLOP/s)",
            best.schedule, best.prediction.time_us, best.prediction.tflops
        );
    }
    let meta = record::metadata(opts, None);
    let report = files.finish(opts, &provenance, &shapes, meta, |_| entries)?;
    Ok(TuneOutcome {
        profile_path: files.profile,
        run_dir: files.run_dir,
        report,
    })
}

fn tune_measured(
    opts: &TuneOptions,
    info: &DeviceInfo,
    model: &CostModel,
) -> anyhow::Result<TuneOutcome> {
    let arch = info.arch()?;
    let device_slug = record::slug(&info.name);
    let target = record::Target {
        arch: arch.name.clone(),
        contract: opts.contract,
        measured: true,
        force: opts.force,
    };
    let (files, on_disk) = record::RunFiles::open(
        opts,
        target,
        run_dir_path(opts, "tune", Some(&device_slug)),
        profile_path(opts, &device_slug),
    )?;
    let cache = KernelCache::new(&opts.cache_dir)?;
    let on_disk = on_disk.unwrap_or_default();
    let mut provenance = record::provenance(opts, Some(info), &on_disk.provenance.cublas_version);
    let mut mine: Vec<ShapeReport> = vec![];
    for problem in &opts.problems {
        let done = on_disk
            .shapes
            .iter()
            .any(|s| s.problem == *problem && s.cublas.is_some());
        if done && !opts.force {
            eprintln!(
                "{}: already measured in {} (--force re-measures)",
                problem.shape,
                files.run_dir.display()
            );
            continue;
        }
        let (shape_report, cublas_version) = measure(opts, &arch, &cache, model, problem)?;
        record::print_shape(&shape_report);
        mine.retain(|s| s.problem != *problem);
        mine.push(shape_report);
        provenance.cublas_version = cublas_version;
        files.save_report(&provenance, &mine)?;
    }
    let meta = record::metadata(opts, Some(info));
    let report = files.finish(opts, &provenance, &mine, meta, |report| {
        report
            .shapes
            .iter()
            .filter_map(record::measured_entry)
            .collect()
    })?;
    Ok(TuneOutcome {
        profile_path: files.profile,
        run_dir: files.run_dir,
        report,
    })
}

/// Screens one problem's picks, then meets the fastest gate-passing ones with cuBLAS head to
/// head; returns the shape's report and the worker's cuBLAS version.
fn measure(
    opts: &TuneOptions,
    arch: &Arch,
    cache: &KernelCache,
    model: &CostModel,
    problem: &Problem,
) -> anyhow::Result<(ShapeReport, String)> {
    let shape = problem.shape;
    let ranked = model.rank(arch, problem.dtype, problem.layout, &shape);
    let picks = picks::screen_picks(&ranked, opts.top, opts.exhaustive);
    eprintln!("{shape}: {} candidates", picks.len());
    let mut candidates = picks::compile(cache, &arch.name, problem, opts.contract, &picks);
    let runnable: Vec<Schedule> = candidates
        .iter()
        .filter(|c| c.status == Status::Predicted)
        .map(|c| c.schedule)
        .collect();
    let canonical = Schedule::canonical(problem.dtype);
    if !runnable.contains(&canonical) {
        bail!("{shape}: the canonical schedule {canonical} did not compile cleanly");
    }
    let pb = progress::bar(runnable.len() as u64, "bench");
    let res = supervisor::screen(opts, problem, &runnable, &pb)?;
    pb.finish();
    let (_, cublas_version, sets) = res
        .info
        .clone()
        .context("the worker never reported its device")?;
    for c in candidates.iter_mut() {
        if let Some((status, measured, gate)) = res.outcomes.get(&c.schedule) {
            c.status = status.clone();
            c.measured = measured.clone();
            c.gate = gate.clone();
        }
    }
    let mut s = ShapeReport::new(*problem, opts.seed);
    s.input_sets = sets;
    s.cublas = res.cublas.clone();
    s.reference = res.reference.clone();
    s.bitmodel = res.bitmodel.clone();
    s.cublas_accuracy = res.cublas_accuracy.clone();
    s.candidates = candidates;
    if !res.reference.as_ref().is_some_and(|r| r.passed) {
        eprintln!(
            "{shape}: the canonical output failed the FP64 reference check: nothing is chosen"
        );
        return Ok((s, cublas_version));
    }
    if let Some(b) = res.bitmodel.as_ref().filter(|b| !b.passed()) {
        eprintln!(
            "{shape}: the canonical output differs from the bit model in {} of {} sampled \
             elements ({}): nothing is chosen",
            b.samples - b.equal,
            b.samples,
            b.first_mismatch.as_deref().unwrap_or("")
        );
        return Ok((s, cublas_version));
    }
    s.chosen = s.fastest_passing().map(|(c, _)| c.schedule);
    // The screen timed each candidate once beside one cuBLAS measurement; the finalists are
    // re-timed in alternating rounds against cuBLAS, and the best ratio is chosen.
    let finalists: Vec<Schedule> = s
        .fastest_passing_n(FINALISTS)
        .iter()
        .map(|(c, _)| c.schedule)
        .collect();
    for schedule in finalists {
        match supervisor::head_to_head(opts, problem, schedule) {
            Ok(h) => s.finalists.push(h),
            Err(e) => eprintln!("{shape}: {e:#}"),
        }
    }
    // The best of several noisy ratios is biased upwards: the numbers reported for the
    // chosen schedule come from one more, fresh head-to-head.
    if let Some(best) = crate::report::best_finalist(&s.finalists).map(|h| h.schedule) {
        s.chosen = Some(best);
        match supervisor::head_to_head(opts, problem, best) {
            Ok(h) => s.head_to_head = Some(h),
            Err(e) => eprintln!("{shape}: {e:#}"),
        }
    }
    Ok((s, cublas_version))
}
