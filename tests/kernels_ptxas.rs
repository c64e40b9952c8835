//! Every kernel variant of the schedule space compiles through NVRTC for sm_90a with no
//! spills, no local stack and no ptxas warnings (serialized wgmma C7510/C7515, ignored
//! setmaxnreg C7508). Needs libnvrtc (CI installs it; `.ci/run` says how), no GPU.

#[test]
fn every_variant_compiles_clean_for_sm_90a() {
    if !forge::device::nvrtc::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide libnvrtc (see .ci/run)"
        );
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED: libnvrtc not found");
        return;
    }
    let arch = forge::arch::Arch::by_name("sm_90a").unwrap();
    let report = forge::kernel_check::check_all(&arch).unwrap();
    assert!(report.total > 500, "only {} variants", report.total);
    assert!(
        report.failed.is_empty(),
        "{} of {} variants failed:\n{}",
        report.failed.len(),
        report.total,
        report.failed.join("\n")
    );
}

/// The ping-pong variants alone (kernel development: `cargo test --release --test
/// kernels_ptxas ping_pong`); the test above covers them too.
#[test]
fn ping_pong_variants_compile_clean_for_sm_90a() {
    if !forge::device::nvrtc::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide libnvrtc (see .ci/run)"
        );
        return;
    }
    let arch = forge::arch::Arch::by_name("sm_90a").unwrap();
    let report = forge::kernel_check::check_matching(&arch, |v| {
        v.persistence == forge::schedule::Persistence::PingPong
    })
    .unwrap();
    assert!(
        report.total >= 20,
        "only {} ping-pong variants",
        report.total
    );
    assert!(
        report.failed.is_empty(),
        "{} of {} variants failed:\n{}",
        report.failed.len(),
        report.total,
        report.failed.join("\n")
    );
    for line in &report.lines {
        eprintln!("{line}");
    }
}
