//! `forge launch` (hidden, for `tests/device/sanitize.sh`): one schedule on one shape in a
//! process of its own: open the GPU, fill the inputs from the seed, run the schedule once and
//! compare its output bit for bit with the canonical schedule's, print one line. One process
//! per (schedule, shape), so a sanitizer's findings name both. `--plan PROFILE` prints the
//! (schedule, shape) pairs the sanitizer script runs for a profile.

use super::worker::{LoadedKernels, Runner, fill_inputs, run_once};
use crate::arch::Arch;
use crate::contract::Contract;
use crate::device::Gpu;
use crate::device::buffers::DeviceBuffer;
use crate::device::cache::KernelCache;
use crate::device::fill::UtilKernels;
use crate::device::prep::PrepKernel;
use crate::durable::FsError;
use crate::gate;
use crate::problem::Problem;
use crate::profile::Profile;
use crate::report::Verdict;
use crate::schedule::{Family, Layout, Schedule};
use crate::shape::Shape;
use crate::space;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// The ragged shapes every schedule is run on besides its smallest valid one: K % 4 == 0
/// (rows a TMA schedule reads in place) and an odd K (which mma_sync reads in place and a TMA
/// schedule reads from a padded copy).
pub const RAGGED: Shape = Shape::new(1000, 1000, 1000);
pub const RAGGED_TMA: Shape = Shape::new(257, 513, 1028);
pub const RAGGED_ANY_K: Shape = Shape::new(257, 513, 1025);

/// Whether a shape is one of the fixed ragged shapes.
pub fn is_ragged(shape: &Shape) -> bool {
    [RAGGED, RAGGED_TMA, RAGGED_ANY_K].contains(shape)
}

/// Whether `schedule` computes `shape` correctly on `arch`: valid there, or rejected only by
/// a rule that prunes wasteful schedules (as the profile's nearest-shape rule ignores them).
pub fn launchable(arch: &Arch, schedule: &Schedule, shape: &Shape) -> Result<(), String> {
    if schedule.changes_reduction_order() {
        return Err(format!(
            "{schedule} splits K: it is not bit-exact, so it is not compared"
        ));
    }
    match space::runnable(arch, schedule, shape) {
        Ok(()) => Ok(()),
        Err(reason) => Err(format!(
            "{schedule} cannot run {shape} on {}: {reason}",
            arch.name
        )),
    }
}

/// The smallest shape (fewest flops) that exercises every feature of `schedule` on `arch`:
/// valid in full (so a chained tail has a partial wave to cut, a swizzle group has tiles to
/// group, a cluster has rows), at least 2 tiles each way, at least two trips around the
/// shared-memory pipeline (K tiles ≥ 2 × stages), and for a persistent schedule at least two
/// tiles per CTA of a full grid.
pub fn small_shape(arch: &Arch, schedule: &Schedule) -> Option<Shape> {
    let dims: Vec<u32> = (1..=128).map(|i| 64 * i).collect();
    let ks = [64, 128, 256, 512, 1024, 2048];
    let exercises = |shape: &Shape| {
        let g = schedule.work_grid(shape);
        g.tiles_m >= 2
            && g.tiles_n >= 2
            && g.k_tiles >= 2 * schedule.stages as u64
            && (!schedule.persistence.is_persistent() || g.tiles >= 2 * arch.sm_count as u64)
            && space::check(arch, schedule, shape).is_ok()
    };
    let mut best: Option<Shape> = None;
    for &m in &dims {
        for &n in &dims {
            for &k in &ks {
                let shape = Shape::new(m, n, k);
                if best.is_none_or(|b| shape.flops() < b.flops()) && exercises(&shape) {
                    best = Some(shape);
                }
            }
        }
    }
    best
}

/// The (schedule, shape) pairs for a profile: its canonical schedule and every chosen
/// schedule (and runner-up, with `runners_up`), each on its [`small_shape`] and on the
/// ragged shapes it can run.
pub fn plan(profile: &Profile, runners_up: bool) -> Vec<(Schedule, Shape)> {
    let canonical = profile
        .meta
        .canonical_schedule
        .parse::<Schedule>()
        .expect("a loaded profile's canonical schedule parses");
    let mut schedules = vec![canonical];
    for e in &profile.entries {
        let names = std::iter::once(&e.schedule).chain(e.runners_up.iter().take(if runners_up {
            usize::MAX
        } else {
            0
        }));
        for name in names {
            let s: Schedule = name.parse().expect("a loaded profile's schedules parse");
            if !schedules.contains(&s) {
                schedules.push(s);
            }
        }
    }
    let arch = profile.arch();
    let mut out = vec![];
    for s in schedules {
        let ragged: &[Shape] = match s.family {
            Family::Wgmma => &[RAGGED, RAGGED_TMA, RAGGED_ANY_K],
            Family::MmaSync => &[RAGGED, RAGGED_ANY_K],
        };
        let mut shapes: Vec<Shape> = small_shape(arch, &s).into_iter().collect();
        for &r in ragged {
            if !shapes.contains(&r) && launchable(arch, &s, &r).is_ok() {
                shapes.push(r);
            }
        }
        out.extend(shapes.into_iter().map(|shape| (s, shape)));
    }
    out
}

/// What `forge launch` was asked to do.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    pub schedule: Schedule,
    pub shape: Shape,
    /// The numerical contract the kernels are compiled for.
    pub contract: Contract,
    pub seed: u64,
    pub cache_dir: PathBuf,
    /// The canonical output for (shape, seed): read from this file when it exists (so a
    /// sanitizer sees only the schedule's kernel), else computed and written there.
    pub golden: Option<PathBuf>,
}

fn read_golden(path: &Path, elements: usize) -> anyhow::Result<Option<Vec<f32>>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(FsError::new("read", path, e).into()),
    };
    if bytes.len() != 4 * elements {
        bail!(
            "golden output {} holds {} bytes, not the {} of this shape",
            path.display(),
            bytes.len(),
            4 * elements
        );
    }
    Ok(Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    ))
}

/// Runs the launch; returns the line to print and whether the bits equal the canonical ones.
pub fn run(opts: &LaunchOptions) -> anyhow::Result<(String, bool)> {
    let (schedule, shape) = (opts.schedule, opts.shape);
    if !schedule.dtype.has_kernels() {
        bail!("no {} kernel is implemented", schedule.dtype);
    }
    let gpu = Gpu::open(0)?;
    let arch = gpu.info.arch()?;
    launchable(&arch, &schedule, &shape).map_err(anyhow::Error::msg)?;
    let cache = KernelCache::new(&opts.cache_dir)?;
    let util = UtilKernels::load(&gpu, &cache)?;
    let prep = PrepKernel::load(&gpu, &cache)?;
    let problem = Problem::new(schedule.dtype, Layout::Tn, shape);
    let mut inputs = fill_inputs(&gpu, &util, &prep, &problem, opts.seed, 1)?;
    let mut loaded = LoadedKernels::new(opts.contract.rounding);
    let canonical = Schedule::canonical(schedule.dtype);
    let golden = match opts
        .golden
        .as_deref()
        .map(|p| read_golden(p, shape.m as usize * shape.n as usize))
        .transpose()?
        .flatten()
    {
        Some(g) => g,
        None => {
            let lv = loaded.load(&gpu, &cache, &canonical, &shape)?;
            let runner = Runner::new(
                &gpu,
                lv,
                &prep,
                &canonical,
                Layout::Tn,
                &shape,
                inputs.operands(),
            )?;
            let g = run_once(&gpu, &runner, &canonical, &inputs)?;
            if let Some(path) = &opts.golden {
                let bytes: Vec<u8> = g.iter().flat_map(|v| v.to_le_bytes()).collect();
                crate::util::write_atomically(path, &bytes)
                    .map_err(|e| FsError::new("write", path, e))?;
            }
            g
        }
    };
    loaded.load(&gpu, &cache, &schedule, &shape)?;
    let lv = loaded.get(&schedule, &shape);
    let words = schedule.workspace_words(&shape, lv.resident_ctas) as usize;
    if words > inputs.workspace.len() {
        inputs.workspace = DeviceBuffer::new(&gpu.ctx, words)?;
    }
    let out = Runner::new(
        &gpu,
        lv,
        &prep,
        &schedule,
        Layout::Tn,
        &shape,
        inputs.operands(),
    )
    .and_then(|runner| run_once(&gpu, &runner, &schedule, &inputs))
    .with_context(|| format!("running {schedule} on {shape}"))?;
    let g = gate::compare(&golden, &out);
    let head = format!(
        "launch {schedule} {shape} {} seed {}",
        opts.contract, opts.seed
    );
    Ok(if g.verdict == Verdict::Pass {
        (
            format!(
                "{head}: PASS: bit-identical to {canonical} ({} elements)",
                out.len()
            ),
            true,
        )
    } else {
        (
            format!(
                "{head}: FAIL: {} of {} elements differ from {canonical} (rel_rms {:e})",
                g.differing,
                out.len(),
                g.rel_rms
            ),
            false,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_profile_plans_small_and_ragged_shapes() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/sm_90a-h200.toml");
        let p = Profile::load(&path).unwrap();
        let plan = plan(&p, false);
        let canonical = Schedule::canonical(crate::schedule::Dtype::Tf32);
        assert_eq!(plan[0].0, canonical);
        assert!(plan.contains(&(canonical, RAGGED_ANY_K)));
        for e in &p.entries {
            let s: Schedule = e.schedule.parse().unwrap();
            let shapes: Vec<Shape> = plan
                .iter()
                .filter(|(x, _)| *x == s)
                .map(|(_, sh)| *sh)
                .collect();
            assert!(shapes.len() >= 2, "{s}: {shapes:?}");
            assert!(!is_ragged(&shapes[0]), "{s}: no small shape");
            // The small shape is valid in full, and small.
            assert!(space::check(p.arch(), &s, &shapes[0]).is_ok());
            assert!(shapes[0].flops() <= 2e11, "{s}: {}", shapes[0]);
            for sh in &shapes {
                assert!(launchable(p.arch(), &s, sh).is_ok(), "{s} {sh}");
            }
        }
        // A split-K schedule is never launched for comparison.
        let split: Schedule = "mma_sync_tf32_128x128x32_s3_w8_swz1_np_c1_k2"
            .parse()
            .unwrap();
        assert!(launchable(p.arch(), &split, &RAGGED).is_err());
        // A TMA schedule runs an odd K from a padded copy.
        let tma: Schedule = p.entries[0].schedule.parse().unwrap();
        assert_eq!(tma.family, Family::Wgmma);
        assert!(plan.contains(&(tma, RAGGED_ANY_K)));
    }
}
