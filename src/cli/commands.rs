//! The commands that print: the cost model's ranking and explanation, the bit-model check of
//! a device output, and the kernel check.

use crate::arch::Arch;
use crate::bitmodel;
use crate::contract::Contract;
use crate::cost_model::CostModel;
use crate::schedule::{Dtype, Layout, Schedule};
use crate::shape::Shape;
use crate::space;
use anyhow::{Context, bail};

pub(super) fn rank(
    model: &CostModel,
    arch: &Arch,
    shapes: &[Shape],
    dtype: Dtype,
    layout: Layout,
    top: usize,
    json: bool,
) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let ranked = model.rank_many(arch, dtype, layout, shapes);
    let elapsed = start.elapsed();
    if json {
        let out: Vec<serde_json::Value> = shapes
            .iter()
            .zip(&ranked)
            .map(|(s, r)| {
                serde_json::json!({
                    "shape": s, "valid_schedules": r.len(),
                    "ranked": r.iter().take(top).collect::<Vec<_>>()
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for (shape, r) in shapes.iter().zip(&ranked) {
        println!(
            "\n{shape} on {} ({}; priced at {:.0} MHz, {} MB L2, {:.0} GB/s), {dtype}, layout {}: \
             {} valid schedules",
            arch.name,
            arch.devices,
            arch.boost_clock_mhz,
            arch.l2_bytes >> 20,
            arch.dram_bandwidth_gbs,
            layout.as_str(),
            r.len()
        );
        println!(
            "{:>4}  {:<48} {:>10} {:>8} {:>6}  dominant term",
            "rank", "schedule", "pred µs", "TFLOP/s", "%peak"
        );
        for (i, x) in r.iter().take(top).enumerate() {
            println!(
                "{:>4}  {:<48} {:>10.2} {:>8.1} {:>5.1}%  {}",
                i + 1,
                x.schedule.name(),
                x.prediction.time_us,
                x.prediction.tflops,
                x.prediction.peak_fraction * 100.0,
                x.prediction.dominant
            );
        }
    }
    eprintln!(
        "\nranked {} shape(s) in {:.1} ms",
        shapes.len(),
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}

pub(super) fn explain_schedule(
    model: &CostModel,
    arch: &Arch,
    shapes: &[Shape],
    layout: Layout,
    name: &str,
) -> anyhow::Result<()> {
    let schedule: Schedule = name.parse()?;
    println!("{schedule} on {}", arch.name);
    println!(
        "  {} threads, {} B shared memory, {} accumulators/thread",
        schedule.threads(),
        schedule.smem_bytes(),
        schedule.accumulators_per_thread()
    );
    for shape in shapes {
        match space::check(arch, &schedule, shape) {
            Err(reason) => println!("{shape}: REJECTED: {reason}"),
            Ok(()) => {
                let p = model.predict(arch, &schedule, shape, layout);
                let ranked = model.rank(arch, schedule.dtype, layout, shape);
                let pos = ranked
                    .iter()
                    .position(|r| r.schedule == schedule)
                    .map_or(0, |p| p + 1);
                println!(
                    "{shape}: valid, rank {pos} of {}: {:.2} µs, {:.1} TFLOP/s ({:.1}% of peak), dominated by {}",
                    ranked.len(),
                    p.time_us,
                    p.tflops,
                    p.peak_fraction * 100.0,
                    p.dominant
                );
                let t = &p.terms;
                println!(
                    "    main loop {:.2} µs (compute {:.2}, smem {:.2}, L2 {:.2}, DRAM {:.2}); tail wave {:.2}; latency {:.2}; epilogue {:.2}; launch {:.2}; split-K {:.2}; transpose {:.2}",
                    t.mainloop_us,
                    t.compute_us,
                    t.smem_us,
                    t.l2_us,
                    t.dram_us,
                    t.tail_wave_us,
                    t.latency_us,
                    t.epilogue_us,
                    t.launch_us,
                    t.split_k_us,
                    t.transpose_us
                );
                println!(
                    "    {:.2} waves (last {:.0}% full), {} CTAs/SM; DRAM {:.1} MB, L2 {:.1} MB; persistence saved {:.2} µs, multicast {:.2} µs",
                    t.waves,
                    t.tail_efficiency * 100.0,
                    t.ctas_per_sm,
                    t.dram_bytes / 1e6,
                    t.l2_bytes / 1e6,
                    t.persistent_savings_us,
                    t.cluster_savings_us
                );
            }
        }
    }
    Ok(())
}

/// `forge verify-bits`: how many elements of C the bit model reproduces; an error (exit 1)
/// unless every checked element matches.
pub(super) fn verify_bits(
    a: &std::path::Path,
    b: &std::path::Path,
    c: &std::path::Path,
    shape: Shape,
    contract: Contract,
    arch: &Arch,
    samples: Option<usize>,
) -> anyhow::Result<()> {
    let params = bitmodel::params_for_arch(&arch.name).with_context(|| {
        format!(
            "the bit model has no tensor-core parameters for {}",
            arch.name
        )
    })?;
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let read = |path: &std::path::Path, rows: usize, cols: usize, what: &str| {
        let v = bitmodel::read_f32_file(path)
            .with_context(|| format!("reading {what} from {}", path.display()))?;
        if v.len() != rows * cols {
            bail!(
                "{} holds {} f32 values; {what} of {shape} needs {rows}×{cols} = {}",
                path.display(),
                v.len(),
                rows * cols
            );
        }
        Ok(v)
    };
    let (a, b, c) = (
        read(a, m, k, "A")?,
        read(b, n, k, "B")?,
        read(c, m, n, "C")?,
    );
    let samples = samples.unwrap_or(m * n);
    let check = bitmodel::check_sampled(
        &a,
        &b,
        &c,
        m,
        n,
        k,
        samples,
        20261203,
        &params,
        contract.rounding,
    );
    println!(
        "{shape} ({contract}, {} tensor cores): {} of {} checked elements bit-identical ({:.3}%)",
        arch.name,
        check.equal,
        check.checked,
        100.0 * check.equal as f64 / check.checked.max(1) as f64
    );
    for (i, j, device, model) in &check.first_mismatches {
        println!("  C[{i}][{j}]: file {device:#010x}, model {model:#010x}");
    }
    if !check.all_equal() {
        bail!(
            "{} of {} checked elements differ from the bit model",
            check.checked - check.equal,
            check.checked
        );
    }
    Ok(())
}

/// `check-kernels --schedule`: compile the named schedules' kernels, print ptxas's report for
/// each, keep their cubins and logs in `cubin_dir` (one file pair per distinct kernel); fails
/// if any is not clean or does not compile, after reporting every one.
pub(super) fn check_schedule_kernels(
    arch: &Arch,
    names: &[String],
    contract: Contract,
    cubin_dir: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use crate::kernel_check::{compile_with_report, named_variants};
    let mut variants = named_variants(names, contract.rounding)?;
    // Launch variants of one kernel (raster, group) share its cubin: report it once.
    let mut seen = std::collections::HashSet::new();
    variants.retain(|(_, v)| seen.insert(*v));
    let cache = crate::device::cache::KernelCache::new(&crate::device::cache::default_dir())?;
    if let Some(dir) = cubin_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let (mut unclean, mut failed) = (0, 0);
    for (schedule, variant) in &variants {
        let label = variant.label();
        let (compiled, p) = match compile_with_report(&cache, variant, &arch.name) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{} -> {label}: does not compile: {e}", schedule.name());
                failed += 1;
                continue;
            }
        };
        println!("{} -> {label}: {}", schedule.name(), p.summary());
        unclean += usize::from(!p.clean());
        if let Some(dir) = cubin_dir {
            for (ext, bytes) in [
                ("cubin", &compiled.cubin[..]),
                ("log", compiled.log.as_bytes()),
            ] {
                let path = dir.join(format!("{label}.{ext}"));
                std::fs::write(&path, bytes)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    if unclean + failed > 0 {
        bail!(
            "of {} kernel(s), {failed} did not compile and {unclean} are not clean (spills or \
             ptxas warnings)",
            variants.len()
        );
    }
    Ok(())
}

/// Compiles every distinct kernel variant the space can produce for `arch`.
pub(super) fn check_kernels(arch: &Arch) -> anyhow::Result<()> {
    let report = crate::kernel_check::check_all(arch)?;
    for line in &report.lines {
        println!("{line}");
    }
    println!(
        "{} variants compiled, {} clean, {} failed",
        report.total,
        report.clean,
        report.failed.len()
    );
    if !report.failed.is_empty() {
        for f in &report.failed {
            eprintln!("FAILED {f}");
        }
        bail!(
            "{} kernel variant(s) failed the ptxas check",
            report.failed.len()
        );
    }
    Ok(())
}
