//! The C ABI (`src/capi/forge.h`): `tests/capi/smoke.c` compiled with gcc against the header and
//! linked with `libforge.so` (skipped with a visible line where gcc or the library is missing),
//! and GEMMs through the ABI on a device (skipped where there is none).

use forge::capi::*;
use forge::device::Gpu;
use forge::device::buffers::DeviceBuffer;
use forge::device::cache::KernelCache;
use forge::device::fill::UtilKernels;
use forge::profile::{Metadata, Profile};
use forge::reference::{self, TENSOR_A, TENSOR_B};
use forge::schedule::Dtype;
use forge::shape::Shape;
use std::ffi::{CStr, CString, c_void};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::skipped;

/// The repository: where it was built, else the working directory (a test binary carried to
/// a GPU machine runs from the repository root there).
fn root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    if built.join("profiles").is_dir() {
        return built.to_path_buf();
    }
    std::env::current_dir().unwrap()
}

fn shipped_profile() -> PathBuf {
    root().join("profiles/sm_90a-h200.toml")
}

/// `libforge.so`: `$FORGE_CDYLIB`, else next to the test binary's directory (cargo puts the
/// test in target/<profile>/deps and the library in target/<profile>).
fn cdylib() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FORGE_CDYLIB") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("libforge.so"))
        .find(|p| p.exists())
}

fn tool(name: &str) -> Option<String> {
    let ok = Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| name.to_string())
}

#[test]
fn c_smoke_test_compiles_against_the_header_and_passes() {
    let Some(gcc) = tool("gcc") else {
        return skipped("gcc not found: the C smoke test did not run");
    };
    let Some(lib) = cdylib() else {
        return skipped(
            "libforge.so not found next to the test binary: the C smoke test did not run",
        );
    };
    let lib_dir = lib.parent().unwrap();
    let dir = std::env::temp_dir().join(format!("forge-capi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("smoke");
    let out = Command::new(&gcc)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-I",
        ])
        .arg(root().join("src/capi"))
        .arg(root().join("tests/capi/smoke.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lforge")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gcc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The schedule the shipped profile holds for 2048³ TN, which the C side must report.
    let expected = Profile::load(&shipped_profile())
        .unwrap()
        .select(&forge::problem::Problem::new(
            Dtype::Tf32,
            forge::schedule::Layout::Tn,
            Shape::new(2048, 2048, 2048),
        ))
        .schedule
        .name();
    let run = Command::new(&exe)
        .arg(shipped_profile())
        .arg(&expected)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(run.status.success(), "smoke failed:\n{stdout}{stderr}");
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    assert!(
        stdout.contains("missing profile: FORGE_ERROR_PROFILE: forge_profile_open: cannot read"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_header_is_valid_cplusplus() {
    let Some(gxx) = tool("g++") else {
        return skipped("g++ not found: the header was not compiled as C++");
    };
    let out = Command::new(gxx)
        .args([
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-x",
            "c++",
            "-I",
        ])
        .arg(root().join("src/capi"))
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(
                b"#include \"forge.h\"\nint main() { return forge_last_error() == nullptr; }\n",
            )?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// On a device.

fn last_error() -> String {
    unsafe { CStr::from_ptr(forge_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn open(profile: &Path) -> *mut ForgeDispatcher {
    let path = CString::new(profile.to_str().unwrap()).unwrap();
    let cache = CString::new(forge::device::cache::default_dir().to_str().unwrap()).unwrap();
    let mut d = std::ptr::null_mut();
    let status = unsafe { forge_dispatcher_open(path.as_ptr(), 0, cache.as_ptr(), &mut d) };
    assert_eq!(status, FORGE_OK, "{}", last_error());
    d
}

const SEED: u64 = 7;

/// ‖C − ref‖/‖ref‖ over sampled elements against the FP64 host reference.
fn reference_error(out: &[f32], shape: &Shape) -> f64 {
    let (mut d2, mut r2) = (0f64, 0f64);
    for (i, j) in reference::sample_positions(SEED, shape.m, shape.n, 256) {
        let r = reference::reference_element(SEED, 0, shape.k, i, j);
        let c = out[i as usize * shape.n as usize + j as usize] as f64;
        let d = if c.is_nan() { f64::INFINITY } else { c - r };
        d2 += d * d;
        r2 += r * r;
    }
    (d2 / r2).sqrt()
}

#[test]
fn gemm_through_the_c_abi_matches_the_canonical_bits() {
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => return skipped(&format!("no CUDA device ({e})")),
    };
    if gpu.info.arch != "sm_90a" {
        return skipped(&format!(
            "the shipped profile is for sm_90a, the device is {}",
            gpu.info.arch
        ));
    }
    let cache = KernelCache::new(&forge::device::cache::default_dir()).expect("NVRTC available");
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    // A profile with no entries selects the canonical schedule for every shape.
    let dir = std::env::temp_dir().join(format!("forge-capi-gpu-{}", std::process::id()));
    let canonical_profile = dir.join("canonical.toml");
    Profile::new(Metadata::now("sm_90a", Dtype::Tf32, false), vec![])
        .unwrap()
        .save(&canonical_profile)
        .unwrap();
    let tuned = open(&shipped_profile());
    let canonical = open(&canonical_profile);
    // A stream of forge's own, as another framework would hand one over.
    let stream = gpu.ctx.new_stream().unwrap();
    let raw = stream.cu_stream() as *mut c_void;
    for shape in [
        Shape::new(2048, 2048, 2048),
        Shape::new(128, 5376, 7168),
        Shape::new(1000, 1000, 1000),
        Shape::new(999, 1001, 1003),
    ] {
        let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
        let a = DeviceBuffer::new(&gpu.ctx, m * k).unwrap();
        let b = DeviceBuffer::new(&gpu.ctx, n * k).unwrap();
        util.fill_random(&gpu, &a, SEED, 0, TENSOR_A).unwrap();
        util.fill_random(&gpu, &b, SEED, 0, TENSOR_B).unwrap();
        gpu.stream.synchronize().unwrap();
        let c0 = DeviceBuffer::new(&gpu.ctx, m * n).unwrap();
        let c1 = DeviceBuffer::new(&gpu.ctx, m * n).unwrap();
        let gemm = |d: *mut ForgeDispatcher, c: &DeviceBuffer| {
            let (mi, ni, ki) = (shape.m as i64, shape.n as i64, shape.k as i64);
            let status = unsafe {
                forge_gemm(
                    d,
                    FORGE_LAYOUT_TN,
                    mi,
                    ni,
                    ki,
                    a.ptr() as *const f32,
                    ki,
                    b.ptr() as *const f32,
                    ki,
                    c.ptr() as *mut f32,
                    ni,
                    raw,
                )
            };
            assert_eq!(status, FORGE_OK, "{shape}: {}", last_error());
        };
        gemm(canonical, &c0);
        gemm(tuned, &c1);
        gemm(tuned, &c1); // the cached plan
        let golden = c0.to_host(&stream).unwrap();
        let out = c1.to_host(&stream).unwrap();
        let differing = golden
            .iter()
            .zip(&out)
            .filter(|(g, o)| g.to_bits() != o.to_bits())
            .count();
        let mut sel = ForgeSelection {
            schedule: [0; 128],
            rule: 0,
            entry: 0,
            distance: 0.0,
        };
        let (mi, ni, ki) = (shape.m as i64, shape.n as i64, shape.k as i64);
        let status =
            unsafe { forge_dispatcher_select(tuned, FORGE_LAYOUT_TN, mi, ni, ki, &mut sel) };
        assert_eq!(status, FORGE_OK);
        let err = reference_error(&out, &shape);
        eprintln!(
            "capi gemm {shape}: {} ({}), {differing} elements differ from canonical, rel_rms {err:.2e}",
            unsafe { CStr::from_ptr(sel.schedule.as_ptr()) }.to_string_lossy(),
            rule_name(sel.rule),
        );
        assert_eq!(differing, 0, "{shape}");
        assert!(err < 3e-3, "{shape}: rel_rms {err}");
    }
    // Arguments the kernels cannot take are refused before they reach the device.
    let buf = DeviceBuffer::new(&gpu.ctx, 64 * 64 + 1).unwrap();
    let p = buf.ptr();
    let status = unsafe {
        forge_gemm(
            tuned,
            FORGE_LAYOUT_TN,
            64,
            64,
            63,
            (p + 4) as *const f32,
            63,
            p as *const f32,
            63,
            p as *mut f32,
            64,
            raw,
        )
    };
    assert_eq!(status, FORGE_ERROR_UNSUPPORTED);
    assert!(last_error().contains("a = 0x"), "{}", last_error());
    stream.synchronize().unwrap();
    unsafe { forge_dispatcher_close(tuned) };
    unsafe { forge_dispatcher_close(canonical) };
    std::fs::remove_dir_all(&dir).unwrap();
}
