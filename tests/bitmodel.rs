//! forge::bitmodel against MMA-Sim: every fixture in tests/fixtures/bitmodel (made by
//! tests/bitmodel_mmasim.py with mmasim's Hopper and Ampere TF32 models) must be reproduced
//! bit for bit, every element. No Python needed here.

use std::path::{Path, PathBuf};

use forge::bitmodel::{self, AMPERE, HOPPER, InputRounding, MmaParams};

struct Fixture {
    name: String,
    m: usize,
    n: usize,
    k: usize,
    arch: String,
    rounding: InputRounding,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

impl Fixture {
    fn params(&self) -> &'static MmaParams {
        params_of(&self.arch)
    }
}

fn params_of(arch: &str) -> &'static MmaParams {
    match arch {
        "hopper" => &HOPPER,
        "ampere" => &AMPERE,
        other => panic!("unknown arch {other:?}"),
    }
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bitmodel")
}

fn load_all() -> Vec<Fixture> {
    let dir = fixture_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".json").map(str::to_owned))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let base = dir.join(&name);
            let meta: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(base.with_extension("json")).unwrap(),
            )
            .unwrap();
            let get = |key: &str| {
                meta[key]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{name}: {key}"))
            };
            let rounding = match meta["rounding"].as_str().unwrap() {
                "truncate" => InputRounding::Truncate,
                "nearest_even" => InputRounding::NearestEven,
                other => panic!("{name}: unknown rounding {other:?}"),
            };
            let read = |suffix: &str| {
                let path = dir.join(format!("{name}.{suffix}.f32"));
                bitmodel::read_f32_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            };
            let f = Fixture {
                m: get("m") as usize,
                n: get("n") as usize,
                k: get("k") as usize,
                arch: meta["arch"].as_str().unwrap().to_owned(),
                rounding,
                a: read("a"),
                b: read("b"),
                c: read("c"),
                name,
            };
            assert_eq!(f.a.len(), f.m * f.k, "{}: A size", f.name);
            assert_eq!(f.b.len(), f.n * f.k, "{}: B size", f.name);
            assert_eq!(f.c.len(), f.m * f.n, "{}: C size", f.name);
            f
        })
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn model_reproduces_mmasim_bit_for_bit() {
    let fixtures = load_all();
    // 2 archs × 2 roundings × the script's input sets; a missing directory must fail.
    assert!(fixtures.len() >= 40, "only {} fixtures", fixtures.len());
    let mut elements = 0;
    let mut failures = Vec::new();
    for f in &fixtures {
        let model = bitmodel::matmul(&f.a, &f.b, f.m, f.n, f.k, f.params(), f.rounding);
        let check = bitmodel::check_sampled(
            &f.a,
            &f.b,
            &f.c,
            f.m,
            f.n,
            f.k,
            usize::MAX,
            0,
            f.params(),
            f.rounding,
        );
        assert_eq!(check.checked, f.m * f.n, "{}", f.name);
        let equal = bits(&model)
            .iter()
            .zip(bits(&f.c))
            .filter(|(x, y)| **x == *y)
            .count();
        assert_eq!(
            equal, check.equal,
            "{}: matmul and check_sampled disagree",
            f.name
        );
        elements += check.checked;
        if !check.all_equal() {
            failures.push(format!(
                "{}: {}/{} equal, first mismatches (i, j, mmasim, model): {:08x?}",
                f.name, check.equal, check.checked, check.first_mismatches
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!(
        "{} fixtures, {elements} elements, all bit-identical",
        fixtures.len()
    );
}

#[test]
fn fixtures_cover_the_cases_they_are_meant_to() {
    let fixtures = load_all();
    for arch in ["hopper", "ampere"] {
        for rounding in [InputRounding::Truncate, InputRounding::NearestEven] {
            let of = |pred: &dyn Fn(&Fixture) -> bool| {
                fixtures
                    .iter()
                    .any(|f| f.arch == arch && f.rounding == rounding && pred(f))
            };
            for k in [1, 7, 9, 1025] {
                assert!(of(&|f| f.k == k), "{arch} {rounding:?}: no K = {k}");
            }
            let any_out = |p: fn(f32) -> bool| of(&|f: &Fixture| f.c.iter().any(|&x| p(x)));
            assert!(any_out(f32::is_nan), "{arch} {rounding:?}: no NaN output");
            assert!(
                any_out(f32::is_infinite),
                "{arch} {rounding:?}: no Inf output"
            );
            assert!(
                any_out(f32::is_subnormal),
                "{arch} {rounding:?}: no subnormal output"
            );
            assert!(any_out(|x| x == 0.0), "{arch} {rounding:?}: no zero output");
        }
    }
}

/// The fixtures can tell the parameters apart: the other architecture's model, the other
/// input rounding, and a plain f64 dot product rounded to f32 each miss some elements.
#[test]
fn fixtures_discriminate() {
    let fixtures = load_all();
    let mut wrong_arch = 0;
    let mut wrong_rounding = 0;
    let mut naive = 0;
    for f in &fixtures {
        let other = if f.arch == "hopper" { &AMPERE } else { &HOPPER };
        let other_rounding = match f.rounding {
            InputRounding::Truncate => InputRounding::NearestEven,
            InputRounding::NearestEven => InputRounding::Truncate,
        };
        let c = bits(&f.c);
        let differ = |model: Vec<f32>| bits(&model).iter().zip(&c).filter(|(x, y)| x != y).count();
        wrong_arch += differ(bitmodel::matmul(
            &f.a, &f.b, f.m, f.n, f.k, other, f.rounding,
        ));
        wrong_rounding += differ(bitmodel::matmul(
            &f.a,
            &f.b,
            f.m,
            f.n,
            f.k,
            f.params(),
            other_rounding,
        ));
        let plain: Vec<f32> = (0..f.m * f.n)
            .map(|p| {
                let (i, j) = (p / f.n, p % f.n);
                (0..f.k)
                    .map(|kk| {
                        let a = bitmodel::round_tf32(f.a[i * f.k + kk], f.rounding) as f64;
                        let b = bitmodel::round_tf32(f.b[j * f.k + kk], f.rounding) as f64;
                        a * b
                    })
                    .sum::<f64>() as f32
            })
            .collect();
        naive += differ(plain);
    }
    println!(
        "mismatches: other arch {wrong_arch}, other rounding {wrong_rounding}, f64 dot {naive}"
    );
    assert!(wrong_arch > 100, "other arch: {wrong_arch}");
    assert!(wrong_rounding > 1000, "other rounding: {wrong_rounding}");
    assert!(naive > 1000, "f64 dot: {naive}");
}
