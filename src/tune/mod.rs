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
pub mod gpus;
pub mod launch;
pub mod picks;
mod progress;
pub mod protocol;
pub mod record;
pub mod shard;
pub mod simulated;
pub mod supervisor;
pub mod worker;

pub use picks::{PER_TILE, pick_diverse};

use crate::arch::Arch;
use crate::contract::Contract;
use crate::cost_model::CostModel;
use crate::device::DeviceInfo;
use crate::device::cache::KernelCache;
use crate::device::timing::TimingConfig;
use crate::problem::Problem;
use crate::profile::Entry;
use crate::report::{RunReport, ShapeReport, Status};
use crate::schedule::{Dtype, LaunchOrder, Schedule};
use anyhow::{Context, bail};
use gpus::GpuSet;
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

/// Screen winners re-timed head to head against cuBLAS (launched serially; the first also
/// programmatically) before one is chosen: with the confirmation, four head-to-heads per shape.
pub const FINALISTS: usize = 2;

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
    /// The fastest kernels of the first screen whose other launch variants (raster order,
    /// swizzle group, grid) a second screen times (`picks::launch_variants`); 0: none.
    pub refine: usize,
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
    /// The GPUs a measured run spreads its problems over (`--gpus`).
    pub gpus: GpuSet,
    /// The GPU whose workers measure: set per problem by the run (one of `gpus`).
    pub device: usize,
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
    use crate::device::simulated::require_explicit;
    require_explicit(opts.profile.is_some(), "--profile")?;
    require_explicit(opts.run_dir.is_some(), "--run-dir")?;
    crate::device::simulated::banner("tune");
    let model = CostModel::shipped();
    match open_devices(opts)? {
        Some(devices) => tune_measured(opts, &devices, &model),
        None => tune_model_only(opts, &model),
    }
}

/// The GPUs of `--gpus` (all one model, of `--arch`), or None for a cost-model-only run when
/// the machine has no GPU at all.
fn open_devices(opts: &TuneOptions) -> anyhow::Result<Option<Vec<(usize, DeviceInfo)>>> {
    if let Err(e) = crate::device::simulated::open_info(0) {
        if opts.require_gpu {
            bail!("--require-gpu: {e}");
        }
        eprintln!("==================================================================");
        eprintln!(" forge tune: {e}.");
        eprintln!(" Writing a COST-MODEL-ONLY profile (measured = false): the choices");
        eprintln!(" are predictions, not measurements. Run on a GPU to measure them.");
        eprintln!("==================================================================");
        return Ok(None);
    }
    let devices = opts
        .gpus
        .open()
        .map_err(|e| anyhow::anyhow!("--gpus {}: {e}", opts.gpus))?;
    gpus::require_one_model(&devices).map_err(|e| anyhow::anyhow!("--gpus {}: {e}", opts.gpus))?;
    check_arch(opts, &devices[0].1)?;
    if devices.len() > 1 {
        eprintln!(
            "measuring on {} GPUs ({}), each a {}",
            devices.len(),
            opts.gpus,
            devices[0].1.name
        );
    }
    Ok(Some(devices))
}

fn check_arch(opts: &TuneOptions, info: &DeviceInfo) -> anyhow::Result<()> {
    if info.arch != opts.arch.name {
        bail!(
            "the device is {} ({}), but --arch is {}: forge can only measure the \
             architecture it runs on",
            info.name,
            info.arch,
            opts.arch.name
        );
    }
    Ok(())
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
    devices: &[(usize, DeviceInfo)],
    model: &CostModel,
) -> anyhow::Result<TuneOutcome> {
    let info = &devices[0].1;
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
    let mut todo = VecDeque::new();
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
        } else if !todo.contains(problem) {
            todo.push_back(*problem);
        }
    }
    let mut mine: Vec<ShapeReport> = vec![];
    // Each measured problem is saved as it arrives, so a failure (or a kill) later loses
    // nothing already measured.
    let gpus: Vec<usize> = devices.iter().map(|(ordinal, _)| *ordinal).collect();
    let on_gpu = |gpu: usize, problem: &Problem| {
        let opts = TuneOptions {
            device: gpu,
            ..opts.clone()
        };
        measure(&opts, &arch, &cache, model, problem)
    };
    let failure = measure_on_gpus(&gpus, todo, on_gpu, |(report, cublas)| {
        record::print_shape(&report);
        mine.retain(|s| s.problem != report.problem);
        mine.push(report);
        provenance.cublas_version = cublas;
        // Report order: the order of the command line, whichever GPU finished first.
        mine.sort_by_key(|s| opts.problems.iter().position(|p| *p == s.problem));
        files.save_report(&provenance, &mine).map(|_| ())
    });
    if let Some(e) = failure {
        return Err(e.context(format!(
            "the measured shapes are saved in {}",
            files.run_dir.display()
        )));
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

/// Runs `measure(gpu, problem)` for the problems of `todo` on the GPUs `gpus`, one problem at
/// a time per GPU, each GPU taking the next problem when it is free; `save` gets each result
/// as it arrives, on the calling thread. On the first error no new problem is started, the
/// problems in flight finish and are saved, and the error is returned.
fn measure_on_gpus<R: Send>(
    gpus: &[usize],
    todo: VecDeque<Problem>,
    measure: impl Fn(usize, &Problem) -> anyhow::Result<R> + Sync,
    mut save: impl FnMut(R) -> anyhow::Result<()>,
) -> Option<anyhow::Error> {
    let queue = Mutex::new(todo);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<anyhow::Result<R>>();
    std::thread::scope(|scope| {
        for &gpu in gpus {
            let (tx, queue, stop, measure) = (tx.clone(), &queue, &stop, &measure);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(problem) = queue.lock().expect("queue lock").pop_front() else {
                        break;
                    };
                    let result =
                        measure(gpu, &problem).with_context(|| format!("{problem} on GPU {gpu}"));
                    // This GPU stops at once; the others at their next problem.
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if tx.send(result).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut failure = None;
        for result in rx {
            if let Err(e) = result.and_then(&mut save) {
                stop.store(true, Ordering::Relaxed);
                failure.get_or_insert(e);
            }
        }
        failure
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
    let runnable = compiled(&candidates);
    let canonical = Schedule::canonical(problem.dtype);
    if !runnable.contains(&canonical) {
        bail!("{shape}: the canonical schedule {canonical} did not compile cleanly");
    }
    let pb = progress::bar(runnable.len() as u64, "bench");
    let mut res = supervisor::screen(opts, problem, &runnable, &pb)?;
    pb.finish();
    apply_outcomes(&mut candidates, &res);
    // The first screen's winner, kept a finalist whatever the second screen times.
    let first_winner = crate::report::fastest_passing(&candidates, 1)
        .first()
        .map(|(c, _)| c.schedule);
    // Nothing is chosen where the canonical output fails its checks: no second screen then.
    let checked = res.reference.as_ref().is_some_and(|r| r.passed)
        && res.bitmodel.as_ref().is_none_or(|b| b.passed());
    if opts.refine > 0 && !opts.exhaustive && checked {
        screen_launch_variants(
            opts,
            arch,
            cache,
            problem,
            &ranked,
            &mut candidates,
            &mut res,
        );
    }
    let (_, cublas_version, sets) = res
        .info
        .clone()
        .context("the worker never reported its device")?;
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
    // Screens and finalists launch serially; the screen's fastest is also timed launched
    // programmatically (its launch and set-up overlap the previous kernel's tail): which order
    // is faster depends on the shape (H200, 2026-12-03: programmatic +36% at 512³ and +20% at
    // 257×513×1025 with its preparation pass, −14% at 128×14336×4096 with 86 CTAs on 132 SMs,
    // −10% at 128×5376×7168), so a programmatic screen mis-ranks (it did at 128×5376×7168).
    let mut fastest: Vec<Schedule> = s
        .fastest_passing_n(FINALISTS)
        .iter()
        .map(|(c, _)| c.schedule)
        .collect();
    // The second screen ran in a later worker than the first: its fastest variants meet the
    // first screen's winner in the head-to-heads, not through the two screens' clocks.
    if let Some(w) = first_winner.filter(|w| !fastest.contains(w)) {
        fastest.push(w);
    }
    let finalists = fastest.iter().map(|&f| (f, LaunchOrder::Serial)).chain(
        fastest
            .first()
            .filter(|_| crate::device::kernel::programmatic_allowed())
            .map(|&f| (f, LaunchOrder::Programmatic)),
    );
    for (schedule, launch) in finalists {
        match supervisor::head_to_head(opts, problem, schedule, launch) {
            Ok(h) => s.finalists.push(h),
            Err(e) => eprintln!("{shape}: {e:#}"),
        }
    }
    // The best of several noisy ratios is biased upwards: the numbers reported for the
    // chosen schedule come from one more, fresh head-to-head.
    if let Some((best, launch)) =
        crate::report::best_finalist(&s.finalists).map(|h| (h.schedule, h.launch))
    {
        s.chosen = Some(best);
        match supervisor::head_to_head(opts, problem, best, launch) {
            Ok(h) => s.head_to_head = Some(h),
            Err(e) => eprintln!("{shape}: {e:#}"),
        }
    }
    Ok((s, cublas_version))
}

/// The second screen (`TuneOptions::refine`): the untimed launch variants of the first
/// screen's fastest gate-passing kernels, added to `candidates` and `res`. Optional: where its
/// workers fail, what they timed is kept and the tune goes on with the rest.
fn screen_launch_variants(
    opts: &TuneOptions,
    arch: &Arch,
    cache: &KernelCache,
    problem: &Problem,
    ranked: &[crate::cost_model::Ranked],
    candidates: &mut Vec<crate::report::Candidate>,
    res: &mut supervisor::ScreenResults,
) {
    let kernels = picks::one_per_kernel(
        crate::report::fastest_passing(candidates, usize::MAX)
            .iter()
            .map(|(c, _)| c.schedule),
        opts.refine,
    );
    let screened: HashSet<Schedule> = candidates.iter().map(|c| c.schedule).collect();
    let variants = picks::launch_variants(ranked, &kernels, &screened);
    if variants.is_empty() {
        return;
    }
    eprintln!(
        "{}: {} launch variants of the {} fastest kernels",
        problem.shape,
        variants.len(),
        kernels.len()
    );
    let mut more = picks::compile(cache, &arch.name, problem, opts.contract, &variants);
    let runnable = compiled(&more);
    let pb = progress::bar(runnable.len() as u64, "refine");
    if let Err(e) = supervisor::screen_more(opts, problem, &runnable, &pb, res) {
        eprintln!(
            "{}: the second screen stopped ({e:#}); going on with what it timed",
            problem.shape
        );
    }
    pb.finish();
    apply_outcomes(&mut more, res);
    for c in more.iter_mut() {
        c.second_screen = true;
    }
    candidates.extend(more);
    let fastest = |second: bool| {
        crate::report::fastest_passing(candidates, usize::MAX)
            .into_iter()
            .find(|(c, _)| c.second_screen == second)
            .map(|(c, m)| (c.schedule, m.median_us))
    };
    if let (Some((a, ta)), Some((b, tb))) = (fastest(false), fastest(true)) {
        eprintln!(
            "{}: first screen's fastest {a} {ta:.2} µs, second's {b} {tb:.2} µs ({:.3}x)",
            problem.shape,
            ta / tb
        );
    }
}

/// The candidates that compiled cleanly (nothing measured yet).
fn compiled(candidates: &[crate::report::Candidate]) -> Vec<Schedule> {
    candidates
        .iter()
        .filter(|c| c.status == Status::Predicted)
        .map(|c| c.schedule)
        .collect()
}

/// Copies a screen's outcomes into the candidates it timed.
fn apply_outcomes(candidates: &mut [crate::report::Candidate], res: &supervisor::ScreenResults) {
    for c in candidates.iter_mut() {
        if let Some((status, measured, gate)) = res.outcomes.get(&c.schedule) {
            c.status = status.clone();
            c.measured = measured.clone();
            c.gate = gate.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Layout;
    use crate::shape::Shape;
    use std::time::Duration;

    fn problems(n: u32) -> VecDeque<Problem> {
        (1..=n)
            .map(|d| Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(64 * d, 64, 64)))
            .collect()
    }

    #[test]
    fn every_problem_is_measured_once_and_the_gpus_share_them() {
        let seen = Mutex::new(vec![]);
        let mut saved = vec![];
        let failure = measure_on_gpus(
            &[0, 1, 2],
            problems(12),
            |gpu, p| {
                std::thread::sleep(Duration::from_millis(5));
                seen.lock().unwrap().push(gpu);
                Ok((gpu, *p))
            },
            |r| {
                saved.push(r);
                Ok(())
            },
        );
        assert!(failure.is_none());
        let mut got: Vec<Problem> = saved.iter().map(|(_, p)| *p).collect();
        got.sort();
        assert_eq!(got, Vec::from(problems(12)));
        let gpus = seen.into_inner().unwrap();
        for gpu in 0..3 {
            assert!(gpus.contains(&gpu), "GPU {gpu} got no problem: {gpus:?}");
        }
    }

    #[test]
    fn a_failure_stops_new_work_but_keeps_what_was_measured() {
        let mut saved = vec![];
        let failure = measure_on_gpus(
            &[0],
            problems(6),
            |_, p| {
                if p.shape.m == 3 * 64 {
                    anyhow::bail!("the canonical schedule did not compile");
                }
                Ok(*p)
            },
            |p| {
                saved.push(p);
                Ok(())
            },
        )
        .expect("the failure is returned");
        let text = format!("{failure:#}");
        assert!(
            text.contains("192x64x64 on GPU 0") && text.contains("did not compile"),
            "{text}"
        );
        assert_eq!(
            saved.len(),
            2,
            "the two measured before the failure are saved"
        );
        // A failing save (a full disk) stops the run the same way.
        let failure = measure_on_gpus(
            &[0],
            problems(4),
            |_, p| Ok(*p),
            |_| anyhow::bail!("disk full"),
        );
        assert!(format!("{failure:?}").contains("disk full"));
    }
}
