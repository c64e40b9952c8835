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
        }
    }
}

impl TimingConfig {
    pub fn describe(&self) -> String {
        format!(
            "CUDA events around batches of back-to-back launches (each batch ≥ {} µs, rotating \
             input sets), after ≥ {} ms warm-up; per-launch time = batch / launches; median of \
             ≥ {} batches with a 95% order-statistic CI, sampling until the half-width < {:.1}% \
             of the median or {} batches / {} s. The chosen schedule and cuBLAS are then \
             re-timed in alternating rounds in one process; the pooled medians of those rounds \
             are the reported own and cuBLAS times",
            self.batch_us,
            self.warmup_ms,
            self.min_samples,
            self.target_half_width * 100.0,
            self.max_samples,
            self.max_seconds
        )
    }
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
