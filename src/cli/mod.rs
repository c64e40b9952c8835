//! The `forge` command line: parse, validate, hand to the library, print.

use crate::arch::Arch;
use crate::contract::Contract;
use crate::device::cache;
use crate::device::timing::TimingConfig;
use crate::problem::Problem;
use crate::profile::{Profile, Rule};
use crate::schedule::{Dtype, Layout, Schedule};
use crate::shape::{Shape, ShapeList};
use crate::tune::gpus::GpuSet;
use crate::tune::shard::Shard;
use crate::tune::{self, TuneOptions};
use crate::util::{MAX_QUOTED, clip};
use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod calibrate;
mod commands;
mod values;

use commands::{check_kernels, check_schedule_kernels, explain_schedule, rank, verify_bits};
use values::*;

#[derive(Parser, Debug)]
#[command(
    name = "forge",
    version,
    about = "GEMM autotuner and shape-adaptive kernel selector"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

/// The problems a command works on: shapes × one dtype × one layout.
#[derive(Args, Debug)]
pub struct ProblemArgs {
    /// Comma-separated shapes: D2048 (= 2048x2048x2048) or MxNxK.
    #[arg(long, allow_hyphen_values = true, value_parser = shapes_parser())]
    shapes: ShapeList,
    #[arg(long, default_value = "tf32", value_parser = dtype_parser())]
    dtype: Dtype,
    /// Operand layout: tn (native: A M×K, B N×K), nn, tt, nt.
    #[arg(long, default_value = "tn", value_parser = layout_parser())]
    layout: Layout,
}

impl ProblemArgs {
    fn problems(&self) -> Vec<Problem> {
        self.shapes
            .0
            .iter()
            .map(|&s| Problem::new(self.dtype, self.layout, s))
            .collect()
    }
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Rank every valid schedule with the CPU cost model (no GPU needed).
    Rank {
        #[arg(long, value_parser = arch_parser())]
        arch: Arch,
        #[command(flatten)]
        problems: ProblemArgs,
        /// Schedules shown per shape (at least 1).
        #[arg(long, default_value_t = 10, value_parser = count_parser())]
        top: usize,
        #[arg(long)]
        json: bool,
        /// Explain one schedule: validity for each shape and its cost terms.
        #[arg(long, value_name = "NAME")]
        explain: Option<String>,
        /// Price the device this profile was tuned on (its recorded clock, L2 and DRAM
        /// bandwidth, as the tune and the profile's selection do) instead of the table's.
        #[arg(long)]
        profile: Option<PathBuf>,
        /// Price with these cost-model constants instead of the embedded
        /// cost_model/model.toml (e.g. a fit's model.fitted.toml).
        #[arg(long, value_name = "MODEL_TOML")]
        model: Option<PathBuf>,
    },
    /// Benchmark the cost model's top picks on the GPU beside cuBLAS, gate them bit-exactly,
    /// and write a dispatch profile and a run report.
    Tune {
        #[arg(long, value_parser = arch_parser())]
        arch: Arch,
        #[command(flatten)]
        problems: ProblemArgs,
        /// Candidates per shape, at least 1 (the canonical schedule is always added).
        #[arg(long, default_value_t = 10, value_parser = count_parser())]
        top: usize,
        /// The numerical contract: inputs rounded to TF32 to nearest (cuBLAS's accuracy) or
        /// truncated (the tensor cores' raw behaviour).
        #[arg(long, default_value = "tf32-rne-k8-inorder", value_parser = contract_parser())]
        contract: Contract,
        /// Benchmark every valid schedule.
        #[arg(long)]
        exhaustive: bool,
        /// After the first screen, time the other launch variants (raster order, swizzle
        /// group, plain, persistent or chained-tail grid; up to 20 each) of this many of its
        /// fastest kernels; 0: none.
        #[arg(long, default_value_t = crate::tune::picks::REFINED_KERNELS)]
        refine: usize,
        /// Fail instead of writing a cost-model-only profile when no GPU is found.
        #[arg(long)]
        require_gpu: bool,
        /// Profile to write (default profiles/<arch>-<device>.toml).
        #[arg(long)]
        profile: Option<PathBuf>,
        /// Report directory (default reports/tune-<arch>-<device>-<date>).
        #[arg(long)]
        run_dir: Option<PathBuf>,
        /// Re-measure shapes the run directory already holds; replace a profile (or report) of
        /// another architecture or one that does not load; let a run without a GPU add
        /// predictions beside measured entries (which are kept). Never overwrites a file that
        /// is not a forge profile.
        #[arg(long)]
        force: bool,
        #[arg(long, default_value_t = 20261202)]
        seed: u64,
        /// Seconds without progress before a candidate counts as hung (at least 1).
        #[arg(long, default_value_t = 60, value_parser = watchdog_parser())]
        watchdog: u64,
        /// Kernel cache directory (default $FORGE_CACHE or ~/.cache/forge).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Longest time spent timing one kernel, seconds (finite, above 0).
        #[arg(long, default_value_t = 2.0, allow_hyphen_values = true, value_parser = seconds_parser())]
        max_seconds: f64,
        /// Skip plots and summary.
        #[arg(long)]
        no_plots: bool,
        /// The GPUs to measure on: `all`, or ordinals such as 0,1,2 (one model only). Problems
        /// are handed to whichever GPU is free; the results go into one profile.
        #[arg(long, default_value = "0", value_parser = gpus_parser())]
        gpus: GpuSet,
        /// Tune only shard i of n (counted from 0) of the shapes: the split depends on the set
        /// of shapes alone, so every host of a job array given the same --shapes gets its own
        /// share; put the shards' profiles together with `forge merge`.
        #[arg(long, value_name = "I/N", value_parser = shard_parser())]
        shard: Option<Shard>,
    },
    /// Merge profiles (e.g. of `tune --shard` runs on several hosts) into one: same
    /// architecture, numerical contract and device only; a problem tuned differently in two
    /// inputs is refused. Written with the tune's rules, validation and locks.
    Merge {
        /// The profiles to merge.
        #[arg(required = true, num_args = 1..)]
        inputs: Vec<PathBuf>,
        /// The profile to write (merged into it if it exists, as a tune would).
        #[arg(long)]
        out: PathBuf,
        /// Replace an --out profile of another architecture or contract, or one that does not
        /// load. Never overwrites a file that is not a forge profile.
        #[arg(long)]
        force: bool,
    },
    /// Time a sampled slice of the schedule space on the GPU (the cost model's top picks, a
    /// stratified random sample, a profile's schedules) and store it; or, with --fit, fit
    /// the cost model's constants to stored data (any machine).
    Calibrate(calibrate::CalibrateArgs),
    /// Add the schedules that calibration data saw pass the gate (bit-identical to the
    /// canonical output) on the profile's device to the profile's verified pool, from which
    /// selection picks by the cost model for shapes the profile does not hold.
    Pool {
        /// The profile to widen.
        #[arg(long)]
        profile: PathBuf,
        /// Calibration data sets (calibration.json or its directory) or tune run reports
        /// (report.json or its run directory); comma-separated.
        #[arg(long, value_name = "DATA", value_delimiter = ',', num_args = 1.., required = true)]
        from: Vec<PathBuf>,
        /// Where to write the widened profile (default: in place).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Show which schedule a profile picks for a shape, and why.
    Select {
        #[arg(long)]
        profile: PathBuf,
        /// Refuse a profile tuned for another architecture.
        #[arg(long, value_parser = arch_parser())]
        arch: Option<Arch>,
        /// Refuse a profile of another numerical contract.
        #[arg(long, value_parser = contract_parser())]
        contract: Option<Contract>,
        #[arg(allow_hyphen_values = true, value_parser = shape_parser())]
        shape: Shape,
        #[arg(long, default_value = "tf32", value_parser = dtype_parser())]
        dtype: Dtype,
        #[arg(long, default_value = "tn", value_parser = layout_parser())]
        layout: Layout,
        /// Select with these cost-model constants instead of the embedded ones (what a
        /// dispatcher would pick with them; a dispatcher itself always uses the embedded ones).
        #[arg(long, value_name = "MODEL_TOML")]
        model: Option<PathBuf>,
    },
    /// Draw the plots and summary of a run report (any machine).
    Plot {
        run_dir: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Check a device output against the CPU bit model of the tensor cores (any machine):
    /// raw little-endian f32 files, A M×K and B N×K row-major (C = A·Bᵀ), C M×N.
    VerifyBits {
        #[arg(long)]
        a: PathBuf,
        #[arg(long)]
        b: PathBuf,
        #[arg(long)]
        c: PathBuf,
        #[arg(long, allow_hyphen_values = true, value_parser = shape_parser())]
        shape: Shape,
        /// The numerical contract C was computed under.
        #[arg(long, default_value = "tf32-rne-k8-inorder", value_parser = contract_parser())]
        contract: Contract,
        /// The architecture whose tensor cores computed C.
        #[arg(long, default_value = "sm_90a", value_parser = arch_parser())]
        arch: Arch,
        /// Check this many sampled elements instead of all of them.
        #[arg(long)]
        samples: Option<usize>,
    },
    /// Compile every kernel variant of the space through NVRTC and check ptxas's report; or,
    /// with --schedule, only those schedules' kernels (and with --cubin-dir keep their cubins,
    /// e.g. for `nvdisasm -c`).
    CheckKernels {
        #[arg(long, default_value = "sm_90a", value_parser = arch_parser())]
        arch: Arch,
        /// Only these schedules' kernels (comma-separated or repeated canonical names).
        #[arg(long, value_delimiter = ',')]
        schedule: Vec<String>,
        /// With --schedule: the numerical contract to compile them for (default
        /// tf32-rne-k8-inorder; without --schedule every variant is compiled for both).
        #[arg(long, requires = "schedule", value_parser = contract_parser())]
        contract: Option<Contract>,
        /// With --schedule: write each kernel's cubin and ptxas log here as `<label>.cubin`
        /// and `<label>.log`.
        #[arg(long, requires = "schedule")]
        cubin_dir: Option<PathBuf>,
    },
    /// Train a two-layer MLP block (Linear → GroupNorm → tanh-GELU → Linear, MSE, AdamW) on
    /// forge's kernels with the profile's GEMMs; print the loss, and with --check the
    /// determinism results.
    Step(StepArgs),
    /// (internal) Run one tuning job on the GPU and print JSON lines.
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        job: PathBuf,
    },
    /// (internal, tests/device/sanitize.sh) Run one schedule once on one shape and compare
    /// its bits with the canonical schedule's, one line; or, with --plan PROFILE, print the
    /// (schedule, shape) pairs to run for a profile, one `SCHEDULE MxNxK small|ragged` a line.
    #[command(hide = true)]
    Launch {
        #[arg(long, required_unless_present = "plan")]
        schedule: Option<String>,
        #[arg(long, allow_hyphen_values = true, value_parser = shape_parser(), required_unless_present = "plan")]
        shape: Option<Shape>,
        #[arg(long, default_value_t = 20261202)]
        seed: u64,
        /// The numerical contract the kernels are compiled for.
        #[arg(long, default_value = "tf32-rne-k8-inorder", value_parser = contract_parser())]
        contract: Contract,
        /// Kernel cache directory (default $FORGE_CACHE or ~/.cache/forge).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// The canonical output for this shape and seed: read when the file exists, else
        /// computed and written there.
        #[arg(long)]
        golden: Option<PathBuf>,
        #[arg(long, value_name = "PROFILE", conflicts_with_all = ["schedule", "shape", "golden"])]
        plan: Option<PathBuf>,
        /// With --plan: the runners-up too.
        #[arg(long, requires = "plan")]
        runners_up: bool,
    },
}

/// `forge step`'s arguments.
#[derive(Args, Debug)]
pub struct StepArgs {
    /// Dispatch profile whose schedules run the TF32 GEMMs (required for --dtype tf32): a
    /// file, or a directory such as profiles/ (its measured profile tuned on this device).
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Model width D.
    #[arg(long)]
    dim: usize,
    /// Hidden width H (default 4·D).
    #[arg(long)]
    hidden: Option<usize>,
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Sequence length T: rows = batch × seq.
    #[arg(long, default_value_t = 512)]
    seq: usize,
    #[arg(long, default_value_t = 10)]
    steps: usize,
    #[arg(long, value_enum, default_value = "tf32")]
    dtype: crate::step::StepDtype,
    #[arg(long, default_value_t = 20261203)]
    seed: u64,
    /// GroupNorm groups (must divide H).
    #[arg(long, default_value_t = 32)]
    groups: usize,
    #[arg(long, default_value_t = 1e-3)]
    lr: f32,
    /// Split the batch into this many micro-batches (gradients summed in order).
    #[arg(long, default_value_t = 1)]
    micro_batches: usize,
    /// Run the determinism checks (two runs, canonical profile, micro-batches, other seed).
    #[arg(long)]
    check: bool,
    /// Micro-batches of the check's batch-split comparison.
    #[arg(long, default_value_t = 4)]
    check_micro_batches: usize,
    /// Write data, parameters and the loss history here (raw f32) for a reference.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Time steps/s for this many seconds after training.
    #[arg(long, allow_hyphen_values = true, value_parser = seconds_parser())]
    time: Option<f64>,
    /// Launch every kernel each step instead of replaying a captured CUDA graph.
    #[arg(long)]
    no_graph: bool,
    /// Append the results as one JSON line to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Kernel cache directory (default $FORGE_CACHE or ~/.cache/forge).
    #[arg(long)]
    cache: Option<PathBuf>,
}

impl StepArgs {
    fn options(self) -> crate::step::run::StepOptions {
        use crate::step::{AdamW, StepConfig};
        crate::step::run::StepOptions {
            cfg: StepConfig {
                dim: self.dim,
                hidden: self.hidden.unwrap_or(4 * self.dim),
                batch: self.batch,
                seq: self.seq,
                groups: self.groups,
                gn_eps: 1e-5,
                adamw: AdamW {
                    lr: self.lr,
                    ..AdamW::default()
                },
                dtype: self.dtype,
                seed: self.seed,
                micro_batches: self.micro_batches,
            },
            steps: self.steps,
            profile: self.profile,
            cache_dir: self.cache.unwrap_or_else(cache::default_dir),
            check: self.check,
            check_micro_batches: self.check_micro_batches,
            dump: self.dump,
            time_seconds: self.time,
            graph: !self.no_graph,
            json: self.json,
        }
    }
}

/// The cost model a command prices with: `path`'s constants, else the embedded ones.
pub(super) fn load_model(
    path: Option<&std::path::Path>,
) -> anyhow::Result<crate::cost_model::CostModel> {
    use crate::cost_model::CostModel;
    match path {
        None => Ok(CostModel::shipped()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read cost model {}", p.display()))?;
            CostModel::from_toml(&text).with_context(|| format!("cost model {}", p.display()))
        }
    }
}

/// Parses the command line; a bad value is one `error:` line and exit code 1 (help and
/// version print and exit 0).
pub fn parse() -> Cli {
    Cli::try_parse().unwrap_or_else(|e| {
        if e.use_stderr() {
            eprint!("{e}");
            std::process::exit(1);
        }
        e.exit()
    })
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    crate::device::simulated::check_env().map_err(anyhow::Error::msg)?;
    match cli.command {
        Cmd::Rank {
            arch,
            problems,
            top,
            json,
            explain,
            profile,
            model,
        } => {
            let model = load_model(model.as_deref())?;
            let arch = match profile {
                Some(p) => {
                    let loaded = Profile::load_for_arch(&p, &arch.name)?;
                    if loaded.meta.device.is_none() {
                        eprintln!(
                            "note: {} records no device ([meta.device]): the {} table is priced",
                            p.display(),
                            arch.name
                        );
                    }
                    loaded.arch().clone()
                }
                None => arch,
            };
            let (shapes, dtype, layout) = (&problems.shapes.0, problems.dtype, problems.layout);
            match explain {
                Some(name) => explain_schedule(&model, &arch, shapes, layout, &name),
                None => rank(&model, &arch, shapes, dtype, layout, top, json),
            }
        }
        Cmd::Tune {
            arch,
            problems,
            top,
            contract,
            exhaustive,
            refine,
            require_gpu,
            profile,
            run_dir,
            force,
            seed,
            watchdog,
            cache: cache_dir,
            max_seconds,
            no_plots,
            gpus,
            shard,
        } => {
            let dtype = problems.dtype;
            if !dtype.has_kernels() {
                bail!("no {dtype} kernel is implemented (only tf32 has kernels): nothing to tune");
            }
            let mut selected = problems.problems();
            if let Some(shard) = shard {
                selected = shard.select(&selected);
                let shown: Vec<String> = selected.iter().map(|p| p.shape.to_string()).collect();
                eprintln!(
                    "shard {shard}: {} of the {} shapes: {}",
                    selected.len(),
                    problems.shapes.0.len(),
                    if shown.is_empty() {
                        "none".to_string()
                    } else {
                        shown.join(",")
                    }
                );
                if selected.is_empty() {
                    return Ok(());
                }
            }
            let opts = TuneOptions {
                arch,
                problems: selected,
                contract,
                top,
                exhaustive,
                refine,
                require_gpu,
                profile,
                run_dir,
                force,
                seed,
                watchdog_s: watchdog,
                cache_dir: cache_dir.unwrap_or_else(cache::default_dir),
                timing: TimingConfig {
                    max_seconds,
                    ..TimingConfig::default()
                },
                plots: !no_plots,
                command: std::env::args().collect::<Vec<_>>().join(" "),
                gpus,
                device: 0,
            };
            let start = std::time::Instant::now();
            tune::tune(&opts)?;
            eprintln!("tune took {:.1} s", start.elapsed().as_secs_f64());
            Ok(())
        }
        Cmd::Merge { inputs, out, force } => {
            let merged = crate::merge::merge_profiles(&inputs, &out, force)?;
            eprintln!(
                "wrote {} ({} entries, {} measured, from {} profiles)",
                out.display(),
                merged.entries.len(),
                merged.entries.iter().filter(|e| e.is_measured()).count(),
                inputs.len()
            );
            Ok(())
        }
        Cmd::Calibrate(args) => calibrate::run(args),
        Cmd::Pool { profile, from, out } => {
            use crate::calibrate::pool::GatePasses;
            let data: Vec<GatePasses> = from
                .iter()
                .map(|p| GatePasses::load(p))
                .collect::<anyhow::Result<_>>()?;
            // Under the written profile's lock, as a tune or merge writes it: a concurrent
            // one's entries are read here or land after, never overwritten.
            let out = out.unwrap_or_else(|| profile.clone());
            let lock_path = crate::durable::lock_path_for(&out);
            let _lock =
                crate::durable::Lock::acquire(&lock_path, &format!("profile {}", out.display()))?;
            let mut widened = Profile::load(&profile)?;
            let mut added = 0;
            for (d, path) in data.iter().zip(&from) {
                let n;
                (widened, n) =
                    crate::calibrate::pool::add_verified(widened, d, std::slice::from_ref(path))?;
                added += n;
            }
            widened.save(&out)?;
            eprintln!(
                "wrote {}: {added} schedules added to the verified pool",
                out.display()
            );
            Ok(())
        }
        Cmd::Select {
            profile,
            arch,
            contract,
            shape,
            dtype,
            layout,
            model: model_file,
        } => {
            let model = load_model(model_file.as_deref())?;
            if !dtype.has_kernels() {
                bail!(
                    "no {dtype} kernel is implemented (only tf32 has kernels): a profile selects \
                     no {dtype} schedule"
                );
            }
            let p = match arch {
                Some(a) => Profile::load_for_arch(&profile, &a.name)?,
                None => Profile::load(&profile)?,
            };
            if let Some(c) = contract {
                p.require_contract(&profile, c)?;
            }
            let sel = p.select_with(&Problem::new(dtype, layout, shape), &model);
            println!("{}", sel.schedule);
            match sel.rule {
                Rule::Exact { entry } => {
                    let e = &p.entries[entry];
                    println!("rule: exact match in {}", profile.display());
                    if let (Some(us), Some(ratio)) = (e.measured_us, e.ratio_vs_cublas) {
                        println!(
                            "measured {us:.1} µs, {:.1} TFLOP/s, {ratio:.3}x cuBLAS ({} on {})",
                            e.tflops.unwrap_or(0.0),
                            p.meta.date,
                            p.meta.device_name
                        );
                    } else {
                        println!(
                            "predicted {:.1} µs (cost model only, not measured)",
                            e.predicted_us
                        );
                    }
                }
                Rule::Nearest { entry, distance } => println!(
                    "rule: nearest tuned shape in log space, {} (distance {distance:.3}), whose schedule is valid for {shape}",
                    p.entries[entry].shape()
                ),
                Rule::Model {
                    predicted_us,
                    candidates,
                } => println!(
                    "rule: {}'s best of the profile's {candidates} schedules (entries, runners-up, verified pool, canonical) valid for {shape} (predicted {predicted_us:.1} µs)",
                    model_file
                        .as_ref()
                        .map_or("the calibrated cost model".to_string(), |m| {
                            format!("the cost model of {}", m.display())
                        })
                ),
                Rule::Canonical => println!(
                    "rule: no tuned {dtype}/{} shape has a schedule valid for {shape}: the canonical schedule",
                    layout.as_str()
                ),
            }
            Ok(())
        }
        Cmd::Plot { run_dir, out } => {
            let report = crate::report::RunReport::load(&run_dir)?;
            let out = out.unwrap_or(run_dir);
            for f in crate::outputs::render_all(&report, &out)? {
                println!("{}", f.display());
            }
            Ok(())
        }
        Cmd::VerifyBits {
            a,
            b,
            c,
            shape,
            contract,
            arch,
            samples,
        } => verify_bits(&a, &b, &c, shape, contract, &arch, samples),
        Cmd::CheckKernels {
            arch,
            schedule,
            contract,
            cubin_dir,
        } if !schedule.is_empty() => check_schedule_kernels(
            &arch,
            &schedule,
            contract.unwrap_or_default(),
            cubin_dir.as_deref(),
        ),
        Cmd::CheckKernels { arch, .. } => check_kernels(&arch),
        Cmd::Step(args) => {
            let opts = args.options();
            opts.cfg.validate()?;
            crate::step::run::run(&opts)?;
            Ok(())
        }
        Cmd::Worker { job } => {
            let text = std::fs::read(&job).with_context(|| format!("reading {}", job.display()))?;
            let job: tune::protocol::Job = serde_json::from_slice(&text)?;
            tune::worker::run(&job)?;
            Ok(())
        }
        Cmd::Launch {
            schedule,
            shape,
            seed,
            contract,
            cache: cache_dir,
            golden,
            plan,
            runners_up,
        } => {
            if let Some(path) = plan {
                let profile = Profile::load(&path)?;
                for (schedule, shape) in tune::launch::plan(&profile, runners_up) {
                    let kind = if tune::launch::is_ragged(&shape) {
                        "ragged"
                    } else {
                        "small"
                    };
                    println!("{schedule} {shape} {kind}");
                }
                return Ok(());
            }
            let (Some(name), Some(shape)) = (schedule, shape) else {
                bail!("launch needs --schedule and --shape (or --plan PROFILE)");
            };
            let schedule: Schedule = name.parse().map_err(|_| {
                anyhow::anyhow!("`{}` is not a schedule name", clip(&name, MAX_QUOTED))
            })?;
            let opts = tune::launch::LaunchOptions {
                schedule,
                shape,
                contract,
                seed,
                cache_dir: cache_dir.unwrap_or_else(cache::default_dir),
                golden,
            };
            let (line, identical) = tune::launch::run(&opts)?;
            println!("{line}");
            if !identical {
                bail!("{schedule} on {shape}: the bits differ from the canonical schedule's");
            }
            Ok(())
        }
    }
}
