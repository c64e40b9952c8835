//! The worker process: runs one [`Job`] on the GPU and prints [`Event`] lines. A fault in a
//! kernel makes the worker exit; the tuner records the candidate it had started as faulted
//! and starts a new worker for the rest.

use super::protocol::{Event, Job, measurement};
use crate::bitmodel;
use crate::contract::Rounding;
use crate::device::buffers::DeviceBuffer;
use crate::device::cache::KernelCache;
use crate::device::cublas::Cublas;
use crate::device::fill::UtilKernels;
use crate::device::kernel::{LoadedVariant, Prepared};
use crate::device::prep::{PrepKernel, PreparedOperands};
use crate::device::timing::{self, TimingConfig, time_kernel};
use crate::device::{DeviceError, Gpu};
use crate::gate::{self, POISON_BITS};
use crate::kernel_source::KernelVariant;
use crate::operand_prep::{OperandPrep, PrepPlan};
use crate::reference::{self, TENSOR_A, TENSOR_B};
use crate::report::{BitModelCheck, GateResult, ReferenceCheck, RegimeTimes, Status};
use crate::schedule::{LaunchOrder, Layout, Schedule};
use crate::shape::Shape;
use crate::stats::{Summary, summarize};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;

/// Exit code of a worker whose CUDA context died (the in-flight candidate faulted).
pub const EXIT_FAULT: i32 = 3;
/// Elements of C₀ checked against the FP64 reference.
pub const REFERENCE_SAMPLES: usize = 4096;
/// Upper bound on rotated input sets (enough for 512³, 3 MB a set, to pass twice the L2).
const MAX_SETS: u64 = 64;

pub(super) fn emit(event: &Event) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", event.to_line());
    let _ = out.flush();
}

/// The rotated input sets of one problem, operands stored in the problem's layout.
pub struct Inputs {
    pub layout: Layout,
    pub a: Vec<DeviceBuffer>,
    pub b: Vec<DeviceBuffer>,
    pub c: Vec<DeviceBuffer>,
    pub workspace: DeviceBuffer,
    /// Set 0's operands in TN layout (A M×K, B N×K) where the stored layout differs: what the
    /// canonical (golden) product and the bit model read.
    pub tn: Option<(DeviceBuffer, DeviceBuffer)>,
}

impl Inputs {
    /// Set 0's operands in TN layout.
    pub fn tn_operands(&self) -> (&DeviceBuffer, &DeviceBuffer) {
        match &self.tn {
            Some((a, b)) => (a, b),
            None => (&self.a[0], &self.b[0]),
        }
    }

    /// The stored operands of every set.
    pub fn operands(&self) -> Vec<(u64, u64)> {
        self.a
            .iter()
            .zip(&self.b)
            .map(|(a, b)| (a.ptr(), b.ptr()))
            .collect()
    }
}

/// A schedule ready to run on every input set: the operand preparation it needs for the
/// stored layout (workspaces allocated once, `crate::operand_prep`) and one launch plan per
/// set (tensor maps encoded once, outside any timed region).
pub struct Runner<'a> {
    lv: &'a LoadedVariant,
    prep: Option<(&'a PrepKernel, PreparedOperands)>,
    plans: Vec<Prepared>,
    operands: Vec<(u64, u64)>,
}

impl<'a> Runner<'a> {
    /// `operands`: the stored (A, B) of each set, in `layout`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        lv: &'a LoadedVariant,
        prep_kernel: &'a PrepKernel,
        schedule: &Schedule,
        layout: Layout,
        shape: &Shape,
        operands: Vec<(u64, u64)>,
    ) -> Result<Runner<'a>, DeviceError> {
        let (a0, b0) = operands[0];
        let plan = PrepPlan::new(schedule, layout, shape, a0, b0);
        let prep = if plan.is_empty() {
            None
        } else {
            Some((prep_kernel, PreparedOperands::new(gpu, plan)?))
        };
        let plans = operands
            .iter()
            .map(|&(a, b)| match &prep {
                None => lv.prepare(schedule, shape, a, b),
                Some((_, ops)) => {
                    let ((pa, pb), (lda, ldb)) = (ops.operands(a, b), ops.strides(shape.k));
                    lv.prepare_strided(schedule, shape, (pa, lda), (pb, ldb))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Runner {
            lv,
            prep,
            plans,
            operands,
        })
    }

    /// Launches the preparation passes and the GEMM in `order` (serial unless set).
    pub fn with_order(mut self, order: LaunchOrder) -> Runner<'a> {
        for plan in &mut self.plans {
            plan.order = order;
        }
        self
    }

    /// The operand preparation (empty when the kernel reads the stored operands in place).
    pub fn prep_plan(&self) -> PrepPlan {
        self.prep
            .as_ref()
            .map_or_else(PrepPlan::default, |(_, ops)| ops.plan)
    }

    /// f32 words of GEMM workspace a launch needs.
    pub fn workspace_words(&self) -> u64 {
        self.plans[0].workspace_words
    }

    /// The preparation passes alone, on set `set`.
    pub fn launch_prep(&self, gpu: &Gpu, set: usize) -> Result<(), DeviceError> {
        if let Some((kernel, ops)) = &self.prep {
            ops.run(
                kernel,
                &gpu.stream,
                self.operands[set],
                self.plans[set].order,
            )?;
        }
        Ok(())
    }

    /// Preparation passes, then the GEMM, on set `set`.
    pub fn launch(&self, gpu: &Gpu, set: usize, c: u64, workspace: u64) -> Result<(), DeviceError> {
        self.launch_prep(gpu, set)?;
        self.lv.launch(&gpu.stream, &self.plans[set], c, workspace)
    }
}

/// Fills the rotated input sets of `problem`: values drawn in TN layout (what the reference
/// regenerates), then stored in the problem's layout.
pub fn fill_inputs(
    gpu: &Gpu,
    util: &UtilKernels,
    prep: &PrepKernel,
    problem: &crate::problem::Problem,
    seed: u64,
    sets: u32,
) -> Result<Inputs, DeviceError> {
    let Shape { m, n, k } = problem.shape;
    let layout = problem.layout;
    let (ta, tb) = layout.transposes();
    let mut inputs = Inputs {
        layout,
        a: vec![],
        b: vec![],
        c: vec![],
        workspace: DeviceBuffer::new(&gpu.ctx, 1)?,
        tn: None,
    };
    // Stores a rows×K operand K×rows (the transposing pass run the other way round).
    let store = |tn: &DeviceBuffer, rows: u32| -> Result<DeviceBuffer, DeviceError> {
        let stored = DeviceBuffer::new(&gpu.ctx, tn.len())?;
        let pass = OperandPrep {
            transpose: true,
            rows: k,
            k: rows,
            ld_in: k,
            ld_out: rows,
        };
        prep.launch(&gpu.stream, &pass, tn.ptr(), stored.ptr())?;
        Ok(stored)
    };
    let mut tn0 = (None, None);
    for set in 0..sets {
        let a = DeviceBuffer::new(&gpu.ctx, m as usize * k as usize)?;
        let b = DeviceBuffer::new(&gpu.ctx, n as usize * k as usize)?;
        util.fill_random(gpu, &a, seed, set, TENSOR_A)?;
        util.fill_random(gpu, &b, seed, set, TENSOR_B)?;
        let a = if ta {
            let stored = store(&a, m)?;
            if set == 0 {
                tn0.0 = Some(a);
            }
            stored
        } else {
            a
        };
        let b = if tb {
            let stored = store(&b, n)?;
            if set == 0 {
                tn0.1 = Some(b);
            }
            stored
        } else {
            b
        };
        inputs.a.push(a);
        inputs.b.push(b);
        inputs
            .c
            .push(DeviceBuffer::new(&gpu.ctx, m as usize * n as usize)?);
    }
    if ta || tb {
        let copy = |buf: &DeviceBuffer| -> Result<DeviceBuffer, DeviceError> {
            let out = DeviceBuffer::new(&gpu.ctx, buf.len())?;
            // Safety: both buffers hold `len` f32 in this context; ordered on the stream.
            unsafe {
                cudarc::driver::sys::cuMemcpyDtoDAsync_v2(
                    out.ptr(),
                    buf.ptr(),
                    buf.len() * 4,
                    gpu.stream.cu_stream(),
                )
            }
            .result()?;
            Ok(out)
        };
        let a = match tn0.0 {
            Some(a) => a,
            None => copy(&inputs.a[0])?,
        };
        let b = match tn0.1 {
            Some(b) => b,
            None => copy(&inputs.b[0])?,
        };
        inputs.tn = Some((a, b));
    }
    gpu.stream.synchronize()?;
    Ok(inputs)
}

/// Test hook for the tuner's fault isolation: `FORGE_TEST_INJECT=fault:NAME,hang:NAME` makes
/// the worker run NAME on an unmapped A pointer (a real illegal-address fault that destroys the
/// CUDA context) or stall before NAME's result (the watchdog's case).
pub const INJECT_ENV: &str = "FORGE_TEST_INJECT";
const BAD_POINTER: u64 = 0x1000;

pub(super) enum Injection {
    Fault,
    Hang,
}

pub(super) fn injected(schedule: &Schedule) -> Option<Injection> {
    let name = schedule.name();
    let spec = std::env::var(INJECT_ENV).ok()?;
    spec.split(',').find_map(|item| match item.split_once(':') {
        Some(("fault", n)) if n == name.as_str() => Some(Injection::Fault),
        Some(("hang", n)) if n == name.as_str() => Some(Injection::Hang),
        _ => None,
    })
}

/// Number of input sets so that the rotated working set is at least twice the L2.
pub fn input_sets(shape: &Shape, l2_bytes: u64) -> u32 {
    let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
    let per_set = 4 * (m * k + n * k + m * n);
    (2 * l2_bytes).div_ceil(per_set).clamp(1, MAX_SETS) as u32
}

fn check_reference(job: &Job, golden: &[f32]) -> ReferenceCheck {
    let Shape { m, n, k } = job.problem.shape;
    let count = REFERENCE_SAMPLES.min(m as usize * n as usize).max(4);
    let positions = reference::sample_positions(job.seed, m, n, count);
    let pairs: Vec<(f64, f64)> = positions
        .par_iter()
        .map(|&(i, j)| {
            let r = reference::reference_element(job.seed, 0, k, i, j);
            (golden[i as usize * n as usize + j as usize] as f64, r)
        })
        .collect();
    let (mut d2, mut r2, mut max_rel) = (0f64, 0f64, 0f64);
    for &(c, r) in &pairs {
        let d = if c.is_nan() { f64::INFINITY } else { c - r };
        d2 += d * d;
        r2 += r * r;
        max_rel = max_rel.max(d.abs() / r.abs().max(1e-3));
    }
    let rel_rms = if r2 > 0.0 { (d2 / r2).sqrt() } else { 0.0 };
    ReferenceCheck {
        samples: pairs.len() as u32,
        rel_rms,
        max_rel_error: max_rel,
        tolerance: reference::TF32_TOLERANCE,
        passed: rel_rms <= reference::TF32_TOLERANCE,
    }
}

/// The canonical output against the CPU bit model on the reference check's sample count
/// (None where the model has no parameters for the device's architecture).
fn check_bitmodel(
    gpu: &Gpu,
    job: &Job,
    inputs: &Inputs,
    golden: &[f32],
) -> Result<Option<BitModelCheck>, DeviceError> {
    let Some(params) = bitmodel::params_for_arch(&gpu.info.arch) else {
        return Ok(None);
    };
    let Shape { m, n, k } = job.problem.shape;
    let (a, b) = inputs.tn_operands();
    let (a, b) = (a.to_host(&gpu.stream)?, b.to_host(&gpu.stream)?);
    let rounding = job.contract.rounding;
    let check = bitmodel::check_sampled(
        &a,
        &b,
        golden,
        m as usize,
        n as usize,
        k as usize,
        REFERENCE_SAMPLES,
        job.seed,
        &params,
        rounding,
    );
    Ok(Some(BitModelCheck {
        model: format!(
            "{} params, {rounding} inputs",
            if params == bitmodel::HOPPER {
                "hopper"
            } else {
                "ampere"
            }
        ),
        samples: check.checked as u32,
        equal: check.equal as u32,
        first_mismatch: check
            .first_mismatches
            .first()
            .map(|(i, j, d, m)| format!("({i}, {j}): device {d:#010x}, model {m:#010x}")),
    }))
}

/// Runs the job; returns only on success or on a recoverable error before any candidate.
pub fn run(job: &Job) -> Result<(), DeviceError> {
    if crate::device::simulated::enabled() {
        return super::simulated::run(job);
    }
    let gpu = Gpu::open(job.device)?;
    let cache = KernelCache::new(std::path::Path::new(&job.cache_dir))?;
    let util = UtilKernels::load(&gpu, &cache)?;
    let prep = PrepKernel::load(&gpu, &cache)?;
    let cublas = Cublas::new(&gpu)?;
    let shape = job.problem.shape;
    let sets = input_sets(&shape, gpu.info.l2_bytes);
    emit(&Event::Device {
        info: gpu.info.clone(),
        cublas_version: cublas.version.clone(),
        input_sets: sets,
    });
    let layout = job.problem.layout;
    let mut inputs = fill_inputs(&gpu, &util, &prep, &job.problem, job.seed, sets)?;
    let mut loaded = LoadedKernels::new(job.contract.rounding);

    // The golden output C₀: the canonical schedule on input set 0 in TN layout (for another
    // layout, the explicitly transposed operands).
    let canonical = Schedule::canonical(job.problem.dtype);
    let lv = loaded.load(&gpu, &cache, &canonical, &shape)?;
    let (tn_a, tn_b) = inputs.tn_operands();
    let tn_set0 = vec![(tn_a.ptr(), tn_b.ptr())];
    let runner = Runner::new(&gpu, lv, &prep, &canonical, Layout::Tn, &shape, tn_set0)?;
    let golden = Golden::new(&gpu, &util, run_once(&gpu, &runner, &canonical, &inputs)?)?;
    emit(&Event::Reference {
        check: check_reference(job, &golden.host),
    });
    // Once per shape: the screen's worker (head-to-heads re-gate against the same golden).
    if job.head_to_head.is_none()
        && let Some(check) = check_bitmodel(&gpu, job, &inputs, &golden.host)?
    {
        emit(&Event::BitModel { check });
    }

    if job.timing.heat_ms > 0.0 {
        let lv = loaded.load(&gpu, &cache, &canonical, &shape)?;
        // The canonical ready as any candidate is (its gate against itself is not needed).
        let (runner, _) = gated_runner(&gpu, lv, &prep, &canonical, job, &mut inputs, &golden)?;
        timing::heat(&gpu, inputs.a.len(), job.timing.heat_ms, |s| {
            runner.launch(&gpu, s, inputs.c[s].ptr(), inputs.workspace.ptr())
        })?;
    }

    let flops = shape.flops();
    if let Some(schedule) = job.head_to_head {
        loaded.load(&gpu, &cache, &schedule, &shape)?;
        let lv = loaded.get(&schedule, &shape);
        let (runner, gate) = gated_runner(&gpu, lv, &prep, &schedule, job, &mut inputs, &golden)?;
        if gate.verdict != crate::report::Verdict::Pass {
            return Err(DeviceError::Other(format!(
                "{schedule} no longer passes the gate"
            )));
        }
        let regimes = &job.timing.regimes;
        let (burst, sustained) = timing::head_to_head(
            &gpu,
            inputs.a.len(),
            regimes,
            &mut |s| runner.launch(&gpu, s, inputs.c[s].ptr(), inputs.workspace.ptr()),
            &mut |s| {
                cublas.gemm_layout(
                    &shape,
                    layout,
                    inputs.a[s].ptr(),
                    inputs.b[s].ptr(),
                    inputs.c[s].ptr(),
                )
            },
        )?;
        emit(&Event::HeadToHead {
            schedule,
            // What the launches got (serial under FORGE_PDL=0, whatever was asked).
            launch: crate::device::kernel::effective_order(job.launch),
            own: measurement(&summarize(&sustained.own), flops),
            cublas: measurement(&summarize(&sustained.cublas), flops),
            rounds: regimes.sustained_rounds.max(1) as u32,
            burst: (!burst.own.is_empty()).then(|| RegimeTimes {
                own: measurement(&summarize(&burst.own), flops),
                cublas: measurement(&summarize(&burst.cublas), flops),
            }),
        });
        let plan = runner.prep_plan();
        if !plan.is_empty() {
            let (summary, _) = time_kernel(&gpu, inputs.a.len(), &job.timing, |s| {
                runner.launch_prep(&gpu, s)
            })?;
            emit(&Event::Prep {
                schedule,
                measurement: measurement(&summary, flops),
                passes: plan.passes(),
                bytes: plan.bytes_moved(),
            });
        }
        emit(&Event::Done);
        return Ok(());
    }
    if job.time_cublas {
        inputs.c[0].fill_bits(&gpu.stream, POISON_BITS)?;
        cublas.gemm_layout(
            &shape,
            layout,
            inputs.a[0].ptr(),
            inputs.b[0].ptr(),
            inputs.c[0].ptr(),
        )?;
        let cublas_out = inputs.c[0].to_host(&gpu.stream)?;
        let gate = gate::compare(&golden.host, &cublas_out);
        let reference = check_reference(job, &cublas_out);
        let (summary, _) = time_cublas(&gpu, &cublas, layout, &shape, &inputs, &job.timing)?;
        emit(&Event::Cublas {
            measurement: measurement(&summary, flops),
            gate,
            reference,
        });
    }

    for schedule in &job.candidates {
        let schedule = *schedule;
        emit(&Event::Start { schedule });
        let result = loaded
            .load(&gpu, &cache, &schedule, &shape)
            .map(|_| ())
            .and_then(|_| {
                match injected(&schedule) {
                    Some(Injection::Fault) => {
                        let lv = loaded.get(&schedule, &shape);
                        let p = lv.prepare(&schedule, &shape, BAD_POINTER, inputs.b[0].ptr())?;
                        lv.launch(&gpu.stream, &p, inputs.c[0].ptr(), inputs.workspace.ptr())?;
                        gpu.stream.synchronize()?;
                    }
                    Some(Injection::Hang) => loop {
                        std::thread::sleep(std::time::Duration::from_secs(3600));
                    },
                    None => {}
                }
                let lv = loaded.get(&schedule, &shape);
                let (runner, gate) =
                    gated_runner(&gpu, lv, &prep, &schedule, job, &mut inputs, &golden)?;
                let (summary, _) = time_runner(&gpu, &runner, &inputs, &job.timing)?;
                // The last timed launch on set 0 must still give C₀ (a chained tail depends on
                // the previous launch leaving its flags at zero).
                let after = golden.gate(&gpu, &inputs.c[0])?;
                let gate = if after.verdict == crate::report::Verdict::Pass {
                    gate
                } else {
                    after
                };
                Ok((gate, summary))
            });
        match result {
            Ok((gate, summary)) => emit(&Event::Result {
                schedule,
                status: Status::Measured,
                measured: Some(measurement(&summary, flops)),
                gate,
            }),
            Err(e) => {
                let message = e.to_string();
                // A failed launch leaves the context usable; anything surfacing at a
                // synchronization (illegal address, …) has destroyed it.
                let context_alive = gpu.stream.synchronize().is_ok();
                if !context_alive {
                    eprintln!("forge worker: {schedule} faulted: {message}");
                    std::process::exit(EXIT_FAULT);
                }
                let status = match e {
                    DeviceError::Nvrtc(_) => Status::CompileFailed(message),
                    _ => Status::LaunchFailed(message),
                };
                emit(&Event::Result {
                    schedule,
                    status,
                    measured: None,
                    gate: GateResult::not_run(),
                });
            }
        }
    }
    emit(&Event::Done);
    Ok(())
}

/// Times a schedule (its operand preparation included), rotating over the input sets.
fn time_runner(
    gpu: &Gpu,
    runner: &Runner,
    inputs: &Inputs,
    cfg: &TimingConfig,
) -> Result<(Summary, Vec<f64>), DeviceError> {
    time_kernel(gpu, inputs.a.len(), cfg, |s| {
        runner.launch(gpu, s, inputs.c[s].ptr(), inputs.workspace.ptr())
    })
}

/// Times cuBLAS on the same buffers, layout and rotation.
fn time_cublas(
    gpu: &Gpu,
    cublas: &Cublas,
    layout: Layout,
    shape: &Shape,
    inputs: &Inputs,
    cfg: &TimingConfig,
) -> Result<(Summary, Vec<f64>), DeviceError> {
    time_kernel(gpu, inputs.a.len(), cfg, |s| {
        cublas.gemm_layout(
            shape,
            layout,
            inputs.a[s].ptr(),
            inputs.b[s].ptr(),
            inputs.c[s].ptr(),
        )
    })
}

/// The kernel variants loaded on the device for one numerical contract, by variant.
pub struct LoadedKernels {
    rounding: Rounding,
    variants: HashMap<KernelVariant, LoadedVariant>,
}

impl LoadedKernels {
    pub fn new(rounding: Rounding) -> LoadedKernels {
        LoadedKernels {
            rounding,
            variants: HashMap::new(),
        }
    }

    fn variant(&self, s: &Schedule, shape: &Shape) -> KernelVariant {
        KernelVariant::new(s, shape, self.rounding)
    }

    /// Compiles (or reads from the cache) and loads the variant `s` needs for `shape`.
    pub fn load(
        &mut self,
        gpu: &Gpu,
        cache: &KernelCache,
        s: &Schedule,
        shape: &Shape,
    ) -> Result<&LoadedVariant, DeviceError> {
        let v = self.variant(s, shape);
        if let std::collections::hash_map::Entry::Vacant(e) = self.variants.entry(v) {
            let compiled = cache.get_or_compile(&v.label(), &v.source(), &gpu.info.arch)?;
            e.insert(LoadedVariant::load(gpu, v, &compiled)?);
        }
        Ok(&self.variants[&v])
    }

    /// The loaded variant of `s` for `shape` ([`LoadedKernels::load`] first).
    pub fn get(&self, s: &Schedule, shape: &Shape) -> &LoadedVariant {
        &self.variants[&self.variant(s, shape)]
    }
}

/// Poisons C of set 0, runs `schedule` (ready as `runner`, set 0 first) once on set 0 and
/// returns its output.
pub fn run_once(
    gpu: &Gpu,
    runner: &Runner,
    schedule: &Schedule,
    inputs: &Inputs,
) -> Result<Vec<f32>, DeviceError> {
    launch_once(gpu, runner, schedule, inputs)?;
    inputs.c[0].to_host(&gpu.stream)
}

/// [`run_once`] leaving the output in C of set 0 on the device.
fn launch_once(
    gpu: &Gpu,
    runner: &Runner,
    schedule: &Schedule,
    inputs: &Inputs,
) -> Result<(), DeviceError> {
    inputs.c[0].fill_bits(&gpu.stream, POISON_BITS)?;
    if schedule.split_k > 1 {
        inputs.workspace.fill_bits(&gpu.stream, POISON_BITS)?;
    }
    if schedule.split_k == 1 && runner.workspace_words() > 0 {
        // A chained tail's flags start at zero (an earlier split-K run poisoned them).
        inputs.workspace.fill_bits(&gpu.stream, 0)?;
    }
    runner.launch(gpu, 0, inputs.c[0].ptr(), inputs.workspace.ptr())
}

/// The canonical output C₀ on the host (for the FP64 and bit-model checks) and on the device,
/// where each candidate's output is gated without crossing to the host unless it fails.
pub struct Golden<'a> {
    pub host: Vec<f32>,
    device: DeviceBuffer,
    count: DeviceBuffer,
    /// The utility module whose kernel counts the differing elements.
    util: &'a UtilKernels,
}

impl<'a> Golden<'a> {
    pub fn new(
        gpu: &Gpu,
        util: &'a UtilKernels,
        host: Vec<f32>,
    ) -> Result<Golden<'a>, DeviceError> {
        Ok(Golden {
            device: DeviceBuffer::from_host(&gpu.ctx, &host)?,
            count: DeviceBuffer::new(&gpu.ctx, 2)?,
            host,
            util,
        })
    }

    /// The gate of `out` (an output on the device) against C₀: the same result as
    /// [`gate::compare`] on the host copies. Bit patterns are counted on the device; a failing
    /// output is copied to the host for its statistics (and its count checked there).
    pub fn gate(&self, gpu: &Gpu, out: &DeviceBuffer) -> Result<GateResult, DeviceError> {
        let differing = self
            .util
            .count_differing(gpu, &self.device, out, &self.count)?;
        if differing == 0 {
            return Ok(gate::identical());
        }
        let result = gate::compare(&self.host, &out.to_host(&gpu.stream)?);
        if result.differing != differing {
            return Err(DeviceError::Other(format!(
                "the gate counted {differing} differing elements on the device but {} on the host",
                result.differing
            )));
        }
        Ok(result)
    }
}

/// `schedule` ready on every input set (workspace grown, operands prepared, launched in the
/// job's order) and its output on set 0 compared bit for bit with the canonical `golden`.
fn gated_runner<'a>(
    gpu: &Gpu,
    lv: &'a LoadedVariant,
    prep: &'a PrepKernel,
    schedule: &Schedule,
    job: &Job,
    inputs: &mut Inputs,
    golden: &Golden,
) -> Result<(Runner<'a>, GateResult), DeviceError> {
    let shape = job.problem.shape;
    grow_workspace(gpu, inputs, lv, schedule, &shape)?;
    let runner = Runner::new(
        gpu,
        lv,
        prep,
        schedule,
        job.problem.layout,
        &shape,
        inputs.operands(),
    )?
    .with_order(job.launch);
    launch_once(gpu, &runner, schedule, inputs)?;
    let gate = golden.gate(gpu, &inputs.c[0])?;
    Ok((runner, gate))
}

/// Reallocates the shared workspace when a schedule needs more than it holds.
fn grow_workspace(
    gpu: &Gpu,
    inputs: &mut Inputs,
    lv: &LoadedVariant,
    schedule: &Schedule,
    shape: &Shape,
) -> Result<(), DeviceError> {
    let words = schedule.workspace_words(shape, lv.resident_ctas) as usize;
    if words > inputs.workspace.len() {
        inputs.workspace = DeviceBuffer::new(&gpu.ctx, words)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_sets_exceed_the_l2_for_every_suite_shape() {
        let l2 = 60 << 20;
        for shape in [
            Shape::new(512, 512, 512),
            Shape::new(768, 768, 768),
            Shape::new(2048, 2048, 2048),
            Shape::new(128, 5376, 7168),
        ] {
            let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
            let bytes = 4 * (m * k + n * k + m * n) * input_sets(&shape, l2) as u64;
            assert!(bytes > l2, "{shape}: {bytes} B rotated");
        }
        assert_eq!(input_sets(&Shape::new(8192, 8192, 8192), l2), 1);
    }
}
