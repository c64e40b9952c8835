//! Which schedules a shape's screen times: the cost model's diverse top picks, the best
//! split-K schedule (it prices determinism) and the canonical one; and their compilation.

use super::progress;
use crate::contract::Contract;
use crate::cost_model::Ranked;
use crate::device::cache::KernelCache;
use crate::kernel_source::KernelVariant;
use crate::problem::Problem;
use crate::report::{Candidate, GateResult, Status};
use crate::schedule::{Family, Persistence, Schedule, Tile};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// Schedules that share one compiled kernel (they differ only in raster order or
/// persistence) are often predicted within a hair of each other, and so are the stage counts
/// of one tile. Benchmarking eight of them would spend the budget on one corner of the space,
/// so the picks walk the ranking and take at most one schedule per kernel configuration and
/// at most [`PER_TILE`] per (family, tile, cluster). Only schedules that keep the canonical
/// reduction order are picked: the others cannot pass the gate.
pub const PER_TILE: usize = 2;

use crate::schedule::KernelConfig;
pub use crate::schedule::{one_per_kernel, same_kernel};

pub fn pick_diverse(ranked: &[Ranked], top: usize) -> Vec<(usize, &Ranked)> {
    let mut kernels: HashSet<KernelConfig> = HashSet::new();
    let mut tiles: HashMap<(Family, Tile, u32), usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, r) in ranked.iter().enumerate() {
        let s = &r.schedule;
        if s.changes_reduction_order() {
            continue;
        }
        let per_tile = tiles.entry((s.family, s.tile, s.cluster)).or_default();
        if *per_tile < PER_TILE && kernels.insert(s.kernel_config()) {
            *per_tile += 1;
            out.push((i, r));
            if out.len() == top {
                break;
            }
        }
    }
    out
}

/// The best pick's cluster twin: the same schedule with the other cluster size (1 ↔ 2), where
/// the ranking holds it (valid for the shape); where it does not (a swizzle group that walks
/// the same order as a smaller one over the other size's tile rows is not in the space), the
/// best-ranked schedule that differs from the pick only in cluster size and swizzle group.
/// The cluster size is the cost model's largest systematic miss: 2-CTA clusters at long K and
/// few tiles measured 1.14–1.21× slower than their 1-CTA twins where the model ranked them
/// faster (896×896×14336, 12288×512×2048, 1100×1100×9000:
/// reports/2026-12-04-h200-session9-selection), while at 2500³ the cluster is 1.43× faster, as
/// predicted. Timing the twin lets the measurement decide.
pub fn cluster_twin(ranked: &[Ranked], picks: &[(usize, &Ranked)]) -> Option<usize> {
    let (_, best) = picks
        .iter()
        .find(|(_, r)| !r.schedule.changes_reduction_order())?;
    let twin = Schedule {
        cluster: if best.schedule.cluster == 1 { 2 } else { 1 },
        ..best.schedule
    };
    let i = ranked.iter().position(|r| r.schedule == twin).or_else(|| {
        ranked.iter().position(|r| {
            Schedule {
                group: twin.group,
                ..r.schedule
            } == twin
        })
    })?;
    (!picks.iter().any(|(p, _)| *p == i)).then_some(i)
}

/// Schedules of each instruction family a screen times at least (when the space has them):
/// where the model ranks one family far below the other (the wgmma family behind a padded copy
/// at K % 4 ≠ 0, priced by a transpose term never calibrated), the measurement decides.
pub const PER_FAMILY: usize = 2;

/// The screen's picks with their 0-based rank: every schedule when `exhaustive`, else the
/// diverse top `top`, topped up to [`PER_FAMILY`] diverse picks of each family; plus the best
/// split-K schedule (expected to fail the gate: it prices determinism, fastest passing against
/// fastest overall), the best ping-pong schedule, the best pick's [`cluster_twin`] and the
/// canonical schedule.
pub fn screen_picks(ranked: &[Ranked], top: usize, exhaustive: bool) -> Vec<(usize, &Ranked)> {
    let mut picks: Vec<(usize, &Ranked)> = if exhaustive {
        ranked.iter().enumerate().collect()
    } else {
        pick_diverse(ranked, top)
    };
    for family in Family::ALL {
        let index: Vec<usize> = (0..ranked.len())
            .filter(|&i| ranked[i].schedule.family == family)
            .collect();
        let of_family: Vec<Ranked> = index.iter().map(|&i| ranked[i]).collect();
        let mut have = picks
            .iter()
            .filter(|(_, r)| r.schedule.family == family)
            .count();
        for (j, _) in pick_diverse(&of_family, PER_FAMILY) {
            let i = index[j];
            if have < PER_FAMILY && !picks.iter().any(|(p, _)| *p == i) {
                picks.push((i, &ranked[i]));
                have += 1;
            }
        }
    }
    let mut add = |wanted: &dyn Fn(&Schedule) -> bool| {
        if !picks.iter().any(|(_, r)| wanted(&r.schedule))
            && let Some(p) = ranked.iter().position(|r| wanted(&r.schedule))
        {
            picks.push((p, &ranked[p]));
        }
    };
    add(&|s| s.split_k > 1);
    // Ping-pong's price rests on two shaky terms (its epilogue hidden under the other
    // warpgroup's MMAs, its second read of B) and misses at short K (2048x8192x512: predicted
    // 20% slower than the cooperative kernel, measured 1.4% faster; cost_model tests), so the
    // best one of each cluster size is timed on the side.
    add(&|s| s.persistence == Persistence::PingPong && s.cluster == 1);
    add(&|s| s.persistence == Persistence::PingPong && s.cluster > 1);
    // The retiled tail is priced from its busiest CTA alone, a narrow tile at the cost fitted
    // on four shapes of one device (about a whole tile: no gain, cost_model.rs), so the model
    // ranks it below its `pers` twin; its best one is timed on the side so that a shape where
    // the cut does pay is still found.
    add(&|s| s.persistence == Persistence::RetiledTail);
    if let Some(first) = ranked.first() {
        let canonical = Schedule::canonical(first.schedule.dtype);
        add(&|s| *s == canonical);
    }
    if !exhaustive && let Some(i) = cluster_twin(ranked, &picks) {
        picks.push((i, &ranked[i]));
    }
    picks
}

/// Kernels whose launch variants a tune screens after the first screen ([`launch_variants`]).
pub const REFINED_KERNELS: usize = 2;

/// Launch variants screened per refined kernel at most (the model's best first).
pub const VARIANTS_PER_KERNEL: usize = 20;

/// The second screen of a tune: the launch variants (raster order, swizzle group, plain,
/// persistent or chained-tail grid) of the `winners`, the fastest gate-passing kernels of
/// the first screen, that it did not time; at most [`VARIANTS_PER_KERNEL`] each, in ranking
/// order. The diverse picks take one launch variant per kernel, the model's; between the
/// variants of one kernel it resolves little (calibration sets 1-4, 35 shapes: raster
/// variants of one schedule spread a median 2.5% measured against 1.1% predicted, and the
/// model ranks second a raster 1.13x slower than the kernel's best at 3000x5000x1000), while
/// they share at most three compiled kernels (one per grid), so measuring them costs little
/// more than timing.
pub fn launch_variants<'a>(
    ranked: &'a [Ranked],
    winners: &[Schedule],
    screened: &HashSet<Schedule>,
) -> Vec<(usize, &'a Ranked)> {
    let mut out = Vec::new();
    let mut configs: Vec<KernelConfig> = vec![];
    for w in winners {
        let config = w.kernel_config();
        if configs.contains(&config) {
            continue;
        }
        configs.push(config);
        out.extend(
            ranked
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.schedule.kernel_config() == config && !screened.contains(&r.schedule)
                })
                .take(VARIANTS_PER_KERNEL),
        );
    }
    out
}

/// A candidate as the cost model ranked it (`rank` is 0-based), nothing measured yet.
pub fn candidate(rank: usize, r: &Ranked, status: Status) -> Candidate {
    Candidate {
        schedule: r.schedule,
        predicted_rank: rank as u32 + 1,
        predicted_us: r.prediction.time_us,
        predicted_dominant: r.prediction.dominant.to_string(),
        status,
        measured: None,
        gate: GateResult::not_run(),
        second_screen: false,
    }
}

/// Compiles every variant the picks need, in parallel, and returns the candidates: those
/// whose variant failed ptxas's check carry `CompileFailed`, the rest `Predicted`.
pub fn compile(
    cache: &KernelCache,
    arch: &str,
    problem: &Problem,
    contract: Contract,
    picks: &[(usize, &Ranked)],
) -> Vec<Candidate> {
    let variant = |s: &Schedule| KernelVariant::new(s, &problem.shape, contract.rounding);
    let mut variants: Vec<KernelVariant> =
        picks.iter().map(|(_, r)| variant(&r.schedule)).collect();
    variants.sort();
    variants.dedup();
    let pb = progress::bar(variants.len() as u64, "compile");
    let failures: HashMap<KernelVariant, String> = variants
        .par_iter()
        .filter_map(|v| {
            let result = crate::kernel_check::compile_clean(cache, v, arch);
            pb.inc(1);
            result.err().map(|reason| (*v, reason))
        })
        .collect();
    pb.finish_with_message(format!("{} failed", failures.len()));
    picks
        .iter()
        .map(|(rank, r)| {
            let status = match failures.get(&variant(&r.schedule)) {
                Some(reason) => Status::CompileFailed(reason.clone()),
                None => Status::Predicted,
            };
            candidate(*rank, r, status)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::cost_model::CostModel;
    use crate::schedule::{Dtype, Layout};
    use crate::shape::Shape;

    #[test]
    fn every_family_is_screened_even_where_the_model_ranks_it_last() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let model = CostModel::shipped();
        for shape in [Shape::new(1000, 1000, 1001), Shape::new(4096, 4096, 4096)] {
            let ranked = model.rank(&arch, Dtype::Tf32, Layout::Tn, &shape);
            let picks = screen_picks(&ranked, 10, false);
            for family in Family::ALL {
                let exact = picks
                    .iter()
                    .filter(|(_, r)| r.schedule.family == family)
                    .filter(|(_, r)| !r.schedule.changes_reduction_order())
                    .count();
                assert!(exact >= PER_FAMILY, "{shape}: {exact} {family:?} picks");
            }
            let mut ranks: Vec<usize> = picks.iter().map(|(i, _)| *i).collect();
            ranks.sort();
            ranks.dedup();
            assert_eq!(ranks.len(), picks.len(), "{shape}: a schedule picked twice");
        }
    }

    #[test]
    fn the_best_picks_cluster_twin_is_screened() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let model = CostModel::shipped();
        // 896x896x14336: the session-9 model's diverse top 10 were all 2-CTA clusters
        // (measured: the 1-CTA twin of its first 1.21x faster); today's first pick is a 1-CTA
        // schedule whose exact twin (group 16 over 7 cluster rows) is not in the space.
        for shape in [Shape::new(896, 896, 14336), Shape::new(4096, 4096, 4096)] {
            let ranked = model.rank(&arch, Dtype::Tf32, Layout::Tn, &shape);
            let picks = screen_picks(&ranked, 10, false);
            let first = picks
                .iter()
                .find(|(_, r)| !r.schedule.changes_reduction_order())
                .unwrap()
                .1
                .schedule;
            // The twin, or (where the ranking does not hold it) one of the other cluster size
            // that differs only in its swizzle group.
            let other = if first.cluster == 1 { 2 } else { 1 };
            let twin = |s: &Schedule| {
                *s == Schedule {
                    cluster: other,
                    group: s.group,
                    ..first
                }
            };
            assert!(
                picks.iter().any(|(_, r)| twin(&r.schedule)),
                "{shape}: {} picked, no twin of cluster size {other}",
                first.name()
            );
        }
    }

    #[test]
    fn the_second_screen_times_the_launch_variants_the_model_cannot_order() {
        let arch = Arch::by_name("sm_90a").unwrap();
        let model = CostModel::shipped();
        // 3000x5000x1000 (calibration set 1 timed again, reports/2026-12-04-h200-calibration-
        // sets12-retimed): the kernel the model ranks first, 128x232 s4 with 2 consumers, ran
        // 91.8 us in its fastest launch (row raster, group 4, persistent) and 103.6 us in the
        // launch the model ranks second; the diverse picks time one launch of it.
        let shape = Shape::new(3000, 5000, 1000);
        let ranked = model.rank(&arch, Dtype::Tf32, Layout::Tn, &shape);
        let picks = screen_picks(&ranked, 10, false);
        let screened: HashSet<Schedule> = picks.iter().map(|(_, r)| r.schedule).collect();
        let best: Schedule = "wgmma_tf32_128x232x32_s4_wg2_swz4_pers_c1_k1"
            .parse()
            .unwrap();
        assert!(!screened.contains(&best));
        let winner = picks[0].1.schedule;
        assert!(
            same_kernel(&winner, &best),
            "{} is picked first",
            winner.name()
        );
        let variants = launch_variants(&ranked, &[winner, winner], &screened);
        assert!(variants.iter().any(|(_, r)| r.schedule == best));
        let of_kernel = ranked
            .iter()
            .filter(|r| same_kernel(&r.schedule, &winner) && !screened.contains(&r.schedule))
            .count();
        assert_eq!(variants.len(), of_kernel.min(VARIANTS_PER_KERNEL));
        for (i, r) in &variants {
            assert_eq!(ranked[*i].schedule, r.schedule);
            assert!(same_kernel(&r.schedule, &winner) && !screened.contains(&r.schedule));
        }
        // Ranking order, no repeats.
        assert!(variants.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
