//! `forge calibrate`: collect a calibration data set on the GPU, or fit the cost model to one.

use super::values::*;
use crate::arch::Arch;
use crate::calibrate::data::CalibrationData;
use crate::calibrate::sample::CalibrationPlan;
use crate::calibrate::{self, CollectOptions, fit};
use crate::contract::Contract;
use crate::device::cache;
use crate::device::timing::TimingConfig;
use crate::problem::Problem;
use crate::schedule::{Dtype, Layout};
use crate::shape::ShapeList;
use anyhow::{Context, bail};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[arg(long, value_parser = arch_parser(), required_unless_present = "fit")]
    arch: Option<Arch>,
    /// Comma-separated shapes to measure (D2048 or MxNxK).
    #[arg(long, allow_hyphen_values = true, value_parser = shapes_parser(), required_unless_present = "fit")]
    shapes: Option<ShapeList>,
    /// The model's best schedules timed per shape.
    #[arg(long, default_value_t = 40)]
    top: usize,
    /// Schedules drawn per shape from the rest of the valid space (stratified by family and tile).
    #[arg(long, default_value_t = 150)]
    sample: usize,
    #[arg(long, default_value_t = 20261203)]
    seed: u64,
    /// Also time this profile's entries and runners-up where valid (selection's candidates);
    /// with --fit, evaluate selection with this profile on the held-out shapes.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Also time the schedules named in this file (one a line; blank lines and `#` comments
    /// skipped) where they can run the shape (a split-K schedule never: it changes the bits):
    /// a list to gate on the device, whose passes `forge pool` then adds to a profile's pool.
    #[arg(long, value_name = "FILE", conflicts_with = "fit")]
    schedules: Option<PathBuf>,
    /// Output directory (default reports/calibrate-<arch>-<date>); with --fit, where the
    /// fitted model.toml and fit.json go (default: the data's directory).
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long, default_value = "tf32-rne-k8-inorder", value_parser = contract_parser())]
    contract: Contract,
    /// Confirmation rounds: the schedules within 3% of each shape's fastest (at most 24) and
    /// the model's top 4 are timed this many more times, each round in a new worker and a
    /// rotated order; a point's time is then the median of its timings, and their spread
    /// decides ties and the ceiling of the top-4 count in the fit (at least 2 rounds for
    /// those). 0: each schedule once.
    #[arg(long, default_value_t = 4)]
    repeat: usize,
    /// Before each worker's first timing, run the canonical schedule back to back this long
    /// (ms), so that every schedule is timed in the same (sustained) state of the power-capped
    /// GPU whatever its position; 0: none.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true, value_parser = heat_parser())]
    heat_ms: f64,
    /// Compile the kernel variants into the cache and stop (no GPU needed).
    #[arg(long, conflicts_with = "fit")]
    compile_only: bool,
    #[arg(long, default_value_t = 30, value_parser = watchdog_parser())]
    watchdog: u64,
    /// Kernel cache directory (default $FORGE_CACHE or ~/.cache/forge).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Fit the cost model to these data sets (each calibration.json or its directory;
    /// comma-separated or repeated: their shapes are pooled) instead of measuring.
    #[arg(long, value_name = "DATA", value_delimiter = ',', num_args = 1..)]
    fit: Vec<PathBuf>,
    /// With --fit: shapes held out of the fit, on which the metrics are reported.
    #[arg(long, allow_hyphen_values = true, value_parser = shapes_parser())]
    holdout: Option<ShapeList>,
    /// With --fit: the model to start from (default: the shipped cost_model/model.toml).
    #[arg(long, value_name = "MODEL_TOML")]
    start: Option<PathBuf>,
    /// With --fit: most coordinate-descent sweeps.
    #[arg(long, default_value_t = 60)]
    sweeps: usize,
    /// With --fit: move only these constants (comma-separated keys as the fit report prints
    /// them, `{arch}` for the architecture, e.g. `l2_bytes_per_clk_per_sm.{arch}`); default all.
    #[arg(long, value_name = "KEYS", value_delimiter = ',', num_args = 1..)]
    free: Vec<String>,
    /// With --fit: skip the leave-one-shape-out cross-validation (one fit per shape).
    #[arg(long)]
    no_loso: bool,
}

impl CalibrateArgs {
    /// `--fit`: the CPU-only fit, which only reads files and prints.
    pub fn fits(&self) -> bool {
        !self.fit.is_empty()
    }
}

pub(super) fn run(a: CalibrateArgs) -> anyhow::Result<()> {
    if !a.fit.is_empty() {
        return run_fit(&a, &a.fit);
    }
    let (Some(arch), Some(shapes)) = (a.arch.clone(), a.shapes.as_ref()) else {
        bail!("calibrate needs --arch and --shapes (or --fit DATA)");
    };
    crate::device::simulated::require_explicit(a.out.is_some() || a.compile_only, "--out")?;
    // A worker prints nothing while it heats: the watchdog must not take it for a hang.
    if a.heat_ms >= a.watchdog as f64 * 1e3 / 2.0 {
        bail!(
            "--heat-ms {} must be under half the watchdog ({} s): a heating worker prints \
             nothing",
            a.heat_ms,
            a.watchdog
        );
    }
    crate::device::simulated::banner("calibrate");
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "reports/calibrate-{}-{}",
            arch.name,
            chrono::Utc::now().format("%Y%m%d")
        ))
    });
    let opts = CollectOptions {
        arch,
        problems: shapes
            .0
            .iter()
            .map(|&s| Problem::new(Dtype::Tf32, Layout::Tn, s))
            .collect(),
        contract: a.contract,
        plan: CalibrationPlan {
            top: a.top,
            sample: a.sample,
            seed: a.seed,
        },
        profile: a.profile.clone(),
        listed: match &a.schedules {
            Some(path) => calibrate::read_schedule_list(path)?,
            None => vec![],
        },
        out_dir: out.clone(),
        watchdog_s: a.watchdog,
        cache_dir: a.cache.clone().unwrap_or_else(cache::default_dir),
        timing: TimingConfig {
            heat_ms: a.heat_ms,
            ..calibrate::quick_timing()
        },
        repeat: a.repeat,
        compile_only: a.compile_only,
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    let start = std::time::Instant::now();
    if calibrate::collect(&opts)?.is_some() {
        println!("{}", out.display());
    }
    eprintln!("calibrate took {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

fn run_fit(a: &CalibrateArgs, paths: &[PathBuf]) -> anyhow::Result<()> {
    let data = CalibrationData::load_all(paths)?;
    let path = &paths[0];
    let start = super::load_model(a.start.as_deref())?;
    let holdout = a.holdout.as_ref().map(|h| h.0.clone()).unwrap_or_default();
    let (train, test) = fit::split(&data, &holdout);
    if train.is_empty() {
        bail!("no training shapes left after --holdout");
    }
    let free = if a.free.is_empty() {
        fit::FREE.to_vec()
    } else {
        fit::free_constants(&a.free).map_err(anyhow::Error::msg)?
    };
    let result = fit::fit(&start, &data.arch, &train, a.sweeps, &free);
    let all: Vec<_> = data.shapes.iter().filter(|s| s.reference_passed).collect();
    let loso =
        (!a.no_loso).then(|| fit::leave_one_shape_out(&start, &data.arch, &all, a.sweeps, &free));
    let mut report = fit::FitReport::new(&start, &result, &data, &train, &test);
    if let Some(l) = &loso {
        report = report.with_loso(&start, &data.arch, &all, l);
    }
    // Everything is written before anything is printed: a reader that closes the pipe early
    // (`| head`) ends the process at the first print.
    let mut text = report.text();
    if let Some(p) = &a.profile {
        let profile = crate::profile::Profile::load_for_arch(p, &data.arch.name)?;
        for (what, model) in [("before", &start), ("after", &result.model)] {
            let rows = crate::calibrate::selection::evaluate(&profile, model, &test, &data.arch);
            text += &format!(
                "[{what} the fit]{}",
                crate::calibrate::selection::text(&rows)
            );
            report.selection.push((what.to_string(), rows));
        }
        if let Some(l) = &loso {
            let rows =
                crate::calibrate::selection::evaluate_loso(&profile, &l.models, &all, &data.arch)?;
            text += &format!(
                "[leave-one-shape-out: each shape with the model fitted without it and the \
                 profile without its entry]{}",
                crate::calibrate::selection::text(&rows)
            );
            report.selection.push(("loso".to_string(), rows));
        }
    }
    let dir = a.out.clone().unwrap_or_else(|| {
        if path.is_dir() {
            path.to_path_buf()
        } else {
            crate::util::parent_dir(path)
        }
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let model_path = dir.join("model.fitted.toml");
    crate::util::write_atomically(&model_path, result.model.to_toml().as_bytes())
        .with_context(|| format!("writing {}", model_path.display()))?;
    let json_path = dir.join("fit.json");
    crate::util::write_atomically(&json_path, &serde_json::to_vec_pretty(&report)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    let residuals_path = dir.join("residuals.csv");
    crate::util::write_atomically(
        &residuals_path,
        fit::residuals_csv(&result.model, &data.arch, &all).as_bytes(),
    )
    .with_context(|| format!("writing {}", residuals_path.display()))?;
    print!("{text}");
    println!(
        "{}\n{}\n{}",
        model_path.display(),
        json_path.display(),
        residuals_path.display()
    );
    Ok(())
}
