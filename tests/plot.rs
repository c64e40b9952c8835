//! `forge plot` from a synthetic run report: every picture is written at the stated size,
//! a report without timings is refused, the summary carries the parity table, and the rank
//! correlation behind the cost-model plot is right.

use forge::analysis::model_accuracy::{self, average_ranks, spearman, top1_regret_pct};
use forge::analysis::{determinism, winner_map};
use forge::outputs::render_all;
use forge::plot::{self, HEIGHT, PlotError, WIDTH};
use forge::report::{RunReport, Status, Verdict};
use forge::summary::summary_markdown;
use std::path::{Path, PathBuf};

const FIXTURE: &str = "tests/fixtures/plot_report";
const STEMS: [&str; 4] = ["parity", "winner_map", "model_vs_measured", "determinism"];

fn fixture() -> RunReport {
    RunReport::load(Path::new(FIXTURE)).expect("fixture parses as a RunReport")
}

/// A fresh, empty output directory under the target dir, one per test.
fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plot-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn fixture_is_synthetic_and_covers_the_cases() {
    let r = fixture();
    assert_eq!(r.provenance.command, "synthetic test fixture");
    assert_eq!(r.shapes.len(), 3);
    let all = || r.shapes.iter().flat_map(|s| &s.candidates);
    assert!(
        all().any(|c| c.gate.verdict == Verdict::Fail && c.schedule.name().ends_with("_k2")),
        "a split-K gate failure"
    );
    assert!(all().any(|c| matches!(c.status, Status::CompileFailed(_))));
}

#[test]
fn every_plot_is_written_at_the_stated_size() {
    let dir = out_dir("all");
    let written = render_all(&fixture(), &dir).expect("plots render");
    assert_eq!((WIDTH, HEIGHT), (1200, 800));
    for stem in STEMS {
        let png = dir.join(format!("{stem}.png"));
        assert!(written.contains(&png), "{stem}.png listed");
        let img = image::open(&png)
            .unwrap_or_else(|e| panic!("{} decodes: {e}", png.display()))
            .to_rgb8();
        assert_eq!(img.dimensions(), (WIDTH, HEIGHT), "{stem}.png size");
        // Not a blank picture: a plot has plenty of non-white pixels.
        let inked = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
        assert!(inked > 5_000, "{stem}.png has only {inked} drawn pixels");

        let svg_path = dir.join(format!("{stem}.svg"));
        assert!(written.contains(&svg_path), "{stem}.svg listed");
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        let root = svg
            .find("<svg")
            .map(|i| &svg[i..i + svg[i..].find('>').unwrap()])
            .unwrap_or_else(|| panic!("{stem}.svg has a root <svg element"));
        assert!(root.contains(&format!("width=\"{WIDTH}\"")), "{root}");
        assert!(root.contains(&format!("height=\"{HEIGHT}\"")), "{root}");
        assert!(svg.trim_end().ends_with("</svg>"), "{stem}.svg is complete");
        assert!(svg.contains("<text"), "{stem}.svg has text (axis labels)");
    }
    let summary = dir.join(plot::SUMMARY_MD);
    assert!(written.contains(&summary));
    assert_eq!(written.len(), 2 * STEMS.len() + 1);
}

#[test]
fn a_report_without_timings_is_refused() {
    let mut r = fixture();
    for s in &mut r.shapes {
        for c in &mut s.candidates {
            c.measured = None;
        }
    }
    let dir = out_dir("unmeasured");
    let err = render_all(&r, &dir).unwrap_err();
    assert!(matches!(err, PlotError::NothingMeasured), "{err}");
    assert!(err.to_string().contains("nothing to plot"), "{err}");
    assert!(!dir.join("parity.png").exists(), "no empty picture");
    assert!(matches!(
        render_all(&RunReport::default(), &dir),
        Err(PlotError::NothingMeasured)
    ));
}

#[test]
fn summary_has_the_parity_table_rows() {
    let md = summary_markdown(&fixture());
    // 4096³: chosen wgmma 128x256 at 341 µs against cuBLAS at 330 µs.
    let row = md
        .lines()
        .find(|l| l.starts_with("| 4096x4096x4096 |") && l.contains("wgmma_tf32_128x256x32"))
        .unwrap_or_else(|| panic!("parity row for 4096³ in\n{md}"));
    assert!(
        row.contains("| 341.00 |") && row.contains("| 330.00 |"),
        "{row}"
    );
    assert!(row.trim_end().ends_with("| 0.968 | — |"), "{row}"); // no burst regime in the fixture
    // 1024x8192x4096: the 128x128 schedule beats cuBLAS (180 / 178).
    assert!(
        md.lines().any(|l| l.starts_with("| 1024x8192x4096 |")
            && l.contains("wgmma_tf32_128x128x32_s4_wg1")
            && l.trim_end().ends_with("| 1.011 | — |")),
        "{md}"
    );
    assert!(md.lines().any(|l| l.starts_with("| 128x21504x5376 |")));
    // Gate: the split-K failure with its differing count, and the compile failure.
    assert!(md.contains("8381952 element(s) differ"), "{md}");
    assert!(md.contains("compile failed: ptxas error"), "{md}");
    // Provenance and the sections.
    for needle in [
        "## Parity with cuBLAS",
        "## Bit-exact gate",
        "## Cost model accuracy",
        "## Price of determinism",
        "## Provenance",
        "synthetic test fixture",
    ] {
        assert!(md.contains(needle), "missing {needle}");
    }
}

#[test]
fn summary_of_a_cost_model_only_report_does_not_fail() {
    let mut r = fixture();
    r.provenance.measured = false;
    for s in &mut r.shapes {
        s.chosen = None;
        s.cublas = None;
        for c in &mut s.candidates {
            c.measured = None;
        }
    }
    let md = summary_markdown(&r);
    assert!(md.contains("Cost-model-only run"));
    assert!(md.lines().any(|l| l.starts_with("| 4096x4096x4096 |")));
}

#[test]
fn spearman_perfect_reversed_and_ties() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    // Monotone but nonlinear: still a perfect rank correlation.
    let y = [1.0, 8.0, 27.0, 64.0, 1000.0];
    assert!((spearman(&x, &y).unwrap() - 1.0).abs() < 1e-12);
    let rev = [50.0, 40.0, 30.0, 20.0, 10.0];
    assert!((spearman(&x, &rev).unwrap() + 1.0).abs() < 1e-12);

    // Ties get the average rank: ranks of y are [1, 2.5, 2.5, 4]; ρ = 4.5/√22.5.
    let y = [10.0, 20.0, 20.0, 30.0];
    let x = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(average_ranks(&y), vec![1.0, 2.5, 2.5, 4.0]);
    let expected = 4.5 / 22.5f64.sqrt();
    assert!((spearman(&x, &y).unwrap() - expected).abs() < 1e-12);

    // Undefined cases.
    assert_eq!(spearman(&[1.0], &[2.0]), None);
    assert_eq!(spearman(&[1.0, 2.0], &[3.0, 3.0]), None);
    assert_eq!(spearman(&[1.0, 2.0], &[1.0]), None);
}

#[test]
fn regret_and_accuracy_on_the_fixture() {
    // Model's pick (rank 1) at 110 µs, fastest at 100 µs: 10% regret.
    assert!((top1_regret_pct(&[(2, 100.0), (1, 110.0)]).unwrap() - 10.0).abs() < 1e-9);
    assert_eq!(top1_regret_pct(&[(1, 100.0), (2, 110.0)]), Some(0.0));
    let acc = model_accuracy::accuracy(&fixture());
    assert_eq!(acc.len(), 3);
    // 4096³: predictions order the timed candidates exactly as measured.
    assert_eq!(acc[0].rho, Some(1.0));
    assert_eq!(acc[0].regret_pct, Some(0.0));
    // 1024x8192x4096: the model's pick (186 µs) is slower than split-K's 171 µs.
    let r = acc[1].regret_pct.unwrap();
    assert!((r - (186.0 / 171.0 - 1.0) * 100.0).abs() < 1e-9, "{r}");
}

#[test]
fn winner_map_uses_the_most_common_k_and_marks_measured_points() {
    let r = fixture();
    assert_eq!(winner_map::most_common_k(&r), Some(4096));
    let grid = winner_map::log_grid(128, 16384, 15);
    assert_eq!((grid[0], *grid.last().unwrap()), (128, 16384));
    let map = winner_map::winner_map(&r);
    assert_eq!(map.k, 4096);
    let measured: Vec<_> = map.winners.iter().filter(|w| w.measured).collect();
    assert_eq!(measured.len(), 2, "the two tuned shapes at K = 4096");
    assert!(
        map.winners.iter().any(|w| !w.measured),
        "cost-model predictions fill the grid ({:?})",
        map.note
    );
}

#[test]
fn price_of_determinism_on_the_fixture() {
    let rows = determinism::determinism_rows(&fixture());
    // 4096³: the fastest is bit-exact, no price.
    assert_eq!(rows[0].price_pct, Some(0.0));
    // 1024x8192x4096: split-K at 171 µs against bit-exact 178 µs.
    let p = rows[1].price_pct.unwrap();
    assert!((p - (178.0 / 171.0 - 1.0) * 100.0).abs() < 1e-9, "{p}");
}

#[test]
fn plots_without_baseline_or_passing_schedules_still_render() {
    // No cuBLAS time anywhere and every timed candidate rejected by the gate: the parity
    // map says so in words, the other plots still have their measurements.
    let mut r = fixture();
    for s in &mut r.shapes {
        s.cublas = None;
        s.chosen = None;
        for c in &mut s.candidates {
            if c.measured.is_some() {
                c.gate.verdict = Verdict::Fail;
                c.gate.differing = 1;
            }
        }
    }
    let dir = out_dir("degenerate");
    let written = render_all(&r, &dir).expect("plots render");
    assert_eq!(written.len(), 2 * STEMS.len() + 1);
    let svg = std::fs::read_to_string(dir.join("parity.svg")).unwrap();
    assert!(svg.contains("no shape has both a timed own schedule and a cuBLAS baseline"));
    let md = std::fs::read_to_string(dir.join(plot::SUMMARY_MD)).unwrap();
    assert!(md.contains("| 4096x4096x4096 | tf32 | tn | — |"), "{md}");
}

#[test]
fn winner_map_predicts_only_bit_exact_schedules_and_covers_tuned_shapes() {
    let mut r = fixture();
    // A tuned shape beyond the default grid: N = 28672 at the common K.
    let mut wide = r.shapes[0].clone();
    wide.problem.shape.m = 128;
    wide.problem.shape.n = 28672;
    r.shapes.push(wide);
    let map = winner_map::winner_map(&r);
    assert_eq!(map.grid_max, 32768, "28672 rounded up to a power of two");
    assert_eq!(winner_map::grid_max([100, 16384]), 16384);
    assert_eq!(winner_map::grid_steps(16384), 15);
    assert!(map.winners.iter().any(|w| !w.measured && w.n == 32768));
    for w in map.winners.iter().filter(|w| !w.measured) {
        let s: forge::schedule::Schedule = w.schedule.parse().expect("schedule name parses");
        assert!(
            !s.changes_reduction_order(),
            "predicted {} at {}x{} is split-K",
            w.schedule,
            w.m,
            w.n
        );
    }
}

#[test]
fn crowded_reports_keep_their_legends_inside_the_picture() {
    let mut r = fixture();
    let base = r.shapes[0].clone();
    for i in 0..30 {
        let mut s = base.clone();
        s.problem.shape.m = 256 + 64 * i;
        r.shapes.push(s);
    }
    let dir = out_dir("crowded");
    render_all(&r, &dir).expect("plots render");
    let parity = std::fs::read_to_string(dir.join("parity.svg")).unwrap();
    assert!(
        parity.contains("more in summary.md"),
        "parity legend overflow note"
    );
    let det = determinism::determinism_rows(&r);
    assert_eq!(det[0].label, "D4096");
    assert_eq!(det[1].label, "1024×8192×4096");
    let svg = std::fs::read_to_string(dir.join("determinism.svg")).unwrap();
    assert!(
        svg.contains("same schedule"),
        "determinism legend summarises"
    );
}

#[test]
fn summary_names_the_lowest_ratio_of_each_regime_and_programmatic_launches() {
    use forge::report::{HeadToHead, RegimeTimes};
    use forge::schedule::LaunchOrder;
    let mut r = fixture();
    let md = summary_markdown(&r);
    let line = md
        .lines()
        .find(|l| l.starts_with("Geometric mean ratio over 3 shape(s)"))
        .unwrap_or_else(|| panic!("geomean line in\n{md}"));
    assert!(
        line.ends_with("; lowest 0.941 at 128x21504x5376."),
        "{line}"
    );
    assert!(
        !md.contains("Burst regime"),
        "no burst regime in the fixture"
    );
    assert!(!md.contains("(programmatic)"), "{md}");
    // A programmatic head-to-head for 1024x8192x4096, its burst regime lower than the others'.
    let s = r
        .shapes
        .iter_mut()
        .find(|s| s.problem.shape.to_string() == "1024x8192x4096")
        .unwrap();
    let (chosen, own, cublas) = s
        .parity()
        .map(|(c, o, b)| (c, o.clone(), b.clone()))
        .unwrap();
    let mut slow = own.clone();
    slow.median_us = cublas.median_us / 0.5;
    s.head_to_head = Some(HeadToHead {
        schedule: chosen,
        launch: LaunchOrder::Programmatic,
        own,
        cublas: cublas.clone(),
        rounds: 3,
        burst: Some(RegimeTimes { own: slow, cublas }),
    });
    let md = summary_markdown(&r);
    assert!(
        md.lines()
            .any(|l| l.starts_with("| 1024x8192x4096 |") && l.contains("` (programmatic) |")),
        "{md}"
    );
    assert!(
        md.contains(
            "Burst regime: geometric mean 0.500 over 1 shape(s); lowest 0.500 at 1024x8192x4096."
        ),
        "{md}"
    );
}
