//! CUDA-event timing: warm-up, batches sized to the kernel, rotation over input sets, and a
//! stopping rule on the median's confidence interval.

use super::{DeviceError, Gpu};
use crate::stats::{Summary, summarize};
use cudarc::driver::sys::CUevent_flags;
use serde::{Deserialize, Serialize};
use std::time::Instant;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingConfig {
    /// Warm-up time before the first sample, ms.
    pub warmup_ms: f64,
    /// Each sample times a batch of launches at least this long, µs.
    pub batch_us: f64,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Stop once the 95% CI half-width is under this fraction of the median.
    pub target_half_width: f64,
    /// Stop after this much timing per kernel, s.
    pub max_seconds: f64,
    /// Before a worker's first timing, the canonical schedule runs back to back this long, ms,
    /// so that every kernel the worker times meets the power-capped GPU in the same (sustained)
    /// state whatever its position; 0: none (absent in job files of older builds).
    #[serde(default)]
    pub heat_ms: f64,
    /// The head-to-head's two load regimes (absent in job files of older builds).
    #[serde(default)]
    pub regimes: RegimeConfig,
}

/// How a head-to-head times its two regimes (issue #12). The H200 is power-capped: under
/// sustained load its clock drops, so a kernel's time depends on how long the GPU has been busy.
/// *Burst*: each sample is one short batch of back-to-back launches after an idle gap, as a
/// kernel called now and then sees it. *Sustained*: each round is one long stretch of
/// back-to-back launches, as a training step sees it (the profile's main ratio).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RegimeConfig {
    /// Burst: each sample times one batch of launches at least this long, µs …
    pub burst_batch_us: f64,
    /// … started after the GPU idled this long, ms.
    pub burst_gap_ms: f64,
    /// Burst samples per side (own and cuBLAS alternate sample by sample).
    pub burst_samples: usize,
    /// Sustained: each round is one stretch of launches at least this long, ms, …
    pub sustained_round_ms: f64,
    /// … timed in this many equal slices; the first is dropped (the clock settling).
    pub sustained_slices: usize,
    /// Sustained rounds per side, in the order own, cuBLAS, cuBLAS, own, own, cuBLAS, …
    pub sustained_rounds: usize,
}

impl Default for RegimeConfig {
    fn default() -> Self {
        RegimeConfig {
            burst_batch_us: 5_000.0,
            burst_gap_ms: 25.0,
            burst_samples: 10,
            sustained_round_ms: 400.0,
            sustained_slices: 8,
            sustained_rounds: 3,
        }
    }
}

impl RegimeConfig {
    pub fn describe(&self) -> String {
        format!(
            "burst: {} samples per side, each one batch of launches ≥ {} ms after {} ms idle; \
             sustained: {} rounds per side (own, cuBLAS, cuBLAS, own, …), each ≥ {} ms of \
             back-to-back launches timed in {} slices, the first dropped; medians per side",
            self.burst_samples,
            self.burst_batch_us / 1e3,
            self.burst_gap_ms,
            self.sustained_rounds,
            self.sustained_round_ms,
            self.sustained_slices
        )
    }

    /// GPU-busy seconds of one head-to-head (both sides), for sizing a tune.
    pub fn busy_seconds(&self) -> f64 {
        2.0 * (self.burst_samples as f64 * (self.burst_batch_us / 1e6 + self.burst_gap_ms / 1e3)
            + self.sustained_rounds as f64 * self.sustained_round_ms / 1e3)
    }
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            warmup_ms: 25.0,
            batch_us: 300.0,
            min_samples: 15,
            max_samples: 300,
            target_half_width: 0.01,
            max_seconds: 2.0,
            heat_ms: 0.0,
            regimes: RegimeConfig::default(),
        }
    }
}

impl TimingConfig {
    pub fn describe(&self) -> String {
        format!(
            "CUDA events around batches of back-to-back launches (each batch ≥ {} µs, rotating \
             input sets), after ≥ {} ms warm-up; per-launch time = batch / launches; median of \
             ≥ {} batches with a 95% order-statistic CI, sampling until the half-width < {:.1}% \
             of the median or {} batches / {} s. The finalists and cuBLAS are then re-timed \
             head to head in one process in two regimes ({}); the sustained medians are the \
             reported own and cuBLAS times",
            self.batch_us,
            self.warmup_ms,
            self.min_samples,
            self.target_half_width * 100.0,
            self.max_samples,
            self.max_seconds,
            self.regimes.describe()
        )
    }
}

/// Runs `launch(set)` back to back, rotating over `sets` sets, for at least `ms` of GPU time
/// (measured with events, a batch at a time; at most 4 `ms` + 1 s of wall time, whatever the
/// events say); returns the GPU time spent, ms.
pub fn heat(
    gpu: &Gpu,
    sets: usize,
    ms: f64,
    mut launch: impl FnMut(usize) -> Result<(), DeviceError>,
) -> Result<f64, DeviceError> {
    if !ms.is_finite() || ms <= 0.0 {
        return Ok(0.0);
    }
    let (mut set, mut batch, mut busy_ms) = (0usize, 1usize, 0f64);
    let wall = Instant::now();
    while busy_ms < ms && wall.elapsed().as_secs_f64() * 1e3 < 4.0 * ms + 1e3 {
        let per_launch_us = timed_slices(gpu, sets, &mut set, batch, 1, &mut launch)?[0];
        let took = per_launch_us * batch as f64 / 1e3;
        busy_ms += took;
        // Batches of ~50 ms keep the GPU busy between the host's event checks.
        batch = ((batch as f64 * 50.0 / took.max(1e-3)).ceil() as usize).clamp(1, 100_000);
    }
    Ok(busy_ms)
}

/// Times `launch(set)` (one kernel run on input set `set`), rotating over `sets` sets.
/// Returns the summary (µs per launch) and every sample.
pub fn time_kernel(
    gpu: &Gpu,
    sets: usize,
    cfg: &TimingConfig,
    mut launch: impl FnMut(usize) -> Result<(), DeviceError>,
) -> Result<(Summary, Vec<f64>), DeviceError> {
    let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let (start, stop) = (gpu.ctx.new_event(timing)?, gpu.ctx.new_event(timing)?);
    let mut set = 0usize;
    let mut next_set = || {
        let s = set;
        set = (set + 1) % sets.max(1);
        s
    };
    let mut timed = |count: usize,
                     launch: &mut dyn FnMut(usize) -> Result<(), DeviceError>|
     -> Result<f64, DeviceError> {
        start.record(&gpu.stream)?;
        for _ in 0..count {
            launch(next_set())?;
        }
        stop.record(&gpu.stream)?;
        Ok(start.elapsed_ms(&stop)? as f64 * 1000.0)
    };
    // Warm-up, and a first estimate of one launch.
    let mut one = timed(1, &mut launch)?;
    let warm_start = Instant::now();
    while warm_start.elapsed().as_secs_f64() * 1e3 < cfg.warmup_ms {
        one = timed(1, &mut launch)?;
    }
    let batch = ((cfg.batch_us / one.max(0.5)).ceil() as usize).clamp(1, 1000);
    let mut samples = Vec::with_capacity(cfg.max_samples);
    let begin = Instant::now();
    loop {
        samples.push(timed(batch, &mut launch)? / batch as f64);
        if samples.len() >= cfg.max_samples
            || begin.elapsed().as_secs_f64() > cfg.max_seconds
                && samples.len() >= cfg.min_samples.min(5)
        {
            break;
        }
        if samples.len() >= cfg.min_samples
            && summarize(&samples).relative_half_width() < cfg.target_half_width
        {
            break;
        }
    }
    Ok((summarize(&samples), samples))
}

/// A launch of one side of a head-to-head on input set `set`.
pub type LaunchFn<'a> = dyn FnMut(usize) -> Result<(), DeviceError> + 'a;

/// Per-launch µs of one side, `sets` input sets rotated: a warm-up estimate of one launch.
fn estimate_us(
    gpu: &Gpu,
    sets: usize,
    set: &mut usize,
    launch: &mut LaunchFn,
) -> Result<f64, DeviceError> {
    let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let (start, stop) = (gpu.ctx.new_event(timing)?, gpu.ctx.new_event(timing)?);
    let mut per_launch = f64::INFINITY;
    for count in [1usize, 4, 16] {
        start.record(&gpu.stream)?;
        for _ in 0..count {
            launch(*set)?;
            *set = (*set + 1) % sets.max(1);
        }
        stop.record(&gpu.stream)?;
        per_launch = start.elapsed_ms(&stop)? as f64 * 1000.0 / count as f64;
    }
    Ok(per_launch.max(0.5))
}

/// `slices` consecutive batches of `per_slice` launches, back to back with events between them
/// (no host synchronization inside): µs per launch of each slice.
fn timed_slices(
    gpu: &Gpu,
    sets: usize,
    set: &mut usize,
    per_slice: usize,
    slices: usize,
    launch: &mut LaunchFn,
) -> Result<Vec<f64>, DeviceError> {
    let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let events = (0..=slices)
        .map(|_| gpu.ctx.new_event(timing))
        .collect::<Result<Vec<_>, _>>()?;
    events[0].record(&gpu.stream)?;
    for e in &events[1..] {
        for _ in 0..per_slice {
            launch(*set)?;
            *set = (*set + 1) % sets.max(1);
        }
        e.record(&gpu.stream)?;
    }
    events
        .windows(2)
        .map(|w| Ok(w[0].elapsed_ms(&w[1])? as f64 * 1000.0 / per_slice as f64))
        .collect()
}

/// Per-launch samples of both sides of a head-to-head in one regime.
#[derive(Clone, Debug, Default)]
pub struct RegimeSamples {
    pub own: Vec<f64>,
    pub cublas: Vec<f64>,
}

/// Both regimes of a head-to-head (see [`RegimeConfig`]): burst samples alternate own and
/// cuBLAS sample by sample (which goes first alternates too); sustained rounds run own,
/// cuBLAS, cuBLAS, own, …, so clock drift favours neither. Burst runs first, from a GPU that
/// has just idled. Returns (burst, sustained).
pub fn head_to_head(
    gpu: &Gpu,
    sets: usize,
    cfg: &RegimeConfig,
    own: &mut LaunchFn,
    cublas: &mut LaunchFn,
) -> Result<(RegimeSamples, RegimeSamples), DeviceError> {
    let mut set = [0usize, 0usize];
    let sides: [&mut LaunchFn; 2] = [own, cublas];
    let mut est = [0.0f64; 2];
    for side in 0..2 {
        est[side] = estimate_us(gpu, sets, &mut set[side], sides[side])?;
    }
    let mut burst = RegimeSamples::default();
    for i in 0..cfg.burst_samples {
        for j in 0..2 {
            let side = (i + j) % 2;
            std::thread::sleep(std::time::Duration::from_secs_f64(cfg.burst_gap_ms / 1e3));
            let n = ((cfg.burst_batch_us / est[side]).ceil() as usize).max(1);
            let t = timed_slices(gpu, sets, &mut set[side], n, 1, sides[side])?[0];
            if side == 0 {
                &mut burst.own
            } else {
                &mut burst.cublas
            }
            .push(t);
        }
    }
    let mut sustained = RegimeSamples::default();
    let slices = cfg.sustained_slices.max(2);
    for round in 0..2 * cfg.sustained_rounds.max(1) {
        // own, cuBLAS, cuBLAS, own, own, cuBLAS, …
        let side = (round + round / 2) % 2;
        let launches = (cfg.sustained_round_ms * 1e3 / est[side]).ceil() as usize;
        let per_slice = launches.div_ceil(slices).max(1);
        let t = timed_slices(gpu, sets, &mut set[side], per_slice, slices, sides[side])?;
        if side == 0 {
            &mut sustained.own
        } else {
            &mut sustained.cublas
        }
        .extend(&t[1..]);
    }
    Ok((burst, sustained))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_files_without_regimes_get_the_defaults() {
        let old = r#"{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,
                      "target_half_width":0.01,"max_seconds":0.5}"#;
        let cfg: TimingConfig = serde_json::from_str(old).unwrap();
        assert_eq!(cfg.regimes, RegimeConfig::default());
        // Sized like the 6 × 0.25 s × 2 rounds it replaces, not several times longer.
        let busy = cfg.regimes.busy_seconds();
        assert!((2.0..4.0).contains(&busy), "{busy} s per head-to-head");
    }
}
