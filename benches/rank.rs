//! Ranks every schedule of the space for 100 varied shapes on sm_90a (the cost model's
//! throughput budget: under 1 s for all of it, on a 2-core machine).

use criterion::{Criterion, criterion_group, criterion_main};
use forge::arch::Arch;
use forge::cost_model::CostModel;
use forge::schedule::{Dtype, Layout};
use forge::shape::Shape;
use std::hint::black_box;

/// 100 shapes: squares, skinny and wide products, ragged and deep-K problems.
fn shapes() -> Vec<Shape> {
    let sizes = [64u32, 128, 384, 1000, 2048, 4096, 5376, 8192, 12288, 21504];
    let mut out = Vec::with_capacity(100);
    for (i, &m) in sizes.iter().enumerate() {
        for (j, &n) in sizes.iter().enumerate() {
            let k = sizes[(i + 2 * j + 3) % sizes.len()];
            out.push(Shape::new(m, n, k));
        }
    }
    out
}

fn rank_100_shapes(c: &mut Criterion) {
    let model = CostModel::shipped();
    let arch = Arch::by_name("sm_90a").unwrap();
    let shapes = shapes();
    assert_eq!(shapes.len(), 100);
    let mut group = c.benchmark_group("rank");
    group.sample_size(10);
    group.bench_function("sm_90a_all_schedules_100_shapes", |b| {
        b.iter(|| {
            let ranked = model.rank_many(&arch, Dtype::Tf32, Layout::Tn, black_box(&shapes));
            black_box(ranked.iter().map(Vec::len).sum::<usize>())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // No plots: criterion's plotters backend needs a system font, forge registers none.
    config = Criterion::default().without_plots();
    targets = rank_100_shapes
}
criterion_main!(benches);
