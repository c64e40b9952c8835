//! What the tuner and its worker process say to each other: a job file in, JSON lines out.
//! The worker runs candidates in a process of its own, so a kernel that faults (and so
//! poisons its CUDA context) or hangs costs one candidate, not the run.

use crate::device::DeviceInfo;
use crate::device::timing::TimingConfig;
use crate::report::{GateResult, Measurement, ReferenceCheck, Status};
use crate::schedule::{Dtype, Layout};
use crate::shape::Shape;
use serde::{Deserialize, Serialize};

/// One shape's work for a worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    pub shape: Shape,
    pub dtype: Dtype,
    pub layout: Layout,
    pub seed: u64,
    /// Schedule names to gate and time, in order.
    pub candidates: Vec<String>,
    /// Also time cuBLAS (skipped on a restart after a fault: it was measured already).
    pub time_cublas: bool,
    pub cache_dir: String,
    pub timing: TimingConfig,
    /// Instead of screening candidates: time this schedule against cuBLAS in alternating
    /// rounds (the numbers the profile and the parity table report).
    #[serde(default)]
    pub head_to_head: Option<String>,
}

/// Alternating rounds of own and cuBLAS timing in one process.
pub const HEAD_TO_HEAD_ROUNDS: usize = 6;

/// One line of worker output.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Device {
        info: DeviceInfo,
        cublas_version: String,
        input_sets: u32,
    },
    Reference {
        check: ReferenceCheck,
    },
    Cublas {
        measurement: Measurement,
        /// cuBLAS's output against the canonical output (cuBLAS is not bit-exact with it).
        gate: GateResult,
    },
    Start {
        schedule: String,
    },
    HeadToHead {
        schedule: String,
        own: Measurement,
        cublas: Measurement,
        rounds: u32,
    },
    Result {
        schedule: String,
        status: Status,
        measured: Option<Measurement>,
        gate: GateResult,
    },
    Done,
}

impl Event {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("events serialize")
    }
}

pub fn measurement(summary: &crate::stats::Summary, flops: f64) -> Measurement {
    Measurement {
        median_us: summary.median,
        ci_low_us: summary.ci_low,
        ci_high_us: summary.ci_high,
        samples: summary.n as u32,
        outliers: summary.outliers as u32,
        tflops: flops / (summary.median * 1e-6) / 1e12,
    }
}
