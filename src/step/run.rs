//! `forge step`: train N steps and print the loss; optionally the determinism checks
//! (two runs, two profiles, micro-batches, a negative control), a dump for the PyTorch
//! reference, and steps/s.

use crate::device::Gpu;
use crate::device::cache::KernelCache;
use crate::device::fill::UtilKernels;
use crate::dispatch::Dispatcher;
use crate::problem::Problem;
use crate::profile::Profile;
use crate::schedule::{Dtype, Layout};
use crate::shape::Shape;
use crate::step::gemm::StepGemm;
use crate::step::kernels::StepKernels;
use crate::step::model::{CHUNK_ROWS, StepConfig, StepDtype};
use crate::step::snapshot::{Difference, Snapshot, compare, summary_line};
use crate::step::timing::{StepTiming, time_steps};
use crate::step::trainer::Trainer;
use anyhow::{Context, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `forge step` does.
#[derive(Clone, Debug)]
pub struct StepOptions {
    pub cfg: StepConfig,
    pub steps: usize,
    /// The dispatch profile (TF32 GEMMs); unused in FP32.
    pub profile: Option<PathBuf>,
    pub cache_dir: PathBuf,
    /// Run the determinism checks.
    pub check: bool,
    /// Micro-batches of the check's batch-split comparison.
    pub check_micro_batches: usize,
    /// Write data, initial and final parameters and the loss history here.
    pub dump: Option<PathBuf>,
    /// Time steps/s for this many seconds after training.
    pub time_seconds: Option<f64>,
    /// Replay the step as a captured CUDA graph (else launch each kernel every step).
    pub graph: bool,
    /// Append one JSON line with the results to this file.
    pub json: Option<PathBuf>,
}

/// One determinism comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: String,
    /// What the check expects: identical bits, or (negative control) a difference.
    pub expect_identical: bool,
    pub passed: bool,
    pub diffs: Vec<Difference>,
}

/// Everything `forge step` measured (the JSON line).
#[derive(Clone, Debug, Serialize)]
pub struct StepOutcome {
    pub config: StepConfig,
    pub rows: usize,
    pub steps: usize,
    pub profile: Option<String>,
    pub gemms: Vec<String>,
    pub loss: Vec<f32>,
    pub checks: Vec<Check>,
    pub timing: Option<StepTiming>,
    pub graph: bool,
    pub device: String,
}

/// The five GEMMs of a step for `cfg` (one micro-batch): name, layout, (m, n, k).
pub fn step_gemms(cfg: &StepConfig) -> [(&'static str, Layout, (usize, usize, usize)); 5] {
    let (d, h, r) = (cfg.dim, cfg.hidden, cfg.micro_rows());
    [
        ("z = x·w1ᵀ", Layout::Tn, (r, h, d)),
        ("y = g·w2ᵀ", Layout::Tn, (r, d, h)),
        ("dw2 = dyᵀ·g", Layout::Nt, (d, h, r)),
        ("dg = dy·w2", Layout::Nn, (r, h, d)),
        ("dw1 = dzᵀ·x", Layout::Nt, (h, d, r)),
    ]
}

/// The dispatcher's choice for each GEMM of the step, one line each.
fn selections(dispatcher: &Dispatcher, cfg: &StepConfig) -> Vec<String> {
    step_gemms(cfg)
        .iter()
        .map(|&(name, layout, (m, n, k))| {
            let shape = Shape::new(m as u32, n as u32, k as u32);
            let sel = dispatcher.selection_for(&Problem::new(Dtype::Tf32, layout, shape));
            format!("{name:<12} {} {shape}: {}", layout.as_str(), sel.schedule)
        })
        .collect()
}

/// A profile with the same metadata and no entries: every GEMM gets the canonical schedule.
pub fn canonical_everywhere(profile: &Profile) -> anyhow::Result<Profile> {
    Ok(Profile::new(profile.meta.clone(), vec![])?)
}

struct Device {
    gpu: Gpu,
    kernels: StepKernels,
    util: UtilKernels,
}

impl Device {
    fn trainer<'a>(
        &'a self,
        dispatcher: Option<&'a Dispatcher>,
        cfg: &StepConfig,
        history: usize,
    ) -> anyhow::Result<Trainer<'a>> {
        let gemm = match (cfg.dtype, dispatcher) {
            (StepDtype::Fp32, _) => StepGemm::Fp32,
            (StepDtype::Tf32, Some(d)) => StepGemm::Tf32(d),
            (StepDtype::Tf32, None) => bail!("--dtype tf32 needs --profile"),
        };
        Ok(Trainer::new(
            &self.gpu,
            &self.kernels,
            &self.util,
            gemm,
            cfg,
            history,
        )?)
    }
}

/// Trains `steps` steps (graph replay after the first when `graph`) and snapshots the result.
fn train(trainer: &mut Trainer, steps: usize, graph: bool) -> anyhow::Result<Snapshot> {
    for i in 0..steps {
        if i == 1 && graph {
            trainer.capture()?;
        }
        trainer.step()?;
    }
    Ok(trainer.snapshot()?)
}

fn check(name: &str, expect_identical: bool, diffs: Vec<Difference>) -> Check {
    let identical = diffs.iter().all(Difference::identical);
    let passed = identical == expect_identical;
    println!(
        "  {} {name}: {}",
        if passed { "PASS" } else { "FAIL" },
        summary_line(&diffs)
    );
    Check {
        name: name.to_string(),
        expect_identical,
        passed,
        diffs,
    }
}

fn write_f32(path: &Path, values: &[f32]) -> anyhow::Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn dump(dir: &Path, sub: &str, snap: &Snapshot) -> anyhow::Result<()> {
    let dir = dir.join(sub);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, values) in &snap.tensors {
        write_f32(&dir.join(format!("{name}.f32")), values)?;
    }
    Ok(())
}

/// Runs `forge step`.
pub fn run(opts: &StepOptions) -> anyhow::Result<StepOutcome> {
    let cfg = &opts.cfg;
    cfg.validate()?;
    if opts.steps == 0 {
        bail!("--steps must be at least 1");
    }
    let source = match (&opts.profile, cfg.dtype) {
        (Some(p), _) => Some(Profile::source(p)?),
        (None, StepDtype::Tf32) => bail!("--dtype tf32 needs --profile (a dispatch profile)"),
        (None, StepDtype::Fp32) => None,
    };
    let gpu = Gpu::open(0)?;
    let profile = source
        .map(|s| s.for_device(&gpu.info.arch, &gpu.info.name))
        .transpose()?;
    if let Some(p) = &profile
        && p.meta.arch != gpu.info.arch
    {
        bail!(
            "the profile was tuned for {}, the device is {}",
            p.meta.arch,
            gpu.info.arch
        );
    }
    let cache = KernelCache::new(&opts.cache_dir)?;
    let device = Device {
        kernels: StepKernels::load(&gpu, &cache)?,
        util: UtilKernels::load(&gpu, &cache)?,
        gpu,
    };
    let dispatcher = match (&profile, cfg.dtype) {
        (Some(p), StepDtype::Tf32) => {
            Some(Dispatcher::new(p.clone(), &device.gpu, &opts.cache_dir)?)
        }
        _ => None,
    };
    println!(
        "forge step: D={} H={} batch={} seq={} (rows {}) groups={} dtype={} seed={} on {}",
        cfg.dim,
        cfg.hidden,
        cfg.batch,
        cfg.seq,
        cfg.rows(),
        cfg.groups,
        cfg.dtype.as_str(),
        cfg.seed,
        device.gpu.info.name
    );
    let gemms = match &dispatcher {
        Some(d) => selections(d, cfg),
        None => vec!["every GEMM: step_sgemm (FP32 FFMA, one fmaf chain per element)".into()],
    };
    for g in &gemms {
        println!("  gemm {g}");
    }

    let mut trainer = device.trainer(dispatcher.as_ref(), cfg, opts.steps)?;
    if let Some(dir) = &opts.dump {
        dump(dir, "init", &trainer.data_and_params()?)?;
    }
    let snap_a = train(&mut trainer, opts.steps, opts.graph)?;
    let loss = snap_a.get("loss").unwrap_or_default().to_vec();
    print_loss(&loss);
    if let Some(dir) = &opts.dump {
        dump(dir, "final", &trainer.data_and_params()?)?;
        dump(dir, "state", &snap_a)?;
    }

    let mut checks = vec![];
    if opts.check {
        println!(
            "determinism after {} steps (every weight, both Adam moments, gradients, loss):",
            opts.steps
        );
        let run = |disp: Option<&Dispatcher>, cfg: &StepConfig, steps: usize, graph: bool| {
            let mut t = device.trainer(disp, cfg, opts.steps)?;
            let snap = train(&mut t, steps, graph)?;
            anyhow::Ok((snap, t.row_tensors()?))
        };
        let (snap_b, _) = run(dispatcher.as_ref(), cfg, opts.steps, !opts.graph)?;
        checks.push(check(
            "(a) two runs (graph replay vs direct launches)",
            true,
            compare(&snap_a, &snap_b),
        ));
        if let (Some(p), StepDtype::Tf32) = (&profile, cfg.dtype) {
            let disp = Dispatcher::new(canonical_everywhere(p)?, &device.gpu, &opts.cache_dir)?;
            for g in selections(&disp, cfg) {
                println!("  canonical profile: gemm {g}");
            }
            let (snap_c, _) = run(Some(&disp), cfg, opts.steps, opts.graph)?;
            checks.push(check(
                "(b) shipped profile vs canonical schedule everywhere",
                true,
                compare(&snap_a, &snap_c),
            ));
        }
        let micro = StepConfig {
            micro_batches: opts.check_micro_batches,
            ..cfg.clone()
        };
        match micro.validate() {
            Err(e) => println!("  (c) skipped: {e}"),
            Ok(()) => {
                let (whole1, rows_whole) = run(dispatcher.as_ref(), cfg, 1, opts.graph)?;
                let (micro1, rows_micro) = run(dispatcher.as_ref(), &micro, 1, opts.graph)?;
                println!(
                    "  (c) {} micro-batches of {} rows (a multiple of the {CHUNK_ROWS}-row chunk) vs the whole batch, after 1 step:",
                    micro.micro_batches,
                    micro.micro_rows()
                );
                let mut row_diffs = compare(&rows_whole, &rows_micro);
                row_diffs.retain(|d| d.name == "dy" || d.name == "dg");
                checks.push(check(
                    "(c1) per-row tensors dy, dg (forward rows, dX rows)",
                    true,
                    row_diffs,
                ));
                let grads = |s: &Snapshot| {
                    let mut out = Snapshot::default();
                    for (n, v) in &s.tensors {
                        if n.starts_with("grad.") || n == "loss" {
                            out.push(n.clone(), v.clone());
                        }
                    }
                    out
                };
                let (g_whole, g_micro) = (grads(&whole1), grads(&micro1));
                let split = |weights: bool| {
                    let mut d = compare(&g_whole, &g_micro);
                    d.retain(|x| (x.name == "grad.w1" || x.name == "grad.w2") == weights);
                    d
                };
                checks.push(check(
                    "(c2) loss and column-sum gradients b1, gamma, beta, b2 (chunked fold)",
                    true,
                    split(false),
                ));
                let accumulates = cfg.dtype == StepDtype::Fp32;
                checks.push(check(
                    if accumulates {
                        "(c3) weight gradients w1, w2 (FP32 GEMM accumulates onto C: K order continues)"
                    } else {
                        "(c3) weight gradients w1, w2 (expected to differ: each micro-batch's dW is rounded, then added)"
                    },
                    accumulates,
                    split(true),
                ));
                let (micro_n, _) = run(dispatcher.as_ref(), &micro, opts.steps, opts.graph)?;
                checks.push(check(
                    &format!("(c4) everything after {} steps", opts.steps),
                    accumulates,
                    compare(&snap_a, &micro_n),
                ));
            }
        }
        let other = StepConfig {
            seed: cfg.seed + 1,
            ..cfg.clone()
        };
        let (snap_neg, _) = run(dispatcher.as_ref(), &other, opts.steps, opts.graph)?;
        checks.push(check(
            &format!(
                "negative control: seed {} vs {} (must differ)",
                other.seed, cfg.seed
            ),
            false,
            compare(&snap_a, &snap_neg),
        ));
    }

    let timing = match opts.time_seconds {
        Some(seconds) => {
            if opts.graph && !trainer.captured() {
                trainer.capture()?;
            }
            let t = time_steps(&trainer, seconds)?;
            println!(
                "speed: {:.1} steps/s ({:.3} ms/step, CI {:.3}..{:.3}, {} steps per sample, {} samples, {})",
                t.steps_per_s,
                t.step_ms,
                t.ci_ms.0,
                t.ci_ms.1,
                t.steps_per_sample,
                t.samples_ms.len(),
                if opts.graph {
                    "CUDA graph"
                } else {
                    "direct launches"
                }
            );
            Some(t)
        }
        None => None,
    };
    let outcome = StepOutcome {
        config: cfg.clone(),
        rows: cfg.rows(),
        steps: opts.steps,
        profile: opts.profile.as_ref().map(|p| p.display().to_string()),
        gemms,
        loss,
        checks,
        timing,
        graph: opts.graph,
        device: device.gpu.info.name.clone(),
    };
    if let Some(path) = &opts.json {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        writeln!(f, "{}", serde_json::to_string(&outcome)?)?;
    }
    let failed: Vec<&str> = outcome
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("determinism check failed: {}", failed.join("; "));
    }
    Ok(outcome)
}

fn print_loss(loss: &[f32]) {
    let every = loss.len().div_ceil(10).max(1);
    let shown: Vec<String> = loss
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0 || *i + 1 == loss.len())
        .map(|(i, l)| format!("{}:{l:.6}", i + 1))
        .collect();
    println!("loss (step:value): {}", shown.join(" "));
    if let (Some(first), Some(last)) = (loss.first(), loss.last()) {
        println!(
            "loss {first:.6} -> {last:.6} ({})",
            if last < first { "down" } else { "NOT down" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Profile {
        Profile::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/sm_90a-h200.toml"))
            .unwrap()
    }

    #[test]
    fn the_canonical_profile_picks_the_canonical_schedule_for_every_gemm() {
        let p = canonical_everywhere(&shipped()).unwrap();
        assert!(p.entries.is_empty());
        let canonical = crate::schedule::Schedule::canonical(Dtype::Tf32);
        for (_, layout, (m, n, k)) in step_gemms(&StepConfig::new(768, 4, 512)) {
            let shape = Shape::new(m as u32, n as u32, k as u32);
            assert_eq!(
                p.select(&Problem::new(Dtype::Tf32, layout, shape)).schedule,
                canonical
            );
        }
        // The shipped profile picks another schedule for at least one of them, so the check
        // (b) compares different kernels.
        let s = shipped();
        assert!(
            step_gemms(&StepConfig::new(768, 4, 512))
                .iter()
                .any(|&(_, _, (m, n, k))| {
                    let shape = Shape::new(m as u32, n as u32, k as u32);
                    s.select(&Problem::new(Dtype::Tf32, Layout::Tn, shape))
                        .schedule
                        != canonical
                })
        );
    }

    #[test]
    fn the_step_has_the_three_layouts_of_a_linear_layer() {
        let g = step_gemms(&StepConfig::new(768, 4, 512));
        let rows = 2048;
        assert_eq!(g[0].1, Layout::Tn);
        assert_eq!(g[0].2, (rows, 3072, 768));
        assert_eq!(g[3].1, Layout::Nn);
        assert_eq!(g[4].1, Layout::Nt);
        assert_eq!(g[4].2, (3072, 768, rows));
    }
}
