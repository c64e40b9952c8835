//! `forge tune`: rank with the cost model, compile the top picks, gate and time them beside
//! cuBLAS in a worker process, and write the dispatch profile and the run report.

pub mod protocol;
pub mod worker;

use crate::arch::Arch;
use crate::cost_model::{CostModel, Ranked};
use crate::device::cache::KernelCache;
use crate::device::cublas::CUBLAS_MODE;
use crate::device::timing::TimingConfig;
use crate::device::{DeviceInfo, Gpu};
use crate::kernel_source::KernelVariant;
use crate::profile::{self, Entry, Gate, Metadata, Profile};
use crate::report::{
    Candidate, GateResult, Provenance, REPORT_CSV, REPORT_JSON, RunReport, ShapeReport, Status,
    Verdict,
};
use crate::schedule::{Dtype, Layout, Schedule};
use crate::shape::Shape;
use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use protocol::{Event, Job};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What `forge tune` was asked to do.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    pub arch: String,
    pub shapes: Vec<Shape>,
    pub dtype: Dtype,
    pub layout: Layout,
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

/// Where the results went.
#[derive(Debug)]
pub struct TuneOutcome {
    pub profile_path: PathBuf,
    pub run_dir: PathBuf,
    pub report: RunReport,
}

fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty() && *p != "nvidia")
        .collect::<Vec<_>>()
        .join("-")
}

/// Runs the whole job.
pub fn tune(opts: &TuneOptions) -> anyhow::Result<TuneOutcome> {
    let table = Arch::by_name(&opts.arch)?;
    let model = CostModel::shipped();
    let device = match Gpu::open(0) {
        Ok(gpu) => Some(gpu.info.clone()),
        Err(e) => {
            if opts.require_gpu {
                bail!("--require-gpu: {e}");
            }
            eprintln!("==================================================================");
            eprintln!(" forge tune: {e}.");
            eprintln!(" Writing a COST-MODEL-ONLY profile (measured = false): the choices");
            eprintln!(" are predictions, not measurements. Run on a GPU to measure them.");
            eprintln!("==================================================================");
            None
        }
    };
    match device {
        None => tune_model_only(opts, &table, &model),
        Some(info) => {
            if info.arch != table.name {
                bail!(
                    "the device is {} ({}), but --arch is {}: forge can only measure the \
                     architecture it runs on",
                    info.name,
                    info.arch,
                    table.name
                );
            }
            tune_measured(opts, &info, &model)
        }
    }
}

fn metadata(opts: &TuneOptions, info: Option<&DeviceInfo>, measured: bool) -> Metadata {
    let mut meta = Metadata::now(&opts.arch, opts.dtype, measured);
    meta.device_name = info.map_or("none (cost model only)".into(), |i| i.name.clone());
    if let Some(i) = info {
        meta.driver_version = i.driver_version.clone();
        meta.nvrtc_version = i.nvrtc_version.clone();
    }
    if measured {
        meta.cublas_mode = CUBLAS_MODE.into();
    }
    meta
}

/// Writes (or merges into) the profile: entries for other problems already in the file are
/// kept when it was tuned for the same architecture and with the same `measured` flag.
fn write_profile(path: &Path, meta: Metadata, entries: Vec<Entry>) -> anyhow::Result<()> {
    let mut merged: BTreeMap<(Dtype, Layout, u32, u32, u32), Entry> = BTreeMap::new();
    if let Ok(old) = Profile::load(path)
        && old.meta.arch == meta.arch
        && old.meta.measured == meta.measured
    {
        for e in old.entries {
            merged.insert((e.dtype, e.layout, e.m, e.n, e.k), e);
        }
    }
    for e in entries {
        merged.insert((e.dtype, e.layout, e.m, e.n, e.k), e);
    }
    let profile = Profile::new(meta, merged.into_values().collect())?;
    profile.save(path)?;
    Ok(())
}

fn candidate_from_rank(rank: usize, r: &Ranked, status: Status) -> Candidate {
    Candidate {
        schedule: r.schedule.name(),
        predicted_rank: rank as u32 + 1,
        predicted_us: r.prediction.time_us,
        predicted_dominant: r.prediction.dominant.to_string(),
        status,
        measured: None,
        gate: GateResult::not_run(),
    }
}

fn tune_model_only(
    opts: &TuneOptions,
    arch: &Arch,
    model: &CostModel,
) -> anyhow::Result<TuneOutcome> {
    let mut entries = Vec::new();
    let mut report = RunReport {
        provenance: provenance(opts, None, "", false),
        shapes: vec![],
    };
    for shape in &opts.shapes {
        let ranked = model.rank(arch, opts.dtype, opts.layout, shape);
        // Only schedules that keep the canonical reduction order can honour "bitexact".
        let exact: Vec<&Ranked> = ranked
            .iter()
            .filter(|r| !r.schedule.changes_reduction_order())
            .collect();
        let Some(best) = exact.first() else {
            bail!("no valid schedule for {shape} on {}", arch.name);
        };
        let mut entry = Entry::predicted(
            opts.dtype,
            opts.layout,
            *shape,
            &best.schedule,
            best.prediction.time_us,
        );
        entry.runners_up = exact[1..exact.len().min(4)]
            .iter()
            .map(|r| r.schedule.name())
            .collect();
        entries.push(entry);
        report.shapes.push(ShapeReport {
            shape: *shape,
            dtype: opts.dtype,
            layout: opts.layout,
            seed: opts.seed,
            input_sets: 0,
            cublas: None,
            reference: None,
            candidates: ranked
                .iter()
                .take(opts.top.max(1))
                .enumerate()
                .map(|(i, r)| candidate_from_rank(i, r, Status::Predicted))
                .collect(),
            chosen: None,
            head_to_head: None,
            finalists: vec![],
        });
        eprintln!(
            "{shape}: predicted best {} ({:.1} µs, {:.0} TFLOP/s)",
            best.schedule, best.prediction.time_us, best.prediction.tflops
        );
    }
    let profile_path = opts
        .profile
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("profiles/{}-model.toml", arch.name)));
    let meta = metadata(opts, None, false);
    write_profile(&profile_path, meta, entries)?;
    let run_dir = opts.run_dir.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "reports/model-{}-{}",
            arch.name,
            chrono::Utc::now().format("%Y%m%d")
        ))
    });
    write_report(&run_dir, &report)?;
    if opts.plots {
        write_summary_and_plots(&run_dir, &report)?;
    }
    eprintln!(
        "wrote {} (measured = false) and {}",
        profile_path.display(),
        run_dir.display()
    );
    Ok(TuneOutcome {
        profile_path,
        run_dir,
        report,
    })
}

fn provenance(
    opts: &TuneOptions,
    info: Option<&DeviceInfo>,
    cublas_version: &str,
    measured: bool,
) -> Provenance {
    Provenance {
        device_name: info.map_or("none".into(), |i| i.name.clone()),
        arch: opts.arch.clone(),
        sm_count: info.map_or(0, |i| i.sm_count),
        l2_bytes: info.map_or(0, |i| i.l2_bytes),
        sm_clock_mhz: info.map_or(0.0, |i| i.sm_clock_mhz),
        driver_version: info.map_or(String::new(), |i| i.driver_version.clone()),
        nvrtc_version: info.map_or(String::new(), |i| i.nvrtc_version.clone()),
        cublas_version: cublas_version.into(),
        forge_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: profile::git_revision().into(),
        date: profile::now_rfc3339(),
        command: opts.command.clone(),
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

/// Writes the plots and summary.md; a cost-model-only report gets the summary alone.
fn write_summary_and_plots(run_dir: &Path, report: &RunReport) -> anyhow::Result<()> {
    match crate::plot::render_all(report, run_dir) {
        Ok(_) => {}
        Err(crate::plot::PlotError::NothingMeasured) => {
            let summary = crate::summary::summary_markdown(report);
            profile::write_atomically(&run_dir.join(crate::plot::SUMMARY_MD), summary.as_bytes())?;
        }
        Err(e) => eprintln!("plots not drawn: {e}"),
    }
    Ok(())
}

/// Writes report.json and report.csv atomically.
pub fn write_report(dir: &Path, report: &RunReport) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_string_pretty(report)?;
    profile::write_atomically(&dir.join(REPORT_JSON), json.as_bytes())?;
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
    ])?;
    for (problem, s) in report.shapes.iter().enumerate() {
        for c in &s.candidates {
            let sched: Option<Schedule> = c.schedule.parse().ok();
            let field = |f: &dyn Fn(&Schedule) -> String| sched.as_ref().map(f).unwrap_or_default();
            let m = c.measured.as_ref();
            let cub = s.cublas.as_ref();
            let status = match &c.status {
                Status::Measured => "measured".to_string(),
                other => format!("{other:?}"),
            };
            w.write_record([
                problem.to_string(),
                c.schedule.clone(),
                s.shape.m.to_string(),
                s.shape.n.to_string(),
                s.shape.k.to_string(),
                field(&|x| format!("{}x{}x{}", x.tile.bm, x.tile.bn, x.tile.bk)),
                field(&|x| x.stages.to_string()),
                field(&|x| x.workers.to_string()),
                field(&|x| format!("{}{:?}", x.group, x.raster)),
                field(&|x| x.persistence.as_str().to_string()),
                field(&|x| x.cluster.to_string()),
                field(&|x| x.split_k.to_string()),
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
            ])?;
        }
    }
    let bytes = w.into_inner()?;
    profile::write_atomically(&dir.join(REPORT_CSV), &bytes)?;
    Ok(())
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// Compiles every variant the candidates need, in parallel; returns per-variant failures.
fn compile_all(
    cache: &KernelCache,
    arch: &str,
    shape: &Shape,
    schedules: &[Schedule],
) -> HashMap<KernelVariant, String> {
    let mut variants: Vec<KernelVariant> = schedules
        .iter()
        .map(|s| KernelVariant::new(s, shape, crate::contract::Rounding::NearestEven))
        .collect();
    variants.sort();
    variants.dedup();
    let pb = bar(variants.len() as u64, "compile");
    let failures: HashMap<KernelVariant, String> = variants
        .par_iter()
        .filter_map(|v| {
            let result = crate::kernel_check::compile_clean(cache, v, arch);
            pb.inc(1);
            result.err().map(|reason| (*v, reason))
        })
        .collect();
    pb.finish_with_message(format!("{} failed", failures.len()));
    failures
}

/// Results of running one shape's candidates through workers.
#[derive(Default)]
struct WorkerResults {
    info: Option<(DeviceInfo, String, u32)>,
    reference: Option<crate::report::ReferenceCheck>,
    cublas: Option<crate::report::Measurement>,
    outcomes: HashMap<String, (Status, Option<crate::report::Measurement>, GateResult)>,
}

/// A running worker: the process, its stdout lines, and a thread collecting its stderr.
type WorkerProcess = (
    std::process::Child,
    mpsc::Receiver<String>,
    std::thread::JoinHandle<String>,
);

fn start_worker(exe: &Path, job_dir: &Path, job: &Job) -> anyhow::Result<WorkerProcess> {
    let job_path = job_dir.join(format!("{}.json", job.shape));
    std::fs::write(&job_path, serde_json::to_vec(job)?)?;
    let mut child = Command::new(exe)
        .arg("worker")
        .arg("--job")
        .arg(&job_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting a worker process")?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    Ok((child, rx, err_thread))
}

/// Times a schedule against cuBLAS in alternating rounds in a fresh worker (own and cuBLAS
/// pooled over the rounds).
fn run_head_to_head(
    opts: &TuneOptions,
    shape: &Shape,
    name: &str,
) -> anyhow::Result<crate::report::HeadToHead> {
    let exe = std::env::current_exe().context("locating the forge executable")?;
    let job_dir = std::env::temp_dir().join(format!("forge-h2h-{}", std::process::id()));
    std::fs::create_dir_all(&job_dir)?;
    let job = Job {
        shape: *shape,
        dtype: opts.dtype,
        layout: opts.layout,
        seed: opts.seed,
        candidates: vec![],
        time_cublas: false,
        cache_dir: opts.cache_dir.display().to_string(),
        timing: opts.timing.clone(),
        head_to_head: Some(name.to_string()),
    };
    let (mut child, rx, err_thread) = start_worker(&exe, &job_dir, &job)?;
    let mut result = None;
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(opts.watchdog_s)) {
        if let Ok(Event::HeadToHead {
            schedule,
            own,
            cublas,
            rounds,
        }) = serde_json::from_str::<Event>(&line)
        {
            result = Some(crate::report::HeadToHead {
                schedule,
                own,
                cublas,
                rounds,
            });
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let err = err_thread.join().unwrap_or_default();
    let _ = std::fs::remove_dir_all(&job_dir);
    result.with_context(|| format!("head-to-head of {name} on {shape} failed: {err}"))
}

/// Runs `names` through worker processes until each has an outcome.
fn run_workers(
    opts: &TuneOptions,
    shape: &Shape,
    names: &[String],
    pb: &ProgressBar,
) -> anyhow::Result<WorkerResults> {
    let mut res = WorkerResults::default();
    let exe = std::env::current_exe().context("locating the forge executable")?;
    let job_dir = std::env::temp_dir().join(format!("forge-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&job_dir)?;
    let mut restarts = 0;
    loop {
        let pending: Vec<String> = names
            .iter()
            .filter(|n| !res.outcomes.contains_key(*n))
            .cloned()
            .collect();
        if pending.is_empty() && res.cublas.is_some() {
            break;
        }
        let job = Job {
            shape: *shape,
            dtype: opts.dtype,
            layout: opts.layout,
            seed: opts.seed,
            candidates: pending.clone(),
            time_cublas: res.cublas.is_none(),
            cache_dir: opts.cache_dir.display().to_string(),
            timing: opts.timing.clone(),
            head_to_head: None,
        };
        let (mut child, rx, err_thread) = start_worker(&exe, &job_dir, &job)?;
        let mut in_flight: Option<String> = None;
        let mut hung = false;
        let mut done = false;
        loop {
            match rx.recv_timeout(Duration::from_secs(opts.watchdog_s)) {
                Ok(line) => match serde_json::from_str::<Event>(&line) {
                    Ok(Event::Device {
                        info,
                        cublas_version,
                        input_sets,
                    }) => res.info = Some((info, cublas_version, input_sets)),
                    Ok(Event::Reference { check }) => res.reference = Some(check),
                    Ok(Event::Cublas { measurement, .. }) => {
                        pb.set_message(format!("cuBLAS {:.1} µs", measurement.median_us));
                        res.cublas = Some(measurement);
                    }
                    Ok(Event::Start { schedule }) => {
                        pb.set_message(schedule.clone());
                        in_flight = Some(schedule);
                    }
                    Ok(Event::Result {
                        schedule,
                        status,
                        measured,
                        gate,
                    }) => {
                        pb.inc(1);
                        in_flight = None;
                        res.outcomes.insert(schedule, (status, measured, gate));
                    }
                    Ok(Event::Done) => done = true,
                    Ok(Event::HeadToHead { .. }) => {}
                    Err(_) => eprintln!("worker: {line}"),
                },
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    hung = true;
                    let _ = child.kill();
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait()?;
        let stderr_text = err_thread.join().unwrap_or_default();
        if done && status.success() {
            continue;
        }
        let tail: String = stderr_text
            .lines()
            .rev()
            .take(3)
            .collect::<Vec<_>>()
            .join(" | ");
        match in_flight {
            Some(name) => {
                let reason = if hung {
                    format!("no progress for {} s (watchdog)", opts.watchdog_s)
                } else {
                    format!("worker exited with {status}: {tail}")
                };
                pb.inc(1);
                let status = if hung {
                    Status::TimedOut(reason)
                } else {
                    Status::Faulted(reason)
                };
                res.outcomes
                    .insert(name, (status, None, GateResult::not_run()));
            }
            None => {
                // The failure came before any candidate: the setup itself is broken.
                restarts += 1;
                if restarts >= 2 {
                    bail!("the worker for {shape} failed before any candidate ({status}): {tail}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&job_dir);
    Ok(res)
}

fn tune_measured(
    opts: &TuneOptions,
    info: &DeviceInfo,
    model: &CostModel,
) -> anyhow::Result<TuneOutcome> {
    let arch = info.arch()?;
    let cache = KernelCache::new(&opts.cache_dir)?;
    let run_dir = opts.run_dir.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "reports/tune-{}-{}-{}",
            arch.name,
            slug(&info.name),
            chrono::Utc::now().format("%Y%m%d")
        ))
    });
    let mut report = RunReport::load(&run_dir).unwrap_or_default();
    let mut cublas_version = report.provenance.cublas_version.clone();
    report.provenance = provenance(opts, Some(info), &cublas_version, true);
    let canonical = Schedule::canonical(opts.dtype);
    for shape in &opts.shapes {
        let existing = report
            .shapes
            .iter()
            .position(|s| s.shape == *shape && s.dtype == opts.dtype && s.layout == opts.layout);
        if let (Some(i), false) = (existing, opts.force)
            && report.shapes[i].cublas.is_some()
        {
            eprintln!(
                "{shape}: already measured in {} (--force re-measures)",
                run_dir.display()
            );
            continue;
        }
        let ranked = model.rank(&arch, opts.dtype, opts.layout, shape);
        // Split-K changes the reduction order, so it can never pass the gate: the picks come
        // from the schedules that can, and split-K is timed on the side (below).
        let mut picks: Vec<(usize, &Ranked)> = if opts.exhaustive {
            ranked.iter().enumerate().collect()
        } else {
            pick_diverse(&ranked, opts.top)
        };
        // The best split-K schedule is always timed: it is expected to fail the gate, and it
        // prices determinism (fastest passing against fastest overall).
        if !picks.iter().any(|(_, r)| r.schedule.split_k > 1)
            && let Some(p) = ranked.iter().position(|r| r.schedule.split_k > 1)
        {
            picks.push((p, &ranked[p]));
        }
        if !picks.iter().any(|(_, r)| r.schedule == canonical) {
            let pos = ranked.iter().position(|r| r.schedule == canonical);
            if let Some(p) = pos {
                picks.push((p, &ranked[p]));
            }
        }
        let schedules: Vec<Schedule> = picks.iter().map(|(_, r)| r.schedule).collect();
        eprintln!("{shape}: {} candidates", schedules.len());
        let failures = compile_all(&cache, &arch.name, shape, &schedules);
        let mut candidates: Vec<Candidate> = picks
            .iter()
            .map(|(rank, r)| {
                let status = match failures.get(&KernelVariant::new(
                    &r.schedule,
                    shape,
                    crate::contract::Rounding::NearestEven,
                )) {
                    Some(reason) => Status::CompileFailed(reason.clone()),
                    None => Status::Predicted,
                };
                candidate_from_rank(*rank, r, status)
            })
            .collect();
        let runnable: Vec<String> = candidates
            .iter()
            .filter(|c| c.status == Status::Predicted)
            .map(|c| c.schedule.clone())
            .collect();
        if !runnable.contains(&canonical.name()) {
            bail!("{shape}: the canonical schedule {canonical} did not compile cleanly");
        }
        let pb = bar(runnable.len() as u64, "bench");
        let res = run_workers(opts, shape, &runnable, &pb)?;
        pb.finish();
        let (_, cv, sets) = res
            .info
            .clone()
            .context("the worker never reported its device")?;
        cublas_version = cv;
        for c in candidates.iter_mut() {
            if let Some((status, measured, gate)) = res.outcomes.get(&c.schedule) {
                c.status = status.clone();
                c.measured = measured.clone();
                c.gate = gate.clone();
            }
        }
        let reference_ok = res.reference.as_ref().is_some_and(|r| r.passed);
        if !reference_ok {
            eprintln!(
                "{shape}: the canonical output failed the FP64 reference check: nothing is chosen"
            );
        }
        let mut shape_report = ShapeReport {
            shape: *shape,
            dtype: opts.dtype,
            layout: opts.layout,
            seed: opts.seed,
            input_sets: sets,
            cublas: res.cublas.clone(),
            reference: res.reference.clone(),
            candidates,
            chosen: None,
            head_to_head: None,
            finalists: vec![],
        };
        if reference_ok {
            shape_report.chosen = shape_report
                .fastest_passing()
                .map(|(c, _)| c.schedule.clone());
            // The screen timed each candidate once beside one cuBLAS measurement; the
            // finalists are re-timed in alternating rounds against cuBLAS, and the best ratio
            // is chosen and reported.
            let finalists: Vec<String> = shape_report
                .fastest_passing_n(FINALISTS)
                .iter()
                .map(|(c, _)| c.schedule.clone())
                .collect();
            for name in finalists {
                match run_head_to_head(opts, shape, &name) {
                    Ok(h) => shape_report.finalists.push(h),
                    Err(e) => eprintln!("{shape}: {e:#}"),
                }
            }
            // The best of several noisy ratios is biased upwards: the numbers reported for
            // the chosen schedule come from one more, fresh head-to-head.
            if let Some(best) = crate::report::best_finalist(&shape_report.finalists) {
                let name = best.schedule.clone();
                shape_report.chosen = Some(name.clone());
                match run_head_to_head(opts, shape, &name) {
                    Ok(h) => shape_report.head_to_head = Some(h),
                    Err(e) => eprintln!("{shape}: {e:#}"),
                }
            }
        }
        print_shape(&shape_report);
        match existing {
            Some(i) => report.shapes[i] = shape_report,
            None => report.shapes.push(shape_report),
        }
        report.provenance.cublas_version = cublas_version.clone();
        write_report(&run_dir, &report)?;
    }
    let mut entries = Vec::new();
    for s in &report.shapes {
        let Some((chosen, own, cublas)) = s.parity() else {
            continue;
        };
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
        entries.push(Entry {
            dtype: s.dtype,
            layout: s.layout,
            m: s.shape.m,
            n: s.shape.n,
            k: s.shape.k,
            schedule: chosen.to_string(),
            predicted_us,
            measured_us: Some(own.median_us),
            tflops: Some(own.tflops),
            cublas_us: Some(cublas.median_us),
            cublas_tflops: Some(cublas.tflops),
            ratio_vs_cublas: Some(cublas.median_us / own.median_us),
            gate: Gate::Passed,
            runners_up: passing
                .iter()
                .take(3)
                .map(|(c, _)| c.schedule.clone())
                .collect(),
        });
    }
    let profile_path = opts.profile.clone().unwrap_or_else(|| {
        PathBuf::from(format!("profiles/{}-{}.toml", arch.name, slug(&info.name)))
    });
    write_profile(&profile_path, metadata(opts, Some(info), true), entries)?;
    if opts.plots {
        write_summary_and_plots(&run_dir, &report)?;
    }
    eprintln!("wrote {} and {}", profile_path.display(), run_dir.display());
    Ok(TuneOutcome {
        profile_path,
        run_dir,
        report,
    })
}

/// Schedules that share one compiled kernel (they differ only in raster order or
/// persistence) are often predicted within a hair of each other, and so are the stage counts
/// of one tile. Benchmarking eight of them would spend the budget on one corner of the space,
/// so the picks walk the ranking and take at most one schedule per kernel configuration and
/// at most [`PER_TILE`] per (family, tile, cluster). Only schedules that keep the canonical
/// reduction order are picked: the others cannot pass the gate.
pub const PER_TILE: usize = 2;

/// Screen winners re-timed head to head against cuBLAS before one is chosen.
pub const FINALISTS: usize = 3;

pub fn pick_diverse(ranked: &[Ranked], top: usize) -> Vec<(usize, &Ranked)> {
    use crate::schedule::{Family, Tile};
    let mut kernels: std::collections::HashSet<(Family, Tile, u32, u32, u32, u32)> =
        Default::default();
    let mut tiles: HashMap<(Family, Tile, u32), usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, r) in ranked.iter().enumerate() {
        let s = &r.schedule;
        if s.changes_reduction_order() {
            continue;
        }
        let per_tile = tiles.entry((s.family, s.tile, s.cluster)).or_default();
        if *per_tile < PER_TILE
            && kernels.insert((s.family, s.tile, s.stages, s.workers, s.cluster, s.split_k))
        {
            *per_tile += 1;
            out.push((i, r));
            if out.len() == top {
                break;
            }
        }
    }
    out
}

fn print_shape(s: &ShapeReport) {
    for f in &s.finalists {
        eprintln!(
            "{}: finalist {} own {:.1} µs, cuBLAS {:.1} µs, own/cuBLAS {:.3}x",
            s.shape,
            f.schedule,
            f.own.median_us,
            f.cublas.median_us,
            f.ratio()
        );
    }
    match s.parity() {
        Some((chosen, own, cublas)) => eprintln!(
            "{}: chosen {} {:.1} µs {:.1} TFLOP/s | cuBLAS {:.1} µs {:.1} TFLOP/s | own/cuBLAS {:.3}x{}",
            s.shape,
            chosen,
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
        None => eprintln!("{}: no gate-passing candidate was measured", s.shape),
    }
}
