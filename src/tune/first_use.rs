//! Tuning on first use (as PyTorch's TunableOp and Triton's autotuner do): when a dispatcher
//! with the option on meets a shape its profile does not hold, it times the calibrated cost
//! model's top [`CANDIDATES`] schedules and the first one's cluster twin briefly, then, while
//! its time budget lasts, the other launch variants of the fastest ([`launch_variants`]); gates
//! each against the canonical schedule's output bit for bit, keeps the fastest that passes
//! (the canonical one when none does) and appends it to a per-device cache file that later
//! runs load. Off by default
//! ([`ENV`] = `1` or `Dispatcher::set_tune_on_first_use`); it never changes bits: every
//! schedule it may choose produced the canonical output on the same inputs.
//!
//! The cache file (JSON, [`TunedFile`]) is one per (arch, device, contract), next to the
//! kernel cache by default ([`default_path`]); concurrent processes take its lock around each
//! read-merge-write ([`crate::durable::Lock`]), so every process's entries land.
//!
//! Unlike `forge tune`, the candidates run in the calling process (a dispatcher may live in
//! a Python interpreter, with no forge worker to start): they are schedules of the same
//! kernels the tuner gates, compiled clean, but a fault would end the process.

use crate::arch::Arch;
use crate::contract::Contract;
use crate::cost_model::{CostModel, Ranked};
use crate::device::buffers::DeviceBuffer;
use crate::device::cache::KernelCache;
use crate::device::fill::UtilKernels;
use crate::device::kernel::LoadedVariant;
use crate::device::timing::{TimingConfig, time_kernel};
use crate::device::{DeviceError, Gpu};
use crate::durable::{self, Lock};
use crate::gate::POISON_BITS;
use crate::kernel_source::KernelVariant;
use crate::problem::Problem;
use crate::reference::{TENSOR_A, TENSOR_B};
use crate::report::{GateResult, Verdict};
use crate::schedule::{self, Layout, Schedule};
use crate::tune::worker::Golden;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `FORGE_TUNE_ON_FIRST_USE=1` turns the option on for every dispatcher of the process.
pub const ENV: &str = "FORGE_TUNE_ON_FIRST_USE";
/// `FORGE_TUNE_BUDGET_MS`: the most time one shape's tuning may take (default [`BUDGET_MS`]).
pub const BUDGET_ENV: &str = "FORGE_TUNE_BUDGET_MS";
/// `FORGE_TUNE_CACHE`: the cache file (default [`default_path`]).
pub const FILE_ENV: &str = "FORGE_TUNE_CACHE";
pub const BUDGET_MS: u64 = 3000;
/// Candidates timed per shape besides the canonical schedule.
pub const CANDIDATES: usize = 4;
/// Seed of the random inputs the gate and the timing use.
const SEED: u64 = 20261203;

/// Whether [`ENV`] asks for tuning on first use.
pub fn enabled_by_env() -> bool {
    std::env::var(ENV).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The time budget per shape from [`BUDGET_ENV`].
pub fn budget_from_env() -> Duration {
    let ms = std::env::var(BUDGET_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .unwrap_or(BUDGET_MS);
    Duration::from_millis(ms)
}

/// One shape tuned on first use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunedEntry {
    #[serde(flatten)]
    pub problem: Problem,
    #[serde(with = "schedule::by_name")]
    pub schedule: Schedule,
    /// Median of the chosen schedule, µs.
    pub measured_us: f64,
    /// Median of the canonical schedule, µs.
    pub canonical_us: f64,
    /// Schedules that ran and passed the gate (the canonical one included).
    pub passed: u32,
    pub date: String,
}

/// The cache file's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TunedFile {
    pub arch: String,
    pub device_name: String,
    pub contract: Contract,
    pub entries: Vec<TunedEntry>,
}

/// `<kernel cache dir>/first-use-<arch>-<device>-<contract>.json`.
pub fn default_path(
    cache_dir: &Path,
    arch: &str,
    device_name: &str,
    contract: Contract,
) -> PathBuf {
    cache_dir.join(format!(
        "first-use-{arch}-{}-{contract}.json",
        super::record::slug(device_name)
    ))
}

/// The loaded cache file of one device and contract.
#[derive(Clone, Debug)]
pub struct TunedCache {
    pub path: PathBuf,
    header: TunedFile,
    chosen: HashMap<Problem, Schedule>,
}

impl TunedCache {
    /// Loads `path` (missing: empty). A file of another arch, device or contract is an error
    /// naming both.
    pub fn open(
        path: &Path,
        arch: &str,
        device_name: &str,
        contract: Contract,
    ) -> anyhow::Result<TunedCache> {
        let header = TunedFile {
            arch: arch.into(),
            device_name: device_name.into(),
            contract,
            entries: vec![],
        };
        let mut cache = TunedCache {
            path: path.to_path_buf(),
            header,
            chosen: HashMap::new(),
        };
        if let Some(file) = cache.read()? {
            for e in file.entries {
                cache.chosen.insert(e.problem, e.schedule);
            }
        }
        Ok(cache)
    }

    fn read(&self) -> anyhow::Result<Option<TunedFile>> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.path.display())),
        };
        let file: TunedFile = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a forge first-use cache", self.path.display()))?;
        let h = &self.header;
        if (&file.arch, &file.device_name, file.contract) != (&h.arch, &h.device_name, h.contract) {
            anyhow::bail!(
                "{} holds {} / {} / {}, not {} / {} / {}",
                self.path.display(),
                file.arch,
                file.device_name,
                file.contract,
                h.arch,
                h.device_name,
                h.contract
            );
        }
        Ok(Some(file))
    }

    pub fn get(&self, problem: &Problem) -> Option<Schedule> {
        self.chosen.get(problem).copied()
    }

    pub fn len(&self) -> usize {
        self.chosen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chosen.is_empty()
    }

    /// Appends `entry` under the file's lock: re-reads the file (another process may have
    /// added entries), replaces an entry of the same problem, writes atomically; also takes in
    /// the other processes' entries.
    pub fn append(&mut self, entry: TunedEntry) -> anyhow::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let _lock = Lock::acquire(&durable::lock_path_for(&self.path), "the first-use cache")?;
        let mut file = self.read()?.unwrap_or_else(|| self.header.clone());
        file.entries.retain(|e| e.problem != entry.problem);
        file.entries.push(entry);
        crate::util::write_atomically(&self.path, &serde_json::to_vec_pretty(&file)?)
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.chosen = file
            .entries
            .iter()
            .map(|e| (e.problem, e.schedule))
            .collect();
        Ok(())
    }
}

/// The candidates: the model's diverse top [`CANDIDATES`] that keep the reduction order and
/// can run the shape, then the first one's cluster twin ([`super::picks::cluster_twin`]).
/// `runnable`: [`runnable_ranking`].
pub fn candidates(runnable: &[Ranked]) -> Vec<Schedule> {
    let picks = super::picks::pick_diverse(runnable, CANDIDATES);
    let twin = super::picks::cluster_twin(runnable, &picks);
    picks
        .iter()
        .map(|(_, r)| r.schedule)
        .chain(twin.map(|i| runnable[i].schedule))
        .collect()
}

/// The launch variants of `fastest` (raster order, swizzle group, plain or persistent) not in
/// `tried`, in ranking order: the tuner's second screen ([`super::picks::launch_variants`]).
pub fn launch_variants(
    runnable: &[Ranked],
    fastest: Schedule,
    tried: &[Schedule],
) -> Vec<Schedule> {
    let tried: HashSet<Schedule> = tried.iter().copied().collect();
    super::picks::launch_variants(runnable, &[fastest], &tried)
        .into_iter()
        .map(|(_, r)| r.schedule)
        .collect()
}

/// The model's ranking of the schedules that run the problem in place (ranked once per tuning:
/// the candidates and the launch variants both come from it).
pub fn runnable_ranking(arch: &Arch, problem: &Problem) -> Vec<Ranked> {
    CostModel::shipped_ref()
        .rank(arch, problem.dtype, problem.layout, &problem.shape)
        .into_iter()
        .filter(|r| reads_in_place(&r.schedule, &problem.shape))
        .collect()
}

/// Whether `schedule` reads `shape`'s TN operands where they are, with no preparation pass
/// (this tuner launches kernels directly; the dispatcher would pad rows a TMA schedule cannot
/// read in place).
fn reads_in_place(schedule: &Schedule, shape: &crate::shape::Shape) -> bool {
    crate::operand_prep::PrepPlan::new(schedule, Layout::Tn, shape, 0, 0).is_empty()
}

/// Brief timing: a few ms per schedule.
fn timing() -> TimingConfig {
    TimingConfig {
        warmup_ms: 3.0,
        batch_us: 200.0,
        min_samples: 5,
        max_samples: 15,
        target_half_width: 0.02,
        max_seconds: 0.03,
        ..TimingConfig::default()
    }
}

/// Tunes one problem on `gpu` within about `budget` (the canonical schedule is always run;
/// candidates start only while time is left). Uses its own random inputs and buffers.
pub fn tune(
    gpu: &Gpu,
    cache: &KernelCache,
    contract: Contract,
    arch: &Arch,
    problem: &Problem,
    budget: Duration,
) -> Result<TunedEntry, DeviceError> {
    let start = Instant::now();
    let shape = problem.shape;
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let util = UtilKernels::load(gpu, cache)?;
    let a = DeviceBuffer::new(&gpu.ctx, m * k)?;
    let b = DeviceBuffer::new(&gpu.ctx, n * k)?;
    let c = DeviceBuffer::new(&gpu.ctx, m * n)?;
    util.fill_random(gpu, &a, SEED, 0, TENSOR_A)?;
    util.fill_random(gpu, &b, SEED, 0, TENSOR_B)?;
    let mut workspace = DeviceBuffer::new(&gpu.ctx, 1)?;
    // Runs `s` once on (a, b), gates that output against `golden` on the device (where
    // given) and times `s` (where asked); returns (the first output's gate, median µs).
    let mut run = |s: &Schedule,
                   golden: Option<&Golden>,
                   time: bool|
     -> Result<(Option<GateResult>, f64), DeviceError> {
        let v = KernelVariant::new(s, &shape, contract.rounding);
        let compiled = cache.get_or_compile(&v.label(), &v.source(), &gpu.info.arch)?;
        let lv = LoadedVariant::load(gpu, v, &compiled)?;
        let p = lv.prepare(s, &shape, a.ptr(), b.ptr())?;
        if p.workspace_words as usize > workspace.len() {
            workspace = DeviceBuffer::new(&gpu.ctx, p.workspace_words as usize)?;
        }
        if p.workspace_words > 0 {
            workspace.fill_bits(&gpu.stream, 0)?;
        }
        c.fill_bits(&gpu.stream, POISON_BITS)?;
        lv.launch(&gpu.stream, &p, c.ptr(), workspace.ptr())?;
        let gate = golden.map(|g| g.gate(gpu, &c)).transpose()?;
        let us = if time {
            time_kernel(gpu, 1, &timing(), |_| {
                lv.launch(&gpu.stream, &p, c.ptr(), workspace.ptr())
            })?
            .0
            .median
        } else {
            f64::NAN
        };
        Ok((gate, us))
    };
    let canonical = Schedule::canonical(problem.dtype);
    run(&canonical, None, false)?;
    let golden = Golden::new(gpu, &util, c.to_host(&gpu.stream)?)?;
    let (again, canonical_us) = run(&canonical, Some(&golden), true)?;
    if again.is_none_or(|g| g.verdict != Verdict::Pass) {
        return Err(DeviceError::Other(format!(
            "{canonical} gave different bits on a second run of {shape}"
        )));
    }
    let mut best = (canonical, canonical_us);
    let mut passed = 1;
    let runnable = runnable_ranking(arch, problem);
    let mut queue = candidates(&runnable);
    let mut refined = false;
    let mut next = 0;
    loop {
        if next == queue.len() {
            // The first candidates done: the fastest one's other launch variants, once.
            if refined || best.0 == canonical {
                break;
            }
            refined = true;
            let more = launch_variants(&runnable, best.0, &queue);
            if more.is_empty() {
                break;
            }
            queue.extend(more);
        }
        let s = queue[next];
        next += 1;
        if start.elapsed() >= budget {
            break;
        }
        // A candidate that fails to compile or launch is skipped; a fault surfaces at the
        // next synchronization and ends the tuning with an error.
        let Ok((first, us)) = run(&s, Some(&golden), true) else {
            gpu.stream.synchronize()?;
            continue;
        };
        // The last timed launch must still give the golden bits too.
        if first.is_some_and(|g| g.verdict == Verdict::Pass)
            && golden.gate(gpu, &c)?.verdict == Verdict::Pass
        {
            passed += 1;
            if us < best.1 {
                best = (s, us);
            }
        }
    }
    Ok(TunedEntry {
        problem: *problem,
        schedule: best.0,
        measured_us: best.1,
        canonical_us,
        passed,
        date: crate::util::now_rfc3339(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Dtype, Layout};
    use crate::shape::Shape;

    fn entry(shape: Shape, schedule: &str) -> TunedEntry {
        TunedEntry {
            problem: Problem::new(Dtype::Tf32, Layout::Tn, shape),
            schedule: schedule.parse().unwrap(),
            measured_us: 10.0,
            canonical_us: 30.0,
            passed: 3,
            date: "2026-12-03T00:00:00Z".into(),
        }
    }

    #[test]
    fn entries_persist_merge_across_processes_and_stay_per_device() {
        let dir = std::env::temp_dir().join(format!("forge-first-use-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let contract = Contract::default();
        let path = default_path(&dir, "sm_90a", "NVIDIA H200", contract);
        assert!(
            path.ends_with("first-use-sm_90a-h200-tf32-rne-k8-inorder.json"),
            "{path:?}"
        );
        let mut one = TunedCache::open(&path, "sm_90a", "NVIDIA H200", contract).unwrap();
        assert!(one.is_empty());
        // A second "process" opened before the first appends.
        let mut two = TunedCache::open(&path, "sm_90a", "NVIDIA H200", contract).unwrap();
        let a = entry(
            Shape::new(1000, 2000, 3000),
            "wgmma_tf32_128x128x32_s4_wg2_swz8_np_c1_k1",
        );
        let b = entry(
            Shape::new(64, 64, 64),
            "wgmma_tf32_64x64x32_s6_wg1_swz1_np_c1_k1",
        );
        one.append(a.clone()).unwrap();
        two.append(b.clone()).unwrap();
        assert_eq!(
            two.len(),
            2,
            "the second writer keeps the first one's entry"
        );
        let later = TunedCache::open(&path, "sm_90a", "NVIDIA H200", contract).unwrap();
        assert_eq!(later.get(&a.problem), Some(a.schedule));
        assert_eq!(later.get(&b.problem), Some(b.schedule));
        // Re-tuning a problem replaces its entry.
        let a2 = entry(
            a.problem.shape,
            "wgmma_tf32_128x256x32_s4_wg2_swz8_np_c1_k1",
        );
        one.append(a2.clone()).unwrap();
        let later = TunedCache::open(&path, "sm_90a", "NVIDIA H200", contract).unwrap();
        assert_eq!((later.len(), later.get(&a.problem)), (2, Some(a2.schedule)));
        // Another device's (or contract's) file is refused, naming both.
        let err = TunedCache::open(&path, "sm_90a", "NVIDIA H100", contract).unwrap_err();
        assert!(format!("{err:#}").contains("H100"), "{err:#}");
        std::fs::write(&path, "{").unwrap();
        assert!(TunedCache::open(&path, "sm_90a", "NVIDIA H200", contract).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn candidates_are_the_models_gateable_top_four_that_can_run_the_shape() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let p = Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(3000, 5000, 1000));
        let c = candidates(&runnable_ranking(&arch, &p));
        assert!((CANDIDATES..=CANDIDATES + 1).contains(&c.len()), "{c:?}");
        assert!(c.iter().all(|s| !s.changes_reduction_order()));
        // K odd: only mma_sync schedules can run it.
        let ragged = Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(257, 513, 1025));
        let c = candidates(&runnable_ranking(&arch, &ragged));
        assert!(!c.is_empty());
        assert!(c.iter().all(|s| reads_in_place(s, &ragged.shape)), "{c:?}");
    }

    #[test]
    fn the_option_is_off_unless_asked_for() {
        // (Reads the variable only; the test process does not set it.)
        if std::env::var_os(ENV).is_none() {
            assert!(!enabled_by_env());
        }
        assert!(budget_from_env() >= Duration::from_millis(1));
    }

    #[test]
    fn the_fastest_candidates_launch_variants_come_after_the_candidates() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let problem = Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(3000, 5000, 1000));
        let runnable = runnable_ranking(&arch, &problem);
        let first = candidates(&runnable);
        let fastest = first[1];
        let more = launch_variants(&runnable, fastest, &first);
        assert!(!more.is_empty());
        assert!(more.len() <= super::super::picks::VARIANTS_PER_KERNEL);
        for s in &more {
            assert!(!first.contains(s), "{} tried twice", s.name());
            assert!(
                super::super::picks::same_kernel(s, &fastest),
                "{}",
                s.name()
            );
            assert!(reads_in_place(s, &problem.shape));
        }
    }
}
