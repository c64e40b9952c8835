//! The run report: everything one `forge tune` run measured, written as JSON and CSV to
//! `reports/<run>/` and rewritten after every shape so partial results survive a crash.
//! Pure data; the plots and summaries read it back on any machine.

use crate::problem::Problem;
use crate::schedule::{self, LaunchOrder, Schedule};
use serde::{Deserialize, Serialize};

/// Where and how the numbers were taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub device_name: String,
    pub arch: String,
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub sm_clock_mhz: f64,
    pub driver_version: String,
    pub nvrtc_version: String,
    pub cublas_version: String,
    pub forge_version: String,
    pub git_revision: String,
    /// RFC 3339, UTC.
    pub date: String,
    pub command: String,
    /// The numerical contract the kernels followed (`tf32-rne-k8-inorder`); empty in reports
    /// older than contract v2 (they truncated).
    #[serde(default)]
    pub numerical_contract: String,
    /// False for a cost-model-only run on a machine without a GPU.
    pub measured: bool,
    /// How times were taken (events, warm-up, rotation, stopping rule).
    pub timing_method: String,
    /// What the cuBLAS baseline is (library, compute type, algorithm choice).
    pub cublas_mode: String,
}

/// Robust summary of one timed kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub median_us: f64,
    /// 95% confidence interval of the median.
    pub ci_low_us: f64,
    pub ci_high_us: f64,
    pub samples: u32,
    /// Samples outside the Tukey fences (kept in the median, labelled here).
    pub outliers: u32,
    pub tflops: f64,
}

/// Outcome of the bit-exact gate for one candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every element's bits equal the canonical output's.
    Pass,
    /// At least one element differs (or was left unwritten).
    Fail,
    /// The candidate never produced an output (see its status).
    NotRun,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub verdict: Verdict,
    /// Elements whose bit pattern differs from the canonical output.
    pub differing: u64,
    pub max_abs_diff: f64,
    /// ‖C − C₀‖ / ‖C₀‖; a pass needs exactly 0.
    pub rel_rms: f64,
}

impl GateResult {
    pub fn not_run() -> GateResult {
        GateResult {
            verdict: Verdict::NotRun,
            differing: 0,
            max_abs_diff: 0.0,
            rel_rms: 0.0,
        }
    }
}

/// What happened to a candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "reason", rename_all = "snake_case")]
pub enum Status {
    /// Ran, was gated and timed.
    Measured,
    CompileFailed(String),
    LaunchFailed(String),
    /// The kernel faulted (illegal address, …); the worker was restarted.
    Faulted(String),
    /// The watchdog stopped it.
    TimedOut(String),
    /// Ranked only (cost-model-only run, or outside the benchmarked top K).
    Predicted,
}

/// One schedule considered for one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    #[serde(with = "schedule::by_name")]
    pub schedule: Schedule,
    /// 1-based position in the cost model's ranking.
    pub predicted_rank: u32,
    pub predicted_us: f64,
    /// The cost-model term that dominates the prediction.
    pub predicted_dominant: String,
    pub status: Status,
    pub measured: Option<Measurement>,
    pub gate: GateResult,
    /// Timed by the tune's second screen (a launch variant of one of the first screen's
    /// fastest kernels: `forge tune --refine`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub second_screen: bool,
}

/// FP64 host check of the canonical output on sampled elements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceCheck {
    pub samples: u32,
    /// ‖C₀ − ref‖ / ‖ref‖ over the samples.
    pub rel_rms: f64,
    pub max_rel_error: f64,
    pub tolerance: f64,
    pub passed: bool,
}

/// cuBLAS's output on input set 0: how many elements carry the canonical output's exact bits
/// (all of them where cuBLAS runs a single-pass kernel on the same contract's inputs), and its
/// error against the FP64 reference on the canonical check's samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CublasAccuracy {
    pub bits: GateResult,
    pub reference: ReferenceCheck,
}

impl CublasAccuracy {
    /// Fraction of the output's elements bit-identical to the canonical output.
    pub fn identical_fraction(&self, elements: u64) -> f64 {
        1.0 - self.bits.differing as f64 / elements.max(1) as f64
    }
}

/// The canonical output checked bit for bit against the CPU model of the tensor cores
/// ([`crate::bitmodel`]) on sampled elements: the gate's second oracle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BitModelCheck {
    /// `hopper` or `ampere` parameters, and the input rounding.
    pub model: String,
    pub samples: u32,
    pub equal: u32,
    /// The first differing element, as `(i, j): device 0x…, model 0x…`.
    pub first_mismatch: Option<String>,
}

impl BitModelCheck {
    pub fn passed(&self) -> bool {
        self.samples > 0 && self.equal == self.samples
    }
}

/// Everything measured for one problem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeReport {
    #[serde(flatten)]
    pub problem: Problem,
    pub seed: u64,
    /// Input sets rotated through while timing (working set above L2).
    pub input_sets: u32,
    pub cublas: Option<Measurement>,
    pub reference: Option<ReferenceCheck>,
    /// The canonical output against the CPU bit model (None where the model has no
    /// parameters for the architecture).
    #[serde(default)]
    pub bitmodel: Option<BitModelCheck>,
    /// cuBLAS's bits and accuracy beside the canonical output's.
    #[serde(default)]
    pub cublas_accuracy: Option<CublasAccuracy>,
    pub candidates: Vec<Candidate>,
    /// The finalist with the best head-to-head ratio against cuBLAS (the fastest
    /// gate-passing candidate of the screen when no head-to-head finished).
    #[serde(with = "schedule::by_name::opt")]
    pub chosen: Option<Schedule>,
    /// The chosen schedule's confirmation: a fresh head-to-head after the finalists' (whose
    /// best ratio is biased upwards by the choice itself).
    #[serde(default)]
    pub head_to_head: Option<HeadToHead>,
    /// The screen's fastest gate-passing candidates, each re-timed against cuBLAS in
    /// alternating rounds; the one with the best ratio is chosen. The screen times each
    /// candidate once at a different moment, and under a power-limited clock its order among
    /// schedules within a few percent of each other is noise; ratios to cuBLAS measured in
    /// the same rounds are not.
    #[serde(default)]
    pub finalists: Vec<HeadToHead>,
}

/// The chosen schedule and cuBLAS timed in alternating rounds in one process, so clock and
/// power state (a GPU under sustained load throttles) weigh on both alike. These are the
/// numbers of the parity table and the profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeadToHead {
    #[serde(with = "schedule::by_name")]
    pub schedule: Schedule,
    /// How the schedule was launched (absent in reports of older builds: serially).
    #[serde(default)]
    pub launch: LaunchOrder,
    /// The sustained regime (long stretches of back-to-back launches at the power-limited
    /// clock, what a training step sees): the ratio the profile and the parity table report.
    pub own: Measurement,
    pub cublas: Measurement,
    pub rounds: u32,
    /// The burst regime (short batches after idle gaps); absent in reports of older builds,
    /// whose rounds were all sustained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<RegimeTimes>,
}

/// Own and cuBLAS times of one regime of a head-to-head.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegimeTimes {
    pub own: Measurement,
    pub cublas: Measurement,
}

impl RegimeTimes {
    /// cuBLAS time / own time (> 1: own is faster).
    pub fn ratio(&self) -> f64 {
        self.cublas.median_us / self.own.median_us
    }
}

impl HeadToHead {
    /// cuBLAS time / own time in the sustained regime (> 1: own is faster).
    pub fn ratio(&self) -> f64 {
        self.cublas.median_us / self.own.median_us
    }

    /// The same in the burst regime, when it was measured.
    pub fn burst_ratio(&self) -> Option<f64> {
        self.burst.as_ref().map(RegimeTimes::ratio)
    }
}

/// The finalist with the best ratio to cuBLAS (not the smallest own time: each finalist met
/// cuBLAS in its own rounds, possibly at another clock).
pub fn best_finalist(finalists: &[HeadToHead]) -> Option<&HeadToHead> {
    finalists
        .iter()
        .max_by(|a, b| a.ratio().total_cmp(&b.ratio()))
}

impl ShapeReport {
    /// A report for `problem` with nothing measured or chosen yet.
    pub fn new(problem: Problem, seed: u64) -> ShapeReport {
        ShapeReport {
            problem,
            seed,
            input_sets: 0,
            cublas: None,
            reference: None,
            bitmodel: None,
            cublas_accuracy: None,
            candidates: vec![],
            chosen: None,
            head_to_head: None,
            finalists: vec![],
        }
    }

    /// Candidates that were timed.
    pub fn measured(&self) -> impl Iterator<Item = (&Candidate, &Measurement)> {
        self.candidates
            .iter()
            .filter_map(|c| c.measured.as_ref().map(|m| (c, m)))
    }

    /// The reported comparison: (schedule, own, cuBLAS) from the head-to-head rounds when they
    /// ran, else the chosen candidate's screen time against the screen's cuBLAS time.
    pub fn parity(&self) -> Option<(Schedule, &Measurement, &Measurement)> {
        if let Some(h) = &self.head_to_head {
            return Some((h.schedule, &h.own, &h.cublas));
        }
        let chosen = self.chosen?;
        let (c, m) = self.measured().find(|(c, _)| c.schedule == chosen)?;
        Some((c.schedule, m, self.cublas.as_ref()?))
    }

    /// The fastest timed candidate that passed the gate.
    pub fn fastest_passing(&self) -> Option<(&Candidate, &Measurement)> {
        self.fastest_passing_n(1).into_iter().next()
    }

    /// The `n` fastest gate-passing candidates of the screen, fastest first. A split-K
    /// schedule whose bits matched by chance is not one: it changes the reduction order,
    /// which the bit-exact contract forbids (a profile refuses it).
    pub fn fastest_passing_n(&self, n: usize) -> Vec<(&Candidate, &Measurement)> {
        fastest_passing(&self.candidates, n)
    }

    /// The fastest timed candidate, gate or not (the price of determinism's other side).
    pub fn fastest_overall(&self) -> Option<(&Candidate, &Measurement)> {
        self.measured()
            .min_by(|a, b| a.1.median_us.total_cmp(&b.1.median_us))
    }
}

/// The `n` fastest gate-passing `candidates` that keep the canonical reduction order,
/// fastest first ([`ShapeReport::fastest_passing_n`]).
pub fn fastest_passing(candidates: &[Candidate], n: usize) -> Vec<(&Candidate, &Measurement)> {
    let mut passing: Vec<_> = candidates
        .iter()
        .filter_map(|c| c.measured.as_ref().map(|m| (c, m)))
        .filter(|(c, _)| c.gate.verdict == Verdict::Pass && !c.schedule.changes_reduction_order())
        .collect();
    passing.sort_by(|a, b| a.1.median_us.total_cmp(&b.1.median_us));
    passing.truncate(n);
    passing
}

/// One run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub provenance: Provenance,
    pub shapes: Vec<ShapeReport>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    // The causes are printed in the messages, so they are not `source`s (anyhow's `{:#}`
    // would print them twice).
    #[error("cannot read report {path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    #[error("report {path} is not a forge run report: {cause}")]
    Parse {
        path: String,
        cause: serde_json::Error,
    },
}

/// File name of the JSON report inside a run directory.
pub const REPORT_JSON: &str = "report.json";
/// File name of the CSV table inside a run directory.
pub const REPORT_CSV: &str = "report.csv";

impl RunReport {
    /// Reads `DIR/report.json` (or the file itself when given a file).
    pub fn load(path: &std::path::Path) -> Result<RunReport, ReportError> {
        let file = if path.is_dir() {
            path.join(REPORT_JSON)
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file).map_err(|cause| ReportError::Io {
            path: file.display().to_string(),
            cause,
        })?;
        serde_json::from_str(&text).map_err(|cause| ReportError::Parse {
            path: file.display().to_string(),
            cause,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three distinct schedules standing for finalists "a", "b", "c".
    fn finalist(name: &str) -> Schedule {
        let stages = match name {
            "a" => 3,
            "b" => 4,
            _ => 5,
        };
        format!("wgmma_tf32_128x256x32_s{stages}_wg2_swz8_pers_c1_k1")
            .parse()
            .unwrap()
    }

    fn h2h(name: &str, own: f64, cublas: f64) -> HeadToHead {
        let m = |us: f64| Measurement {
            median_us: us,
            ci_low_us: us,
            ci_high_us: us,
            samples: 10,
            outliers: 0,
            tflops: 1.0,
        };
        HeadToHead {
            schedule: finalist(name),
            launch: LaunchOrder::Programmatic,
            own: m(own),
            cublas: m(cublas),
            rounds: 6,
            burst: None,
        }
    }

    #[test]
    fn head_to_heads_of_older_reports_launched_serially() {
        let h = h2h("a", 100.0, 103.0);
        let text = serde_json::to_string(&h).unwrap();
        assert!(text.contains(r#""launch":"programmatic""#), "{text}");
        let old = text.replace(r#""launch":"programmatic","#, "");
        assert_ne!(old, text);
        let back: HeadToHead = serde_json::from_str(&old).unwrap();
        assert_eq!(back.launch, LaunchOrder::Serial);
        let back: HeadToHead = serde_json::from_str(&text).unwrap();
        assert_eq!(back.launch, LaunchOrder::Programmatic);
    }

    #[test]
    fn head_to_heads_of_older_reports_load_without_a_burst_regime() {
        let mut h = h2h("a", 100.0, 103.0);
        let old = serde_json::to_string(&h).unwrap();
        assert!(!old.contains("burst"), "{old}");
        let back: HeadToHead = serde_json::from_str(&old).unwrap();
        assert_eq!(back.burst_ratio(), None);
        h.burst = Some(RegimeTimes {
            own: h.own.clone(),
            cublas: h2h("a", 0.0, 90.0).cublas,
        });
        let back: HeadToHead = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back.burst_ratio(), Some(0.9));
        assert!((back.ratio() - 1.03).abs() < 1e-12);
    }

    #[test]
    fn the_best_ratio_wins_not_the_smallest_time() {
        // b ran at a higher clock (both it and its cuBLAS rounds faster) but is slower
        // relative to cuBLAS than a.
        let f = [
            h2h("a", 100.0, 103.0),
            h2h("b", 98.0, 99.0),
            h2h("c", 101.0, 99.0),
        ];
        assert_eq!(best_finalist(&f).unwrap().schedule, finalist("a"));
        assert!(best_finalist(&[]).is_none());
    }
}
