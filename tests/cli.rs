//! The real binary, run as a user would: ranked tables, cost-model-only tuning, selection,
//! and one clear error with a non-zero exit for every bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn forge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(args)
        // No GPU on CI; make sure a developer's GPU does not change these tests either.
        .env(
            "LD_LIBRARY_PATH",
            std::env::var("LD_LIBRARY_PATH").unwrap_or_default(),
        )
        // Nor a simulated device a developer left exported (tests/simulated.rs uses it).
        .env_remove(forge::device::simulated::ENV)
        .env_remove(forge::device::simulated::SCATTER_ENV)
        .output()
        .expect("forge runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("forge-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fails_with(args: &[&str], needle: &str) {
    let o = forge(args);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{args:?} succeeded: {out}");
    assert!(
        err.contains(needle),
        "{args:?}: stderr lacks `{needle}`:\n{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
}

#[test]
fn rank_prints_ranked_tables_for_hopper_and_ampere() {
    for arch in ["sm_90a", "sm_80"] {
        let o = forge(&[
            "rank",
            "--arch",
            arch,
            "--shapes",
            "D2048,D4096",
            "--top",
            "5",
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(out.contains("2048x2048x2048") && out.contains("4096x4096x4096"));
        assert!(out.contains("dominant term"));
        let rows = out.lines().filter(|l| l.contains("_tf32_")).count();
        assert_eq!(rows, 10, "{out}");
        if arch == "sm_80" {
            assert!(!out.contains("wgmma_"), "sm_80 has no wgmma:\n{out}");
        } else {
            assert!(out.contains("wgmma_"), "{out}");
        }
    }
}

#[test]
fn rank_json_and_explain() {
    let o = forge(&[
        "rank",
        "--arch",
        "sm_90a",
        "--shapes",
        "128x21504x5376",
        "--json",
        "--top",
        "3",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["ranked"].as_array().unwrap().len(), 3);
    let o = forge(&[
        "rank",
        "--arch",
        "sm_90a",
        "--shapes",
        "D4096,1000x1000x1001",
        "--explain",
        "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1",
    ]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(out.contains("4096x4096x4096: valid, rank"), "{out}");
    // K % 4 ≠ 0 is valid (a padded copy, priced as the transpose term); the shape is rejected
    // for a pruning rule.
    assert!(
        out.contains("1000x1000x1001: REJECTED: swizzle group 8 over 4 tiles"),
        "{out}"
    );
}

#[test]
fn bad_shapes_and_arches_fail_cleanly() {
    let cases: [(&[&str], &str); 9] = [
        (
            &["rank", "--arch", "sm_99", "--shapes", "D2048"],
            "unknown architecture `sm_99`",
        ),
        (
            &["rank", "--arch", "sm_90a", "--shapes", "D0"],
            "must be at least 1",
        ),
        (
            &["rank", "--arch", "sm_90a", "--shapes", "12x34"],
            "`12x34` is not of the form",
        ),
        (
            &["rank", "--arch", "sm_90a", "--shapes", "-5x1x1"],
            "`-5x1x1` is not of the form",
        ),
        (
            &["rank", "--arch", "sm_90a", "--shapes", "2147483648x1x1"],
            "exceeds 2^31 - 1",
        ),
        (
            &["rank", "--arch", "sm_90a", "--shapes", ""],
            "empty shape list",
        ),
        (
            &["tune", "--arch", "sm_99", "--shapes", "D64"],
            "unknown architecture",
        ),
        (
            &["tune", "--arch", "sm_90a", "--shapes", "D0"],
            "must be at least 1",
        ),
        (
            &[
                "rank", "--arch", "sm_90a", "--shapes", "D64", "--dtype", "fp8",
            ],
            "unknown dtype",
        ),
    ];
    for (args, needle) in cases {
        fails_with(args, needle);
    }
}

fn tune_model_only(dir: &Path, extra: &[&str]) -> Output {
    let profile = dir.join("p.toml");
    let run = dir.join("run");
    let mut args = vec![
        "tune",
        "--arch",
        "sm_90a",
        "--shapes",
        "D2048,D4096",
        "--profile",
        profile.to_str().unwrap(),
        "--run-dir",
        run.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    forge(&args)
}

fn no_gpu_here() -> bool {
    // These tests describe the machine without a GPU (CI); on a GPU machine tune measures.
    !Path::new("/dev/nvidia0").exists()
}

#[test]
fn tune_without_gpu_writes_a_cost_model_profile() {
    if !no_gpu_here() {
        return;
    }
    let dir = tmp("tune");
    let o = tune_model_only(&dir, &[]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("COST-MODEL-ONLY"), "{err}");
    let profile = dir.join("p.toml");
    let text_p = std::fs::read_to_string(&profile).unwrap();
    assert!(text_p.contains("measured = false"), "{text_p}");
    let p = forge::profile::Profile::load(&profile).unwrap();
    assert_eq!(p.entries.len(), 2);
    let summary = std::fs::read_to_string(dir.join("run/summary.md")).unwrap();
    assert!(summary.contains("4096x4096x4096"), "{summary}");
    assert!(
        !dir.join("run/parity.png").exists(),
        "nothing measured, nothing drawn"
    );
    let o = forge(&[
        "select",
        "--profile",
        profile.to_str().unwrap(),
        "4096x4096x4096",
    ]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(
        out.contains("rule: exact match") && out.contains("not measured"),
        "{out}"
    );
    let o = forge(&[
        "select",
        "--profile",
        profile.to_str().unwrap(),
        "3000x3000x3000",
    ]);
    assert!(
        text(&o)
            .0
            .contains("rule: the calibrated cost model's best")
    );
    fails_with(
        &[
            "select",
            "--profile",
            profile.to_str().unwrap(),
            "--arch",
            "sm_80",
            "D64",
        ],
        "was tuned for sm_90a, not sm_80",
    );
    // --require-gpu makes the missing GPU an error, and writes nothing.
    let dir2 = tmp("require");
    let o = tune_model_only(&dir2, &["--require-gpu"]);
    let (_, err) = text(&o);
    assert!(
        !o.status.success() && err.contains("--require-gpu"),
        "{err}"
    );
    assert!(!dir2.join("p.toml").exists());
}

#[test]
fn bad_profiles_fail_with_file_and_reason() {
    let dir = tmp("profiles");
    let good = forge::profile::Profile::new(
        forge::profile::Metadata::now("sm_90a", forge::schedule::Dtype::Tf32, false),
        vec![],
    )
    .unwrap()
    .to_toml();
    let syntax = dir.join("syntax.toml");
    std::fs::write(&syntax, format!("{good}\n[[entry]\nm = 1\n")).unwrap();
    fails_with(
        &["select", "--profile", syntax.to_str().unwrap(), "D64"],
        "syntax.toml",
    );
    let o = forge(&["select", "--profile", syntax.to_str().unwrap(), "D64"]);
    assert!(text(&o).1.contains("line"), "{}", text(&o).1);
    let version = dir.join("version.toml");
    std::fs::write(
        &version,
        good.replace("schema_version = 2", "schema_version = 7")
            .replace("schema_version = 3", "schema_version = 7"),
    )
    .unwrap();
    fails_with(
        &["select", "--profile", version.to_str().unwrap(), "D64"],
        "schema version 7",
    );
    let missing = dir.join("missing.toml");
    fails_with(
        &["select", "--profile", missing.to_str().unwrap(), "D64"],
        "cannot read profile",
    );
    // A bad positional shape names its argument, as a bad option names its flag.
    fails_with(
        &["select", "--profile", syntax.to_str().unwrap(), "12x1"],
        "SHAPE 12x1: shape `12x1` is not of the form",
    );
}

#[test]
fn verify_bits_checks_a_device_output_against_the_bit_model() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bitmodel/hopper_truncate_special_m24n24k13"
    );
    let (a, b, c) = (
        format!("{f}.a.f32"),
        format!("{f}.b.f32"),
        format!("{f}.c.f32"),
    );
    let args = |shape: &'static str, contract: &'static str| {
        [
            "verify-bits",
            "--a",
            &a,
            "--b",
            &b,
            "--c",
            &c,
            "--shape",
            shape,
            "--contract",
            contract,
        ]
        .map(str::to_string)
    };
    let run = |v: [String; 11]| forge(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(args("24x24x13", "tf32-trunc-k8-inorder"));
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).0.contains("576 of 576"), "{}", text(&o).0);
    // The same file under the other contract's rounding is not what the model predicts.
    let v = args("24x24x13", "tf32-rne-k8-inorder");
    fails_with(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        "differ from the bit model",
    );
    let v = args("24x24x14", "tf32-trunc-k8-inorder");
    fails_with(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        "A of 24x24x14 needs 24×14",
    );
}

#[test]
fn rank_into_a_pipe_closed_early_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    // `forge rank … | head -1`: the reader leaves after one read; the rest (~300 KB) cannot
    // be written. The command must not panic.
    let mut child = Command::new(env!("CARGO_BIN_EXE_forge"))
        .args([
            "rank", "--arch", "sm_90a", "--shapes", "D4096", "--top", "3000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "{err}");
    assert_ne!(status.code(), Some(101), "a panic's exit status");
}

#[test]
fn check_kernels_compiles_named_schedules_and_keeps_their_cubins() {
    fails_with(
        &[
            "check-kernels",
            "--schedule",
            "wgmma_tf32_128x128x32_s9_wg2_swz1_np_c1_k1",
        ],
        "not a schedule of forge's space",
    );
    fails_with(
        &["check-kernels", "--schedule", "tile128"],
        "is not a schedule name",
    );
    if !forge::device::nvrtc::available() {
        eprintln!("SKIPPED (compile part): libnvrtc not found");
        return;
    }
    let dir = tmp("cubins");
    let name = "wgmma_tf32_64x64x32_s4_wg1_swz1_np_c1_k1";
    let o = forge(&[
        "check-kernels",
        "--schedule",
        name,
        "--contract",
        "tf32-trunc-k8-inorder",
        "--cubin-dir",
        dir.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains(name) && out.contains(" regs, 0 B spill stores"),
        "{out}"
    );
    let label = "wgmma_tf32_64x64x32_s4_wg1_np_c1_k0_v1_rz";
    let cubin = std::fs::read(dir.join(format!("{label}.cubin"))).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF");
    let log = std::fs::read_to_string(dir.join(format!("{label}.log"))).unwrap();
    assert!(log.contains("forge_gemm"), "{log}");
}

#[test]
fn rank_and_select_price_with_another_constants_file() {
    let dir = tmp("model");
    let shipped = include_str!("../cost_model/model.toml");
    let line = shipped
        .lines()
        .find(|l| l.starts_with("whole_band_passes = true "))
        .expect("the shipped model counts whole band passes");
    // The coalescer term (shipped since session 27) also ranks the row raster first; off here.
    let lrc = shipped
        .lines()
        .find(|l| l.starts_with("lrc_small_share_factor = "))
        .expect("the shipped model has the coalescer term");
    let model = dir.join("fractional.toml");
    let edited = shipped
        .replace(line, "whole_band_passes = false")
        .replace(lrc, "lrc_small_share_factor = 1.0");
    std::fs::write(&model, edited).unwrap();
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/sm_90a-h200.toml");
    let pick = |extra: &[&str]| {
        let mut args = vec!["select", "--profile", profile, "4000x4000x800"];
        args.extend_from_slice(extra);
        let o = forge(&args);
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).0.lines().next().unwrap().to_string()
    };
    // Sets 6-8's worst selection: the row raster (measured 5% faster) by the shipped constants,
    // the column raster by the fractional band passes of the constants before session 23
    // (without the coalescer term).
    assert_eq!(pick(&[]), "wgmma_tf32_128x200x32_s5_wg2_swz16_pers_c1_k1");
    assert_eq!(
        pick(&["--model", model.to_str().unwrap()]),
        "wgmma_tf32_128x200x32_s5_wg2_swz16c_pers_c1_k1"
    );
    let o = forge(&[
        "rank",
        "--arch",
        "sm_90a",
        "--shapes",
        "4000x4000x800",
        "--top",
        "1",
        "--profile",
        profile,
        "--model",
        model.to_str().unwrap(),
    ]);
    assert!(text(&o).0.contains("swz16c_pers_c1_k1"), "{}", text(&o).0);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[global]\nlaunch_us = 1\n").unwrap();
    fails_with(
        &[
            "rank",
            "--arch",
            "sm_90a",
            "--shapes",
            "D512",
            "--model",
            bad.to_str().unwrap(),
        ],
        "bad.toml",
    );
    fails_with(
        &[
            "select",
            "--profile",
            profile,
            "D512",
            "--model",
            "/nonexistent/m.toml",
        ],
        "cannot read cost model",
    );
}
