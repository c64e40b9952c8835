//! `forge calibrate`: measure a sampled slice of the schedule space on the device, and fit
//! the cost model's constants to it.
//!
//! [`sample`] says what is timed per shape (the model's top picks, a stratified random sample
//! of the rest, the profile's schedules, the canonical one); [`collect`] compiles the union of
//! their kernel variants once and times each shape's set in one worker job through the
//! tuner's supervisor (gate included), writing [`data`] after every shape; [`fit`] moves the
//! constants of `cost_model/model.toml` to minimise the squared log error on training shapes
//! and reports the ranking metrics on held-out shapes (pure, runs anywhere).

pub mod data;
pub mod fit;
pub mod noise;
pub mod pool;
pub mod sample;
pub mod selection;

use crate::arch::Arch;
use crate::contract::Contract;
use crate::cost_model::{CostModel, Ranked};
use crate::device::cache::KernelCache;
use crate::device::timing::TimingConfig;
use crate::kernel_source::KernelVariant;
use crate::problem::Problem;
use crate::profile::Profile;
use crate::report::{GateResult, Status, Verdict};
use crate::schedule::Schedule;
use crate::tune::{TuneOptions, supervisor};
use anyhow::{Context, bail};
use data::{CalibrationData, Point, ShapeData};
use rayon::prelude::*;
use sample::{CalibrationPlan, Origin};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// The quick timing a calibration uses per schedule: a few ms of warm-up, then at least 7
/// batches of ≥ 300 µs. The schedules of a worker are timed back to back, so at power-heavy
/// shapes the clock falls from boost to the power-capped value over the first ones (session
/// 35: 6-7% in geomean at 9344×3376×9984 on the H100); `--heat-ms` reaches that state first.
pub fn quick_timing() -> TimingConfig {
    TimingConfig {
        warmup_ms: 5.0,
        batch_us: 300.0,
        min_samples: 7,
        max_samples: 25,
        target_half_width: 0.015,
        max_seconds: 0.06,
        ..TimingConfig::default()
    }
}

/// What `forge calibrate` (collection) was asked to do.
#[derive(Clone, Debug)]
pub struct CollectOptions {
    pub arch: Arch,
    pub problems: Vec<Problem>,
    pub contract: Contract,
    pub plan: CalibrationPlan,
    /// Also time this profile's entries and runners-up (those valid for each shape).
    pub profile: Option<PathBuf>,
    /// Also time these schedules (`--schedules`), on each shape they can run.
    pub listed: Vec<Schedule>,
    pub out_dir: PathBuf,
    pub watchdog_s: u64,
    pub cache_dir: PathBuf,
    pub timing: TimingConfig,
    /// Confirmation rounds per shape ([`confirm`]); 0: each schedule timed once.
    pub repeat: usize,
    /// Compile the variants into the cache and stop (works without a GPU).
    pub compile_only: bool,
    pub command: String,
}

/// The schedules a `--schedules` file names, one a line (blank lines and `#` comments
/// skipped), in file order; a name that does not parse is an error naming the file and line.
pub fn read_schedule_list(path: &std::path::Path) -> anyhow::Result<Vec<Schedule>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the schedule list {}", path.display()))?;
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        let name = line.split('#').next().unwrap_or("").trim();
        if name.is_empty() {
            continue;
        }
        let s = name.parse::<Schedule>().map_err(|e| {
            anyhow::anyhow!(
                "{} line {}: {name:?} is not a schedule: {e}",
                path.display(),
                i + 1
            )
        })?;
        out.push(s);
    }
    if out.is_empty() {
        bail!("the schedule list {} names no schedule", path.display());
    }
    Ok(out)
}

/// Every schedule a profile holds (entries and runners-up), parsed, in file order.
pub fn profile_schedules(profile: &Profile) -> Vec<Schedule> {
    let mut seen = BTreeSet::new();
    let mut out = vec![];
    for e in &profile.entries {
        for name in std::iter::once(&e.schedule).chain(&e.runners_up) {
            if let Ok(s) = name.parse::<Schedule>()
                && seen.insert(s)
            {
                out.push(s);
            }
        }
    }
    out
}

/// Draws, compiles and times every shape; returns the data set (also written to `out_dir`
/// after each shape). With `compile_only`, stops after compiling and returns `None`.
pub fn collect(opts: &CollectOptions) -> anyhow::Result<Option<CalibrationData>> {
    let model = CostModel::shipped();
    let (arch, info) = if opts.compile_only {
        (opts.arch.clone(), None)
    } else {
        let info =
            crate::device::simulated::open_info(0).context("forge calibrate measures on a GPU")?;
        if info.arch != opts.arch.name {
            bail!(
                "the device is {} ({}), but --arch is {}",
                info.name,
                info.arch,
                opts.arch.name
            );
        }
        (info.arch()?, Some(info))
    };
    let extra = match &opts.profile {
        Some(p) => profile_schedules(&Profile::load_for_arch(p, &arch.name)?),
        None => vec![],
    };
    // Per problem: the drawn schedules with the shipped model's prediction.
    let mut sets: Vec<(Problem, Vec<(Ranked, Origin)>)> = vec![];
    for (i, problem) in opts.problems.iter().enumerate() {
        let ranked = model.rank(&arch, problem.dtype, problem.layout, &problem.shape);
        // Profile schedules where valid; listed ones wherever they can run (a dispatcher runs
        // a pool schedule the search prunes only as wasteful, `space::runnable`).
        let valid_extra: Vec<Schedule> = extra
            .iter()
            .filter(|s| {
                s.dtype == problem.dtype && crate::space::check(&arch, s, &problem.shape).is_ok()
            })
            .chain(opts.listed.iter().filter(|s| {
                s.dtype == problem.dtype && crate::space::runnable(&arch, s, &problem.shape).is_ok()
            }))
            .copied()
            .collect();
        let canonical = Schedule::canonical(problem.dtype);
        let drawn = sample::draw(&ranked, &opts.plan, &valid_extra, canonical, i as u64 + 1);
        let by_schedule: HashMap<Schedule, &Ranked> =
            ranked.iter().map(|r| (r.schedule, r)).collect();
        let with_pred = drawn
            .into_iter()
            .map(|(s, o)| {
                let r = by_schedule.get(&s).map(|r| **r).unwrap_or_else(|| Ranked {
                    schedule: s,
                    prediction: model.predict(&arch, &s, &problem.shape, problem.layout),
                });
                (r, o)
            })
            .collect::<Vec<_>>();
        sets.push((*problem, with_pred));
    }
    // Compile the union of the variants once, in parallel.
    let cache = KernelCache::new(&opts.cache_dir)?;
    let mut variants: Vec<KernelVariant> = sets
        .iter()
        .flat_map(|(p, v)| {
            v.iter()
                .map(|(r, _)| KernelVariant::new(&r.schedule, &p.shape, opts.contract.rounding))
        })
        .collect();
    variants.sort();
    variants.dedup();
    let total: usize = sets.iter().map(|(_, v)| v.len()).sum();
    eprintln!(
        "calibrate: {} shapes, {total} schedules, {} kernel variants to compile",
        sets.len(),
        variants.len()
    );
    let start = std::time::Instant::now();
    let failures: HashMap<KernelVariant, String> = variants
        .par_iter()
        .filter_map(|v| {
            crate::kernel_check::compile_clean(&cache, v, &arch.name)
                .err()
                .map(|e| (*v, e))
        })
        .collect();
    eprintln!(
        "calibrate: compiled in {:.1} s, {} variants not clean",
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    let Some(info) = info else {
        return Ok(None);
    };
    let topts = TuneOptions {
        arch: arch.clone(),
        problems: opts.problems.clone(),
        contract: opts.contract,
        top: opts.plan.top,
        exhaustive: false,
        refine: 0,
        require_gpu: true,
        profile: None,
        run_dir: None,
        force: false,
        seed: opts.plan.seed,
        watchdog_s: opts.watchdog_s,
        cache_dir: opts.cache_dir.clone(),
        timing: opts.timing.clone(),
        plots: false,
        command: opts.command.clone(),
        gpus: crate::tune::gpus::GpuSet::default(),
        device: 0,
    };
    let mut data = CalibrationData {
        arch: arch.clone(),
        device_name: info.name.clone(),
        cublas_version: String::new(),
        contract: opts.contract,
        timing: opts.timing.clone(),
        top: opts.plan.top,
        sample: opts.plan.sample,
        seed: opts.plan.seed,
        forge_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: crate::util::git_revision().into(),
        date: crate::util::now_rfc3339(),
        command: opts.command.clone(),
        shapes: vec![],
    };
    for (problem, drawn) in &sets {
        let t0 = std::time::Instant::now();
        let variant = |s: &Schedule| KernelVariant::new(s, &problem.shape, opts.contract.rounding);
        let runnable: Vec<Schedule> = drawn
            .iter()
            .map(|(r, _)| r.schedule)
            .filter(|s| !failures.contains_key(&variant(s)))
            .collect();
        let pb = indicatif::ProgressBar::hidden();
        let res = supervisor::screen(&topts, problem, &runnable, &pb)?;
        if let Some((_, v, _)) = &res.info {
            data.cublas_version = v.clone();
        }
        let reference_passed = res.reference.as_ref().is_some_and(|r| r.passed)
            && res.bitmodel.as_ref().is_none_or(|b| b.passed());
        let points = drawn
            .iter()
            .map(|(r, origin)| {
                let (status, measured, gate) = match failures.get(&variant(&r.schedule)) {
                    Some(reason) => (
                        Status::CompileFailed(reason.clone()),
                        None,
                        GateResult::not_run(),
                    ),
                    None => res.outcomes.get(&r.schedule).cloned().unwrap_or((
                        Status::Predicted,
                        None,
                        GateResult::not_run(),
                    )),
                };
                Point {
                    schedule: r.schedule,
                    origin: *origin,
                    predicted_us: r.prediction.time_us,
                    status: status_label(&status),
                    measured,
                    gate: gate.verdict,
                    repeats_us: vec![],
                }
            })
            .collect::<Vec<_>>();
        let passed = points.iter().filter(|p| p.gate == Verdict::Pass).count();
        eprintln!(
            "{}: {} timed, {passed} passed the gate, cuBLAS {:.1} µs, {:.1} s",
            problem.shape,
            points.iter().filter(|p| p.measured.is_some()).count(),
            res.cublas.as_ref().map_or(f64::NAN, |m| m.median_us),
            t0.elapsed().as_secs_f64()
        );
        data.shapes.push(ShapeData {
            problem: *problem,
            cublas: res.cublas.clone(),
            reference_passed,
            points,
        });
        data.save(&opts.out_dir)?;
        // The first pass is saved; the confirmation only adds to it (not where the canonical
        // output failed its checks: nothing there is judged).
        if opts.repeat > 0 && reference_passed {
            let shape = data.shapes.last_mut().expect("just pushed");
            if let Err(e) = confirm(&topts, shape, opts.repeat) {
                eprintln!("{}: the confirmation stopped ({e:#})", problem.shape);
            }
            data.save(&opts.out_dir)?;
        }
    }
    Ok(Some(data))
}

/// Times again, `rounds` times, the points whose first timing lies within
/// [`noise::CONFIRM_BAND`] of the shape's fastest (at most [`noise::CONFIRM_MAX`]) and the
/// model's 4 best-predicted timed points: one worker job per round, each in a rotated order
/// ([`noise::confirm_order`]), every timing gated again (cuBLAS is not timed again). The
/// medians go to `repeats_us`; a round that fails keeps the rounds before it. The noise
/// figures of the fit need at least 2 rounds (3 timings per point).
fn confirm(topts: &TuneOptions, shape: &mut ShapeData, rounds: usize) -> anyhow::Result<()> {
    let problem = shape.problem;
    let set = noise::confirm_set(&shape.points);
    if set.is_empty() {
        return Ok(());
    }
    if rounds < 2 {
        eprintln!(
            "{}: one confirmation round gives no noise figures (they need 3 timings a point)",
            problem.shape
        );
    }
    let t0 = std::time::Instant::now();
    for r in 0..rounds {
        let order: Vec<Schedule> = noise::confirm_order(&set, r, rounds)
            .into_iter()
            .map(|i| shape.points[i].schedule)
            .collect();
        let pb = indicatif::ProgressBar::hidden();
        let mut res = supervisor::ScreenResults {
            cublas: shape.cublas.clone(),
            ..Default::default()
        };
        supervisor::screen_more(topts, &problem, &order, &pb, &mut res)?;
        for &i in &set {
            let p = &mut shape.points[i];
            match res.outcomes.get(&p.schedule) {
                Some((_, Some(m), gate)) if gate.verdict == Verdict::Pass => {
                    p.repeats_us.push(m.median_us)
                }
                Some((_, _, gate)) if gate.verdict == Verdict::Fail => p.gate = Verdict::Fail,
                _ => {}
            }
        }
    }
    eprintln!(
        "{}: {} schedules timed {rounds} more times, one timing's noise {}, {:.1} s",
        problem.shape,
        set.len(),
        noise::shape_noise(shape).map_or("not resolved".into(), |n| format!(
            "{:.2}%",
            n.sigma * 100.0
        )),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn status_label(s: &Status) -> String {
    match s {
        Status::Measured => "measured".into(),
        Status::CompileFailed(r) => format!("compile_failed: {r}"),
        Status::LaunchFailed(r) => format!("launch_failed: {r}"),
        Status::Faulted(r) => format!("faulted: {r}"),
        Status::TimedOut(r) => format!("timed_out: {r}"),
        Status::Predicted => "not_run".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::read_schedule_list;

    /// A list file in a folder of this test process, named `gate.txt`.
    fn list(case: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("forge-list-{}-{case}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gate.txt");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_schedule_list_skips_blank_lines_and_comments_and_keeps_file_order() {
        let path = list(
            "order",
            "# the model's picks\n\nwgmma_tf32_128x176x32_s5_wg2_swz4c_pers_c1_k1\n  \
             wgmma_tf32_64x64x32_s7_wg1_swz1_np_c1_k1  # a comment\n",
        );
        let names: Vec<String> = read_schedule_list(&path)
            .unwrap()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "wgmma_tf32_128x176x32_s5_wg2_swz4c_pers_c1_k1",
                "wgmma_tf32_64x64x32_s7_wg1_swz1_np_c1_k1"
            ]
        );
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_bad_name_or_an_empty_list_is_one_error_naming_the_file_and_line() {
        let path = list(
            "bad",
            "wgmma_tf32_64x64x32_s7_wg1_swz1_np_c1_k1\nnot_a_schedule\n",
        );
        let e = read_schedule_list(&path).unwrap_err().to_string();
        assert!(
            e.contains("gate.txt line 2") && e.contains("not_a_schedule"),
            "{e}"
        );
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        let path = list("empty", "# nothing\n\n");
        let e = read_schedule_list(&path).unwrap_err().to_string();
        assert!(e.contains("names no schedule"), "{e}");
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
