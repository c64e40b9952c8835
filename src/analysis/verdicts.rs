//! The bit-exact gate's verdicts per shape: how many candidates passed, failed, never ran or
//! were only ranked, and which ones failed or never ran.

use crate::report::{Candidate, ShapeReport, Status, Verdict};

/// One shape's verdict counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    pub passed: usize,
    pub failed: usize,
    /// Benchmarked but never produced an output (compile, launch, fault, timeout).
    pub not_run: usize,
    /// Predicted but not benchmarked.
    pub ranked_only: usize,
}

/// The verdict counts of one shape's candidates.
pub fn verdict_counts(s: &ShapeReport) -> VerdictCounts {
    let count = |v: Verdict| s.candidates.iter().filter(|c| c.gate.verdict == v).count();
    let ranked_only = s
        .candidates
        .iter()
        .filter(|c| c.gate.verdict == Verdict::NotRun && c.status == Status::Predicted)
        .count();
    VerdictCounts {
        passed: count(Verdict::Pass),
        failed: count(Verdict::Fail),
        not_run: count(Verdict::NotRun) - ranked_only,
        ranked_only,
    }
}

/// The candidates whose output bits differ from the canonical output.
pub fn failed(s: &ShapeReport) -> impl Iterator<Item = &Candidate> {
    s.candidates
        .iter()
        .filter(|c| c.gate.verdict == Verdict::Fail)
}

/// The benchmarked candidates that never produced an output (not the ranked-only ones).
pub fn not_run(s: &ShapeReport) -> impl Iterator<Item = &Candidate> {
    s.candidates
        .iter()
        .filter(|c| c.gate.verdict == Verdict::NotRun && !matches!(c.status, Status::Predicted))
}
