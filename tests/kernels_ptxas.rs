//! The kernel variants of the schedule space compile through NVRTC for sm_90a with no
//! spills, no local stack and no ptxas warnings (serialized wgmma C7510/C7515, ignored
//! setmaxnreg C7508): every variant of the shared tiles, and of the fine-width wgmma tiles
//! each combination at its deepest pipeline (`kernel_check::representative_variants`;
//! `forge check-kernels` compiles all of them). Needs libnvrtc (CI installs it; `.ci/run`
//! says how), no GPU.

#[test]
fn representative_variants_compile_clean_for_sm_90a() {
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
    let report = forge::kernel_check::check_representative(&arch).unwrap();
    assert!(report.total > 2000, "only {} variants", report.total);
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

/// The direct-store epilogue (`FORGE_EPILOGUE_STAGED=0`; the staged one, on by default, is in
/// every variant of `representative_variants_compile_clean_for_sm_90a`) on the variants the staged one
/// serves (full-width persistent, ping-pong, one warpgroup, cluster 2, and one whose buffers do
/// not fit, which has the direct stores either way).
#[test]
fn direct_store_epilogue_compiles_clean_for_sm_90a() {
    use forge::contract::Rounding;
    use forge::device::cache::{KernelCache, default_dir};
    use forge::device::nvrtc::PtxasReport;
    use forge::kernel_source::{GEMM_ENTRY, KernelVariant};
    if !forge::device::nvrtc::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide libnvrtc (see .ci/run)"
        );
        return;
    }
    let cache = KernelCache::new(&default_dir()).unwrap();
    let shape = forge::shape::Shape::new(8192, 8192, 8192);
    for name in [
        "wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1",
        "wgmma_tf32_128x192x32_s5_wg2_swz16_pers_c2_k1",
        "wgmma_tf32_128x128x32_s7_wg2_swz16_pp_c1_k1",
        "wgmma_tf32_128x64x32_s7_wg1_swz16c_np_c1_k1",
        "wgmma_tf32_128x168x32_s6_wg2_swz16c_np_c1_k1",
    ] {
        let schedule: forge::schedule::Schedule = name.parse().unwrap();
        let v = KernelVariant::new(&schedule, &shape, Rounding::NearestEven);
        let source = format!("#define FORGE_EPILOGUE_STAGED 0\n{}", v.source());
        let compiled = cache
            .get_or_compile(&format!("{}_direct", v.label()), &source, "sm_90a")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let p = PtxasReport::parse(&compiled.log, GEMM_ENTRY);
        assert!(p.clean(), "{name}: {:?}", p.warnings);
        eprintln!("{name} direct stores: {} regs", p.registers);
    }
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
