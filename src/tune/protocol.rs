//! What the tuner and its worker process say to each other: a job file in, JSON lines out.
//! The worker runs candidates in a process of its own, so a kernel that faults (and so
//! poisons its CUDA context) or hangs costs one candidate, not the run.

use crate::contract::Contract;
use crate::device::DeviceInfo;
use crate::device::timing::TimingConfig;
use crate::problem::Problem;
use crate::report::{BitModelCheck, GateResult, Measurement, ReferenceCheck, RegimeTimes, Status};
use crate::schedule::{self, LaunchOrder, Schedule};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One problem's work for a worker: either a screen of candidates or one head-to-head.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    #[serde(flatten)]
    pub problem: Problem,
    /// The numerical contract the kernels are compiled for.
    pub contract: Contract,
    pub seed: u64,
    /// Schedules to gate and time, in order.
    #[serde(with = "schedule::by_name::vec")]
    pub candidates: Vec<Schedule>,
    /// Also time cuBLAS (skipped on a restart after a fault: it was measured already).
    pub time_cublas: bool,
    pub cache_dir: String,
    pub timing: TimingConfig,
    /// Instead of screening candidates: time this schedule against cuBLAS in alternating
    /// rounds (the numbers the profile and the parity table report).
    #[serde(default, with = "schedule::by_name::opt")]
    pub head_to_head: Option<Schedule>,
    /// The ordinal of the GPU the worker runs on.
    #[serde(default)]
    pub device: usize,
    /// How the screen or the head-to-head launches its schedules.
    #[serde(default)]
    pub launch: LaunchOrder,
}

impl Job {
    /// A job for `problem` that does nothing yet: add [`Job::screen`] or [`Job::head_to_head`].
    pub fn new(
        problem: Problem,
        contract: Contract,
        seed: u64,
        cache_dir: &Path,
        timing: &TimingConfig,
        device: usize,
    ) -> Job {
        Job {
            problem,
            contract,
            seed,
            candidates: vec![],
            time_cublas: false,
            cache_dir: cache_dir.display().to_string(),
            timing: timing.clone(),
            head_to_head: None,
            device,
            launch: LaunchOrder::Serial,
        }
    }

    /// Gate and time `candidates` (and cuBLAS once, when `time_cublas`).
    pub fn screen(mut self, candidates: Vec<Schedule>, time_cublas: bool) -> Job {
        self.candidates = candidates;
        self.time_cublas = time_cublas;
        self
    }

    /// Time `schedule`, launched in `launch` order, against cuBLAS in alternating rounds.
    pub fn head_to_head(mut self, schedule: Schedule, launch: LaunchOrder) -> Job {
        self.head_to_head = Some(schedule);
        self.launch = launch;
        self
    }
}

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
    BitModel {
        check: BitModelCheck,
    },
    Cublas {
        measurement: Measurement,
        /// cuBLAS's output against the canonical output, bit for bit.
        gate: GateResult,
        /// cuBLAS's output against the FP64 reference (the same samples as the canonical's).
        reference: ReferenceCheck,
    },
    Start {
        #[serde(with = "schedule::by_name")]
        schedule: Schedule,
    },
    /// `own`/`cublas`: the sustained regime over `rounds` rounds per side; `burst`: the burst
    /// regime (absent from workers of older builds).
    HeadToHead {
        #[serde(with = "schedule::by_name")]
        schedule: Schedule,
        /// Absent from workers of older builds, which launched serially.
        #[serde(default)]
        launch: LaunchOrder,
        own: Measurement,
        cublas: Measurement,
        rounds: u32,
        #[serde(default)]
        burst: Option<RegimeTimes>,
    },
    /// The operand-preparation passes of a head-to-head's schedule timed alone (transposes for
    /// a non-TN layout, pads for rows a TMA schedule cannot read in place).
    Prep {
        #[serde(with = "schedule::by_name")]
        schedule: Schedule,
        measurement: Measurement,
        passes: u32,
        /// Bytes the passes read and write.
        bytes: u64,
    },
    Result {
        #[serde(with = "schedule::by_name")]
        schedule: Schedule,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Dtype, Layout};
    use crate::shape::Shape;

    #[test]
    fn jobs_round_trip_through_their_file_form() {
        let problem = Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(64, 96, 128));
        let canonical = Schedule::canonical(Dtype::Tf32);
        let contract = Contract::default();
        let job = Job::new(
            problem,
            contract,
            7,
            Path::new("/c"),
            &TimingConfig::default(),
            3,
        )
        .screen(vec![canonical], true);
        let text = serde_json::to_string(&job).unwrap();
        assert!(text.contains(&format!("\"{canonical}\"")), "{text}");
        let back: Job = serde_json::from_str(&text).unwrap();
        assert_eq!(back.problem, problem);
        assert_eq!(back.contract, contract);
        assert_eq!(back.candidates, vec![canonical]);
        assert!(back.time_cublas && back.head_to_head.is_none());
        assert_eq!(back.device, 3);
        // A job file written before `device` existed runs on device 0.
        let old = text.replace(",\"device\":3", "");
        assert_ne!(old, text);
        assert_eq!(serde_json::from_str::<Job>(&old).unwrap().device, 0);
        // … and one written before `heat_ms` existed heats nothing.
        let old = text.replace(",\"heat_ms\":0.0", "");
        assert_ne!(old, text);
        assert_eq!(
            serde_json::from_str::<Job>(&old).unwrap().timing.heat_ms,
            0.0
        );
    }
}
