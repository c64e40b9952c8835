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

/// The operand-preparation kernel (`kernels/operand_prep.cu`) compiles clean too.
#[test]
fn operand_prep_compiles_clean_for_sm_90a() {
    if !forge::device::nvrtc::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide libnvrtc (see .ci/run)"
        );
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED: libnvrtc not found");
        return;
    }
    use forge::device::{nvrtc, prep};
    let compiled = nvrtc::compile("forge_operand_prep", prep::SOURCE, "sm_90a").unwrap();
    let report = nvrtc::PtxasReport::parse(&compiled.log, prep::ENTRY);
    assert!(
        report.registers > 0,
        "no ptxas report for {}:\n{}",
        prep::ENTRY,
        compiled.log
    );
    assert!(report.clean(), "{report:?}\n{}", compiled.log);
}
