//! How sharply a calibration data set decides which schedule is fastest.
//!
//! Each point is first timed once (a quick median of ≥ 7 batches). A data set collected with
//! `forge calibrate --repeat R` times the schedules near each shape's best (and the model's
//! top 4) R more times in later worker jobs, each in a rotated order ([`confirm_order`]); a
//! point's time is then the median of its 1 + R timings, and how far two timings of one point
//! differ gives the timing noise of the shape. With it the fit reports two things the strict
//! "best in the model's top 4" count cannot say alone:
//! - ties: schedules whose decided time is not told apart from the fastest one's at that
//!   noise (their difference is under two standard errors of a difference of medians);
//! - estimates of the ceiling of the strict count, how often a model that knew every true
//!   time would hold the measured fastest schedule in its top 4. Where 6 schedules lie within
//!   1% of the best and one timing is ~0.5% noisy, no model reaches 90% on the strict count.
//!   Optimistic ([`top4_ceiling`]): Monte Carlo re-timings around the decided times, taken
//!   as true; they are not, and noise widens the gaps between near-ties. Pessimistic
//!   ([`top4_split_halves`]): the fastest point by one half of every point's timings against
//!   the 4 fastest by the other half, averaged over random splits; each half is noisier than
//!   the decided times. On the simulated device, where the true times are known (reports/
//!   2026-12-05-simulated-ceiling-check): true ceilings 0.71 / 0.69 / 0.65, optimistic 0.91 /
//!   0.89 / 0.83, pessimistic 0.63 / 0.60 / 0.42 (16, 16 and 35 shapes). Both are estimates
//!   with the sampling error of a few shapes, not bounds on every data set.

use super::data::{Point, ShapeData};
use super::sample::SplitMix;
use statrs::distribution::{ContinuousCDF, Normal};

/// Points whose first timing lies within this factor of the shape's fastest are re-timed, at
/// most [`CONFIRM_MAX`] of them, besides the model's top 4 ([`confirm_set`]).
pub const CONFIRM_BAND: f64 = 1.03;
pub const CONFIRM_MAX: usize = 24;

/// Standard error of a sample median over that of a mean, for normal data (√(π/2)).
const MEDIAN_SE_FACTOR: f64 = 1.2533;

/// Monte Carlo trials of [`top4_ceiling`].
const TRIALS: usize = 2000;

/// One timing's noise on a shape (log scale), pooled over its repeated points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeNoise {
    /// Standard deviation of ln(one timing), robust: 1.4826 × the median |ln(a/b)| over
    /// every pair of timings of one point, / √2 (free of the bias a deviation from a median
    /// of a few timings has).
    pub sigma: f64,
    /// Points timed at least 3 times.
    pub repeated: usize,
}

/// The timings of a point: its first median and its repeats.
fn samples(p: &Point) -> Vec<f64> {
    p.measured
        .iter()
        .map(|m| m.median_us)
        .chain(p.repeats_us.iter().copied())
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect()
}

/// How many timings a point's time is the median of.
pub fn timings(p: &Point) -> usize {
    samples(p).len().max(1)
}

/// The median of a point's timings (`None`: never timed).
pub fn decided_us(p: &Point) -> Option<f64> {
    crate::stats::median(&samples(p))
}

/// The shape's timing noise, or `None` when fewer than 3 of its points were timed ≥ 3 times.
pub fn shape_noise(s: &ShapeData) -> Option<ShapeNoise> {
    let mut differences = vec![];
    let mut repeated = 0;
    for p in &s.points {
        let v = samples(p);
        if v.len() < 3 || p.time_us().is_none() {
            continue;
        }
        repeated += 1;
        for (i, a) in v.iter().enumerate() {
            differences.extend(v[i + 1..].iter().map(|b| (a / b).ln().abs()));
        }
    }
    if repeated < 3 {
        return None;
    }
    differences.sort_by(f64::total_cmp);
    let median = differences[differences.len() / 2];
    Some(ShapeNoise {
        sigma: 1.4826 * median / std::f64::consts::SQRT_2,
        repeated,
    })
}

/// Standard error (log scale) of a time decided as the median of `n` timings.
fn standard_error(noise: &ShapeNoise, n: usize) -> f64 {
    if n <= 1 {
        noise.sigma
    } else {
        MEDIAN_SE_FACTOR * noise.sigma / (n as f64).sqrt()
    }
}

/// Whether a time decided from `n` timings is told apart from the fastest one (decided from
/// `n_best`): its excess over the fastest is more than two standard errors of the difference.
pub fn slower_than_best(noise: &ShapeNoise, t: f64, n: usize, best: f64, n_best: usize) -> bool {
    let se = standard_error(noise, n).hypot(standard_error(noise, n_best));
    (t / best).ln() > 2.0 * se
}

/// The strict count's ceiling on one shape: the fraction of simulated re-timings (each
/// point's decided time × exp(N(0, se²)), se from its own count of timings) whose fastest
/// point is among the 4 fastest decided times. `points`: (decided µs, timings) of every
/// gate-passing point.
pub fn top4_ceiling(points: &[(f64, usize)], noise: &ShapeNoise, seed: u64) -> f64 {
    if points.len() <= 4 {
        return 1.0;
    }
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
    let mut top4 = vec![false; points.len()];
    for &i in &order[..4] {
        top4[i] = true;
    }
    let normal = Normal::standard();
    let mut rng = SplitMix::new(seed);
    let mut hits = 0;
    for _ in 0..TRIALS {
        let mut best = (f64::INFINITY, 0);
        for (i, &(t, n)) in points.iter().enumerate() {
            let x = t.ln() + standard_error(noise, n) * standard_normal(&mut rng, &normal);
            if x < best.0 {
                best = (x, i);
            }
        }
        hits += top4[best.1] as usize;
    }
    hits as f64 / TRIALS as f64
}

/// Random half-splits [`top4_split_halves`] averages over.
const SPLITS: usize = 200;

/// The strict count's pessimistic ceiling on one shape: among the points timed at least twice
/// (the confirmation's), the share of random half-splits (each point's timings shuffled and
/// cut in two, [`SPLITS`] times) in which the fastest point by the medians of the second halves
/// is among the 4 fastest by the first halves'. `None` unless more than 4 points were timed
/// twice and the fastest decided point is one of them.
pub fn top4_split_halves(points: &[&Point], seed: u64) -> Option<f64> {
    let timed: Vec<Vec<f64>> = points.iter().map(|p| samples(p)).collect();
    let decided: Vec<f64> = timed
        .iter()
        .map(|v| crate::stats::median(v).unwrap_or(f64::INFINITY))
        .collect();
    let fastest = decided.iter().copied().fold(f64::INFINITY, f64::min);
    let repeated: Vec<usize> = (0..timed.len()).filter(|&i| timed[i].len() >= 2).collect();
    if repeated.len() <= 4 || !repeated.iter().any(|&i| decided[i] == fastest) {
        return None;
    }
    let mut rng = SplitMix::new(seed);
    let mut agree = 0;
    for _ in 0..SPLITS {
        let mut first = Vec::with_capacity(repeated.len());
        let mut second = Vec::with_capacity(repeated.len());
        for &i in &repeated {
            let mut v = timed[i].clone();
            for k in (1..v.len()).rev() {
                let j = rng.below(k + 1);
                v.swap(k, j);
            }
            let cut = v.len() / 2;
            first.push(crate::stats::median(&v[..cut]).expect("at least one timing"));
            second.push(crate::stats::median(&v[cut..]).expect("at least one timing"));
        }
        let mut by_first: Vec<usize> = (0..repeated.len()).collect();
        by_first.sort_by(|&a, &b| first[a].total_cmp(&first[b]));
        let best_second = (0..repeated.len())
            .min_by(|&a, &b| second[a].total_cmp(&second[b]))
            .expect("more than 4 points");
        agree += usize::from(by_first[..4].contains(&best_second));
    }
    Some(agree as f64 / SPLITS as f64)
}

/// The points a confirmation times again (indices into `points`): the gate-passing ones
/// within [`CONFIRM_BAND`] of the fastest, fastest first, at most [`CONFIRM_MAX`], then the 4
/// best-predicted timed ones not among them.
pub fn confirm_set(points: &[Point]) -> Vec<usize> {
    let mut timed: Vec<(usize, f64)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.time_us().map(|t| (i, t)))
        .collect();
    timed.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some(&(_, best)) = timed.first() else {
        return vec![];
    };
    let mut set: Vec<usize> = timed
        .iter()
        .filter(|&&(_, t)| t <= best * CONFIRM_BAND)
        .take(CONFIRM_MAX)
        .map(|&(i, _)| i)
        .collect();
    let mut by_prediction: Vec<usize> = timed.iter().map(|&(i, _)| i).collect();
    by_prediction.sort_by(|&a, &b| points[a].predicted_us.total_cmp(&points[b].predicted_us));
    for i in by_prediction.into_iter().take(4) {
        if !set.contains(&i) {
            set.push(i);
        }
    }
    set
}

/// A standard normal draw (inverse CDF of a uniform in the open (0, 1): the top 53 bits,
/// offset by half a step).
fn standard_normal(rng: &mut SplitMix, normal: &Normal) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    normal.inverse_cdf(u)
}

/// The order of the `r`-th (0-based) of `rounds` confirmation rounds over `set`: rotated by
/// r/rounds of its length, so that no schedule is always timed first or last in a worker
/// (the clock and the caches differ there).
pub fn confirm_order<T: Copy>(set: &[T], r: usize, rounds: usize) -> Vec<T> {
    let n = set.len();
    let shift = if n == 0 { 0 } else { r * n / rounds.max(1) };
    (0..n).map(|i| set[(i + shift) % n]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::sample::Origin;
    use crate::problem::Problem;
    use crate::report::{Measurement, Verdict};
    use crate::schedule::{Dtype, Layout, Schedule};
    use crate::shape::Shape;

    fn point(first: f64, repeats: &[f64]) -> Point {
        Point {
            schedule: Schedule::canonical(Dtype::Tf32),
            origin: Origin::Top,
            predicted_us: 1.0,
            status: "measured".into(),
            measured: Some(Measurement {
                median_us: first,
                ci_low_us: first,
                ci_high_us: first,
                samples: 7,
                outliers: 0,
                tflops: 1.0,
            }),
            gate: Verdict::Pass,
            repeats_us: repeats.to_vec(),
        }
    }

    fn shape(points: Vec<Point>) -> ShapeData {
        ShapeData {
            problem: Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(256, 256, 256)),
            cublas: None,
            reference_passed: true,
            points,
        }
    }

    fn refs(v: &[Point]) -> Vec<&Point> {
        v.iter().collect()
    }

    #[test]
    fn split_halves_agree_where_the_best_is_clear_and_not_among_near_ties() {
        let far: Vec<Point> = (0..4)
            .map(|i| point(120.0 + i as f64, &[120.2 + i as f64]))
            .collect();
        // A clear best: 100 in every timing, the rest ≥ 103.
        let mut clear = vec![
            point(100.0, &[100.2, 99.9, 100.1, 100.0]),
            point(103.0, &[103.1, 102.9, 103.0, 103.2]),
            point(104.0, &[104.1, 103.9, 104.0, 104.2]),
        ];
        clear.extend(far.iter().cloned());
        assert_eq!(top4_split_halves(&refs(&clear), 1), Some(1.0));
        // Eight near-ties whose timings overlap: the halves disagree on the best often.
        let mut ties: Vec<Point> = (0..8)
            .map(|i| {
                let t = 100.0 + 0.05 * i as f64;
                point(t, &[t + 0.8, t - 0.8, t + 0.4, t - 0.4])
            })
            .collect();
        ties.extend(far.iter().cloned());
        let share = top4_split_halves(&refs(&ties), 1).unwrap();
        assert!(share < 0.9 && share > 0.1, "{share}");
        assert_eq!(top4_split_halves(&refs(&ties), 1), Some(share), "seeded");
        // Undefined where the fastest point was timed once, or fewer than 5 twice.
        let mut once = clear.clone();
        once[1] = point(99.0, &[]);
        assert_eq!(top4_split_halves(&refs(&once), 1), None);
        assert_eq!(top4_split_halves(&refs(&clear[..4]), 1), None);
    }

    #[test]
    fn a_points_time_is_the_median_of_its_timings() {
        assert_eq!(decided_us(&point(10.0, &[])), Some(10.0));
        assert_eq!(decided_us(&point(10.0, &[12.0, 11.0])), Some(11.0));
        assert_eq!(decided_us(&point(10.0, &[12.0, 11.0, 9.0])), Some(10.5));
        assert_eq!(timings(&point(10.0, &[12.0, 11.0])), 3);
    }

    #[test]
    fn the_noise_is_the_spread_of_the_repeats_and_needs_three_repeated_points() {
        let mut rng = SplitMix::new(7);
        let normal = Normal::standard();
        let sigma = 0.01;
        let points: Vec<Point> = (0..40)
            .map(|i| {
                let t = 100.0 + i as f64;
                let v: Vec<f64> = (0..6)
                    .map(|_| t * (sigma * standard_normal(&mut rng, &normal)).exp())
                    .collect();
                point(v[0], &v[1..])
            })
            .collect();
        let noise = shape_noise(&shape(points.clone())).unwrap();
        assert_eq!(noise.repeated, 40);
        assert!(
            (noise.sigma / sigma - 1.0).abs() < 0.2,
            "sigma {} for {sigma}",
            noise.sigma
        );
        let few: Vec<Point> = points[..2].to_vec();
        assert_eq!(shape_noise(&shape(few)), None);
        let once: Vec<Point> = (0..10).map(|i| point(100.0 + i as f64, &[])).collect();
        assert_eq!(shape_noise(&shape(once)), None);
    }

    #[test]
    fn ties_and_the_ceiling_follow_the_noise() {
        let noise = ShapeNoise {
            sigma: 0.005,
            repeated: 10,
        };
        // Six timings each: se of a median 0.26%, of a difference 0.36%.
        assert!(!slower_than_best(&noise, 100.5, 6, 100.0, 6));
        assert!(slower_than_best(&noise, 101.0, 6, 100.0, 6));
        // Timed once, the same 0.5% is a tie.
        assert!(!slower_than_best(&noise, 100.5, 1, 100.0, 6));
        // Well separated times: the fastest is always the fastest.
        let apart: Vec<(f64, usize)> = (0..20).map(|i| (100.0 * 1.05f64.powi(i), 6)).collect();
        assert_eq!(top4_ceiling(&apart, &noise, 1), 1.0);
        // Eight points within 0.2% of each other: the re-timed best lands anywhere among them.
        let crowd: Vec<(f64, usize)> = (0..8).map(|i| (100.0 + 0.02 * i as f64, 1)).collect();
        let c = top4_ceiling(&crowd, &noise, 1);
        assert!((0.5..0.75).contains(&c), "ceiling {c}");
    }

    #[test]
    fn the_confirmation_takes_the_near_best_and_the_models_top_4() {
        // 40 timed points 100, 100.2, … µs (predicted in reverse order), one failing the
        // gate at 99 µs and one never run.
        let mut points: Vec<Point> = (0..40)
            .map(|i| {
                let mut p = point(100.0 + 0.2 * i as f64, &[]);
                p.predicted_us = 1000.0 - i as f64;
                p
            })
            .collect();
        let mut failed = point(99.0, &[]);
        failed.gate = Verdict::Fail;
        failed.predicted_us = 0.0;
        points.push(failed);
        let mut not_run = point(1.0, &[]);
        not_run.measured = None;
        points.push(not_run);
        let set = confirm_set(&points);
        // Within 3% of 100 µs: 100 … 103 (16 points), then the 4 best predicted: 36 … 39.
        let mut want: Vec<usize> = (0..16).collect();
        want.extend([39, 38, 37, 36]);
        assert_eq!(set, want);
        assert!(confirm_set(&points[40..]).is_empty());
    }

    #[test]
    fn confirmation_rounds_rotate() {
        let set = [0, 1, 2, 3];
        assert_eq!(confirm_order(&set, 0, 4), vec![0, 1, 2, 3]);
        assert_eq!(confirm_order(&set, 1, 4), vec![1, 2, 3, 0]);
        assert_eq!(confirm_order(&set, 1, 2), vec![2, 3, 0, 1]);
        let firsts: std::collections::HashSet<i32> =
            (0..4).map(|r| confirm_order(&set, r, 4)[0]).collect();
        assert_eq!(firsts.len(), 4);
        assert!(confirm_order::<i32>(&[], 0, 3).is_empty());
    }
}
