//! The `forge` command line: parse, validate, hand to the library, print.

use crate::arch::Arch;
use crate::bitmodel;
use crate::contract::{Contract, Rounding};
use crate::cost_model::CostModel;
use crate::device::cache;
use crate::device::timing::TimingConfig;
use crate::problem::Problem;
use crate::profile::{Profile, Rule};
use crate::schedule::{Dtype, Layout, Schedule};
use crate::shape::{Shape, ShapeList};
use crate::space;
use crate::tune::{self, TuneOptions};
use crate::util::{MAX_QUOTED, clip};
use anyhow::{Context, bail};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::str::FromStr;

/// A command-line value parsed by its type's `FromStr` and then checked: an error is one
/// `error:` line naming the option and the value (at most [`MAX_QUOTED`] characters of it), and
/// `--help` lists the valid values where they are few.
#[derive(Clone)]
struct Typed<T> {
    values: fn() -> Vec<&'static str>,
    check: fn(&T) -> Result<(), &'static str>,
    _type: PhantomData<fn() -> T>,
}

/// Any value its `FromStr` accepts; `values` for `--help`.
fn typed<T>(values: fn() -> Vec<&'static str>) -> Typed<T> {
    Typed {
        values,
        check: |_| Ok(()),
        _type: PhantomData,
    }
}

/// A parsed value that must also pass `check` (open-ended values such as counts).
fn checked<T>(check: fn(&T) -> Result<(), &'static str>) -> Typed<T> {
    Typed {
        values: open_ended,
        check,
        _type: PhantomData,
    }
}

fn open_ended() -> Vec<&'static str> {
    vec![]
}

impl<T> TypedValueParser for Typed<T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let name = arg
            .and_then(|a| a.get_long())
            .map_or_else(|| "a value".to_string(), |l| format!("--{l}"));
        let shown = clip(&value.to_string_lossy(), MAX_QUOTED);
        let raw = |why: String| {
            clap::Error::raw(ErrorKind::InvalidValue, format!("{name} {shown}: {why}\n"))
        };
        let text = value
            .to_str()
            .ok_or_else(|| raw("not valid UTF-8".into()))?;
        let v: T = text
            .trim()
            .parse()
            .map_err(|e: T::Err| raw(clip(&e.to_string(), MAX_QUOTED)))?;
        (self.check)(&v).map_err(|why| raw(why.into()))?;
        Ok(v)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let values = (self.values)();
        (!values.is_empty()).then(|| {
            Box::new(values.into_iter().map(PossibleValue::new))
                as Box<dyn Iterator<Item = PossibleValue>>
        })
    }
}

fn count_parser() -> Typed<usize> {
    checked(|&n| {
        if n >= 1 {
            Ok(())
        } else {
            Err("must be at least 1")
        }
    })
}
fn watchdog_parser() -> Typed<u64> {
    checked(|&s| {
        if s >= 1 {
            Ok(())
        } else {
            Err("must be at least 1 second")
        }
    })
}
fn seconds_parser() -> Typed<f64> {
    checked(|&s| {
        if s.is_finite() && s > 0.0 {
            Ok(())
        } else {
            Err("must be a finite number of seconds above 0")
        }
    })
}

fn arch_parser() -> Typed<Arch> {
    typed(Arch::known)
}
fn dtype_parser() -> Typed<Dtype> {
    typed(|| Dtype::ALL.iter().map(|d| d.as_str()).collect())
}
fn layout_parser() -> Typed<Layout> {
    typed(|| Layout::ALL.iter().map(|l| l.as_str()).collect())
}
fn contract_parser() -> Typed<Contract> {
    typed(|| {
        Rounding::ALL
            .iter()
            .map(|&r| Contract::new(r).name())
            .collect()
    })
}
fn shapes_parser() -> Typed<ShapeList> {
    typed(open_ended)
}
fn shape_parser() -> Typed<Shape> {
    typed(open_ended)
}

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
    /// Compile every kernel variant of the space through NVRTC and check ptxas's report.
    CheckKernels {
        #[arg(long, default_value = "sm_90a", value_parser = arch_parser())]
        arch: Arch,
    },
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
    match cli.command {
        Cmd::Rank {
            arch,
            problems,
            top,
            json,
            explain,
        } => {
            let (shapes, dtype, layout) = (&problems.shapes.0, problems.dtype, problems.layout);
            match explain {
                Some(name) => explain_schedule(&arch, shapes, layout, &name),
                None => rank(&arch, shapes, dtype, layout, top, json),
            }
        }
        Cmd::Tune {
            arch,
            problems,
            top,
            contract,
            exhaustive,
            require_gpu,
            profile,
            run_dir,
            force,
            seed,
            watchdog,
            cache: cache_dir,
            max_seconds,
            no_plots,
        } => {
            let dtype = problems.dtype;
            if !dtype.has_kernels() {
                bail!("no {dtype} kernel is implemented (only tf32 has kernels): nothing to tune");
            }
            let opts = TuneOptions {
                arch,
                problems: problems.problems(),
                contract,
                top,
                exhaustive,
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
            };
            let start = std::time::Instant::now();
            tune::tune(&opts)?;
            eprintln!("tune took {:.1} s", start.elapsed().as_secs_f64());
            Ok(())
        }
        Cmd::Select {
            profile,
            arch,
            contract,
            shape,
            dtype,
            layout,
        } => {
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
            let sel = p.select(&Problem::new(dtype, layout, shape));
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
        Cmd::CheckKernels { arch } => check_kernels(&arch),
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

fn rank(
    arch: &Arch,
    shapes: &[Shape],
    dtype: Dtype,
    layout: Layout,
    top: usize,
    json: bool,
) -> anyhow::Result<()> {
    let model = CostModel::shipped();
    let start = std::time::Instant::now();
    let ranked = model.rank_many(arch, dtype, layout, shapes);
    let elapsed = start.elapsed();
    if json {
        let out: Vec<serde_json::Value> = shapes
            .iter()
            .zip(&ranked)
            .map(|(s, r)| {
                serde_json::json!({
                    "shape": s, "valid_schedules": r.len(),
                    "ranked": r.iter().take(top).collect::<Vec<_>>()
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for (shape, r) in shapes.iter().zip(&ranked) {
        println!(
            "\n{shape} on {} ({}), {dtype}, layout {}: {} valid schedules",
            arch.name,
            arch.devices,
            layout.as_str(),
            r.len()
        );
        println!(
            "{:>4}  {:<48} {:>10} {:>8} {:>6}  dominant term",
            "rank", "schedule", "pred µs", "TFLOP/s", "%peak"
        );
        for (i, x) in r.iter().take(top).enumerate() {
            println!(
                "{:>4}  {:<48} {:>10.2} {:>8.1} {:>5.1}%  {}",
                i + 1,
                x.schedule.name(),
                x.prediction.time_us,
                x.prediction.tflops,
                x.prediction.peak_fraction * 100.0,
                x.prediction.dominant
            );
        }
    }
    eprintln!(
        "\nranked {} shape(s) in {:.1} ms",
        shapes.len(),
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}

fn explain_schedule(
    arch: &Arch,
    shapes: &[Shape],
    layout: Layout,
    name: &str,
) -> anyhow::Result<()> {
    let schedule: Schedule = name.parse()?;
    let model = CostModel::shipped();
    println!("{schedule} on {}", arch.name);
    println!(
        "  {} threads, {} B shared memory, {} accumulators/thread",
        schedule.threads(),
        schedule.smem_bytes(),
        schedule.accumulators_per_thread()
    );
    for shape in shapes {
        match space::check(arch, &schedule, shape) {
            Err(reason) => println!("{shape}: REJECTED: {reason}"),
            Ok(()) => {
                let p = model.predict(arch, &schedule, shape, layout);
                let ranked = model.rank(arch, schedule.dtype, layout, shape);
                let pos = ranked
                    .iter()
                    .position(|r| r.schedule == schedule)
                    .map_or(0, |p| p + 1);
                println!(
                    "{shape}: valid, rank {pos} of {}: {:.2} µs, {:.1} TFLOP/s ({:.1}% of peak), dominated by {}",
                    ranked.len(),
                    p.time_us,
                    p.tflops,
                    p.peak_fraction * 100.0,
                    p.dominant
                );
                let t = &p.terms;
                println!(
                    "    main loop {:.2} µs (compute {:.2}, smem {:.2}, L2 {:.2}, DRAM {:.2}); tail wave {:.2}; latency {:.2}; epilogue {:.2}; launch {:.2}; split-K {:.2}; transpose {:.2}",
                    t.mainloop_us,
                    t.compute_us,
                    t.smem_us,
                    t.l2_us,
                    t.dram_us,
                    t.tail_wave_us,
                    t.latency_us,
                    t.epilogue_us,
                    t.launch_us,
                    t.split_k_us,
                    t.transpose_us
                );
                println!(
                    "    {:.2} waves (last {:.0}% full), {} CTAs/SM; DRAM {:.1} MB, L2 {:.1} MB; persistence saved {:.2} µs, multicast {:.2} µs",
                    t.waves,
                    t.tail_efficiency * 100.0,
                    t.ctas_per_sm,
                    t.dram_bytes / 1e6,
                    t.l2_bytes / 1e6,
                    t.persistent_savings_us,
                    t.cluster_savings_us
                );
            }
        }
    }
    Ok(())
}

/// `forge verify-bits`: how many elements of C the bit model reproduces; an error (exit 1)
/// unless every checked element matches.
fn verify_bits(
    a: &std::path::Path,
    b: &std::path::Path,
    c: &std::path::Path,
    shape: Shape,
    contract: Contract,
    arch: &Arch,
    samples: Option<usize>,
) -> anyhow::Result<()> {
    let params = bitmodel::params_for_arch(&arch.name).with_context(|| {
        format!(
            "the bit model has no tensor-core parameters for {}",
            arch.name
        )
    })?;
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let read = |path: &std::path::Path, rows: usize, cols: usize, what: &str| {
        let v = bitmodel::read_f32_file(path)
            .with_context(|| format!("reading {what} from {}", path.display()))?;
        if v.len() != rows * cols {
            bail!(
                "{} holds {} f32 values; {what} of {shape} needs {rows}×{cols} = {}",
                path.display(),
                v.len(),
                rows * cols
            );
        }
        Ok(v)
    };
    let (a, b, c) = (
        read(a, m, k, "A")?,
        read(b, n, k, "B")?,
        read(c, m, n, "C")?,
    );
    let samples = samples.unwrap_or(m * n);
    let check = bitmodel::check_sampled(
        &a,
        &b,
        &c,
        m,
        n,
        k,
        samples,
        20261203,
        &params,
        contract.rounding,
    );
    println!(
        "{shape} ({contract}, {} tensor cores): {} of {} checked elements bit-identical ({:.3}%)",
        arch.name,
        check.equal,
        check.checked,
        100.0 * check.equal as f64 / check.checked.max(1) as f64
    );
    for (i, j, device, model) in &check.first_mismatches {
        println!("  C[{i}][{j}]: file {device:#010x}, model {model:#010x}");
    }
    if !check.all_equal() {
        bail!(
            "{} of {} checked elements differ from the bit model",
            check.checked - check.equal,
            check.checked
        );
    }
    Ok(())
}

/// Compiles every distinct kernel variant the space can produce for `arch`.
fn check_kernels(arch: &Arch) -> anyhow::Result<()> {
    let report = crate::kernel_check::check_all(arch)?;
    for line in &report.lines {
        println!("{line}");
    }
    println!(
        "{} variants compiled, {} clean, {} failed",
        report.total,
        report.clean,
        report.failed.len()
    );
    if !report.failed.is_empty() {
        for f in &report.failed {
            eprintln!("FAILED {f}");
        }
        bail!(
            "{} kernel variant(s) failed the ptxas check",
            report.failed.len()
        );
    }
    Ok(())
}
