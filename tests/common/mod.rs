//! Helpers shared by the integration tests (each test file includes this with `mod common;`,
//! so a helper one file does not use is not dead code there).
#![allow(dead_code)]

use forge::device::Gpu;
use std::io::Write;

/// Says why a test did nothing, past the test harness's capture, so CI logs show it.
pub fn skipped(why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// Whether libnvrtc is here; without it a visible "SKIPPED: {why}" line, except on CI, which
/// must provide it (see .ci/run): there the test fails.
pub fn nvrtc_or_skip(why: &str) -> bool {
    if forge::device::nvrtc::available() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must provide libnvrtc (see .ci/run)"
    );
    skipped(why);
    false
}

/// GPU 0, or `None` after a visible "SKIPPED: no CUDA device" line.
pub fn gpu() -> Option<Gpu> {
    match Gpu::open(0) {
        Ok(g) => Some(g),
        Err(e) => {
            skipped(&format!("no CUDA device ({e})"));
            None
        }
    }
}
