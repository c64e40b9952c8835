//! GPU integration tests. On a machine without a CUDA device every test prints a visible
//! "SKIPPED: no CUDA device" line and returns.

use forge::contract::Rounding;
use forge::device::Gpu;
use forge::device::buffers::DeviceBuffer;
use forge::device::cache::KernelCache;
use forge::device::fill::UtilKernels;
use forge::device::kernel::LoadedVariant;
use forge::device::prep::PrepKernel;
use forge::dispatch::Dispatcher;
use forge::gate::{self, POISON_BITS};
use forge::kernel_source::KernelVariant;
use forge::problem::Problem;
use forge::profile::{Entry, Metadata, Profile};
use forge::reference::{self, TENSOR_A, TENSOR_B};
use forge::report::Verdict;
use forge::schedule::{Dtype, LaunchOrder, Layout, Schedule};
use forge::shape::Shape;
use forge::tune::worker::{Golden, Inputs, LoadedKernels, Runner, run_once};

mod common;
use common::gpu;

fn cache() -> KernelCache {
    KernelCache::new(&forge::device::cache::default_dir()).expect("NVRTC available")
}

const SEED: u64 = 99;

fn inputs(gpu: &Gpu, util: &UtilKernels, shape: &Shape, seed: u64) -> Inputs {
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let a = DeviceBuffer::new(&gpu.ctx, m * k).unwrap();
    let b = DeviceBuffer::new(&gpu.ctx, n * k).unwrap();
    util.fill_random(gpu, &a, seed, 0, TENSOR_A).unwrap();
    util.fill_random(gpu, &b, seed, 0, TENSOR_B).unwrap();
    Inputs {
        layout: Layout::Tn,
        a: vec![a],
        b: vec![b],
        c: vec![DeviceBuffer::new(&gpu.ctx, m * n).unwrap()],
        workspace: DeviceBuffer::new(&gpu.ctx, 4 * m * n).unwrap(),
        tn: None,
    }
}

/// Loads the canonical schedule into `loaded` and returns its output C₀ on input set 0.
fn golden(
    gpu: &Gpu,
    cache: &KernelCache,
    loaded: &mut LoadedKernels,
    shape: &Shape,
    ins: &Inputs,
) -> Vec<f32> {
    run(
        gpu,
        cache,
        loaded,
        &Schedule::canonical(Dtype::Tf32),
        shape,
        ins,
    )
}

/// Loads `s` into `loaded` and returns its output on input set 0.
fn run(
    gpu: &Gpu,
    cache: &KernelCache,
    loaded: &mut LoadedKernels,
    s: &Schedule,
    shape: &Shape,
    ins: &Inputs,
) -> Vec<f32> {
    let lv = loaded.load(gpu, cache, s, shape).unwrap();
    let prep = PrepKernel::load(gpu, cache).unwrap();
    let runner = Runner::new(gpu, lv, &prep, s, Layout::Tn, shape, ins.operands()).unwrap();
    run_once(gpu, &runner, s, ins).unwrap()
}

/// ‖C − ref‖/‖ref‖ over sampled elements.
fn reference_error(out: &[f32], shape: &Shape, seed: u64) -> f64 {
    let (mut d2, mut r2) = (0f64, 0f64);
    for (i, j) in reference::sample_positions(seed, shape.m, shape.n, 512) {
        let r = reference::reference_element(seed, 0, shape.k, i, j);
        let c = out[i as usize * shape.n as usize + j as usize] as f64;
        let d = if c.is_nan() { f64::INFINITY } else { c - r };
        d2 += d * d;
        r2 += r * r;
    }
    (d2 / r2).sqrt()
}

/// `out` of schedule `s` is within the TF32 tolerance of the FP64 reference and, unless it
/// splits K (a different summation order by design), bit-identical to C₀ (`golden`).
fn check_output(out: &[f32], golden: &[f32], s: &Schedule, shape: &Shape, label: &str) {
    let err = reference_error(out, shape, SEED);
    assert!(err < reference::TF32_TOLERANCE, "{label}: rel err {err}");
    let g = gate::compare(golden, out);
    eprintln!(
        "{label}: ref err {err:.2e}, gate {:?} ({} differ)",
        g.verdict, g.differing
    );
    if s.split_k == 1 {
        assert_eq!(g.verdict, Verdict::Pass, "{label}: {g:?}");
    }
}

fn schedules() -> Vec<&'static str> {
    vec![
        "mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1",
        "mma_sync_tf32_64x64x16_s3_w4_swz2c_pers_c1_k1",
        "mma_sync_tf32_128x256x32_s3_w8_swz8_pers_c1_k1",
        "mma_sync_tf32_128x128x32_s3_w8_swz1_np_c1_k2",
        "wgmma_tf32_128x128x32_s4_wg1_swz1_np_c1_k1",
        "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1",
        "wgmma_tf32_256x128x32_s4_wg2_swz4c_pers_c1_k1",
        "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1",
        "wgmma_tf32_64x64x32_s4_wg1_swz1_np_c1_k1",
        "wgmma_tf32_128x128x32_s4_wg1_swz1_np_c1_k4",
    ]
}

#[test]
fn every_family_matches_fp64_and_the_gate_sorts_them() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let arch = gpu.info.arch().unwrap();
    for (rounding, shape) in Rounding::ALL.into_iter().flat_map(|r| {
        [
            Shape::new(1024, 1024, 1024),
            Shape::new(1000, 1000, 1000),
            Shape::new(517, 263, 300),
            Shape::new(300, 260, 299),
        ]
        .map(|s| (r, s))
    }) {
        let ins = inputs(&gpu, &util, &shape, SEED);
        let mut loaded = LoadedKernels::new(rounding);
        let golden = golden(&gpu, &cache, &mut loaded, &shape, &ins);
        let err = reference_error(&golden, &shape, SEED);
        assert!(
            err < reference::TF32_TOLERANCE,
            "{rounding} {shape}: canonical rel err {err}"
        );
        for name in schedules() {
            let s: Schedule = name.parse().unwrap();
            if forge::space::check(&arch, &s, &shape).is_err() {
                continue;
            }
            let out = run(&gpu, &cache, &mut loaded, &s, &shape, &ins);
            check_output(
                &out,
                &golden,
                &s,
                &shape,
                &format!("{rounding} {shape} {name}"),
            );
        }
    }
}

/// Chained-tail schedules on shapes whose last wave is cut into K pieces (2 to 4 per tile,
/// ragged M, N and K included): bit-identical to C₀, and again on a second launch that relies
/// on the first one leaving its flags at zero.
#[test]
fn chained_tail_is_bit_identical_and_reruns_identically() {
    let Some(gpu) = gpu() else { return };
    for (name, shape) in [
        (
            "wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k1",
            Shape::new(5120, 1792, 1024),
        ),
        (
            "wgmma_tf32_128x256x32_s4_wg2_swz4c_sk_c1_k1",
            Shape::new(5000, 1800, 1000),
        ),
        (
            "wgmma_tf32_128x128x32_s6_wg1_swz2_sk_c1_k1",
            Shape::new(3000, 3000, 1024),
        ),
        (
            "wgmma_tf32_128x224x32_s4_wg2_swz8_sk_c1_k1",
            Shape::new(4096, 4096, 4096),
        ),
    ] {
        let (pieces, _) = tail_schedule_is_bit_identical(&gpu, name, shape);
        assert!(pieces > 1, "{shape} {name}: no chained tail");
    }
}

/// Retiled-tail schedules on shapes whose last tile-rows are cut into ¾-wide tiles (ragged M
/// and N, so narrow and whole tiles are shifted inward; odd N, so their stores are direct;
/// K % 4 ≠ 0, so B's second tensor map reads the padded copy): bit-identical to C₀, twice.
#[test]
fn retiled_tail_is_bit_identical_and_reruns_identically() {
    let Some(gpu) = gpu() else { return };
    for (name, shape) in [
        (
            "wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k1",
            Shape::new(6000, 6100, 512),
        ),
        (
            "wgmma_tf32_128x224x32_s4_wg2_swz4c_rt_c1_k1",
            Shape::new(2500, 6000, 700),
        ),
        (
            "wgmma_tf32_128x128x32_s6_wg1_swz2_rt_c1_k1",
            Shape::new(1900, 2900, 1001),
        ),
        (
            "wgmma_tf32_128x128x32_s6_wg1_swz1_rt_c1_k1",
            Shape::new(1900, 2901, 1000),
        ),
    ] {
        let (_, rows) = tail_schedule_is_bit_identical(&gpu, name, shape);
        assert!(rows > 0, "{shape} {name}: no retiled tail");
    }
}

/// Tiles larger than the matrix load short TMA boxes (`Schedule::short_tma_boxes`, ABI.md
/// "Short boxes"): the tile's rows past the box keep stale shared memory. Every such
/// wgmma schedule (tall and wide tiles, ping-pong, a cluster, split-K; M or N
/// below the tile, ragged, K % 4 ≠ 0 through the padded copy) must give C₀'s bits (the
/// canonical is mma_sync, which has no boxes) into a poisoned C, twice.
#[test]
fn short_boxes_are_bit_identical_where_the_tile_overhangs() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let arch = gpu.info.arch().unwrap();
    let names = [
        "wgmma_tf32_256x128x32_s4_wg2_swz1c_pers_c1_k1",
        "wgmma_tf32_128x256x32_s4_wg2_swz8_np_c1_k1",
        "wgmma_tf32_64x128x32_s7_wg1_swz1_np_c1_k1",
        "wgmma_tf32_128x104x32_s7_wg2_swz1_pp_c1_k1",
        "wgmma_tf32_128x192x32_s5_wg2_swz4_pers_c2_k1",
        "wgmma_tf32_128x128x32_s4_wg1_swz1_np_c1_k4",
        "wgmma_tf32_64x64x32_s7_wg1_swz1_pers_c1_k1",
    ];
    let mut shortened = 0;
    for shape in [
        Shape::new(40, 4096, 1024),
        Shape::new(192, 2048, 512),
        Shape::new(100, 300, 299),
        Shape::new(4096, 96, 1024),
        Shape::new(2000, 40, 300),
        Shape::new(20, 20, 64),
    ] {
        let ins = inputs(&gpu, &util, &shape, SEED);
        let mut loaded = LoadedKernels::new(Rounding::NearestEven);
        let golden = golden(&gpu, &cache, &mut loaded, &shape, &ins);
        for name in names {
            let s: Schedule = name.parse().unwrap();
            if forge::space::check(&arch, &s, &shape).is_err() {
                continue;
            }
            let short = forge::device::kernel::short_boxes(&s, &shape) != (None, None);
            shortened += short as u32;
            for launch in ["first", "second"] {
                ins.c[0].fill_bits(&gpu.stream, POISON_BITS).unwrap();
                let out = run(&gpu, &cache, &mut loaded, &s, &shape, &ins);
                let label = format!("{shape} {name} ({launch}, short box {short})");
                check_output(&out, &golden, &s, &shape, &label);
            }
        }
    }
    assert!(shortened >= 20, "only {shortened} runs had a short box");
}

/// Runs one tail schedule (chained or retiled) against C₀ of the canonical schedule, then
/// launches it again without re-zeroing its workspace (a chained tail's flags must be left at
/// zero); both outputs must pass the gate. Returns (K pieces per tail tile, tile-rows retiled)
/// at the launch's grid, for the caller to check the tail was really cut.
fn tail_schedule_is_bit_identical(gpu: &Gpu, name: &str, shape: Shape) -> (u32, u32) {
    let cache = cache();
    let util = UtilKernels::load(gpu, &cache).unwrap();
    let s: Schedule = name.parse().unwrap();
    let ins = inputs(gpu, &util, &shape, SEED);
    let mut loaded = LoadedKernels::new(Rounding::NearestEven);
    let golden = golden(gpu, &cache, &mut loaded, &shape, &ins);
    loaded.load(gpu, &cache, &s, &shape).unwrap();
    let lv = loaded.get(&s, &shape);
    let grid = s.grid_ctas(&shape, lv.resident_ctas);
    let cut = (
        s.tail_pieces(&shape, grid),
        s.retiled_tail_rows(&shape, grid),
    );
    assert!(s.workspace_words(&shape, lv.resident_ctas) as usize <= ins.workspace.len());
    let prep = PrepKernel::load(gpu, &cache).unwrap();
    let runner = Runner::new(gpu, lv, &prep, &s, Layout::Tn, &shape, ins.operands()).unwrap();
    let first = run_once(gpu, &runner, &s, &ins).unwrap();
    let g = gate::compare(&golden, &first);
    eprintln!(
        "{shape} {name}: {} pieces per tail tile, {} tile-rows retiled, gate {:?} ({} differ)",
        cut.0, cut.1, g.verdict, g.differing
    );
    assert_eq!(g.verdict, Verdict::Pass, "{shape} {name}: {g:?}");
    ins.c[0].fill_bits(&gpu.stream, POISON_BITS).unwrap();
    runner
        .launch(gpu, 0, ins.c[0].ptr(), ins.workspace.ptr())
        .unwrap();
    let second = ins.c[0].to_host(&gpu.stream).unwrap();
    let g = gate::compare(&golden, &second);
    assert_eq!(g.verdict, Verdict::Pass, "{shape} {name} rerun: {g:?}");
    cut
}

#[test]
fn gate_rejects_a_planted_one_ulp_change() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let shape = Shape::new(256, 256, 256);
    let ins = inputs(&gpu, &util, &shape, SEED);
    let mut loaded = LoadedKernels::new(Rounding::NearestEven);
    let s = Schedule::canonical(Dtype::Tf32);
    let golden = run(&gpu, &cache, &mut loaded, &s, &shape, &ins);
    let again = run(&gpu, &cache, &mut loaded, &s, &shape, &ins);
    assert_eq!(gate::compare(&golden, &again).verdict, Verdict::Pass);
    let mut planted = again.clone();
    planted[12345] = f32::from_bits(planted[12345].to_bits() ^ 1);
    let g = gate::compare(&golden, &planted);
    assert_eq!((g.verdict, g.differing), (Verdict::Fail, 1));
    // An unwritten element keeps the poison and fails too.
    let mut unwritten = again;
    unwritten[0] = f32::from_bits(POISON_BITS);
    assert_eq!(gate::compare(&golden, &unwritten).verdict, Verdict::Fail);
}

#[test]
fn device_gate_gives_the_host_gate_result() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    // More elements than one pass of the count's grid covers (132 SMs × 16 blocks × 256).
    let n = 5_000_003;
    let golden: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let g = Golden::new(&gpu, &util, golden.clone()).unwrap();
    let mut planted = golden.clone();
    for i in (7..n).step_by(997) {
        planted[i] = f32::from_bits(planted[i].to_bits() ^ 1);
    }
    let mut last = golden.clone();
    last[n - 1] = f32::from_bits(POISON_BITS);
    let mut signed_zero = golden.clone();
    signed_zero[3] = 0.0;
    let mut negative_zero = signed_zero.clone();
    negative_zero[3] = -0.0;
    for (label, out) in [
        ("identical", &golden),
        ("one ulp every 997", &planted),
        ("poison in the last element", &last),
    ] {
        let on_device = DeviceBuffer::from_host(&gpu.ctx, out).unwrap();
        let d = g.gate(&gpu, &on_device).unwrap();
        let h = gate::compare(&golden, out);
        assert_eq!(
            (
                d.verdict,
                d.differing,
                d.max_abs_diff.to_bits(),
                d.rel_rms.to_bits()
            ),
            (
                h.verdict,
                h.differing,
                h.max_abs_diff.to_bits(),
                h.rel_rms.to_bits()
            ),
            "{label}"
        );
    }
    let zero = Golden::new(&gpu, &util, signed_zero).unwrap();
    let on_device = DeviceBuffer::from_host(&gpu.ctx, &negative_zero).unwrap();
    let d = zero.gate(&gpu, &on_device).unwrap();
    assert_eq!(
        (d.verdict, d.differing),
        (Verdict::Fail, 1),
        "-0 against +0"
    );
    let on_device = DeviceBuffer::from_host(&gpu.ctx, &planted).unwrap();
    let d = g.gate(&gpu, &on_device).unwrap();
    assert_eq!(d.differing, (n - 7).div_ceil(997) as u64);
}

#[test]
fn heat_keeps_the_gpu_busy_as_long_as_asked() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let shape = Shape::new(1024, 1024, 1024);
    let ins = inputs(&gpu, &util, &shape, SEED);
    let mut loaded = LoadedKernels::new(Rounding::NearestEven);
    let s = Schedule::canonical(Dtype::Tf32);
    let golden = run(&gpu, &cache, &mut loaded, &s, &shape, &ins);
    let lv = loaded.get(&s, &shape);
    let prep = PrepKernel::load(&gpu, &cache).unwrap();
    let runner = Runner::new(&gpu, lv, &prep, &s, Layout::Tn, &shape, ins.operands()).unwrap();
    let start = std::time::Instant::now();
    let busy = forge::device::timing::heat(&gpu, 1, 200.0, |set| {
        runner.launch(&gpu, set, ins.c[0].ptr(), ins.workspace.ptr())
    })
    .unwrap();
    gpu.stream.synchronize().unwrap();
    let wall = start.elapsed().as_secs_f64() * 1e3;
    eprintln!("heat: GPU busy {busy:.0} ms of {wall:.0} ms");
    // As long as asked, and without idle gaps between its batches.
    assert!(busy >= 200.0, "{busy} ms busy");
    assert!(busy >= 0.8 * wall, "busy {busy} ms of {wall} ms");
    // The canonical's output after the heat is still C₀.
    let out = ins.c[0].to_host(&gpu.stream).unwrap();
    assert_eq!(gate::compare(&golden, &out).verdict, Verdict::Pass);
}

#[test]
fn dispatcher_runs_the_profiled_kernel_with_small_overhead() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let tuned = Shape::new(2048, 2048, 2048);
    let chosen = "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1";
    let mut meta = Metadata::now(&gpu.info.arch, Dtype::Tf32, false);
    meta.device_name = gpu.info.name.clone();
    let entry = Entry::predicted(
        Problem::new(Dtype::Tf32, Layout::Tn, tuned),
        &chosen.parse().unwrap(),
        0.0,
    );
    // A chained-tail entry: the dispatcher owns its zeroed workspace.
    let chained = Shape::new(5120, 1792, 1024);
    let chained_entry = Entry::predicted(
        Problem::new(Dtype::Tf32, Layout::Tn, chained),
        &"wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k1"
            .parse()
            .unwrap(),
        0.0,
    );
    let p = Profile::new(meta, vec![entry, chained_entry]).unwrap();
    // A profile written on the simulated device is never dispatched from.
    let mut simulated = p.clone();
    simulated.meta.device_name = forge::device::simulated::NAME.into();
    let refused = Dispatcher::new(simulated, &gpu, cache.dir()).err().unwrap();
    assert!(
        refused.to_string().contains("simulated device"),
        "{refused}"
    );
    let d = Dispatcher::new(p, &gpu, cache.dir()).unwrap();
    let dispatch = |shape: &Shape, ins: &Inputs| {
        let (a, b, c) = (ins.a[0].ptr(), ins.b[0].ptr(), ins.c[0].ptr());
        d.gemm(&gpu.stream, shape.m, shape.n, shape.k, a, b, c)
            .unwrap()
    };
    for shape in [
        tuned,
        chained,
        chained,
        Shape::new(1000, 1000, 1000),
        Shape::new(999, 1001, 1003),
    ] {
        let ins = inputs(&gpu, &util, &shape, SEED);
        let mut loaded = LoadedKernels::new(d.profile().meta.numerical_contract.rounding);
        let golden = golden(&gpu, &cache, &mut loaded, &shape, &ins);
        ins.c[0].fill_bits(&gpu.stream, POISON_BITS).unwrap();
        dispatch(&shape, &ins);
        if shape == chained {
            dispatch(&shape, &ins); // the cached plan, relaunched on its workspace
        }
        let out = ins.c[0].to_host(&gpu.stream).unwrap();
        let g = gate::compare(&golden, &out);
        eprintln!(
            "dispatch {shape}: {} ({:?}), gate {:?}",
            d.selection(&shape).schedule,
            d.selection(&shape).rule,
            g.verdict
        );
        assert_eq!(g.verdict, Verdict::Pass, "{shape}: {g:?}");
    }
    // Launch overhead: host time per call, dispatcher vs a raw launch of the same plan.
    let shape = Shape::new(128, 128, 32);
    let ins = inputs(&gpu, &util, &shape, SEED);
    let s: Schedule = d.selection(&shape).schedule;
    let v = KernelVariant::new(&s, &shape, d.profile().meta.numerical_contract.rounding);
    let compiled = cache
        .get_or_compile(&v.label(), &v.source(), &gpu.info.arch)
        .unwrap();
    let raw = LoadedVariant::load(&gpu, v, &compiled).unwrap();
    let prepared = raw
        .prepare(&s, &shape, ins.a[0].ptr(), ins.b[0].ptr())
        .unwrap();
    let n = 2000;
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        gpu.stream.synchronize().unwrap();
        let t = std::time::Instant::now();
        for _ in 0..n {
            raw.launch(&gpu.stream, &prepared, ins.c[0].ptr(), 0)
                .unwrap();
        }
        let raw_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
        gpu.stream.synchronize().unwrap();
        let t = std::time::Instant::now();
        for _ in 0..n {
            dispatch(&shape, &ins);
        }
        let disp_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
        gpu.stream.synchronize().unwrap();
        best = (best.0.min(raw_us), best.1.min(disp_us));
    }
    eprintln!(
        "launch cost per call: raw {:.3} µs, dispatcher {:.3} µs, overhead {:.3} µs",
        best.0,
        best.1,
        best.1 - best.0
    );
    assert!(
        best.1 - best.0 < 1.0,
        "dispatcher overhead {:.3} µs",
        best.1 - best.0
    );
}

/// Programmatic launches (`launch = "programmatic"` in a profile) overlap a kernel's launch with
/// the previous kernel's tail; every kernel must still wait for that one's writes. A chain
/// X = A·Bᵀ, Y = X·Cᵀ where the second GEMM reads X right after the first wrote it (through the
/// K % 4 ≠ 0 preparation pass, and directly), with a new A and X poisoned before each round:
/// the programmatic dispatcher's Y must equal the serial one's bit for bit in every round.
#[test]
fn programmatic_launches_wait_for_the_kernel_before_them() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let (m, k, n2) = (512u32, 768u32, 640u32);
    let schedule = "wgmma_tf32_128x128x32_s4_wg2_swz1_np_c1_k1";
    // n = 999: the second GEMM's K (= n) is not a multiple of 4, so the preparation pass
    // copies X (padded) before the wgmma kernel reads it.
    for n in [1000u32, 999] {
        let (first, second) = (Shape::new(m, n, k), Shape::new(m, n2, n));
        let a = DeviceBuffer::new(&gpu.ctx, (m * k) as usize).unwrap();
        let b = DeviceBuffer::new(&gpu.ctx, (n * k) as usize).unwrap();
        let c = DeviceBuffer::new(&gpu.ctx, (n2 * n) as usize).unwrap();
        let x = DeviceBuffer::new(&gpu.ctx, (m * n) as usize).unwrap();
        util.fill_random(&gpu, &a, SEED, 0, TENSOR_A).unwrap();
        util.fill_random(&gpu, &b, SEED, 0, TENSOR_B).unwrap();
        util.fill_random(&gpu, &c, SEED, 1, TENSOR_B).unwrap();
        let run = |launch: LaunchOrder| {
            let mut meta = Metadata::now(&gpu.info.arch, Dtype::Tf32, false);
            meta.device_name = gpu.info.name.clone();
            let entries = [first, second].map(|shape| {
                let mut e = Entry::predicted(
                    Problem::new(Dtype::Tf32, Layout::Tn, shape),
                    &schedule.parse().unwrap(),
                    0.0,
                );
                e.launch = launch;
                e
            });
            let p = Profile::new(meta, entries.to_vec()).unwrap();
            let d = Dispatcher::new(p, &gpu, cache.dir()).unwrap();
            assert_eq!(d.selection(&second).launch, launch);
            let y = DeviceBuffer::new(&gpu.ctx, (m * n2) as usize).unwrap();
            let mut rounds = vec![];
            for round in 0..8 {
                // New A each round: a kernel that ran ahead of its predecessor (the first GEMM,
                // or the pad pass's copy of X) would read the previous round's values.
                util.fill_random(&gpu, &a, SEED + round, 0, TENSOR_A)
                    .unwrap();
                x.fill_bits(&gpu.stream, POISON_BITS).unwrap();
                d.gemm(&gpu.stream, m, n, k, a.ptr(), b.ptr(), x.ptr())
                    .unwrap();
                d.gemm(&gpu.stream, m, n2, n, x.ptr(), c.ptr(), y.ptr())
                    .unwrap();
                rounds.push(y.to_host(&gpu.stream).unwrap());
            }
            rounds
        };
        let serial = run(LaunchOrder::Serial);
        assert!(
            serial.iter().flatten().all(|v| v.is_finite()),
            "N {n}: poison in Y"
        );
        assert_ne!(serial[0], serial[1], "N {n}: the rounds' inputs differ");
        for (i, (p, s)) in run(LaunchOrder::Programmatic)
            .iter()
            .zip(&serial)
            .enumerate()
        {
            let g = gate::compare(s, p);
            assert_eq!(g.verdict, Verdict::Pass, "N {n}, round {i}: {g:?}");
        }
        eprintln!("N {n}: 8 programmatic chains equal the serial chains, bit for bit");
    }
}

#[test]
fn tune_on_first_use_chooses_a_gated_schedule_and_later_runs_load_it() {
    let Some(gpu) = gpu() else { return };
    let cache = cache();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let dir = std::env::temp_dir().join(format!("forge-first-use-gpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file = dir.join("first-use.json");
    let mut meta = Metadata::now(&gpu.info.arch, Dtype::Tf32, false);
    meta.device_name = gpu.info.name.clone();
    let tuned = Shape::new(2048, 2048, 2048);
    let entry = Entry::predicted(
        Problem::new(Dtype::Tf32, Layout::Tn, tuned),
        &"wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1"
            .parse()
            .unwrap(),
        0.0,
    );
    let profile = Profile::new(meta, vec![entry]).unwrap();
    let mut d = Dispatcher::new(profile.clone(), &gpu, cache.dir()).unwrap();
    d.tune_on_first_use(Some(&file)).unwrap();
    let unseen = [Shape::new(1000, 3000, 2000), Shape::new(257, 513, 1025)];
    for shape in unseen {
        let ins = inputs(&gpu, &util, &shape, SEED);
        let mut loaded = LoadedKernels::new(d.profile().meta.numerical_contract.rounding);
        let golden = golden(&gpu, &cache, &mut loaded, &shape, &ins);
        ins.c[0].fill_bits(&gpu.stream, POISON_BITS).unwrap();
        let t = std::time::Instant::now();
        d.gemm(
            &gpu.stream,
            shape.m,
            shape.n,
            shape.k,
            ins.a[0].ptr(),
            ins.b[0].ptr(),
            ins.c[0].ptr(),
        )
        .unwrap();
        gpu.stream.synchronize().unwrap();
        let first_call = t.elapsed().as_secs_f64();
        let out = ins.c[0].to_host(&gpu.stream).unwrap();
        let g = gate::compare(&golden, &out);
        let chosen = d.tuned_on_first_use(&shape).expect("tuned and recorded");
        eprintln!(
            "first use {shape}: {chosen} (first call {first_call:.2} s incl. compile and tuning), gate {:?}",
            g.verdict
        );
        assert_eq!(g.verdict, Verdict::Pass, "{shape}: {g:?}");
    }
    // The profile's exact entry is not re-tuned.
    assert_eq!(d.tuned_on_first_use(&tuned), None);
    let text = std::fs::read_to_string(&file).unwrap();
    eprintln!("{text}");
    // A later dispatcher loads the choices without tuning again.
    let mut later = Dispatcher::new(profile, &gpu, cache.dir()).unwrap();
    later.tune_on_first_use(Some(&file)).unwrap();
    for shape in unseen {
        assert_eq!(
            later.tuned_on_first_use(&shape),
            d.tuned_on_first_use(&shape)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tune_survives_a_faulting_and_a_hanging_candidate() {
    let Some(gpu) = gpu() else { return };
    let arch = gpu.info.arch().unwrap();
    drop(gpu);
    let shape = Shape::new(512, 512, 512);
    let ranked =
        forge::cost_model::CostModel::shipped().rank(&arch, Dtype::Tf32, Layout::Tn, &shape);
    let picks: Vec<String> = forge::tune::pick_diverse(&ranked, 4)
        .iter()
        .map(|(_, r)| r.schedule.name())
        .collect();
    let (faulty, hung) = (&picks[1], &picks[2]);
    let dir = std::env::temp_dir().join(format!("forge-gpu-fault-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // FORGE_BIN: where the test binary was copied to another machine, the build path is gone.
    let bin = std::env::var("FORGE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_forge").into());
    let out = std::process::Command::new(bin)
        .args([
            "tune",
            "--arch",
            &arch.name,
            "--shapes",
            "512x512x512",
            "--top",
            "4",
        ])
        .args([
            "--watchdog",
            "5",
            "--max-seconds",
            "0.2",
            "--no-plots",
            "--run-dir",
        ])
        .arg(dir.join("run"))
        .arg("--profile")
        .arg(dir.join("p.toml"))
        .env(
            forge::tune::worker::INJECT_ENV,
            format!("fault:{faulty},hang:{hung}"),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report = forge::report::RunReport::load(&dir.join("run")).unwrap();
    let s = &report.shapes[0];
    let status = |n: &str| {
        s.candidates
            .iter()
            .find(|c| c.schedule.name() == n)
            .unwrap()
            .status
            .clone()
    };
    assert!(
        matches!(status(faulty), forge::report::Status::Faulted(_)),
        "{:?}",
        status(faulty)
    );
    assert!(
        matches!(status(hung), forge::report::Status::TimedOut(_)),
        "{:?}",
        status(hung)
    );
    for name in [&picks[0], &picks[3]] {
        assert_eq!(status(name), forge::report::Status::Measured, "{name}");
    }
    assert!(s.chosen.is_some() && s.chosen.map(|c| c.name()).as_ref() != Some(faulty));
    assert!(Profile::load(&dir.join("p.toml")).unwrap().entries.len() == 1);
    eprintln!(
        "fault isolation: {faulty} -> {:?}; {hung} -> {:?}",
        status(faulty),
        status(hung)
    );
}
