//! Static check of every kernel variant: compile through NVRTC for an architecture and
//! require ptxas to report no spills and no warnings (serialized wgmma C7510/C7515, ignored
//! setmaxnreg C7508, …). Runs on a CPU machine; the runtime measurement still decides speed.
//! Every variant is checked for every [`Rounding`] (the rounding pass changes the code).

use crate::arch::Arch;
use crate::contract::Rounding;
use crate::device::cache::{self, KernelCache};
use crate::device::nvrtc::{Compiled, PtxasReport};
use crate::kernel_source::{GEMM_ENTRY, KernelVariant};
use crate::schedule::{Dtype, Schedule};
use crate::shape::Shape;
use crate::space;
use rayon::prelude::*;

/// Shapes whose valid schedules cover every variant: aligned (16-byte rows) and ragged.
pub const COVER_SHAPES: [Shape; 2] = [Shape::new(8192, 8192, 8192), Shape::new(8191, 8191, 8191)];

pub struct CheckReport {
    pub total: usize,
    pub clean: usize,
    /// One line per variant: label, registers, spills.
    pub lines: Vec<String>,
    /// Variants that failed to compile or were not clean, with the reason.
    pub failed: Vec<String>,
}

/// Every distinct variant of the space valid on `arch`, for every rounding. Schedules the
/// search prunes but the kernel runs ([`space::runnable`]: a chained or retiled tail with no
/// tail to cut at these shapes) count too, so that every tail variant is compiled.
pub fn variants(arch: &Arch) -> Vec<KernelVariant> {
    let mut out: Vec<KernelVariant> = COVER_SHAPES
        .iter()
        .flat_map(|shape| {
            space::all_schedules(Dtype::Tf32)
                .into_iter()
                .filter(|s| space::runnable(arch, s, shape).is_ok())
                .flat_map(move |s| {
                    Rounding::ALL
                        .into_iter()
                        .map(move |r| KernelVariant::new(&s, shape, r))
                })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The variants CI compiles: every variant of the tiles both families share
/// ([`space::TILES`]), and of each other (fine-width) tile, per combination of everything
/// but the stage count, the deepest pipeline only. The stage count changes constants (ring
/// size, shared-memory offsets), not the code's shape, and the fine-width tiles hold most of
/// the variants (this keeps 2304 of 4096 on sm_90a, 78 of the 174 retiled-tail ones, session
/// 14; `forge check-kernels` compiles all). The tuner still compiles every candidate through
/// [`compile_clean`] and drops one ptxas does not pass.
pub fn representative_variants(arch: &Arch) -> Vec<KernelVariant> {
    let all = variants(arch);
    let everything_but_stages = |v: &KernelVariant| KernelVariant { stages: 0, ..*v };
    let mut deepest: std::collections::HashMap<KernelVariant, u32> = Default::default();
    for v in &all {
        let d = deepest.entry(everything_but_stages(v)).or_insert(0);
        *d = (*d).max(v.stages);
    }
    all.into_iter()
        .filter(|v| {
            space::TILES.contains(&(v.tile.bm, v.tile.bn))
                || deepest[&everything_but_stages(v)] == v.stages
        })
        .collect()
}

/// Compiles (or reads from the cache) one variant and accepts it only if ptxas reports no
/// spills and no warnings. The tuner and [`check_all`] both decide with this.
pub fn compile_clean(
    cache: &KernelCache,
    variant: &KernelVariant,
    arch: &str,
) -> Result<PtxasReport, String> {
    let (_, p) = compile_with_report(cache, variant, arch)?;
    if p.clean() {
        Ok(p)
    } else {
        Err(format!("ptxas: {}", p.summary()))
    }
}

/// Compiles (or reads from the cache) one variant: its cubin and ptxas's report on the GEMM
/// entry, clean or not. Err only when NVRTC fails.
pub fn compile_with_report(
    cache: &KernelCache,
    variant: &KernelVariant,
    arch: &str,
) -> Result<(Compiled, PtxasReport), String> {
    let compiled = cache
        .get_or_compile(&variant.label(), &variant.source(), arch)
        .map_err(|e| e.to_string())?;
    let report = PtxasReport::parse(&compiled.log, GEMM_ENTRY);
    Ok((compiled, report))
}

/// The kernel variant of each named schedule (rows 16-byte aligned, as at `COVER_SHAPES[0]`)
/// under `rounding`; an error names the first name that is not a schedule of the space.
pub fn named_variants(
    names: &[String],
    rounding: Rounding,
) -> anyhow::Result<Vec<(Schedule, KernelVariant)>> {
    names
        .iter()
        .map(|name| {
            let s: Schedule = name.trim().parse()?;
            if !space::all_schedules(s.dtype).contains(&s) {
                anyhow::bail!("{name} is a schedule name but not a schedule of forge's space");
            }
            Ok((s, KernelVariant::new(&s, &COVER_SHAPES[0], rounding)))
        })
        .collect()
}

pub fn check_all(arch: &Arch) -> anyhow::Result<CheckReport> {
    check_matching(arch, |_| true)
}

/// [`check_all`] over [`representative_variants`] (CI's static check).
pub fn check_representative(arch: &Arch) -> anyhow::Result<CheckReport> {
    check_list(arch, representative_variants(arch))
}

/// [`check_all`] restricted to the variants `keep` accepts (kernel development).
pub fn check_matching(
    arch: &Arch,
    keep: impl Fn(&KernelVariant) -> bool,
) -> anyhow::Result<CheckReport> {
    check_list(
        arch,
        variants(arch).into_iter().filter(|v| keep(v)).collect(),
    )
}

fn check_list(arch: &Arch, vs: Vec<KernelVariant>) -> anyhow::Result<CheckReport> {
    let cache = KernelCache::new(&cache::default_dir())?;
    let results: Vec<(String, Result<PtxasReport, String>)> = vs
        .par_iter()
        .map(|v| (v.label(), compile_clean(&cache, v, &arch.name)))
        .collect();
    let mut report = CheckReport {
        total: results.len(),
        clean: 0,
        lines: vec![],
        failed: vec![],
    };
    for (label, r) in results {
        match r {
            Ok(p) => {
                report.clean += 1;
                report
                    .lines
                    .push(format!("{label:<52} {:>3} regs, 0 spills", p.registers));
            }
            Err(e) => report.failed.push(format!("{label}: {e}")),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_comes_in_both_roundings() {
        let arch = Arch::by_name("sm_90a").unwrap();
        for vs in [variants(&arch), representative_variants(&arch)] {
            for r in Rounding::ALL {
                let n = vs.iter().filter(|v| v.rounding == r).count();
                assert_eq!(2 * n, vs.len(), "{r}");
            }
        }
    }

    /// CI's sample keeps every variant of the shared tiles, and of every other tile each
    /// combination of the rest at its deepest pipeline (and nothing shallower).
    #[test]
    fn representative_variants_cover_every_combination() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let all = variants(&arch);
        let sampled = representative_variants(&arch);
        let key = |v: &KernelVariant| KernelVariant { stages: 0, ..*v };
        let keys = |vs: &[KernelVariant]| {
            let mut k: Vec<KernelVariant> = vs.iter().map(key).collect();
            k.sort();
            k.dedup();
            k
        };
        assert_eq!(keys(&all), keys(&sampled));
        for v in &all {
            let shared = space::TILES.contains(&(v.tile.bm, v.tile.bn));
            let deepest = all
                .iter()
                .filter(|w| key(w) == key(v))
                .map(|w| w.stages)
                .max()
                .unwrap();
            assert_eq!(
                sampled.contains(v),
                shared || v.stages == deepest,
                "{}",
                v.label()
            );
        }
        assert!(sampled.len() < all.len());
    }

    /// Kernel development: `FORGE_CHECK_FILTER=128x256x32_s4 cargo test --release
    /// check_filtered -- --ignored --nocapture` compiles the variants whose label contains
    /// every comma-separated part of the filter, and prints ptxas's numbers.
    #[test]
    #[ignore]
    fn check_filtered() {
        let filter = std::env::var("FORGE_CHECK_FILTER").unwrap_or_default();
        let parts: Vec<&str> = filter.split(',').filter(|p| !p.is_empty()).collect();
        let arch =
            Arch::by_name(&std::env::var("FORGE_CHECK_ARCH").unwrap_or("sm_90a".into())).unwrap();
        let report = check_matching(&arch, |v| {
            let l = v.label();
            parts.iter().all(|p| l.contains(p))
        })
        .unwrap();
        for line in &report.lines {
            println!("{line}");
        }
        println!("{} of {} clean", report.clean, report.total);
        assert!(report.failed.is_empty(), "{}", report.failed.join("\n"));
    }
}
