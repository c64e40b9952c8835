//! The measuring commands end to end on the simulated device (`FORGE_TEST_SIMULATED_DEVICE=1`,
//! `forge::device::simulated`): `forge tune` with its second screen, worker faults and the
//! watchdog, and `forge calibrate` with its confirmation rounds and the fit of its data. The
//! workers answer from the cost model, so these runs check the orchestration (what is screened,
//! recorded, restarted and written), never kernel speed. Needs libnvrtc (the tuner compiles its
//! candidates; CI installs it), no GPU.

mod common;

use forge::device::simulated;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn nvrtc_or_skip() -> bool {
    if forge::device::nvrtc::available() {
        return true;
    }
    common::skipped("libnvrtc not found: the simulated tune compiles its candidates");
    false
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("forge-sim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs forge on the simulated device with a kernel cache shared by these tests.
fn forge(args: &[&str], env: &[(&str, &str)]) -> Output {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("simulated-kernel-cache");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_forge"));
    cmd.args(args)
        .env(simulated::ENV, "1")
        .env("FORGE_CACHE", &cache)
        .env_remove("FORGE_TEST_INJECT")
        .env_remove(simulated::SCATTER_ENV);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("forge runs")
}

fn ok(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success(),
        "forge failed ({}):\n{err}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout)
    );
    err
}

/// (schedule, status, screen) of every report.csv row.
fn report_rows(run: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(run.join("report.csv")).unwrap();
    let mut rows = csv_rows(&text);
    let header = rows.remove(0);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (s, st, sc) = (col("Operation"), col("Status"), col("Screen"));
    rows.iter()
        .map(|r| (r[s].clone(), r[st].clone(), r[sc].clone()))
        .collect()
}

/// A minimal CSV reader: quoted fields with doubled quotes, no newlines inside fields.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| {
            let (mut fields, mut cur, mut quoted) = (vec![], String::new(), false);
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '"' if quoted && chars.peek() == Some(&'"') => {
                        cur.push('"');
                        chars.next();
                    }
                    '"' => quoted = !quoted,
                    ',' if !quoted => fields.push(std::mem::take(&mut cur)),
                    _ => cur.push(c),
                }
            }
            fields.push(cur);
            fields
        })
        .collect()
}

const SHAPE: &str = "3000x5000x1000";

/// `forge tune` of [`SHAPE`], 4 candidates, into `run` and `profile`.
fn tune_args(run: &Path, profile: &Path) -> Vec<String> {
    let args = [
        "tune",
        "--arch",
        "sm_90a",
        "--shapes",
        SHAPE,
        "--top",
        "4",
        "--watchdog",
        "5",
    ];
    let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    for (flag, path) in [("--run-dir", run), ("--profile", profile)] {
        v.push(flag.into());
        v.push(path.to_str().unwrap().into());
    }
    v.push("--no-plots".into());
    v
}

fn tune(dir: &Path, env: &[(&str, &str)]) -> (PathBuf, PathBuf, String) {
    let (run, profile) = (dir.join("run"), dir.join("profile.toml"));
    let args = tune_args(&run, &profile);
    let o = forge(&args.iter().map(String::as_str).collect::<Vec<_>>(), env);
    let err = ok(&o);
    (run, profile, err)
}

#[test]
fn a_simulated_tune_screens_twice_and_writes_a_profile_that_names_the_simulation() {
    if !nvrtc_or_skip() {
        return;
    }
    let dir = tmp("tune");
    let (run, profile, err) = tune(&dir, &[]);
    let rows = report_rows(&run);
    let first = rows.iter().filter(|r| r.2 == "1").count();
    let second: Vec<_> = rows.iter().filter(|r| r.2 == "2").collect();
    assert!(first >= 4, "{first} first-screen rows");
    assert!(!second.is_empty(), "no second-screen rows:\n{err}");
    assert!(
        err.contains("launch variants of the 2 fastest kernels"),
        "{err}"
    );
    // The second screen times launch variants of kernels the first screen timed.
    let kernel = |name: &str| {
        let s: forge::schedule::Schedule = name.parse().unwrap();
        (s.tile, s.stages, s.workers, s.cluster, s.split_k)
    };
    for (name, status, _) in &second {
        assert_eq!(status, "measured", "{name}");
        assert!(
            rows.iter()
                .any(|r| r.2 == "1" && kernel(&r.0) == kernel(name)),
            "{name} is not a launch variant of a first-screen kernel"
        );
    }
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains(simulated::NAME), "{text}");
    let p = forge::profile::Profile::load(&profile).unwrap();
    assert_eq!(p.entries.len(), 1);
    let chosen = &p.entries[0].schedule;
    assert!(
        rows.iter().any(|r| &r.0 == chosen && r.1 == "measured"),
        "the chosen {chosen} was not measured"
    );
}

#[test]
fn a_faulting_and_a_hanging_candidate_cost_only_themselves() {
    if !nvrtc_or_skip() {
        return;
    }
    let dir = tmp("inject");
    let (run, _, _) = tune(&dir.join("clean"), &[]);
    let rows = report_rows(&run);
    // Two first-screen candidates that are not the model's first pick.
    let victims: Vec<&str> = rows
        .iter()
        .filter(|r| r.2 == "1")
        .map(|r| r.0.as_str())
        .skip(1)
        .take(2)
        .collect();
    assert_eq!(victims.len(), 2);
    let inject = format!("fault:{},hang:{}", victims[0], victims[1]);
    let (run, profile, err) = tune(&dir.join("faulty"), &[("FORGE_TEST_INJECT", &inject)]);
    let rows = report_rows(&run);
    let status = |name: &str| {
        rows.iter()
            .find(|r| r.0 == name)
            .map(|r| r.1.clone())
            .unwrap_or_default()
    };
    assert!(
        status(victims[0]).starts_with("Faulted"),
        "{}",
        status(victims[0])
    );
    assert!(
        status(victims[1]).starts_with("TimedOut"),
        "{}",
        status(victims[1])
    );
    let measured = rows.iter().filter(|r| r.1 == "measured").count();
    assert!(measured >= 3, "{measured} measured after the fault:\n{err}");
    assert!(profile.exists());
}

#[test]
fn a_simulated_calibration_confirms_the_near_best_and_its_fit_sees_the_scatter() {
    if !nvrtc_or_skip() {
        return;
    }
    let dir = tmp("calibrate");
    let out = dir.join("data");
    let o = forge(
        &[
            "calibrate",
            "--arch",
            "sm_90a",
            "--shapes",
            "512x512x512,2048x8192x512",
            "--top",
            "8",
            "--sample",
            "8",
            "--repeat",
            "4",
            "--heat-ms",
            "250",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    ok(&o);
    let data = forge::calibrate::data::CalibrationData::load(&out).unwrap();
    assert_eq!(data.device_name, simulated::NAME);
    // The data records how it was timed.
    assert_eq!(data.timing.heat_ms, 250.0);
    assert_eq!(data.shapes.len(), 2);
    for s in &data.shapes {
        let confirmed = s.points.iter().filter(|p| !p.repeats_us.is_empty()).count();
        assert!(
            confirmed >= 4,
            "{}: {confirmed} points confirmed",
            s.problem.shape
        );
        assert!(
            s.points
                .iter()
                .all(|p| p.repeats_us.is_empty() || p.repeats_us.len() == 4)
        );
    }
    let o = forge(
        &[
            "calibrate",
            "--fit",
            out.to_str().unwrap(),
            "--sweeps",
            "0",
            "--no-loso",
            "--out",
            dir.join("fit").to_str().unwrap(),
        ],
        &[],
    );
    ok(&o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    // One timing's scatter is uniform within ±0.6%: its standard deviation is 0.35%, and the
    // estimate (1.4826 · median |ln(a/b)| / √2) expects 0.37%. Four repeats give each
    // confirmed point ten pairs, so that the estimate's own scatter stays well inside the band
    // (with two, which points the model's ranking confirms moved it to 0.51%).
    let line = stdout
        .lines()
        .find(|l| l.contains("shapes with repeated timings"))
        .unwrap_or_else(|| panic!("no noise line:\n{stdout}"));
    let noise: f64 = line
        .split("one timing's noise ")
        .nth(1)
        .and_then(|t| t.split('%').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((0.2..0.5).contains(&noise), "{line}");
}

#[test]
fn a_simulated_run_never_writes_to_the_default_locations_nor_into_measured_results() {
    // Run from an empty folder: a regression would write profiles/ and reports/ there.
    let dir = tmp("defaults");
    let in_dir = |args: &[&str]| {
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("simulated-kernel-cache");
        Command::new(env!("CARGO_BIN_EXE_forge"))
            .args(args)
            .current_dir(&dir)
            .env(simulated::ENV, "1")
            .env("FORGE_CACHE", &cache)
            .env_remove("FORGE_TEST_INJECT")
            .env_remove(simulated::SCATTER_ENV)
            .output()
            .unwrap()
    };
    let fails = |args: &[&str], needle: &str| {
        let o = in_dir(args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    fails(
        &["tune", "--arch", "sm_90a", "--shapes", "D512"],
        "--profile",
    );
    fails(
        &[
            "tune",
            "--arch",
            "sm_90a",
            "--shapes",
            "D512",
            "--profile",
            "p.toml",
        ],
        "--run-dir",
    );
    fails(
        &["calibrate", "--arch", "sm_90a", "--shapes", "D512"],
        "--out",
    );
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    // A profile that holds device measurements (a copy of the shipped one) is not merged into.
    if !nvrtc_or_skip() {
        return;
    }
    let real = dir.join("real.toml");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/sm_90a-h200.toml"),
        &real,
    )
    .unwrap();
    let before = std::fs::read(&real).unwrap();
    fails(
        &[
            "tune",
            "--arch",
            "sm_90a",
            "--shapes",
            "D512",
            "--top",
            "2",
            "--no-plots",
            "--profile",
            "real.toml",
            "--run-dir",
            "run",
        ],
        "refusing to mix simulated and device-measured results",
    );
    assert_eq!(std::fs::read(&real).unwrap(), before);
}

#[test]
fn workers_start_after_the_forge_binary_was_replaced() {
    if !nvrtc_or_skip() {
        return;
    }
    // A copy of forge runs the tune and is deleted once the tune has printed its candidates,
    // while they compile into a fresh cache (seconds), before any worker starts: the workers
    // still start (from the running image, not the path), and the tune completes.
    use std::io::{BufRead, BufReader};
    let dir = tmp("replaced");
    let exe = dir.join("forge-copy");
    std::fs::copy(env!("CARGO_BIN_EXE_forge"), &exe).unwrap();
    let mut child = Command::new(&exe)
        .args(tune_args(&dir.join("run"), &dir.join("profile.toml")))
        .env(simulated::ENV, "1")
        .env("FORGE_CACHE", dir.join("fresh-cache"))
        .env_remove("FORGE_TEST_INJECT")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut log = String::new();
    let mut seen = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        log.push_str(&line);
        log.push('\n');
        if line.contains("candidates") {
            seen = true;
            break;
        }
    }
    assert!(seen, "the tune never printed its candidates:\n{log}");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the tune ended before its binary was deleted:\n{log}"
    );
    std::fs::remove_file(&exe).unwrap();
    for line in lines {
        log.push_str(&line.unwrap());
        log.push('\n');
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}:\n{log}");
    assert!(log.contains("chosen"), "{log}");
    assert!(dir.join("profile.toml").exists());
}

#[test]
fn a_tune_spread_over_several_simulated_gpus_writes_every_shape_once() {
    if !nvrtc_or_skip() {
        return;
    }
    let dir = tmp("gpus");
    let (run, profile) = (dir.join("run"), dir.join("profile.toml"));
    let shapes = "3000x5000x1000,D1024,1000x1000x1001,2048x8192x512";
    let o = forge(
        &[
            "tune",
            "--arch",
            "sm_90a",
            "--shapes",
            shapes,
            "--top",
            "4",
            "--gpus",
            "all",
            "--no-plots",
            "--run-dir",
            run.to_str().unwrap(),
            "--profile",
            profile.to_str().unwrap(),
        ],
        &[(simulated::ENV, "3")],
    );
    let err = ok(&o);
    assert!(err.contains("measuring on 3 GPUs"), "{err}");
    let p = forge::profile::Profile::load(&profile).unwrap();
    let mut tuned: Vec<String> = p
        .entries
        .iter()
        .map(|e| e.problem().shape.to_string())
        .collect();
    tuned.sort();
    let mut asked: Vec<String> = forge::shape::Shape::parse_list(shapes)
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    asked.sort();
    assert_eq!(tuned, asked);
    // A GPU the simulated machine does not have is refused by name.
    let o = forge(
        &[
            "tune",
            "--arch",
            "sm_90a",
            "--shapes",
            "D512",
            "--gpus",
            "0,5",
            "--run-dir",
            dir.join("r2").to_str().unwrap(),
            "--profile",
            dir.join("p2.toml").to_str().unwrap(),
        ],
        &[(simulated::ENV, "2")],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no device 5"));
}

#[test]
fn a_malformed_simulation_setting_is_refused_not_ignored() {
    for (var, value, needle) in [
        (simulated::ENV, "yes", "number of simulated devices"),
        (simulated::SCATTER_ENV, "0.9", "fraction in [0, 0.5]"),
    ] {
        let o = forge(
            &["rank", "--arch", "sm_90a", "--shapes", "D512"],
            &[(var, value)],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(needle),
            "{var}={value}: {err}"
        );
    }
}
