//! The schedule space: every candidate own-GEMM variant for (arch, dtype, shape), and the
//! rules that reject the ones that cannot run, each with its reason.

use crate::arch::Arch;
use crate::schedule::{Dtype, Family, Persistence, Raster, Schedule, Tile};
use crate::shape::Shape;
use std::fmt;

/// CTA tiles (BM, BN) both kernel families implement.
pub const TILES: [(u32, u32); 6] = [
    (64, 64),
    (64, 128),
    (128, 64),
    (128, 128),
    (128, 256),
    (256, 128),
];
/// Extra wgmma tiles: 128 rows by every N from 72 to 248 in steps of 8 (the instruction's N
/// step) that [`TILES`] lacks. The width then fits the shape: the tile count can match the SM
/// count on skinny, memory-bound shapes (128×168 gives 128 tiles at N = 21504, 128×112 at
/// N = 14336), and whole waves on short-K shapes (128×232 gives 528 = 4 × 132 tiles at
/// 3000×5000, where 128×256 leaves 480 = 3.6 waves).
pub const WGMMA_EXTRA_TILES: [(u32, u32); 22] = {
    let mut all = [(128, 0); 22];
    let (mut i, mut bn) = (0, 72);
    while bn <= 248 {
        if bn != 128 {
            all[i].1 = bn;
            i += 1;
        }
        bn += 8;
    }
    all
};
pub const GROUPS: [u32; 5] = [1, 2, 4, 8, 16];
pub const SPLITS: [u32; 3] = [1, 2, 4];
/// Accumulators per thread above which a tile's registers spill (255 registers per thread,
/// operand fragments and addressing need the rest).
pub const MAX_ACCUMULATORS: u32 = 128;

/// Per-family option lists: K steps, stages, workers, cluster sizes.
struct FamilyOptions {
    tiles: &'static [(u32, u32)],
    bks: &'static [u32],
    stages: &'static [u32],
    workers: &'static [u32],
    clusters: &'static [u32],
}

const WGMMA_TILES: [(u32, u32); TILES.len() + WGMMA_EXTRA_TILES.len()] = {
    let mut all = [(0, 0); TILES.len() + WGMMA_EXTRA_TILES.len()];
    let mut i = 0;
    while i < TILES.len() {
        all[i] = TILES[i];
        i += 1;
    }
    while i < all.len() {
        all[i] = WGMMA_EXTRA_TILES[i - TILES.len()];
        i += 1;
    }
    all
};

fn options(family: Family) -> FamilyOptions {
    match family {
        Family::MmaSync => FamilyOptions {
            tiles: &TILES,
            bks: &[16, 32],
            stages: &[2, 3, 4],
            workers: &[4, 8],
            clusters: &[1],
        },
        Family::Wgmma => FamilyOptions {
            tiles: &WGMMA_TILES,
            bks: &[32],
            stages: &[2, 3, 4, 5, 6, 7],
            workers: &[1, 2],
            clusters: &[1, 2],
        },
    }
}

/// Why a schedule cannot run a problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    FamilyUnavailable {
        family: Family,
        arch: String,
    },
    DtypeUnsupported(Dtype),
    TileNotImplemented(Tile),
    OptionNotImplemented {
        what: &'static str,
        value: u32,
        family: Family,
    },
    SharedMemory {
        needed: u32,
        limit: u32,
    },
    Registers {
        accumulators: u32,
        limit: u32,
    },
    WarpLayout {
        detail: &'static str,
    },
    RedundantGroup {
        group: u32,
        band_tiles: u64,
    },
    SplitTooFine {
        split_k: u32,
        k_tiles: u64,
    },
    ClusterTooTall {
        tiles_m: u64,
    },
    ChainedTailUnsupported {
        detail: &'static str,
    },
    NoTailToChain {
        tiles: u64,
        grid: u64,
    },
    PingPongUnsupported {
        detail: &'static str,
    },
    RetiledTailUnsupported {
        detail: &'static str,
    },
    NoTailToRetile {
        tiles: u64,
        grid: u64,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::FamilyUnavailable { family, arch } => {
                write!(f, "{arch} has no {} instructions", family.as_str())
            }
            Rejection::DtypeUnsupported(d) => write!(f, "no {d} kernel is implemented yet"),
            Rejection::TileNotImplemented(t) => {
                write!(f, "tile {}x{}x{} is not implemented", t.bm, t.bn, t.bk)
            }
            Rejection::OptionNotImplemented {
                what,
                value,
                family,
            } => write!(
                f,
                "{what} {value} is not offered by the {} family",
                family.as_str()
            ),
            Rejection::SharedMemory { needed, limit } => write!(
                f,
                "needs {needed} B of shared memory per CTA, the arch allows {limit} B"
            ),
            Rejection::Registers {
                accumulators,
                limit,
            } => write!(
                f,
                "{accumulators} f32 accumulators per thread exceed {limit}: registers would spill"
            ),
            Rejection::WarpLayout { detail } => write!(f, "no warp layout: {detail}"),
            Rejection::RedundantGroup { group, band_tiles } => write!(
                f,
                "swizzle group {group} over {band_tiles} tiles walks the same order as group {}",
                group / 2
            ),
            Rejection::SplitTooFine { split_k, k_tiles } => write!(
                f,
                "split-K {split_k} over {k_tiles} K tiles leaves under 2 tiles per split"
            ),
            Rejection::ClusterTooTall { tiles_m } => write!(
                f,
                "a 2-CTA cluster needs at least 2 tile rows; the shape has {tiles_m}"
            ),
            Rejection::ChainedTailUnsupported { detail } => {
                write!(f, "no chained tail: {detail}")
            }
            Rejection::NoTailToChain { tiles, grid } => write!(
                f,
                "{tiles} tiles on {grid} CTAs leave no partial wave worth cutting along K \
                 (the schedule would equal its `pers` twin)"
            ),
            Rejection::PingPongUnsupported { detail } => write!(f, "no ping-pong: {detail}"),
            Rejection::RetiledTailUnsupported { detail } => {
                write!(f, "no retiled tail: {detail}")
            }
            Rejection::NoTailToRetile { tiles, grid } => write!(
                f,
                "{tiles} tiles on {grid} CTAs leave no last wave that narrower tiles shorten \
                 (the schedule would equal its `pers` twin)"
            ),
        }
    }
}

/// Whether `s` computes `shape` correctly on `arch`: valid, or rejected only by a rule that
/// prunes wasteful schedules from the search (a redundant swizzle group, a split or a cluster
/// with too little work, a chained or retiled tail with no partial wave to shorten): the kernel
/// still runs it, with the same reduction order. Selection from a profile's pool uses this,
/// not [`check`].
pub fn runnable(arch: &Arch, s: &Schedule, shape: &Shape) -> Result<(), Rejection> {
    match check(arch, s, shape) {
        Err(
            Rejection::RedundantGroup { .. }
            | Rejection::SplitTooFine { .. }
            | Rejection::ClusterTooTall { .. }
            | Rejection::NoTailToChain { .. }
            | Rejection::NoTailToRetile { .. },
        ) => Ok(()),
        other => other,
    }
}

/// Checks every rule; the first broken one is the reason.
pub fn check(arch: &Arch, s: &Schedule, shape: &Shape) -> Result<(), Rejection> {
    let available = match s.family {
        Family::MmaSync => arch.instructions.mma_sync,
        Family::Wgmma => arch.instructions.wgmma && arch.instructions.tma,
    };
    if !available {
        return Err(Rejection::FamilyUnavailable {
            family: s.family,
            arch: arch.name.clone(),
        });
    }
    if !s.dtype.has_kernels() {
        return Err(Rejection::DtypeUnsupported(s.dtype));
    }
    let opts = options(s.family);
    if !opts.tiles.contains(&(s.tile.bm, s.tile.bn)) || !opts.bks.contains(&s.tile.bk) {
        return Err(Rejection::TileNotImplemented(s.tile));
    }
    for (what, value, allowed) in [
        ("stages", s.stages, opts.stages),
        ("workers", s.workers, opts.workers),
        ("cluster", s.cluster, opts.clusters),
        ("swizzle group", s.group, &GROUPS[..]),
        ("split-K", s.split_k, &SPLITS[..]),
    ] {
        if !allowed.contains(&value) {
            return Err(Rejection::OptionNotImplemented {
                what,
                value,
                family: s.family,
            });
        }
    }
    if s.cluster > 1 && !arch.instructions.clusters {
        return Err(Rejection::FamilyUnavailable {
            family: s.family,
            arch: arch.name.clone(),
        });
    }
    let smem = s.smem_total_bytes();
    if smem > arch.smem_per_block_bytes {
        return Err(Rejection::SharedMemory {
            needed: smem,
            limit: arch.smem_per_block_bytes,
        });
    }
    let acc = s.accumulators_per_thread();
    if acc > MAX_ACCUMULATORS {
        return Err(Rejection::Registers {
            accumulators: acc,
            limit: MAX_ACCUMULATORS,
        });
    }
    // K % 4 ≠ 0 is no rejection: TMA needs 16-byte row strides, so a wgmma schedule reads
    // such operands from a padded copy (`crate::operand_prep`), which the cost model prices.
    check_worker_layout(s)?;
    let grid = s.work_grid(shape);
    if s.cluster > 1 && grid.tiles_m < 2 {
        return Err(Rejection::ClusterTooTall {
            tiles_m: grid.tiles_m,
        });
    }
    let band_tiles = match s.raster {
        Raster::Row => grid.tiles_m,
        Raster::Column => grid.tiles_n,
    };
    if s.group > 1 && (s.group / 2) as u64 >= band_tiles {
        return Err(Rejection::RedundantGroup {
            group: s.group,
            band_tiles,
        });
    }
    // The tail modes prune on the grid of one CTA per SM (at most one per tile).
    let tail_grid = grid.tiles.min(arch.sm_count as u64);
    if s.persistence == Persistence::ChainedTail {
        if s.family != Family::Wgmma || s.cluster != 1 || s.split_k != 1 {
            return Err(Rejection::ChainedTailUnsupported {
                detail: "only the wgmma family, cluster 1, without split-K",
            });
        }
        // Pruning, not correctness: the kernel runs whole tiles when q = 1.
        if s.tail_pieces(shape, tail_grid) < 2 {
            return Err(Rejection::NoTailToChain {
                tiles: grid.tiles,
                grid: tail_grid,
            });
        }
    }
    if s.persistence == Persistence::RetiledTail {
        // The narrow tile is a second wgmma width (3/4 of BN) through a second tensor map.
        if s.family != Family::Wgmma || s.cluster != 1 || s.split_k != 1 || s.tile.bn < 128 {
            return Err(Rejection::RetiledTailUnsupported {
                detail: "only the wgmma family, cluster 1, without split-K, BN of 128 or more",
            });
        }
        // Pruning, not correctness: with no row cut the kernel is its `pers` twin.
        if s.retiled_tail_rows(shape, tail_grid) == 0 {
            return Err(Rejection::NoTailToRetile {
                tiles: grid.tiles,
                grid: tail_grid,
            });
        }
    }
    if s.persistence == Persistence::PingPong
        && (s.family != Family::Wgmma || s.workers != 2 || s.split_k != 1)
    {
        // The kernel also runs split-K; the space leaves it out to keep the variant count (and
        // the ptxas check) small. Cluster 2 is in: cuBLAS's short-K choice on the H200 is a
        // ping-pong 128×128 kernel with clusters of 2 and 4 (Nsight Compute, 2026-12-03).
        return Err(Rejection::PingPongUnsupported {
            detail: "only the wgmma family with 2 consumer warpgroups, no split-K",
        });
    }
    if s.split_k > 1 && grid.k_tiles < 2 * s.split_k as u64 {
        return Err(Rejection::SplitTooFine {
            split_k: s.split_k,
            k_tiles: grid.k_tiles,
        });
    }
    Ok(())
}

/// Warps (mma_sync) or warpgroups (wgmma) must split the tile evenly.
fn check_worker_layout(s: &Schedule) -> Result<(), Rejection> {
    match s.family {
        Family::MmaSync => {
            // The kernel arranges 4 warps 2×2 and 8 warps 2×4 or 4×2; each warp tile must
            // hold whole m16n8 fragments.
            if s.tile.bm / 2 < 16 || s.tile.bn / 4 < 8 {
                return Err(Rejection::WarpLayout {
                    detail: "warp tile smaller than one m16n8 fragment",
                });
            }
            Ok(())
        }
        Family::Wgmma => {
            // Ping-pong warpgroups each take the whole tile.
            let rows = if s.persistence == Persistence::PingPong {
                s.tile.bm
            } else {
                s.tile.bm / s.workers
            };
            if rows != 64 && rows != 128 {
                return Err(Rejection::WarpLayout {
                    detail: "each consumer warpgroup takes 64 or 128 rows",
                });
            }
            if s.cluster == 2 && !(s.tile.bn / 2).is_multiple_of(8) {
                return Err(Rejection::WarpLayout {
                    detail: "a multicast half of B must be whole 8-row swizzle atoms",
                });
            }
            Ok(())
        }
    }
}

/// Every schedule in the space for a dtype, valid or not, in a fixed order.
pub fn all_schedules(dtype: Dtype) -> Vec<Schedule> {
    let mut out = Vec::new();
    for family in Family::ALL {
        let opts = options(family);
        for &(bm, bn) in opts.tiles {
            for &bk in opts.bks {
                for &stages in opts.stages {
                    for &workers in opts.workers {
                        for &cluster in opts.clusters {
                            for &group in &GROUPS {
                                for raster in [Raster::Row, Raster::Column] {
                                    for persistence in Persistence::ALL {
                                        for &split_k in &SPLITS {
                                            out.push(Schedule {
                                                family,
                                                dtype,
                                                tile: Tile { bm, bn, bk },
                                                stages,
                                                workers,
                                                group,
                                                raster,
                                                persistence,
                                                cluster,
                                                split_k,
                                            });
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// The valid schedules for a problem.
pub fn valid_schedules(arch: &Arch, dtype: Dtype, shape: &Shape) -> Vec<Schedule> {
    all_schedules(dtype)
        .into_iter()
        .filter(|s| check(arch, s, shape).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Arch {
        Arch::by_name("sm_90a").unwrap()
    }

    fn wgmma(name: &str) -> Schedule {
        name.parse().unwrap()
    }

    #[test]
    fn canonical_is_valid_everywhere() {
        for name in Arch::known() {
            let arch = Arch::by_name(name).unwrap();
            for shape in [Shape::new(2048, 2048, 2048), Shape::new(1, 1, 1)] {
                assert_eq!(
                    check(&arch, &Schedule::canonical(Dtype::Tf32), &shape),
                    Ok(()),
                    "{name} {shape}"
                );
            }
        }
    }

    #[test]
    fn wgmma_only_where_the_arch_has_it() {
        let s = wgmma("wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1");
        let d = Shape::new(4096, 4096, 4096);
        assert_eq!(check(&h100(), &s, &d), Ok(()));
        let a100 = Arch::by_name("sm_80").unwrap();
        assert!(matches!(
            check(&a100, &s, &d),
            Err(Rejection::FamilyUnavailable { .. })
        ));
    }

    #[test]
    fn shared_memory_and_register_limits_reject() {
        let d = Shape::new(4096, 4096, 4096);
        let too_deep = wgmma("wgmma_tf32_128x256x32_s5_wg2_swz1_np_c1_k1");
        assert!(matches!(
            check(&h100(), &too_deep, &d),
            Err(Rejection::SharedMemory { .. })
        ));
        let one_wg = wgmma("wgmma_tf32_128x256x32_s4_wg1_swz1_np_c1_k1");
        assert!(matches!(
            check(&h100(), &one_wg, &d),
            Err(Rejection::Registers { .. })
        ));
    }

    #[test]
    fn ragged_k_is_valid_for_both_families() {
        // TMA schedules read K % 4 ≠ 0 operands from a padded copy (`operand_prep`).
        let ragged = Shape::new(1000, 1000, 1001);
        let s = wgmma("wgmma_tf32_128x128x32_s4_wg1_swz1_np_c1_k1");
        assert_eq!(check(&h100(), &s, &ragged), Ok(()));
        let c = Schedule::canonical(Dtype::Tf32);
        assert_eq!(check(&h100(), &c, &ragged), Ok(()));
    }

    #[test]
    fn retiled_tails_are_wgmma_cluster_1_and_pruned_without_a_cut() {
        let arch = h100();
        let rt = wgmma("wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k1");
        let d6144 = Shape::new(6144, 6144, 6144);
        assert_eq!(check(&arch, &rt, &d6144), Ok(()));
        // 4096³: nothing to cut; pruned from the search but still runnable (it is `pers`).
        let d4096 = Shape::new(4096, 4096, 4096);
        assert!(matches!(
            check(&arch, &rt, &d4096),
            Err(Rejection::NoTailToRetile { tiles: 512, .. })
        ));
        assert_eq!(runnable(&arch, &rt, &d4096), Ok(()));
        for bad in [
            "wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c2_k1",
            "wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k2",
            "wgmma_tf32_128x96x32_s6_wg1_swz8_rt_c1_k1",
            "mma_sync_tf32_128x256x32_s3_w8_swz8_rt_c1_k1",
        ] {
            assert!(
                matches!(
                    check(&arch, &wgmma(bad), &d6144),
                    Err(Rejection::RetiledTailUnsupported { .. })
                        | Err(Rejection::TileNotImplemented(_))
                ),
                "{bad}: {:?}",
                check(&arch, &wgmma(bad), &d6144)
            );
        }
    }

    #[test]
    fn redundant_groups_and_fine_splits_are_pruned() {
        let small = Shape::new(128, 128, 64);
        let grouped = wgmma("mma_sync_tf32_128x128x32_s3_w8_swz4_np_c1_k1");
        assert!(matches!(
            check(&h100(), &grouped, &small),
            Err(Rejection::RedundantGroup { .. })
        ));
        let split = wgmma("mma_sync_tf32_128x128x32_s3_w8_swz1_np_c1_k2");
        assert!(matches!(
            check(&h100(), &split, &small),
            Err(Rejection::SplitTooFine { .. })
        ));
    }

    #[test]
    fn space_is_nonempty_and_deduplicated() {
        let all = all_schedules(Dtype::Tf32);
        let mut names: Vec<String> = all.iter().map(Schedule::name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        let valid = valid_schedules(&h100(), Dtype::Tf32, &Shape::new(4096, 4096, 4096));
        assert!(valid.iter().any(|s| s.family == Family::Wgmma));
        assert!(valid.iter().any(|s| s.family == Family::MmaSync));
    }

    #[test]
    fn ping_pong_warpgroups_each_hold_a_whole_tile() {
        let shape = Shape::new(2048, 8192, 512);
        for ok in [
            "wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c1_k1",
            "wgmma_tf32_128x128x32_s6_wg2_swz8_pp_c2_k1",
            "wgmma_tf32_64x128x32_s6_wg2_swz16_pp_c1_k1",
        ] {
            assert_eq!(check(&h100(), &wgmma(ok), &shape), Ok(()), "{ok}");
        }
        // 128×256 per warpgroup: 256 accumulators per thread.
        assert!(matches!(
            check(
                &h100(),
                &wgmma("wgmma_tf32_128x256x32_s4_wg2_swz16_pp_c1_k1"),
                &shape
            ),
            Err(Rejection::Registers {
                accumulators: 256,
                ..
            })
        ));
        for bad in [
            "wgmma_tf32_128x128x32_s6_wg1_swz16_pp_c1_k1",
            "wgmma_tf32_128x128x32_s6_wg2_swz16_pp_c1_k2",
            "mma_sync_tf32_128x128x32_s3_w8_swz16_pp_c1_k1",
        ] {
            assert!(
                matches!(
                    check(&h100(), &wgmma(bad), &shape),
                    Err(Rejection::PingPongUnsupported { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn chained_tail_only_where_a_partial_wave_exists() {
        let sk = wgmma("wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k1");
        assert_eq!(check(&h100(), &sk, &Shape::new(8192, 8192, 8192)), Ok(()));
        assert!(matches!(
            check(&h100(), &sk, &Shape::new(2048, 2048, 2048)),
            Err(Rejection::NoTailToChain { tiles: 128, .. })
        ));
        for other in [
            "wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c2_k1",
            "wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k2",
            "mma_sync_tf32_128x128x32_s3_w8_swz8_sk_c1_k1",
        ] {
            assert!(matches!(
                check(&h100(), &wgmma(other), &Shape::new(8192, 8192, 8192)),
                Err(Rejection::ChainedTailUnsupported { .. })
            ));
        }
    }

    #[test]
    fn bf16_is_rejected_until_a_kernel_exists() {
        let mut s = Schedule::canonical(Dtype::Tf32);
        s.dtype = Dtype::Bf16;
        assert_eq!(
            check(&h100(), &s, &Shape::new(64, 64, 64)),
            Err(Rejection::DtypeUnsupported(Dtype::Bf16))
        );
    }
}
