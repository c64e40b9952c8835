//! GPU tests of every operand layout and of the padded path for rows a TMA schedule cannot
//! read in place. The gate for a layout L: the dispatcher's product on operands stored as L is
//! bit-identical to the canonical schedule's TN product of the explicitly (host-) transposed
//! operands. On a machine without a CUDA device every test prints a visible
//! "SKIPPED: no CUDA device" line and returns.

use forge::device::Gpu;
use forge::device::buffers::DeviceBuffer;
use forge::device::cache::KernelCache;
use forge::device::cublas::Cublas;
use forge::device::fill::UtilKernels;
use forge::dispatch::Dispatcher;
use forge::gate::{self, POISON_BITS};
use forge::problem::Problem;
use forge::profile::{Entry, Metadata, Profile, Rule};
use forge::reference::{TENSOR_A, TENSOR_B};
use forge::report::Verdict;
use forge::schedule::{Dtype, Layout, Schedule};
use forge::shape::Shape;

mod common;
use common::gpu;

const SEED: u64 = 7;

/// `rows`×`cols` row-major → `cols`×`rows` row-major.
fn transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; x.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = x[r * cols + c];
        }
    }
    out
}

fn dispatcher(gpu: &Gpu, cache: &KernelCache, entries: Vec<Entry>) -> Dispatcher {
    let mut meta = Metadata::now(&gpu.info.arch, Dtype::Tf32, false);
    meta.device_name = gpu.info.name.clone();
    Dispatcher::new(Profile::new(meta, entries).unwrap(), gpu, cache.dir()).unwrap()
}

/// Runs `d` on stored operands and returns C (poisoned first, so an unwritten element fails).
#[allow(clippy::too_many_arguments)]
fn product(
    gpu: &Gpu,
    d: &Dispatcher,
    layout: Layout,
    shape: &Shape,
    a: u64,
    b: u64,
    c: &DeviceBuffer,
) -> Vec<f32> {
    c.fill_bits(&gpu.stream, POISON_BITS).unwrap();
    d.gemm_layout(
        &gpu.stream,
        layout,
        shape.m,
        shape.n,
        shape.k,
        a,
        b,
        c.ptr(),
    )
    .unwrap();
    c.to_host(&gpu.stream).unwrap()
}

#[test]
fn every_layout_is_bit_identical_to_the_tn_product_of_the_transposed_operands() {
    let Some(gpu) = gpu() else { return };
    let cache = KernelCache::new(&forge::device::cache::default_dir()).unwrap();
    let util = UtilKernels::load(&gpu, &cache).unwrap();
    let cublas = Cublas::new(&gpu).unwrap();
    // The golden product: an empty profile runs the canonical schedule on TN operands.
    let reference = dispatcher(&gpu, &cache, vec![]);
    // The canonical schedule first.
    let schedules: Vec<Schedule> = [
        "mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1",
        "mma_sync_tf32_64x64x16_s3_w4_swz2c_pers_c1_k1",
        "wgmma_tf32_128x128x32_s4_wg1_swz1_np_c1_k1",
        "wgmma_tf32_128x256x32_s4_wg2_swz1_pers_c1_k1",
    ]
    .iter()
    .map(|n| n.parse().unwrap())
    .collect();
    assert_eq!(schedules[0], Schedule::canonical(Dtype::Tf32));
    for shape in [
        Shape::new(257, 513, 1025),
        Shape::new(384, 256, 512),
        Shape::new(1000, 1000, 1001),
        Shape::new(130, 70, 6),
    ] {
        let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
        let a_tn = DeviceBuffer::new(&gpu.ctx, m * k).unwrap();
        let b_tn = DeviceBuffer::new(&gpu.ctx, n * k).unwrap();
        util.fill_random(&gpu, &a_tn, SEED, 0, TENSOR_A).unwrap();
        util.fill_random(&gpu, &b_tn, SEED, 0, TENSOR_B).unwrap();
        let c = DeviceBuffer::new(&gpu.ctx, m * n).unwrap();
        let tn = Problem::new(Dtype::Tf32, Layout::Tn, shape);
        assert_eq!(reference.selection_for(&tn).rule, Rule::Canonical);
        let golden = product(
            &gpu,
            &reference,
            Layout::Tn,
            &shape,
            a_tn.ptr(),
            b_tn.ptr(),
            &c,
        );
        let (a_host, b_host) = (
            a_tn.to_host(&gpu.stream).unwrap(),
            b_tn.to_host(&gpu.stream).unwrap(),
        );
        // The operands as each layout stores them (host transposes, independent of the
        // device's preparation pass).
        let a_km = DeviceBuffer::from_host(&gpu.ctx, &transpose(&a_host, m, k)).unwrap();
        let b_kn = DeviceBuffer::from_host(&gpu.ctx, &transpose(&b_host, n, k)).unwrap();
        let stored = |layout: Layout| {
            let (ta, tb) = layout.transposes();
            (
                if ta { a_km.ptr() } else { a_tn.ptr() },
                if tb { b_kn.ptr() } else { b_tn.ptr() },
            )
        };
        for layout in Layout::ALL {
            // cuBLAS with the matching transposes computes the same product (to TF32
            // accuracy: its reduction order is its own).
            let (a, b) = stored(layout);
            c.fill_bits(&gpu.stream, POISON_BITS).unwrap();
            cublas.gemm_layout(&shape, layout, a, b, c.ptr()).unwrap();
            let theirs = c.to_host(&gpu.stream).unwrap();
            let (mut d2, mut r2) = (0f64, 0f64);
            for (x, y) in theirs.iter().zip(&golden) {
                d2 += (*x as f64 - *y as f64).powi(2);
                r2 += (*y as f64).powi(2);
            }
            assert!(
                (d2 / r2).sqrt() < 1e-3,
                "cuBLAS {layout:?} {shape}: relative RMS difference {}",
                (d2 / r2).sqrt()
            );
        }
        for &s in &schedules {
            let entries = Layout::ALL
                .iter()
                .map(|&l| Entry::predicted(Problem::new(Dtype::Tf32, l, shape), &s, 0.0))
                .collect();
            let d = dispatcher(&gpu, &cache, entries);
            for layout in Layout::ALL {
                let problem = Problem::new(Dtype::Tf32, layout, shape);
                assert_eq!(d.selection_for(&problem).schedule, s, "{problem}");
                let (a, b) = stored(layout);
                // Twice: the plan is built, then relaunched from the cache.
                for call in 0..2 {
                    let out = product(&gpu, &d, layout, &shape, a, b, &c);
                    let g = gate::compare(&golden, &out);
                    eprintln!("{problem} {s} call {call}: {:?}", g.verdict);
                    assert_eq!(g.verdict, Verdict::Pass, "{problem} {s} call {call}: {g:?}");
                }
            }
        }
        // Bases that are f32- but not 16-byte aligned: a TMA schedule reads padded copies.
        let a_off = DeviceBuffer::from_host(&gpu.ctx, &[&[0.0][..], &a_host].concat()).unwrap();
        let b_off = DeviceBuffer::from_host(&gpu.ctx, &[&[0.0][..], &b_host].concat()).unwrap();
        let wgmma = schedules[3];
        let d = dispatcher(&gpu, &cache, vec![Entry::predicted(tn, &wgmma, 0.0)]);
        let out = product(
            &gpu,
            &d,
            Layout::Tn,
            &shape,
            a_off.ptr() + 4,
            b_off.ptr() + 4,
            &c,
        );
        let g = gate::compare(&golden, &out);
        assert_eq!(g.verdict, Verdict::Pass, "{tn} {wgmma} unaligned: {g:?}");
    }
}

#[test]
fn a_layout_without_entries_falls_back_to_the_tn_choice() {
    let Some(gpu) = gpu() else { return };
    let cache = KernelCache::new(&forge::device::cache::default_dir()).unwrap();
    let shape = Shape::new(512, 512, 512);
    let s: Schedule = "wgmma_tf32_128x128x32_s4_wg1_swz1_np_c1_k1"
        .parse()
        .unwrap();
    let tn = Problem::new(Dtype::Tf32, Layout::Tn, shape);
    let d = dispatcher(&gpu, &cache, vec![Entry::predicted(tn, &s, 0.0)]);
    let nt = Problem::new(Dtype::Tf32, Layout::Nt, shape);
    assert_eq!(d.selection_for(&nt).schedule, s);
    assert!(matches!(d.selection_for(&nt).rule, Rule::Exact { .. }));
}

/// The preparation pass's bandwidth (bytes read + written per second) on operands far past
/// the L2, beside the cost model's price for it; fails below 1 TB/s (a quarter of the ~4 TB/s
/// the H200's DRAM sustains), which only a broken access pattern would give.
#[test]
fn operand_preparation_runs_near_dram_bandwidth() {
    use forge::cost_model::CostModel;
    use forge::device::prep::PrepKernel;
    use forge::device::timing::{TimingConfig, time_kernel};
    use forge::operand_prep::OperandPrep;
    let Some(gpu) = gpu() else { return };
    let cache = KernelCache::new(&forge::device::cache::default_dir()).unwrap();
    let prep = PrepKernel::load(&gpu, &cache).unwrap();
    let model = CostModel::shipped();
    let arch = gpu.info.arch().unwrap();
    let cfg = TimingConfig {
        max_seconds: 0.5,
        ..TimingConfig::default()
    };
    for (what, pass) in [
        ("transpose 8192x8192", (true, 8192, 8192, 8192, 8192)),
        ("transpose 5376x7168", (true, 5376, 7168, 5376, 7168)),
        ("pad 8191x8191", (false, 8191, 8191, 8191, 8192)),
    ] {
        let (transpose, rows, k, ld_in, ld_out) = pass;
        let p = OperandPrep {
            transpose,
            rows,
            k,
            ld_in,
            ld_out,
        };
        let src = DeviceBuffer::new(&gpu.ctx, rows as usize * k as usize).unwrap();
        // Two destinations in turn, so consecutive launches do not find their output in L2.
        let dst: Vec<DeviceBuffer> = (0..2)
            .map(|_| DeviceBuffer::new(&gpu.ctx, p.workspace_words() as usize).unwrap())
            .collect();
        let (summary, _) = time_kernel(&gpu, 2, &cfg, |s| {
            prep.launch(&gpu.stream, &p, src.ptr(), dst[s].ptr())
        })
        .unwrap();
        let gbs = p.bytes_moved() as f64 / (summary.median * 1e-6) / 1e9;
        // The model's price of this pass: a layout (or pad) term of one operand.
        let layout = if transpose { Layout::Nn } else { Layout::Tn };
        let shape = Shape::new(rows, rows, k);
        let s: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz1_pers_c1_k1"
            .parse()
            .unwrap();
        let predicted = model.predict(&arch, &s, &shape, layout).terms.transpose_us
            / if transpose { 1.0 } else { 2.0 };
        eprintln!(
            "operand preparation {what}: {:.1} µs for {:.1} MB, {gbs:.0} GB/s; cost model {predicted:.1} µs",
            summary.median,
            p.bytes_moved() as f64 / 1e6
        );
        assert!(gbs > 1000.0, "{what}: {gbs:.0} GB/s");
    }
}
