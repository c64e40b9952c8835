//! Which schedules a calibration times per shape: the cost model's top picks (where the
//! model's choice is made, so its errors there matter most), a stratified random sample of the
//! rest of the valid space (so the fit sees every tile, stage count, cluster, persistence and
//! raster, not only what the current constants like), the schedules a profile already holds
//! (the candidates of profile selection, see `Profile::select`), and the canonical schedule.
//! Only schedules that keep the canonical reduction order are drawn: split-K cannot pass the
//! gate, so no selection ever runs it.

use crate::cost_model::Ranked;
use crate::schedule::{Family, Schedule, Tile};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// Why a schedule is in a shape's calibration set (the first reason that applied).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Among the model's top picks (`CalibrationPlan::top`).
    Top,
    /// Drawn by the stratified sample.
    Sample,
    /// An entry or runner-up of the profile given with `--profile`, or a schedule of the
    /// `--schedules` list.
    Profile,
    /// The canonical schedule.
    Canonical,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Top => "top",
            Origin::Sample => "sample",
            Origin::Profile => "profile",
            Origin::Canonical => "canonical",
        }
    }
}

/// How many schedules to draw per shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalibrationPlan {
    /// The model's best `top` gate-able schedules.
    pub top: usize,
    /// Schedules drawn from the rest, spread over the strata.
    pub sample: usize,
    pub seed: u64,
}

/// splitmix64: a small, seedable, portable generator (the draw must be reproducible from the
/// seed alone, on any machine).
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n ≥ 1).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// The stratum of a schedule: family and tile (each stratum then spreads its draws over
/// stages, workers, cluster, persistence, raster and group by the random order).
fn stratum(s: &Schedule) -> (Family, Tile) {
    (s.family, s.tile)
}

/// The schedules to time for one shape, with why each is there, in a fixed order: top picks
/// in rank order, then the sample, then `extra` (profile schedules valid here), then the
/// canonical. `ranked` is the model's ranking of the valid space for the shape.
pub fn draw(
    ranked: &[Ranked],
    plan: &CalibrationPlan,
    extra: &[Schedule],
    canonical: Schedule,
    shape_seed: u64,
) -> Vec<(Schedule, Origin)> {
    let exact: Vec<Schedule> = ranked
        .iter()
        .map(|r| r.schedule)
        .filter(|s| !s.changes_reduction_order())
        .collect();
    let mut seen: HashSet<Schedule> = HashSet::new();
    let mut out = Vec::new();
    for s in exact.iter().take(plan.top) {
        seen.insert(*s);
        out.push((*s, Origin::Top));
    }
    // Strata in a fixed order, each shuffled; then round-robin over the strata in a shuffled
    // order until the sample is full, so small strata are exhausted and large ones share the
    // rest evenly.
    let mut rng = SplitMix::new(plan.seed ^ shape_seed.wrapping_mul(0xA24B_AED4_963E_E407));
    let mut strata: BTreeMap<(Family, Tile), Vec<Schedule>> = BTreeMap::new();
    for s in exact.iter().filter(|s| !seen.contains(*s)) {
        strata.entry(stratum(s)).or_default().push(*s);
    }
    let mut pools: Vec<Vec<Schedule>> = strata.into_values().collect();
    for p in pools.iter_mut() {
        rng.shuffle(p);
    }
    rng.shuffle(&mut pools);
    let mut drawn = 0;
    while drawn < plan.sample && pools.iter().any(|p| !p.is_empty()) {
        for p in pools.iter_mut() {
            if drawn == plan.sample {
                break;
            }
            if let Some(s) = p.pop() {
                seen.insert(s);
                out.push((s, Origin::Sample));
                drawn += 1;
            }
        }
    }
    for s in extra {
        if !s.changes_reduction_order() && seen.insert(*s) {
            out.push((*s, Origin::Profile));
        }
    }
    if seen.insert(canonical) {
        out.push((canonical, Origin::Canonical));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::cost_model::CostModel;
    use crate::schedule::{Dtype, Layout};
    use crate::shape::Shape;

    fn ranked(shape: Shape) -> Vec<Ranked> {
        let arch = Arch::by_name("sm_90a").unwrap();
        CostModel::shipped().rank(&arch, Dtype::Tf32, Layout::Tn, &shape)
    }

    #[test]
    fn the_draw_is_reproducible_spread_and_gateable() {
        let shape = Shape::new(2048, 2048, 2048);
        let r = ranked(shape);
        let plan = CalibrationPlan {
            top: 10,
            sample: 60,
            seed: 7,
        };
        let canonical = Schedule::canonical(Dtype::Tf32);
        let a = draw(&r, &plan, &[], canonical, 1);
        assert_eq!(a, draw(&r, &plan, &[], canonical, 1));
        assert_ne!(a, draw(&r, &plan, &[], canonical, 2));
        assert_eq!(a.iter().filter(|(_, o)| *o == Origin::Top).count(), 10);
        assert_eq!(a.iter().filter(|(_, o)| *o == Origin::Sample).count(), 60);
        assert!(a.iter().all(|(s, _)| !s.changes_reduction_order()));
        let distinct: HashSet<_> = a.iter().map(|(s, _)| *s).collect();
        assert_eq!(distinct.len(), a.len());
        // Every (family, tile) stratum of the valid space is represented by the sample.
        let strata: HashSet<_> = r
            .iter()
            .filter(|x| !x.schedule.changes_reduction_order())
            .map(|x| stratum(&x.schedule))
            .collect();
        let sampled: HashSet<_> = a
            .iter()
            .filter(|(_, o)| *o == Origin::Sample)
            .map(|(s, _)| stratum(s))
            .collect();
        assert_eq!(sampled, strata);
        // Top picks come first, in the model's order.
        let top: Vec<Schedule> = r
            .iter()
            .map(|x| x.schedule)
            .filter(|s| !s.changes_reduction_order())
            .take(10)
            .collect();
        let got: Vec<Schedule> = a.iter().take(10).map(|(s, _)| *s).collect();
        assert_eq!(got, top);
    }

    #[test]
    fn profile_schedules_and_the_canonical_are_added_once() {
        let shape = Shape::new(1024, 1024, 1024);
        let r = ranked(shape);
        let plan = CalibrationPlan {
            top: 3,
            sample: 0,
            seed: 1,
        };
        let canonical = Schedule::canonical(Dtype::Tf32);
        let first = r
            .iter()
            .find(|x| !x.schedule.changes_reduction_order())
            .unwrap()
            .schedule;
        let extra: Schedule = "wgmma_tf32_64x64x32_s6_wg1_swz1_np_c1_k1".parse().unwrap();
        let a = draw(&r, &plan, &[first, extra, extra], canonical, 0);
        assert_eq!(a.len(), 5, "{a:?}");
        assert_eq!(a[3], (extra, Origin::Profile));
        assert_eq!(a[4], (canonical, Origin::Canonical));
    }
}
