//! The reproducers of "Reliability: never lose a measurement, refuse every invalid profile",
//! each run against the real binary as a user or a careless script would: measured data is
//! never replaced by less, files that are not profiles are never overwritten, concurrent tunes
//! both land, an interrupted write is finished by the next run, and every error is one line
//! naming what and where.
//!
//! These describe a machine without a GPU (CI); on a GPU machine `tune` measures, and the
//! tests that rely on a cost-model-only tune return early.

use forge::profile::{Gate, Profile};
use forge::report::RunReport;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn forge_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_forge"));
    c.args(args);
    c
}

fn forge(args: &[&str]) -> Output {
    forge_cmd(args).output().expect("forge runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("forge-rel-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn no_gpu_here() -> bool {
    !Path::new("/dev/nvidia0").exists()
}

fn shipped() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/profile_h200_trunc_17.toml"
    ))
    .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The one `error:` line of a failed run (asserting there is exactly one, and nothing after
/// it).
fn error_line(o: &Output) -> String {
    assert!(!o.status.success(), "succeeded: {}", stderr(o));
    let err = stderr(o);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert_eq!(err.lines().last(), Some(errors[0]), "{err}");
    errors[0].to_string()
}

fn fails_with(o: &Output, needles: &[&str]) -> String {
    let line = error_line(o);
    for n in needles {
        assert!(line.contains(n), "`{n}` not in: {line}");
    }
    line
}

/// The shipped profile's contract: these tunes run under it, so that only the rule each test
/// is about (arch, measured entries, …) tells the runs apart.
fn shipped_contract() -> &'static str {
    let text = String::from_utf8(shipped()).unwrap();
    Profile::parse(&text, "shipped")
        .unwrap()
        .meta
        .numerical_contract
        .name()
}

fn tune(arch: &str, shapes: &str, profile: &Path, run: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "tune",
        "--contract",
        shipped_contract(),
        "--arch",
        arch,
        "--shapes",
        shapes,
        "--profile",
        s(profile),
        "--run-dir",
        s(run),
        "--no-plots",
    ];
    args.extend_from_slice(extra);
    forge(&args)
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".tmp.") || n == ".forge-commit.json")
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_run_without_a_gpu_never_replaces_measured_entries() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("measured");
    let p = dir.join("sm_90a-h200.toml");
    std::fs::write(&p, shipped()).unwrap();
    let o = tune("sm_90a", "D2048", &p, &dir.join("run"), &[]);
    let line = fails_with(
        &o,
        &[
            "refusing to write cost-model predictions into",
            "sm_90a-h200.toml",
            "17 measured entries",
            "--force",
        ],
    );
    eprintln!("{line}");
    assert_eq!(std::fs::read(&p).unwrap(), shipped(), "the profile changed");
    assert!(!dir.join("run").exists(), "the run directory was written");
    // --force adds predictions beside the measured entries, which are kept (D2048 is
    // measured in the file: its entry stays).
    let o = tune("sm_90a", "D2048,D3000", &p, &dir.join("run"), &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = Profile::load(&p).unwrap();
    let before = Profile::parse(std::str::from_utf8(&shipped()).unwrap(), "x").unwrap();
    assert_eq!(after.entries.len(), 18);
    assert!(after.meta.measured);
    assert_eq!(after.meta.device_name, "NVIDIA H200");
    for e in &before.entries {
        assert!(after.entries.contains(e), "{e:?} lost");
    }
    let new = after.entries.iter().find(|e| e.m == 3000).unwrap();
    assert_eq!(new.gate, Gate::Unverified);
}

#[test]
fn a_run_for_another_arch_never_replaces_a_profile_without_force() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("arch");
    let p = dir.join("p.toml");
    std::fs::write(&p, shipped()).unwrap();
    let o = tune("sm_80", "D2048", &p, &dir.join("run"), &[]);
    let line = fails_with(
        &o,
        &[
            "refusing to replace",
            "it is the sm_90a profile",
            "this run is for sm_80",
        ],
    );
    eprintln!("{line}");
    assert_eq!(std::fs::read(&p).unwrap(), shipped());
    let o = tune("sm_80", "D2048", &p, &dir.join("run"), &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("replacing the sm_90a profile"),
        "{}",
        stderr(&o)
    );
    assert_eq!(Profile::load(&p).unwrap().meta.arch, "sm_80");
    // The run directory now holds an sm_80 report: an sm_90a run refuses it too.
    let other = dir.join("other.toml");
    let o = tune("sm_90a", "D2048", &other, &dir.join("run"), &[]);
    fails_with(
        &o,
        &["refusing to reuse run directory", "its report is for sm_80"],
    );
}

#[test]
fn files_that_are_not_profiles_are_never_overwritten_not_even_with_force() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("foreign");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "notes.txt",
            b"my notes: call Bob\n".to_vec(),
            "it is not TOML",
        ),
        ("binary.bin", vec![0xff, 0xfe, 0x00, 0x81], "not UTF-8"),
        (
            "other.toml",
            b"[package]\nname = \"x\"\n".to_vec(),
            "no [meta] table",
        ),
    ];
    for (name, bytes, reason) in cases {
        let p = dir.join(name);
        std::fs::write(&p, &bytes).unwrap();
        for extra in [&[][..], &["--force"][..]] {
            let o = tune("sm_90a", "D64", &p, &dir.join("run"), extra);
            let line = fails_with(
                &o,
                &[
                    "refusing to overwrite",
                    name,
                    "not a forge profile",
                    reason,
                    "not even with --force",
                ],
            );
            if extra.is_empty() {
                eprintln!("{line}");
            }
            assert_eq!(std::fs::read(&p).unwrap(), bytes, "{name} changed");
        }
    }
    // A directory (or an unreadable file) at the path: cannot be read, so not replaced.
    let d = dir.join("adir.toml");
    std::fs::create_dir_all(&d).unwrap();
    let o = tune("sm_90a", "D64", &d, &dir.join("run"), &["--force"]);
    fails_with(&o, &["refusing to overwrite", "cannot read it"]);
    // An empty file holds nothing: it is replaced.
    let empty = dir.join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let o = tune("sm_90a", "D64", &empty, &dir.join("run"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(Profile::load(&empty).unwrap().entries.len(), 1);
}

#[test]
fn an_invalid_forge_profile_is_replaced_only_with_force() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("invalid");
    let p = dir.join("p.toml");
    let text = String::from_utf8(shipped())
        .unwrap()
        .replace("entries = 17", "entries = 16");
    std::fs::write(&p, &text).unwrap();
    let o = tune("sm_90a", "D64", &p, &dir.join("run"), &[]);
    fails_with(
        &o,
        &["refusing to replace", "says entries = 16 but holds 17"],
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    let o = tune("sm_90a", "D64", &p, &dir.join("run"), &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(Profile::load(&p).unwrap().entries.len(), 1);
}

/// Two tunes into one profile at once, ten times: both runs' entries land every time (one
/// waits for the other's lock). Also with one shared run directory: both shapes land in the
/// report.
#[test]
fn concurrent_tunes_both_land_their_entries() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("concurrent");
    for round in 0..10 {
        let p = dir.join(format!("p{round}.toml"));
        let shared = dir.join(format!("shared{round}"));
        let runs: Vec<_> = [("D512", "a"), ("D1024", "b")]
            .iter()
            .map(|(shape, tag)| {
                let run = if round % 2 == 0 {
                    dir.join(format!("run{round}{tag}"))
                } else {
                    shared.clone()
                };
                forge_cmd(&[
                    "tune",
                    "--arch",
                    "sm_90a",
                    "--shapes",
                    shape,
                    "--profile",
                    s(&p),
                    "--run-dir",
                    s(&run),
                ])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for child in runs {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "round {round}: {}", stderr(&o));
        }
        let profile = Profile::load(&p).unwrap();
        let ms: Vec<u32> = profile.entries.iter().map(|e| e.m).collect();
        assert!(
            ms.contains(&512) && ms.contains(&1024),
            "round {round}: {ms:?}"
        );
        if round % 2 == 1 {
            let report = RunReport::load(&shared).unwrap();
            assert_eq!(
                report.shapes.len(),
                2,
                "round {round}: the shared report lost a shape"
            );
            let csv = std::fs::read_to_string(shared.join("report.csv")).unwrap();
            assert!(csv.contains(",512,512,512,") && csv.contains(",1024,1024,1024,"));
            assert!(
                temporaries(&shared).is_empty(),
                "{:?}",
                temporaries(&shared)
            );
        }
    }
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
}

/// A process killed at each point of the final write (report.json, report.csv and the
/// profile, one journaled commit) leaves the old files, or a journal that the next run into
/// the directory finishes; either way report and profile agree, and no temporary stays.
#[test]
fn an_interrupted_write_is_finished_by_the_next_run() {
    if !no_gpu_here() {
        return;
    }
    for point in ["staged", "journaled", "renamed:1", "renamed:2", "renamed:3"] {
        let dir = tmp(&format!("crash-{}", point.replace(':', "")));
        let (p, run) = (dir.join("p.toml"), dir.join("run"));
        assert!(tune("sm_90a", "D2048", &p, &run, &[]).status.success());
        let old_profile = std::fs::read(&p).unwrap();
        let old_json = std::fs::read(run.join("report.json")).unwrap();
        let old_csv = std::fs::read(run.join("report.csv")).unwrap();
        let o = forge_cmd(&[
            "tune",
            "--contract",
            shipped_contract(),
            "--arch",
            "sm_90a",
            "--shapes",
            "D4096",
            "--profile",
            s(&p),
            "--run-dir",
            s(&run),
            "--no-plots",
        ])
        .env(forge::durable::CRASH_ENV, point)
        .output()
        .unwrap();
        assert_eq!(
            o.status.code(),
            Some(forge::durable::CRASH_EXIT),
            "{point}: {}",
            stderr(&o)
        );
        let journal = run.join(forge::durable::JOURNAL).exists();
        assert_eq!(journal, point != "staged", "{point}");
        if point == "staged" {
            // Nothing renamed: every file is the old one.
            assert_eq!(std::fs::read(&p).unwrap(), old_profile);
            assert_eq!(std::fs::read(run.join("report.json")).unwrap(), old_json);
            assert_eq!(std::fs::read(run.join("report.csv")).unwrap(), old_csv);
        }
        // The next run into the directory finishes (or drops) the interrupted commit and
        // cleans the temporaries, then adds its own shape.
        let o = tune("sm_90a", "D1024", &p, &run, &[]);
        assert!(o.status.success(), "{point}: {}", stderr(&o));
        let profile = Profile::load(&p).unwrap();
        let report = RunReport::load(&run).unwrap();
        let mut in_profile: Vec<u32> = profile.entries.iter().map(|e| e.m).collect();
        let mut in_report: Vec<u32> = report.shapes.iter().map(|s| s.problem.shape.m).collect();
        in_profile.sort();
        in_report.sort();
        let expected = if point == "staged" {
            vec![1024, 2048]
        } else {
            vec![1024, 2048, 4096]
        };
        assert_eq!(in_profile, expected, "{point}");
        assert_eq!(in_report, expected, "{point}");
        let csv = std::fs::read_to_string(run.join("report.csv")).unwrap();
        for m in &expected {
            assert!(
                csv.contains(&format!(",{m},{m},{m},")),
                "{point}: csv lacks {m}"
            );
        }
        assert!(
            temporaries(&run).is_empty(),
            "{point}: {:?}",
            temporaries(&run)
        );
        assert!(
            temporaries(&dir).is_empty(),
            "{point}: {:?}",
            temporaries(&dir)
        );
    }
}

#[test]
fn stale_temporaries_of_dead_processes_are_removed() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("stale");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    // Pid 4194304 is above Linux's largest: never a running process.
    for f in [
        dir.join(".p.toml.tmp.4194304"),
        run.join(".report.json.tmp.4194304"),
        run.join(".report.csv.tmp.4194304"),
    ] {
        std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    }
    let o = tune("sm_90a", "D64", &dir.join("p.toml"), &run, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("removed 2 temporary file(s)"),
        "{}",
        stderr(&o)
    );
    assert!(temporaries(&dir).is_empty() && temporaries(&run).is_empty());
}

/// A directory forge cannot write in (a chmod-555 directory, or for root a read-only file
/// system such as /sys), or None when this machine has none.
fn read_only_dir() -> Option<PathBuf> {
    let d = tmp("ro");
    let mut perm = std::fs::metadata(&d).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    std::fs::set_permissions(&d, perm).unwrap();
    if std::fs::write(d.join("probe"), "x").is_err() {
        return Some(d.join("sub"));
    }
    let _ = std::fs::remove_file(d.join("probe"));
    let sys = PathBuf::from("/sys/forge-reliability-test");
    (std::fs::create_dir(&sys).is_err() && !sys.exists()).then_some(sys)
}

#[test]
fn an_unwritable_run_dir_or_profile_dir_fails_before_anything_is_written() {
    if !no_gpu_here() {
        return;
    }
    let Some(ro) = read_only_dir() else {
        eprintln!("SKIPPED: no read-only directory on this machine");
        return;
    };
    let dir = tmp("unwritable");
    let p = dir.join("p.toml");
    let o = tune("sm_90a", "D64", &p, &ro.join("run"), &[]);
    let line = fails_with(&o, &["run directory", s(&ro.join("run"))]);
    eprintln!("{line}");
    assert!(!p.exists(), "the profile was written");
    let run = dir.join("run");
    let o = tune("sm_90a", "D64", &ro.join("p.toml"), &run, &[]);
    fails_with(&o, &["profile directory", s(&ro)]);
    assert!(!run.exists(), "the run directory was created");
    // A file where the run directory should be.
    std::fs::write(dir.join("file"), "x").unwrap();
    let o = tune("sm_90a", "D64", &p, &dir.join("file/run"), &[]);
    fails_with(&o, &["is not a directory"]);
    assert!(!p.exists());
}

#[test]
fn io_errors_say_their_cause_once_and_name_the_path() {
    let dir = tmp("io");
    let missing = dir.join("missing.toml");
    let o = forge(&["select", "--profile", s(&missing), "D64"]);
    let line = fails_with(&o, &["cannot read profile", "missing.toml"]);
    assert_eq!(
        line.matches("No such file or directory").count(),
        1,
        "{line}"
    );
    let o = forge(&["plot", s(&dir.join("norun"))]);
    let line = fails_with(&o, &["cannot read report", "norun"]);
    assert_eq!(
        line.matches("No such file or directory").count(),
        1,
        "{line}"
    );
}

#[test]
fn profiles_that_are_not_text_or_too_large_fail_with_a_location_or_a_limit() {
    let dir = tmp("text");
    let mut bytes = shipped();
    let at = bytes.windows(5).position(|w| w == b"H200\"").unwrap();
    bytes[at] = 0xc3;
    let p = dir.join("latin1.toml");
    std::fs::write(&p, &bytes).unwrap();
    let o = forge(&["select", "--profile", s(&p), "D64"]);
    let line = fails_with(&o, &["latin1.toml", "not UTF-8", "line 4, column"]);
    eprintln!("{line}");
    // A 20,000-character line: a short message.
    let long = String::from_utf8(shipped()).unwrap().replacen(
        "device_name = \"NVIDIA H200\"",
        &format!("device_name = {}", "x".repeat(20_000)),
        1,
    );
    let p = dir.join("long.toml");
    std::fs::write(&p, long).unwrap();
    let o = forge(&["select", "--profile", s(&p), "D64"]);
    let line = fails_with(&o, &["long.toml", "line 4"]);
    assert!(line.len() < 600, "{} bytes: {line}", line.len());
    if Path::new("/dev/full").exists() {
        let o = forge(&["select", "--profile", "/dev/full", "D64"]);
        let line = fails_with(&o, &["/dev/full", "larger than 16 MiB"]);
        eprintln!("{line}");
    }
}

#[test]
fn invalid_profiles_are_refused_by_select() {
    let dir = tmp("select");
    let text = String::from_utf8(shipped()).unwrap();
    let cases = [
        (
            text.replacen(
                "wgmma_tf32_128x64x32_s7_wg1_swz16c_np_c1_k1\"\npredicted",
                "wgmma_tf32_128x64x32_s7_wg1_swz16c_np_c1_k2\"\npredicted",
                1,
            ),
            "entry 0 (tf32/tn/128x5376x7168): schedule wgmma_tf32_128x64x32_s7_wg1_swz16c_np_c1_k2 splits K",
        ),
        (
            text.replacen("m = 128\n", "m = 0\n", 1),
            "entry 0 (tf32/tn/0x5376x7168): m = 0 is outside 1..=2147483647",
        ),
        (
            text.replacen("m = 128\n", "m = 4294967295\n", 1),
            "m = 4294967295 is outside",
        ),
        (
            format!(
                "{}{}",
                text.replace("entries = 17", "entries = 18"),
                &text[text.find("[[entry]]").unwrap()..text.find("[[entry]]").unwrap() + 600]
                    .split("\n\n")
                    .next()
                    .unwrap()
            ),
            "duplicates entry 0",
        ),
        (
            text[..text.rfind("[[entry]]").unwrap()].to_string(),
            "says entries = 17 but holds 16",
        ),
        (
            text.replacen("gate = \"passed\"", "gate = \"passed\"\ncomment = 1", 1),
            "unknown field `comment`",
        ),
    ];
    for (i, (t, needle)) in cases.iter().enumerate() {
        let p = dir.join(format!("bad{i}.toml"));
        std::fs::write(&p, t).unwrap();
        let o = forge(&["select", "--profile", s(&p), "128x5376x7168"]);
        let line = fails_with(&o, &[&format!("bad{i}.toml"), needle]);
        eprintln!("{line}");
    }
    let good = dir.join("good.toml");
    std::fs::write(&good, &text).unwrap();
    let o = forge(&["select", "--profile", s(&good), "--dtype", "bf16", "D64"]);
    fails_with(&o, &["no bf16 kernel is implemented"]);
}

#[test]
fn nonsense_options_are_clear_errors() {
    let cases: [(&[&str], &str); 11] = [
        (
            &["rank", "--arch", "sm_90a", "--shapes", "D64", "--top", "0"],
            "--top 0: must be at least 1",
        ),
        (
            &["tune", "--arch", "sm_90a", "--shapes", "D64", "--top", "0"],
            "--top 0: must be at least 1",
        ),
        (
            &[
                "tune",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--top",
                "0",
                "--exhaustive",
            ],
            "--top 0: must be at least 1",
        ),
        (
            &[
                "tune",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--max-seconds",
                "0",
            ],
            "--max-seconds 0: must be a finite number of seconds above 0",
        ),
        (
            &[
                "tune",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--max-seconds",
                "nan",
            ],
            "--max-seconds nan:",
        ),
        (
            &[
                "tune",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--max-seconds",
                "-1",
            ],
            "--max-seconds -1:",
        ),
        (
            &[
                "tune",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--watchdog",
                "0",
            ],
            "--watchdog 0: must be at least 1 second",
        ),
        (
            &[
                "calibrate",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--heat-ms",
                "-5",
            ],
            "--heat-ms -5: must be a number of milliseconds from 0 to 60000",
        ),
        (
            &[
                "calibrate",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--heat-ms",
                "nan",
            ],
            "--heat-ms nan:",
        ),
        (
            &[
                "calibrate",
                "--arch",
                "sm_90a",
                "--shapes",
                "D64",
                "--heat-ms",
                "2000",
                "--watchdog",
                "3",
                "--out",
                "/tmp/forge-never-written",
            ],
            "--heat-ms 2000 must be under half the watchdog (3 s)",
        ),
        (
            &[
                "tune", "--arch", "sm_90a", "--shapes", "D64", "--dtype", "bf16",
            ],
            "no bf16 kernel is implemented",
        ),
    ];
    for (args, needle) in cases {
        let o = forge(args);
        fails_with(&o, &[needle]);
    }
}
