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
use crate::device::timing::{self, TimingConfig, time_kernel};
use crate::device::{DeviceError, Gpu};
use crate::gate::{self, POISON_BITS};
use crate::kernel_source::KernelVariant;
use crate::reference::{self, TENSOR_A, TENSOR_B};
use crate::report::{BitModelCheck, GateResult, ReferenceCheck, RegimeTimes, Status};
use crate::schedule::Schedule;
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

fn emit(event: &Event) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", event.to_line());
    let _ = out.flush();
}

pub struct Inputs {
    pub a: Vec<DeviceBuffer>,
    pub b: Vec<DeviceBuffer>,
    pub c: Vec<DeviceBuffer>,
    pub workspace: DeviceBuffer,
}

/// Test hook for the tuner's fault isolation: `FORGE_TEST_INJECT=fault:NAME,hang:NAME` makes
/// the worker run NAME on an unmapped A pointer (a real illegal-address fault that destroys the
/// CUDA context) or stall before NAME's result (the watchdog's case).
pub const INJECT_ENV: &str = "FORGE_TEST_INJECT";
const BAD_POINTER: u64 = 0x1000;

enum Injection {
    Fault,
    Hang,
}

fn injected(schedule: &Schedule) -> Option<Injection> {
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
    let (a, b) = (
        inputs.a[0].to_host(&gpu.stream)?,
        inputs.b[0].to_host(&gpu.stream)?,
    );
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
    let gpu = Gpu::open(0)?;
    let cache = KernelCache::new(std::path::Path::new(&job.cache_dir))?;
    let util = UtilKernels::load(&gpu, &cache)?;
    let cublas = Cublas::new(&gpu)?;
    let shape = job.problem.shape;
    let sets = input_sets(&shape, gpu.info.l2_bytes);
    emit(&Event::Device {
        info: gpu.info.clone(),
        cublas_version: cublas.version.clone(),
        input_sets: sets,
    });
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let mut inputs = Inputs {
        a: vec![],
        b: vec![],
        c: vec![],
        workspace: DeviceBuffer::new(&gpu.ctx, 1)?,
    };
    for set in 0..sets {
        let a = DeviceBuffer::new(&gpu.ctx, m * k)?;
        let b = DeviceBuffer::new(&gpu.ctx, n * k)?;
        util.fill_random(&gpu, &a, job.seed, set, TENSOR_A)?;
        util.fill_random(&gpu, &b, job.seed, set, TENSOR_B)?;
        inputs.a.push(a);
        inputs.b.push(b);
        inputs.c.push(DeviceBuffer::new(&gpu.ctx, m * n)?);
    }
    let mut loaded = LoadedKernels::new(job.contract.rounding);

    // The golden output C₀: the canonical schedule on input set 0.
    let canonical = Schedule::canonical(job.problem.dtype);
    let lv = loaded.load(&gpu, &cache, &canonical, &shape)?;
    let golden = run_once(&gpu, lv, &canonical, &shape, &inputs)?;
    emit(&Event::Reference {
        check: check_reference(job, &golden),
    });
    // Once per shape: the screen's worker (head-to-heads re-gate against the same golden).
    if job.head_to_head.is_none()
        && let Some(check) = check_bitmodel(&gpu, job, &inputs, &golden)?
    {
        emit(&Event::BitModel { check });
    }

    let flops = shape.flops();
    if let Some(schedule) = job.head_to_head {
        loaded.load(&gpu, &cache, &schedule, &shape)?;
        let lv = loaded.get(&schedule, &shape);
        grow_workspace(&gpu, &mut inputs, lv, &schedule, &shape)?;
        let out = run_once(&gpu, lv, &schedule, &shape, &inputs)?;
        if gate::compare(&golden, &out).verdict != crate::report::Verdict::Pass {
            return Err(DeviceError::Other(format!(
                "{schedule} no longer passes the gate"
            )));
        }
        let plans = plans(lv, &schedule, &shape, &inputs)?;
        let regimes = &job.timing.regimes;
        let (burst, sustained) = timing::head_to_head(
            &gpu,
            inputs.a.len(),
            regimes,
            &mut |s| {
                lv.launch(
                    &gpu.stream,
                    &plans[s],
                    inputs.c[s].ptr(),
                    inputs.workspace.ptr(),
                )
            },
            &mut |s| {
                cublas.gemm(
                    &shape,
                    inputs.a[s].ptr(),
                    inputs.b[s].ptr(),
                    inputs.c[s].ptr(),
                )
            },
        )?;
        emit(&Event::HeadToHead {
            schedule,
            own: measurement(&summarize(&sustained.own), flops),
            cublas: measurement(&summarize(&sustained.cublas), flops),
            rounds: regimes.sustained_rounds.max(1) as u32,
            burst: (!burst.own.is_empty()).then(|| RegimeTimes {
                own: measurement(&summarize(&burst.own), flops),
                cublas: measurement(&summarize(&burst.cublas), flops),
            }),
        });
        emit(&Event::Done);
        return Ok(());
    }
    if job.time_cublas {
        inputs.c[0].fill_bits(&gpu.stream, POISON_BITS)?;
        cublas.gemm(
            &shape,
            inputs.a[0].ptr(),
            inputs.b[0].ptr(),
            inputs.c[0].ptr(),
        )?;
        let cublas_out = inputs.c[0].to_host(&gpu.stream)?;
        let gate = gate::compare(&golden, &cublas_out);
        let reference = check_reference(job, &cublas_out);
        let (summary, _) = time_cublas(&gpu, &cublas, &shape, &inputs, &job.timing)?;
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
                grow_workspace(&gpu, &mut inputs, lv, &schedule, &shape)?;
                let out = run_once(&gpu, lv, &schedule, &shape, &inputs)?;
                let gate = gate::compare(&golden, &out);
                let plans = plans(lv, &schedule, &shape, &inputs)?;
                let (summary, _) = time_plans(&gpu, lv, &plans, &inputs, &job.timing)?;
                // The last timed launch on set 0 must still give C₀ (a chained tail depends on
                // the previous launch leaving its flags at zero).
                let after = gate::compare(&golden, &inputs.c[0].to_host(&gpu.stream)?);
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

/// One launch plan per input set (tensor maps encoded once, outside the timed region).
fn plans(
    lv: &LoadedVariant,
    schedule: &Schedule,
    shape: &Shape,
    inputs: &Inputs,
) -> Result<Vec<Prepared>, DeviceError> {
    inputs
        .a
        .iter()
        .zip(&inputs.b)
        .map(|(a, b)| lv.prepare(schedule, shape, a.ptr(), b.ptr()))
        .collect()
}

/// Times a loaded schedule, rotating over the input sets.
fn time_plans(
    gpu: &Gpu,
    lv: &LoadedVariant,
    plans: &[Prepared],
    inputs: &Inputs,
    cfg: &TimingConfig,
) -> Result<(Summary, Vec<f64>), DeviceError> {
    time_kernel(gpu, plans.len(), cfg, |s| {
        lv.launch(
            &gpu.stream,
            &plans[s],
            inputs.c[s].ptr(),
            inputs.workspace.ptr(),
        )
    })
}

/// Times cuBLAS on the same buffers and rotation.
fn time_cublas(
    gpu: &Gpu,
    cublas: &Cublas,
    shape: &Shape,
    inputs: &Inputs,
    cfg: &TimingConfig,
) -> Result<(Summary, Vec<f64>), DeviceError> {
    time_kernel(gpu, inputs.a.len(), cfg, |s| {
        cublas.gemm(
            shape,
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

/// Poisons C of set 0, runs `schedule` (loaded as `lv`) once on set 0 and returns its output.
pub fn run_once(
    gpu: &Gpu,
    lv: &LoadedVariant,
    schedule: &Schedule,
    shape: &Shape,
    inputs: &Inputs,
) -> Result<Vec<f32>, DeviceError> {
    inputs.c[0].fill_bits(&gpu.stream, POISON_BITS)?;
    if schedule.split_k > 1 {
        inputs.workspace.fill_bits(&gpu.stream, POISON_BITS)?;
    }
    let p = lv.prepare(schedule, shape, inputs.a[0].ptr(), inputs.b[0].ptr())?;
    if schedule.split_k == 1 && p.workspace_words > 0 {
        // A chained tail's flags start at zero (an earlier split-K run poisoned them).
        inputs.workspace.fill_bits(&gpu.stream, 0)?;
    }
    lv.launch(&gpu.stream, &p, inputs.c[0].ptr(), inputs.workspace.ptr())?;
    inputs.c[0].to_host(&gpu.stream)
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
