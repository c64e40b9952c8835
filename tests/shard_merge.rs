//! `forge tune --shard i/n` and `forge merge`, on the CPU: sharded cost-model tunes merged
//! back equal the unsharded tune; measured profiles (the frozen H200 fixture) split and
//! merged come back whole; and every merge that would mix bits is refused with one clear
//! error.

use forge::profile::Profile;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn forge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(args)
        .output()
        .expect("forge runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("forge-shard-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn no_gpu_here() -> bool {
    // On a GPU machine `tune` measures instead; these tests describe the CPU-only path.
    !Path::new("/dev/nvidia0").exists()
}

const SHAPES: &str = "D512,D1024,D2048,128x5376x7168,3000x5000x1000,257x513x1028,D4096";

fn tune(dir: &Path, name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let profile = dir.join(format!("{name}.toml"));
    let run = dir.join(format!("run-{name}"));
    let mut args = vec![
        "tune",
        "--arch",
        "sm_90a",
        "--shapes",
        SHAPES,
        "--no-plots",
        "--profile",
        profile.to_str().unwrap(),
        "--run-dir",
        run.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    (forge(&args), profile)
}

fn merge(inputs: &[&Path], out: &Path) -> Output {
    let mut args = vec!["merge", "--out", out.to_str().unwrap()];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    forge(&args)
}

fn refused(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "succeeded: {err}");
    assert!(err.contains(needle), "stderr lacks `{needle}`:\n{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
}

#[test]
fn sharded_tunes_merged_equal_the_whole_tune() {
    if !no_gpu_here() {
        eprintln!("SKIPPED: a GPU is present, tune would measure (see tests/device)");
        return;
    }
    let dir = tmp("whole");
    let (o, whole) = tune(&dir, "whole", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = Profile::load(&whole).unwrap();
    assert_eq!(whole.entries.len(), 7);
    let mut shards = vec![];
    let mut sizes = vec![];
    for i in 0..3 {
        let shard = format!("{i}/3");
        let (o, p) = tune(&dir, &format!("shard{i}"), &["--shard", &shard]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("shard {shard}: ")),
            "{}",
            stderr(&o)
        );
        sizes.push(Profile::load(&p).unwrap().entries.len());
        shards.push(p);
    }
    sizes.sort();
    assert_eq!(sizes, vec![2, 2, 3], "7 shapes over 3 shards");
    let out = dir.join("merged.toml");
    let inputs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let o = merge(&inputs, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = Profile::load(&out).unwrap();
    assert_eq!(merged.entries, whole.entries);
    assert!(!merged.meta.measured);
    // Merging again (the same inputs into the merged profile) changes nothing.
    let o = merge(&inputs, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(Profile::load(&out).unwrap().entries, whole.entries);

    // Another contract's shard does not merge.
    let (o, trunc) = tune(
        &dir,
        "trunc",
        &["--shard", "0/3", "--contract", "tf32-trunc-k8-inorder"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    refused(
        &merge(&[&shards[1], &trunc], &dir.join("x.toml")),
        "numerical contract",
    );
    // Another architecture's does not either.
    let sm80 = dir.join("sm80.toml");
    let o = forge(&[
        "tune",
        "--arch",
        "sm_80",
        "--shapes",
        "D512",
        "--no-plots",
        "--profile",
        sm80.to_str().unwrap(),
        "--run-dir",
        dir.join("run-sm80").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    refused(
        &merge(&[&shards[0], &sm80], &dir.join("y.toml")),
        "architecture",
    );
    assert!(!dir.join("x.toml").exists() && !dir.join("y.toml").exists());
}

/// The frozen H200 profile split in two (as two hosts' shards would be) and merged.
#[test]
fn measured_shards_merge_back_whole_and_other_devices_are_refused() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profile_h200_trunc_17.toml");
    let whole = Profile::load(&fixture).unwrap();
    let dir = tmp("measured");
    let (a, b): (Vec<_>, Vec<_>) = whole
        .entries
        .iter()
        .cloned()
        .enumerate()
        .partition(|(i, _)| i % 2 == 0);
    let write = |name: &str, entries: Vec<forge::profile::Entry>, device: &str| {
        let mut meta = whole.meta.clone();
        meta.device_name = device.to_string();
        let p = Profile::new(meta, entries).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, p.to_toml()).unwrap();
        path
    };
    let strip =
        |v: Vec<(usize, forge::profile::Entry)>| v.into_iter().map(|(_, e)| e).collect::<Vec<_>>();
    let (a, b) = (strip(a), strip(b));
    let pa = write("a.toml", a.clone(), "NVIDIA H200");
    let pb = write("b.toml", b.clone(), "NVIDIA H200");
    let out = dir.join("merged.toml");
    let o = merge(&[&pa, &pb], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = Profile::load(&out).unwrap();
    let mut expected = whole.entries.clone();
    expected.sort_by_key(|e| e.problem());
    assert_eq!(merged.entries, expected);
    assert!(merged.meta.measured);
    assert_eq!(merged.meta.device_name, "NVIDIA H200");

    // Shards measured on another device model do not merge, nor go into this profile.
    let h100 = write("h100.toml", b.clone(), "NVIDIA H100 80GB HBM3");
    refused(
        &merge(&[&pa, &h100], &dir.join("z.toml")),
        "a profile names one device",
    );
    refused(&merge(&[&h100], &out), "which was measured on NVIDIA H200");
    // One problem chosen differently in two measured inputs is refused, naming it.
    let mut other = a.clone();
    let replacement = other[1].schedule.clone();
    other[0].schedule = replacement;
    let conflicting = write("conflict.toml", other, "NVIDIA H200");
    refused(
        &merge(&[&pa, &conflicting], &dir.join("w.toml")),
        "tuned twice with different choices",
    );
    // A file that is not a profile is named in the error, and --out that is not a profile
    // is never overwritten.
    let junk = dir.join("junk.toml");
    std::fs::write(&junk, "hello").unwrap();
    refused(&merge(&[&junk], &dir.join("v.toml")), "junk.toml");
    refused(&merge(&[&pa], &junk), "not a forge profile");
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), "hello");
}

#[test]
fn bad_shard_and_gpu_values_fail_cleanly() {
    for (args, needle) in [
        (
            vec!["--shard", "3/3"],
            "--shard 3/3: shard index 3 is not below",
        ),
        (vec!["--shard", "x"], "--shard x: expected i/n"),
        (
            vec!["--gpus", "0,0"],
            "--gpus 0,0: device 0 is listed twice",
        ),
        (vec!["--gpus", "gpu1"], "not a device ordinal"),
    ] {
        let mut all = vec!["tune", "--arch", "sm_90a", "--shapes", "D512"];
        all.extend(args);
        let o = forge(&all);
        let err = stderr(&o);
        assert!(!o.status.success(), "{all:?}: {err}");
        assert!(err.contains(needle), "{all:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{err}"
        );
    }
}
