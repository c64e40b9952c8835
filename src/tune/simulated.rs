//! The worker of the simulated device (`crate::device::simulated`): answers a [`Job`] with the
//! events a GPU worker prints, timed by the shipped cost model with a small deterministic
//! scatter, so the tuner's and the calibration's orchestration runs end to end without a GPU.
//! Gate: a schedule that keeps the canonical reduction order passes, split-K fails (as on the
//! device). `FORGE_TEST_INJECT` faults and hangs act as in the GPU worker.

use super::protocol::{Event, Job};
use super::worker::{EXIT_FAULT, Injection, REFERENCE_SAMPLES, emit, injected};
use crate::cost_model::CostModel;
use crate::device::{DeviceError, simulated};
use crate::report::{GateResult, Measurement, ReferenceCheck, RegimeTimes, Status, Verdict};
use crate::schedule::Schedule;

/// A deterministic number in [-1, 1) from the words of `key` (FNV-1a, then a mix).
fn unit_noise(key: &str) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A timing of `us` µs with the scatter `width` as its confidence interval.
fn measurement(us: f64, flops: f64, width: f64) -> Measurement {
    Measurement {
        median_us: us,
        ci_low_us: us * (1.0 - width),
        ci_high_us: us * (1.0 + width),
        samples: 10,
        outliers: 0,
        tflops: flops / (us * 1e-6) / 1e12,
    }
}

/// Runs `job` on the simulated device.
pub fn run(job: &Job) -> Result<(), DeviceError> {
    let info = simulated::info();
    let arch = info.arch().map_err(|e| DeviceError::Other(e.to_string()))?;
    let model = CostModel::shipped_ref();
    let problem = job.problem;
    let shape = problem.shape;
    let flops = shape.flops();
    // Each job is one round: its order (rotated between confirmation rounds) and seed pick
    // the scatter, so repeated timings of one schedule differ as on a device.
    let round: String = job.candidates.iter().map(|s| s.name()).collect();
    let width = simulated::scatter();
    let time = |s: &Schedule, what: &str| {
        let us = model.predict(&arch, s, &shape, problem.layout).time_us;
        us * (1.0 + width * unit_noise(&format!("{}/{what}/{round}/{}", job.seed, s.name())))
    };
    // cuBLAS stands in as the canonical schedule's best-priced cooperative cousin: the
    // model's time of a 128×256 cluster-2 schedule where it is valid, else the canonical's.
    let cublas_like: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1"
        .parse()
        .expect("a schedule name");
    let stand_in = if crate::space::check(&arch, &cublas_like, &shape).is_ok() {
        cublas_like
    } else {
        Schedule::canonical(problem.dtype)
    };
    let cublas_us = time(&stand_in, "cublas");

    emit(&Event::Device {
        info,
        cublas_version: "simulated".into(),
        input_sets: 1,
    });
    let reference = ReferenceCheck {
        samples: REFERENCE_SAMPLES as u32,
        rel_rms: 2.6e-4,
        max_rel_error: 3.0e-3,
        tolerance: crate::reference::TF32_TOLERANCE,
        passed: true,
    };
    emit(&Event::Reference {
        check: reference.clone(),
    });
    let pass = GateResult {
        verdict: Verdict::Pass,
        differing: 0,
        max_abs_diff: 0.0,
        rel_rms: 0.0,
    };
    if let Some(schedule) = job.head_to_head {
        let own = time(&schedule, "own");
        emit(&Event::HeadToHead {
            schedule,
            launch: job.launch,
            own: measurement(own, flops, width),
            cublas: measurement(cublas_us, flops, width),
            rounds: job.timing.regimes.sustained_rounds.max(1) as u32,
            burst: Some(RegimeTimes {
                own: measurement(time(&schedule, "burst-own"), flops, width),
                cublas: measurement(time(&stand_in, "burst-cublas"), flops, width),
            }),
        });
        emit(&Event::Done);
        return Ok(());
    }
    if job.time_cublas {
        emit(&Event::Cublas {
            measurement: measurement(cublas_us, flops, width),
            gate: GateResult {
                verdict: Verdict::Fail,
                differing: shape.m as u64 * shape.n as u64,
                max_abs_diff: 1e-3,
                rel_rms: 1e-4,
            },
            reference,
        });
    }
    for &schedule in &job.candidates {
        emit(&Event::Start { schedule });
        match injected(&schedule) {
            Some(Injection::Fault) => {
                eprintln!("forge worker (simulated): {schedule} faulted (injected)");
                std::process::exit(EXIT_FAULT);
            }
            Some(Injection::Hang) => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            None => {}
        }
        let gate = if schedule.changes_reduction_order() {
            GateResult {
                verdict: Verdict::Fail,
                differing: shape.m as u64 * shape.n as u64 / 2,
                max_abs_diff: 1e-4,
                rel_rms: 1e-6,
            }
        } else {
            pass.clone()
        };
        emit(&Event::Result {
            schedule,
            status: Status::Measured,
            measured: Some(measurement(time(&schedule, "screen"), flops, width)),
            gate,
        });
    }
    emit(&Event::Done);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scatter_is_deterministic_spread_and_bounded() {
        let values: Vec<f64> = (0..2000).map(|i| unit_noise(&format!("k{i}"))).collect();
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(unit_noise("a/b"), unit_noise("a/b"));
        assert_ne!(unit_noise("a/b"), unit_noise("a/c"));
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let below = values.iter().filter(|v| **v < 0.0).count();
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert!((900..1100).contains(&below), "{below} of 2000 below 0");
    }
}
