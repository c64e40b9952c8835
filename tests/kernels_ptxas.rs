//! The kernel variants of the schedule space compile through NVRTC for sm_90a with no
//! spills, no local stack and no ptxas warnings (serialized wgmma C7510/C7515, ignored
//! setmaxnreg C7508): every variant of the shared tiles, and of the fine-width wgmma tiles
//! each combination at its deepest pipeline (`kernel_check::representative_variants`;
//! `forge check-kernels` compiles all of them). Needs libnvrtc (CI installs it; `.ci/run`
//! says how), no GPU.

mod common;

#[test]
fn representative_variants_compile_clean_for_sm_90a() {
    if !common::nvrtc_or_skip("libnvrtc not found") {
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
    if !common::nvrtc_or_skip("libnvrtc not found") {
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
    if !common::nvrtc_or_skip("libnvrtc not found") {
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
    if !common::nvrtc_or_skip("libnvrtc not found") {
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

/// The cost model's CTAs per SM agree with the registers ptxas allocates: the wgmma kernels
/// claim the whole register file (one CTA per SM), an mma.sync kernel what its accumulators
/// need. Small tiles with shallow pipelines are where a register-blind count would run
/// several CTAs per SM.
#[test]
fn the_cost_models_occupancy_matches_ptxas_registers() {
    if !common::nvrtc_or_skip("libnvrtc not found") {
        return;
    }
    use forge::contract::Rounding;
    use forge::device::cache::{self, KernelCache};
    let arch = forge::arch::Arch::by_name("sm_90a").unwrap();
    let model = forge::cost_model::CostModel::shipped();
    let names: Vec<String> = [
        "wgmma_tf32_64x64x32_s3_wg1_swz1_np_c1_k1",
        "wgmma_tf32_64x64x32_s7_wg1_swz1_np_c1_k1",
        "wgmma_tf32_64x128x32_s4_wg1_swz1_pers_c1_k1",
        "wgmma_tf32_128x64x32_s3_wg2_swz1_np_c1_k1",
        "wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1",
        "wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c1_k1",
        "mma_sync_tf32_64x64x16_s3_w4_swz1_np_c1_k1",
        "mma_sync_tf32_64x64x16_s3_w4_swz2c_pers_c1_k1",
        "mma_sync_tf32_64x128x32_s3_w4_swz1_np_c1_k1",
        "mma_sync_tf32_128x128x32_s3_w8_swz1_np_c1_k1",
        "mma_sync_tf32_128x256x32_s3_w8_swz8_rt_c1_k1",
    ]
    .map(String::from)
    .to_vec();
    let cache = KernelCache::new(&cache::default_dir()).unwrap();
    let g = &model.global;
    let mut wrong = vec![];
    for (s, v) in forge::kernel_check::named_variants(&names, Rounding::NearestEven).unwrap() {
        let p = forge::kernel_check::compile_clean(&cache, &v, &arch.name).unwrap();
        let regs = p.registers.div_ceil(g.register_granularity) * g.register_granularity;
        let by_regs = arch.registers_per_sm / (regs * s.threads());
        let by_smem = arch.smem_per_sm_bytes / (s.smem_bytes() + g.smem_reserved_per_cta_bytes);
        let expected = by_regs
            .min(by_smem)
            .min(arch.max_threads_per_sm / s.threads())
            .min(arch.max_ctas_per_sm)
            .max(1);
        let priced = model.ctas_per_sm(&arch, &s);
        if priced != expected {
            wrong.push(format!(
                "{s}: priced {priced} CTAs per SM, ptxas's {} registers a thread allow {expected}",
                p.registers
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
