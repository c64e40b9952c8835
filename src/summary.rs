//! The Markdown summary of a run (`summary.md`): parity with cuBLAS, the bit-exact gate's
//! verdicts, the cost model's accuracy, the price of determinism and the provenance.
//! Written by `forge plot` beside the pictures and by `forge tune` at the end of a run;
//! works on any report, including a cost-model-only one. Every number comes from
//! [`crate::analysis`]; this module only writes Markdown.

use crate::analysis::determinism::{Timed, determinism_rows};
use crate::analysis::model_accuracy::{accuracy, fmt_regret, fmt_rho};
use crate::analysis::parity::{geometric_mean, parity_row};
use crate::analysis::tflops;
use crate::analysis::verdicts::{self, verdict_counts};
use crate::report::{Measurement, RunReport, Status};
use crate::schedule::LaunchOrder;
use crate::shape::Shape;
use std::fmt::Write;

const NONE: &str = "—";

/// The whole summary as Markdown.
pub fn summary_markdown(report: &RunReport) -> String {
    let mut md = String::new();
    let p = &report.provenance;
    let _ = writeln!(md, "# forge run summary\n");
    let _ = writeln!(
        md,
        "{} shape(s) on {}{}.\n",
        report.shapes.len(),
        if p.device_name.is_empty() {
            "an unnamed device"
        } else {
            &p.device_name
        },
        if p.arch.is_empty() {
            String::new()
        } else {
            format!(" ({})", p.arch)
        }
    );
    if !p.measured {
        let _ = writeln!(
            md,
            "> Cost-model-only run: nothing was timed; schedules are ranked by prediction.\n"
        );
    }
    parity(&mut md, report);
    gate(&mut md, report);
    numerics(&mut md, report);
    model(&mut md, report);
    determinism(&mut md, report);
    provenance(&mut md, report);
    md
}

/// Makes text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A schedule name as inline code.
fn code(name: &str) -> String {
    format!("`{}`", cell(name))
}

fn us(m: Option<&Measurement>) -> String {
    m.map_or(NONE.to_string(), |m| format!("{:.2}", m.median_us))
}

fn tf(shape: &Shape, m: Option<&Measurement>) -> String {
    m.map_or(NONE.to_string(), |m| format!("{:.1}", tflops(shape, m)))
}

fn parity(md: &mut String, report: &RunReport) {
    let _ = writeln!(md, "## Parity with cuBLAS\n");
    let _ = writeln!(
        md,
        "ratio = cuBLAS median time / own median time of the chosen schedule \
         (> 1: own is faster); from the head-to-head's sustained regime where it ran (the \
         times shown), else the screen. burst: the head-to-head's burst regime (short batches \
         after idle gaps).\n"
    );
    let _ = writeln!(
        md,
        "| shape | dtype | layout | chosen schedule | own µs | own TFLOP/s | cuBLAS µs | cuBLAS TFLOP/s | ratio | burst |"
    );
    let _ = writeln!(md, "|---|---|---|---|---:|---:|---:|---:|---:|---:|");
    let (mut ratios, mut bursts) = (Vec::new(), Vec::new());
    // The lowest ratio of each regime and its shape.
    type Lowest = Option<(f64, Shape)>;
    let (mut worst, mut worst_burst): (Lowest, Lowest) = (None, None);
    let lower = |w: &mut Lowest, r: f64, shape: Shape| {
        if w.is_none_or(|(b, _)| r < b) {
            *w = Some((r, shape));
        }
    };
    for s in &report.shapes {
        let row = parity_row(s);
        ratios.extend(row.ratio);
        let burst = s.head_to_head.as_ref().and_then(|h| h.burst_ratio());
        bursts.extend(burst);
        if let Some(r) = row.ratio {
            lower(&mut worst, r, s.problem.shape);
        }
        if let Some(r) = burst {
            lower(&mut worst_burst, r, s.problem.shape);
        }
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.problem.shape,
            s.problem.dtype,
            s.problem.layout.as_str(),
            row.schedule.map_or(NONE.to_string(), |sc| {
                let launch = s.head_to_head.as_ref().map(|h| h.launch);
                match launch {
                    Some(LaunchOrder::Programmatic) => {
                        format!("{} (programmatic)", code(&sc.name()))
                    }
                    _ => code(&sc.name()),
                }
            }),
            us(row.own),
            tf(&s.problem.shape, row.own),
            us(row.cublas),
            tf(&s.problem.shape, row.cublas),
            row.ratio.map_or(NONE.to_string(), |r| format!("{r:.3}")),
            burst.map_or(NONE.to_string(), |r| format!("{r:.3}"))
        );
    }
    if let Some(mean) = geometric_mean(&ratios) {
        let _ = writeln!(
            md,
            "\nGeometric mean ratio over {} shape(s): {mean:.3}{}.",
            ratios.len(),
            worst.map_or(String::new(), |(r, s)| format!("; lowest {r:.3} at {s}"))
        );
    }
    if let Some(mean) = geometric_mean(&bursts) {
        let _ = writeln!(
            md,
            "Burst regime: geometric mean {mean:.3} over {} shape(s){}.",
            bursts.len(),
            worst_burst.map_or(String::new(), |(r, s)| format!("; lowest {r:.3} at {s}"))
        );
    }
    md.push('\n');
}

fn status_text(status: &Status) -> String {
    match status {
        Status::Measured => "measured".to_string(),
        Status::CompileFailed(r) => format!("compile failed: {r}"),
        Status::LaunchFailed(r) => format!("launch failed: {r}"),
        Status::Faulted(r) => format!("faulted: {r}"),
        Status::TimedOut(r) => format!("timed out: {r}"),
        Status::Predicted => "ranked only".to_string(),
    }
}

fn gate(md: &mut String, report: &RunReport) {
    let _ = writeln!(md, "## Bit-exact gate\n");
    let _ = writeln!(
        md,
        "Every candidate's output is compared bit for bit with the canonical schedule's. \
         *not run*: the candidate never produced an output (compile, launch, fault, timeout); \
         *ranked only*: predicted but not benchmarked.\n"
    );
    let _ = writeln!(
        md,
        "| shape | passed | failed | not run | ranked only | FP64 reference check |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---|");
    let mut details = String::new();
    for s in &report.shapes {
        let counts = verdict_counts(s);
        let reference = s.reference.as_ref().map_or(NONE.to_string(), |r| {
            format!(
                "{} (rel_rms {:.2e}, tolerance {:.1e}, {} samples)",
                if r.passed { "passed" } else { "FAILED" },
                r.rel_rms,
                r.tolerance,
                r.samples
            )
        });
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            s.problem.shape,
            counts.passed,
            counts.failed,
            counts.not_run,
            counts.ranked_only,
            reference
        );
        for c in verdicts::failed(s) {
            let _ = writeln!(
                details,
                "- {}: {} failed: {} element(s) differ, rel_rms {:.3e}, max |Δ| {:.3e}",
                s.problem.shape,
                code(&c.schedule.name()),
                c.gate.differing,
                c.gate.rel_rms,
                c.gate.max_abs_diff
            );
        }
        for c in verdicts::not_run(s) {
            let _ = writeln!(
                details,
                "- {}: {} not run: {}",
                s.problem.shape,
                code(&c.schedule.name()),
                cell(&status_text(&c.status))
            );
        }
    }
    if !details.is_empty() {
        let _ = writeln!(md, "\n{details}");
    } else {
        md.push('\n');
    }
}

/// Accuracy beside cuBLAS, bits against cuBLAS's, and the bit model's check of the canonical
/// output, per measured shape.
fn numerics(md: &mut String, report: &RunReport) {
    let rows: Vec<_> = report
        .shapes
        .iter()
        .filter(|s| s.cublas_accuracy.is_some() || s.bitmodel.is_some())
        .collect();
    if rows.is_empty() {
        return;
    }
    let contract = &report.provenance.numerical_contract;
    let _ = writeln!(
        md,
        "## Numerics
"
    );
    let _ = writeln!(
        md,
        "Contract {}. rel_rms against the FP64 reference on the reference check's samples; \
         *bits = cuBLAS*: elements of the whole output bit-identical to cuBLAS's on the same \
         inputs (below 100% where cuBLAS runs another algorithm); *bit model*: sampled \
         elements of the canonical output equal to the CPU model of the tensor cores.\n",
        if contract.is_empty() { NONE } else { contract }
    );
    let _ = writeln!(
        md,
        "| shape | own rel_rms | cuBLAS rel_rms | bits = cuBLAS | bit model |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    for s in rows {
        let own = s
            .reference
            .as_ref()
            .map_or(NONE.to_string(), |r| format!("{:.2e}", r.rel_rms));
        let (cublas, bits) =
            s.cublas_accuracy
                .as_ref()
                .map_or((NONE.to_string(), NONE.to_string()), |a| {
                    let shape = s.problem.shape;
                    let elements = shape.m as u64 * shape.n as u64;
                    (
                        format!("{:.2e}", a.reference.rel_rms),
                        format!("{:.4}%", 100.0 * a.identical_fraction(elements)),
                    )
                });
        let model = s
            .bitmodel
            .as_ref()
            .map_or(NONE.to_string(), |b| format!("{}/{}", b.equal, b.samples));
        let _ = writeln!(
            md,
            "| {} | {own} | {cublas} | {bits} | {model} |",
            s.problem.shape
        );
    }
    let _ = writeln!(md);
}

fn model(md: &mut String, report: &RunReport) {
    let _ = writeln!(md, "## Cost model accuracy\n");
    let acc = accuracy(report);
    if acc.is_empty() {
        let _ = writeln!(md, "No timed candidates to compare predictions with.\n");
        return;
    }
    let _ = writeln!(
        md,
        "Spearman ρ between predicted and measured time over the timed candidates; top-1 \
         regret: how much slower the model's first pick among them is than the fastest.\n"
    );
    let _ = writeln!(
        md,
        "| shape | timed | Spearman ρ | top-1 regret | model's pick | measured fastest |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---|---|");
    for a in &acc {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            a.shape,
            a.n,
            fmt_rho(a.rho),
            fmt_regret(a.regret_pct),
            code(&a.model_pick),
            code(&a.measured_best)
        );
    }
    md.push('\n');
}

fn determinism(md: &mut String, report: &RunReport) {
    let _ = writeln!(md, "## Price of determinism\n");
    let rows = determinism_rows(report);
    if rows.is_empty() {
        let _ = writeln!(md, "No timed candidates.\n");
        return;
    }
    let _ = writeln!(
        md,
        "price = fastest gate-passing time / fastest time overall (split-K included) − 1.\n"
    );
    let _ = writeln!(
        md,
        "| shape | fastest bit-exact | µs | fastest overall | µs | price | cuBLAS µs |"
    );
    let _ = writeln!(md, "|---|---|---:|---|---:|---:|---:|");
    let name = |t: &Option<Timed>| t.as_ref().map_or(NONE.to_string(), |t| code(&t.name));
    let time = |t: &Option<Timed>| {
        t.as_ref()
            .map_or(NONE.to_string(), |t| format!("{:.2}", t.us))
    };
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.shape,
            name(&r.passing),
            time(&r.passing),
            name(&r.overall),
            time(&r.overall),
            r.price_pct.map_or(NONE.to_string(), |p| format!("{p:.1}%")),
            time(&r.cublas)
        );
    }
    md.push('\n');
}

fn provenance(md: &mut String, report: &RunReport) {
    let p = &report.provenance;
    let _ = writeln!(md, "## Provenance\n");
    let _ = writeln!(md, "| | |");
    let _ = writeln!(md, "|---|---|");
    let or_none = |s: &str| {
        if s.is_empty() {
            NONE.to_string()
        } else {
            cell(s)
        }
    };
    let rows: [(&str, String); 13] = [
        ("device", or_none(&p.device_name)),
        ("architecture", or_none(&p.arch)),
        (
            "SMs / L2 / SM clock",
            format!(
                "{} / {} MiB / {:.0} MHz",
                p.sm_count,
                p.l2_bytes >> 20,
                p.sm_clock_mhz
            ),
        ),
        ("driver", or_none(&p.driver_version)),
        ("NVRTC", or_none(&p.nvrtc_version)),
        ("cuBLAS", or_none(&p.cublas_version)),
        (
            "forge",
            format!(
                "{} ({})",
                or_none(&p.forge_version),
                or_none(&p.git_revision)
            ),
        ),
        ("date", or_none(&p.date)),
        ("command", format!("`{}`", cell(&p.command))),
        ("measured", p.measured.to_string()),
        ("timing method", or_none(&p.timing_method)),
        ("cuBLAS mode", or_none(&p.cublas_mode)),
        (
            "shapes",
            report
                .shapes
                .iter()
                .map(|s| s.problem.shape.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(md, "| {k} | {v} |");
    }
}
