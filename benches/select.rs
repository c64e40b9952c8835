//! `Profile::select` on the shipped H200 profile: an exact hit (budget 200 ns per call), a
//! miss ranked by the cost model over the profile's schedules (once per shape and operands in
//! a dispatcher, which caches the plan), a shape only the canonical schedule can run, and the
//! earlier nearest-shape rule for comparison.

use criterion::{Criterion, criterion_group, criterion_main};
use forge::problem::Problem;
use forge::profile::Profile;
use forge::schedule::{Dtype, Layout};
use forge::shape::Shape;
use std::hint::black_box;

fn select(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/sm_90a-h200.toml");
    let profile = Profile::load(std::path::Path::new(path)).expect("shipped profile loads");
    let mut group = c.benchmark_group("select");
    for (name, shape) in [
        ("exact", Shape::new(4096, 4096, 4096)),
        ("model", Shape::new(3000, 5000, 7000)),
        ("canonical", Shape::new(3000, 5000, 7001)),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| profile.select(black_box(&Problem::new(Dtype::Tf32, Layout::Tn, shape))))
        });
    }
    group.bench_function("nearest (earlier rule)", |b| {
        let shape = Shape::new(3000, 5000, 7000);
        b.iter(|| profile.select_nearest(black_box(&Problem::new(Dtype::Tf32, Layout::Tn, shape))))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // No plots: criterion's plotters backend needs a system font, forge registers none.
    config = Criterion::default().without_plots();
    targets = select
}
criterion_main!(benches);
