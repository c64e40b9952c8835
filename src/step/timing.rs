//! Steps per second on the device: CUDA events around batches of back-to-back steps (graph
//! replays when captured) after a warm-up; the median of the per-step times.

use crate::device::DeviceError;
use crate::stats::summarize;
use crate::step::trainer::Trainer;
use cudarc::driver::sys::CUevent_flags;
use serde::Serialize;
use std::time::Instant;

/// Each timed batch of steps lasts at least this long.
const BATCH_MS: f64 = 25.0;
const MIN_SAMPLES: usize = 10;
const MAX_SAMPLES: usize = 60;
const WARMUP_MS: f64 = 200.0;

#[derive(Clone, Debug, Serialize)]
pub struct StepTiming {
    /// Median time of one step, ms.
    pub step_ms: f64,
    pub steps_per_s: f64,
    /// 95% confidence interval of the median, ms.
    pub ci_ms: (f64, f64),
    pub steps_per_sample: usize,
    pub samples_ms: Vec<f64>,
}

/// Times `trainer.step()`; stops after `max_seconds` of samples (at least MIN_SAMPLES).
pub fn time_steps(trainer: &Trainer, max_seconds: f64) -> Result<StepTiming, DeviceError> {
    let stream = trainer.stream();
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let ctx = stream.context();
    let (start, stop) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
    let timed = |count: usize| -> Result<f64, DeviceError> {
        start.record(stream)?;
        for _ in 0..count {
            trainer.step()?;
        }
        stop.record(stream)?;
        Ok(start.elapsed_ms(&stop)? as f64 / count as f64)
    };
    let mut one = timed(1)?;
    let warm = Instant::now();
    while warm.elapsed().as_secs_f64() * 1e3 < WARMUP_MS {
        one = timed(((5.0 / one.max(1e-3)).ceil() as usize).clamp(1, 100))?;
    }
    let per_sample = ((BATCH_MS / one.max(1e-3)).ceil() as usize).clamp(1, 500);
    let mut samples = Vec::with_capacity(MAX_SAMPLES);
    let begin = Instant::now();
    while samples.len() < MIN_SAMPLES
        || (samples.len() < MAX_SAMPLES && begin.elapsed().as_secs_f64() < max_seconds)
    {
        samples.push(timed(per_sample)?);
    }
    let s = summarize(&samples);
    Ok(StepTiming {
        step_ms: s.median,
        steps_per_s: 1e3 / s.median,
        ci_ms: (s.ci_low, s.ci_high),
        steps_per_sample: per_sample,
        samples_ms: samples,
    })
}
