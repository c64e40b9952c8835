//! The schedule space's vocabulary: one [`Schedule`] names one own-GEMM variant, and its
//! canonical name (for example `wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1`) is stable:
//! profiles store it. The formulas here mirror `kernels/ABI.md`.

use crate::shape::Shape;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Element type of the operands (TF32 math reads f32 storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Tf32,
    Bf16,
    Fp16,
}

impl Dtype {
    pub const ALL: [Dtype; 3] = [Dtype::Tf32, Dtype::Bf16, Dtype::Fp16];

    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Tf32 => "tf32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
        }
    }

    /// Whether forge has kernels for this dtype. The one place that says which dtypes are
    /// implemented: today only TF32 (bf16 and fp16 are named and priced, not runnable).
    pub fn has_kernels(self) -> bool {
        matches!(self, Dtype::Tf32)
    }

    /// Bytes per stored element of A, B (C is always f32).
    pub fn operand_bytes(self) -> u32 {
        match self {
            Dtype::Tf32 => 4,
            Dtype::Bf16 | Dtype::Fp16 => 2,
        }
    }
}

impl FromStr for Dtype {
    type Err = ScheduleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tf32" => Ok(Dtype::Tf32),
            "bf16" => Ok(Dtype::Bf16),
            "fp16" => Ok(Dtype::Fp16),
            other => Err(ScheduleError::Dtype(other.to_string())),
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a GEMM launch orders itself after the previous kernel of its stream (`kernels/ABI.md`
/// "Launch order"). Not part of the schedule: the same kernel, the same bits; the tuner times
/// the finalists both ways and the profile records the faster per shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LaunchOrder {
    /// Plain stream order: the kernel starts once everything before it has completed (what
    /// every profile written before launch orders existed measured).
    #[default]
    Serial,
    /// Programmatic dependent launch: the kernel may be scheduled while the previous one runs
    /// and waits (`griddepcontrol.wait`) for its completion before any global access, so its
    /// launch latency and set-up overlap the previous kernel's tail.
    Programmatic,
}

impl LaunchOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            LaunchOrder::Serial => "serial",
            LaunchOrder::Programmatic => "programmatic",
        }
    }
}

impl fmt::Display for LaunchOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Operand layouts. forge's kernels take A M×K row-major and B N×K row-major ("TN");
/// other layouts are priced as a transpose of the operand plus the GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// A M×K row-major, B N×K row-major (both K-major): native.
    Tn,
    /// A M×K row-major, B K×N row-major: B needs a transpose.
    Nn,
    /// A K×M row-major, B N×K row-major: A needs a transpose.
    Tt,
    /// A K×M, B K×N: both need a transpose.
    Nt,
}

impl Layout {
    pub const ALL: [Layout; 4] = [Layout::Tn, Layout::Nn, Layout::Tt, Layout::Nt];

    /// (A needs a transpose, B needs a transpose).
    pub fn transposes(self) -> (bool, bool) {
        match self {
            Layout::Tn => (false, false),
            Layout::Nn => (false, true),
            Layout::Tt => (true, false),
            Layout::Nt => (true, true),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Tn => "tn",
            Layout::Nn => "nn",
            Layout::Tt => "tt",
            Layout::Nt => "nt",
        }
    }
}

impl FromStr for Layout {
    type Err = ScheduleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tn" => Ok(Layout::Tn),
            "nn" => Ok(Layout::Nn),
            "tt" => Ok(Layout::Tt),
            "nt" => Ok(Layout::Nt),
            other => Err(ScheduleError::Layout(other.to_string())),
        }
    }
}

/// Instruction family: which kernel source implements the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// `mma.sync` m16n8k8 with a cp.async pipeline: every sm_80+ architecture.
    MmaSync,
    /// `wgmma` + TMA + warp specialization: sm_90a.
    Wgmma,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::MmaSync, Family::Wgmma];

    pub fn as_str(self) -> &'static str {
        match self {
            Family::MmaSync => "mma_sync",
            Family::Wgmma => "wgmma",
        }
    }
}

/// Order in which consecutive work units walk the tile grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Raster {
    /// Bands of `group` tile-rows, walked along N (ABI `raster_n = 1`).
    Row,
    /// Bands of `group` tile-columns, walked along M (ABI `raster_n = 0`).
    Column,
}

/// How CTAs cover the work units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Persistence {
    /// One CTA per unit (`np`).
    Off,
    /// A resident grid walks the units with a grid stride (`pers`).
    Tiles,
    /// Persistent, and the last partial wave's tiles are cut along K into pieces that other
    /// CTAs compute one after another, each continuing the previous piece's accumulators
    /// (`sk`): the tail is spread over every SM and the K order of every element is kept.
    ChainedTail,
    /// Persistent with ping-pong consumers (`pp`, wgmma, 2 warpgroups): each warpgroup
    /// computes whole BM×BN tiles of its own, alternating, so one's epilogue runs under the
    /// other's MMAs (`kernels/wgmma_tf32.cu`, `FORGE_PINGPONG`).
    PingPong,
    /// Persistent, and the last tile-rows are cut into narrower tiles (BM × [`Schedule::tail_bn`])
    /// so that the last wave is spread over more CTAs (`rt`, wgmma, cluster 1, no split-K): a
    /// tail of R whole tiles that would leave SMs idle becomes up to `4R/3` tiles of ¾ the
    /// width ([`Schedule::retiled_tail_rows`]). Every element is still one K-ordered sum of
    /// one CTA (`kernels/ABI.md`, "Retiled tail").
    RetiledTail,
}

impl Persistence {
    pub const ALL: [Persistence; 5] = [
        Persistence::Off,
        Persistence::Tiles,
        Persistence::ChainedTail,
        Persistence::PingPong,
        Persistence::RetiledTail,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Persistence::Off => "np",
            Persistence::Tiles => "pers",
            Persistence::ChainedTail => "sk",
            Persistence::PingPong => "pp",
            Persistence::RetiledTail => "rt",
        }
    }

    /// A resident grid (every mode but `np`).
    pub fn is_persistent(self) -> bool {
        self != Persistence::Off
    }
}

/// What one chained-tail hand-off costs, in K tiles of MMA: storing the accumulators (a 128 KB
/// partial for 128×256), the release fence, the flag and the reload, with the tensor pipe
/// drained and refilled around them (`kernels/ABI.md`, "Chained tail"). An estimate: 2 made
/// the model expect +2.5% at 8192³ where the H200 measured −1 to −2%; 8 keeps pieces long.
pub const CHAIN_HANDOFF_K_TILES: u64 = 8;
/// Upper bound on tail pieces (hand-offs per tail tile).
pub const MAX_TAIL_PIECES: u64 = 32;
/// The launch plan of a retiled tail counts a narrow tile as its share of the width plus this
/// much of a whole tile (its fill, drain and epilogue do not shrink with it): the design
/// estimate that decides which tile-rows the kernel cuts. What a narrow tile costs when timed
/// is the cost model's `RETILED_NARROW_TILE_COST` (measured: about a whole tile).
pub const RETILED_TAIL_OVERHEAD: f64 = 0.05;
/// Chained-tail workspace: this many u32 flags (one per tail tile), then the partial tiles
/// (`FORGE_CHAIN_FLAG_WORDS` in kernels/common.cuh).
pub const CHAIN_FLAG_WORDS: u64 = 1024;
/// The staged epilogue's buffer row pitch in floats (`FWG_EPI_LD` in kernels/wgmma_tf32.cu).
pub const STAGED_EPILOGUE_PITCH: u32 = 40;
/// Static plus dynamic shared memory a CTA may opt into on sm_90 (227 KB), bytes.
pub const SMEM_OPT_IN_BYTES: u32 = 232_448;

/// A CTA tile BM×BN with K step BK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Tile {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
}

/// One own-GEMM variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Schedule {
    pub family: Family,
    pub dtype: Dtype,
    pub tile: Tile,
    /// Shared-memory pipeline depth.
    pub stages: u32,
    /// mma_sync: warps per CTA; wgmma: consumer warpgroups.
    pub workers: u32,
    /// Raster swizzle group size (1 = plain order).
    pub group: u32,
    pub raster: Raster,
    pub persistence: Persistence,
    /// CTAs per cluster (along M).
    pub cluster: u32,
    /// K splits; > 1 changes the reduction order.
    pub split_k: u32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScheduleError {
    #[error(
        "`{0}` is not a schedule name (expected e.g. wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1)"
    )]
    Name(String),
    #[error("unknown dtype `{0}` (known: tf32, bf16, fp16)")]
    Dtype(String),
    #[error("unknown layout `{0}` (known: tn, nn, tt, nt)")]
    Layout(String),
}

/// How a schedule covers a shape: the numbers of `kernels/ABI.md`'s work decomposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkGrid {
    /// Cluster-tile rows (each covers BM·cluster rows) and tile columns.
    pub tiles_m: u64,
    pub tiles_n: u64,
    /// Output tiles of BM·cluster × BN.
    pub tiles: u64,
    /// Work units = tiles × split_k.
    pub units: u64,
    pub k_tiles: u64,
    /// K tiles per split (the longest split).
    pub k_tiles_per_unit: u64,
}

/// What the tuner's diverse picks count as one kernel configuration: everything but the
/// raster order, the swizzle group and the grid (plain, persistent, persistent with a chained
/// tail: `np`, `pers`, `sk`, compiled apart but otherwise one kernel). Ping-pong consumers are
/// a kernel of their own (`FORGE_PINGPONG`), not a launch mode.
pub type KernelConfig = (Family, Tile, u32, u32, u32, u32, bool);

/// Whether two schedules differ only in their launch (raster order, swizzle group, plain,
/// persistent or chained-tail grid).
pub fn same_kernel(a: &Schedule, b: &Schedule) -> bool {
    a.kernel_config() == b.kernel_config()
}

/// The first `n` of `schedules` (in their order) that each run another kernel than every one
/// before them ([`same_kernel`]).
pub fn one_per_kernel(schedules: impl IntoIterator<Item = Schedule>, n: usize) -> Vec<Schedule> {
    let mut kept: Vec<Schedule> = vec![];
    for s in schedules {
        if kept.len() == n {
            break;
        }
        if !kept.iter().any(|k| same_kernel(k, &s)) {
            kept.push(s);
        }
    }
    kept
}

impl Schedule {
    /// Its kernel configuration ([`KernelConfig`]).
    pub fn kernel_config(&self) -> KernelConfig {
        (
            self.family,
            self.tile,
            self.stages,
            self.workers,
            self.cluster,
            self.split_k,
            self.persistence == Persistence::PingPong,
        )
    }

    /// The canonical schedule: its output is the golden C₀ of the bit-exact gate. It is an
    /// mma_sync schedule with two stages (72 KiB of shared memory) so that it runs on every
    /// architecture forge supports, consumer parts with 99 KiB per block included.
    pub fn canonical(dtype: Dtype) -> Schedule {
        Schedule {
            family: Family::MmaSync,
            dtype,
            tile: Tile {
                bm: 128,
                bn: 128,
                bk: 32,
            },
            stages: 2,
            workers: 8,
            group: 1,
            raster: Raster::Row,
            persistence: Persistence::Off,
            cluster: 1,
            split_k: 1,
        }
    }

    /// Stable canonical name, e.g. `mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1`.
    /// Column raster appends `c` to the swizzle group (`swz8c`).
    pub fn name(&self) -> String {
        let workers = match self.family {
            Family::MmaSync => format!("w{}", self.workers),
            Family::Wgmma => format!("wg{}", self.workers),
        };
        let raster = match self.raster {
            Raster::Row => "",
            Raster::Column => "c",
        };
        format!(
            "{}_{}_{}x{}x{}_s{}_{}_swz{}{}_{}_c{}_k{}",
            self.family.as_str(),
            self.dtype,
            self.tile.bm,
            self.tile.bn,
            self.tile.bk,
            self.stages,
            workers,
            self.group,
            raster,
            self.persistence.as_str(),
            self.cluster,
            self.split_k
        )
    }

    /// Threads per CTA.
    pub fn threads(&self) -> u32 {
        match self.family {
            Family::MmaSync => 32 * self.workers,
            Family::Wgmma => 128 * (self.workers + 1),
        }
    }

    /// Dynamic shared memory per CTA, bytes (ABI.md's formula).
    pub fn smem_bytes(&self) -> u32 {
        let Tile { bm, bn, bk } = self.tile;
        let elem = self.dtype.operand_bytes();
        match self.family {
            Family::MmaSync => self.stages * (bm + bn) * (bk + 4) * elem,
            Family::Wgmma => self.stages * (bm + bn) * bk * elem + 1024,
        }
    }

    /// Static plus dynamic shared memory per CTA, bytes (the wgmma family keeps its 16-byte
    /// full/empty mbarrier pairs per stage in static shared memory).
    pub fn smem_total_bytes(&self) -> u32 {
        match self.family {
            Family::MmaSync => self.smem_bytes(),
            Family::Wgmma => {
                let turn_barriers = if self.persistence == Persistence::PingPong {
                    16
                } else {
                    0
                };
                self.smem_bytes() + 16 * self.stages + turn_barriers
            }
        }
    }

    /// Whether the kernel stores C through its per-warp shared-memory buffers (the staged
    /// epilogue: 16-byte row-contiguous stores) rather than straight from the accumulator
    /// fragments. wgmma only, where the buffers (16 rows × [`STAGED_EPILOGUE_PITCH`] floats per
    /// consumer warp) fit beside the stages under the opt-in limit: `FWG_EPI_STAGED` in
    /// kernels/wgmma_tf32.cu. The kernel also stores ragged tiles and N % 4 ≠ 0 directly.
    pub fn staged_epilogue(&self) -> bool {
        if self.family != Family::Wgmma {
            return false;
        }
        let buffers = self.workers * 4 * 16 * STAGED_EPILOGUE_PITCH * 4;
        let stage_bytes = (self.tile.bm + self.tile.bn) * self.tile.bk * self.dtype.operand_bytes();
        self.stages * stage_bytes + 1024 + buffers + 24 * self.stages + 64 <= SMEM_OPT_IN_BYTES
    }

    /// f32 accumulators each math thread holds (a ping-pong warpgroup holds a whole tile).
    pub fn accumulators_per_thread(&self) -> u32 {
        let math_threads = match self.family {
            Family::MmaSync => 32 * self.workers,
            Family::Wgmma if self.persistence == Persistence::PingPong => 128,
            Family::Wgmma => 128 * self.workers,
        };
        self.tile.bm * self.tile.bn / math_threads
    }

    /// Whether the output bits can differ from the canonical schedule's by construction.
    pub fn changes_reduction_order(&self) -> bool {
        self.split_k > 1
    }

    /// The schedule's cover of a shape (see `kernels/ABI.md`).
    pub fn work_grid(&self, shape: &Shape) -> WorkGrid {
        let rows = (self.tile.bm * self.cluster) as u64;
        let tiles_m = (shape.m as u64).div_ceil(rows);
        let tiles_n = (shape.n as u64).div_ceil(self.tile.bn as u64);
        let tiles = tiles_m * tiles_n;
        let k_tiles = (shape.k as u64).div_ceil(self.tile.bk as u64);
        WorkGrid {
            tiles_m,
            tiles_n,
            tiles,
            units: tiles * self.split_k as u64,
            k_tiles,
            k_tiles_per_unit: k_tiles.div_ceil(self.split_k as u64),
        }
    }

    /// CTAs to launch: every unit (non-persistent), or at most `resident_ctas` (persistent),
    /// rounded to whole clusters. (A ping-pong CTA with one unit leaves a warpgroup idle.)
    pub fn grid_ctas(&self, shape: &Shape, resident_ctas: u64) -> u64 {
        let units = self.work_grid(shape).units;
        let cluster = self.cluster as u64;
        let clusters = if self.persistence.is_persistent() {
            units.min((resident_ctas / cluster).max(1))
        } else {
            units
        };
        clusters * cluster
    }

    /// Pieces each tail tile is cut into along K by a chained-tail schedule launched with
    /// `grid` CTAs (the kernel reads it from `ForgeParams::tail`); 1 means the tail
    /// runs as whole tiles. `tiles = W·grid + R` with `0 < R < grid`: piece j of tail tile r
    /// runs in wave j on CTA `(j·R + r) mod grid`, so a CTA adds `ceil(R·q / grid)` pieces of
    /// `ceil(K_tiles / q)` K tiles (plus a hand-off each) to its W whole tiles instead of one
    /// more whole tile. The q with the smallest such tail wins (q ≤ W, q ≤ K_tiles).
    pub fn tail_pieces(&self, shape: &Shape, grid: u64) -> u32 {
        if self.persistence != Persistence::ChainedTail || grid == 0 {
            return 1;
        }
        let g = self.work_grid(shape);
        let (waves, rem) = (g.tiles / grid, g.tiles % grid);
        if rem == 0 || waves == 0 || rem > CHAIN_FLAG_WORDS {
            return 1;
        }
        let mut best = (g.k_tiles, 1u64);
        for q in 2..=waves.min(g.k_tiles).min(MAX_TAIL_PIECES) {
            let cost = (rem * q).div_ceil(grid) * (g.k_tiles.div_ceil(q) + CHAIN_HANDOFF_K_TILES);
            if cost < best.0 {
                best = (cost, q);
            }
        }
        best.1 as u32
    }

    /// Rows of a wgmma launch's A and B TMA boxes where they are shorter than the tile
    /// (kernels/ABI.md "Short boxes"): A's where M < BM; B's where N < BN and one CTA loads
    /// the whole box (cluster 1: no multicast slices; no retiled tail, whose narrow map shares
    /// B's rows). A short box holds the rows the matrix has, rounded up to 8 (one 128-byte
    /// swizzle atom), so the copy engine zero-fills none of the tile's overhang. None: the
    /// whole tile; always None for mma_sync, which has no boxes.
    pub fn short_tma_boxes(&self, shape: &Shape) -> (Option<u32>, Option<u32>) {
        if self.family != Family::Wgmma {
            return (None, None);
        }
        let short =
            |extent: u32, tile: u32| (extent < tile).then(|| extent.next_multiple_of(8).min(tile));
        let whole_b = self.cluster == 1 && self.persistence != Persistence::RetiledTail;
        (
            short(shape.m, self.tile.bm),
            whole_b.then(|| short(shape.n, self.tile.bn)).flatten(),
        )
    }

    /// A retiled tail's narrow tile width: ¾ of BN, down to a multiple of 8 (the wgmma N step).
    pub fn tail_bn(&self) -> u32 {
        (self.tile.bn * 3 / 4) / 8 * 8
    }

    /// Tile-rows a retiled-tail schedule launched with `grid` CTAs cuts into narrow tiles (the
    /// kernel reads it from `ForgeParams::tail`); 0 for every other schedule, and where no
    /// cut shortens the launch. The kernel hands unit u to CTA u mod grid: whole tiles of the
    /// first `tiles_m − R` tile-rows first, then the `R · ceil(N / tail_bn)` narrow tiles; the R
    /// with the shortest busiest CTA wins ([`Schedule::retiled_tail_makespan`]), the smallest R
    /// on a tie.
    pub fn retiled_tail_rows(&self, shape: &Shape, grid: u64) -> u32 {
        if self.persistence != Persistence::RetiledTail || grid == 0 {
            return 0;
        }
        let tiles_m = self.work_grid(shape).tiles_m as u32;
        let mut best = (0, self.retiled_tail_makespan(shape, grid, 0));
        for rows in 1..=tiles_m {
            let t = self.retiled_tail_makespan(shape, grid, rows);
            if t < best.1 - 1e-9 {
                best = (rows, t);
            }
        }
        best.0
    }

    /// The busiest CTA's work, in whole-tile times, when `rows` tile-rows are cut into narrow
    /// tiles and `grid` CTAs take the units round-robin, as the launch plan counts it (a narrow
    /// tile costs its width's share plus [`RETILED_TAIL_OVERHEAD`]).
    pub fn retiled_tail_makespan(&self, shape: &Shape, grid: u64, rows: u32) -> f64 {
        let weight = self.tail_bn() as f64 / self.tile.bn as f64 + RETILED_TAIL_OVERHEAD;
        self.retiled_tail_makespan_at(shape, grid, rows, weight)
    }

    /// [`Schedule::retiled_tail_makespan`] with a narrow tile costing `weight` whole tiles.
    pub fn retiled_tail_makespan_at(
        &self,
        shape: &Shape,
        grid: u64,
        rows: u32,
        weight: f64,
    ) -> f64 {
        let g = self.work_grid(shape);
        let rows = (rows as u64).min(g.tiles_m);
        let whole = (g.tiles_m - rows) * g.tiles_n;
        let narrow = rows * (shape.n as u64).div_ceil(self.tail_bn().max(8) as u64);
        // CTA c holds whole units c, c + G, …; narrow unit j sits at index whole + j.
        let count = |n: u64, first: u64, c: u64| -> u64 {
            // units in [first, first + n) congruent to c mod G
            let offset = (c + grid - first % grid) % grid;
            if offset < n {
                (n - offset - 1) / grid + 1
            } else {
                0
            }
        };
        (0..grid.min(whole + narrow).max(1))
            .map(|c| count(whole, 0, c) as f64 + weight * count(narrow, whole, c) as f64)
            .fold(0.0, f64::max)
    }

    /// f32 words of workspace a launch needs with `resident_ctas` CTAs resident: the split-K
    /// partials, or the chained tail's flags and partial tiles (which must start zeroed; the
    /// kernel leaves them zeroed again).
    pub fn workspace_words(&self, shape: &Shape, resident_ctas: u64) -> u64 {
        if self.split_k > 1 {
            return self.split_k as u64 * shape.m as u64 * shape.n as u64;
        }
        let grid = self.grid_ctas(shape, resident_ctas);
        if self.tail_pieces(shape, grid) > 1 {
            let rem = self.work_grid(shape).tiles % grid;
            CHAIN_FLAG_WORDS + rem * (self.tile.bm * self.tile.bn) as u64
        } else {
            0
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

fn strip_num(part: &str, prefix: &str) -> Option<u32> {
    part.strip_prefix(prefix)?.parse().ok()
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let bad = || ScheduleError::Name(name.to_string());
        let (family, rest) = if let Some(rest) = name.strip_prefix("mma_sync_") {
            (Family::MmaSync, rest)
        } else if let Some(rest) = name.strip_prefix("wgmma_") {
            (Family::Wgmma, rest)
        } else {
            return Err(bad());
        };
        let parts: Vec<&str> = rest.split('_').collect();
        let [dtype, tile, stages, workers, swz, pers, cluster, split] = parts[..] else {
            return Err(bad());
        };
        let dtype: Dtype = dtype.parse().map_err(|_| bad())?;
        let dims: Vec<u32> = tile
            .split('x')
            .map(|d| d.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let [bm, bn, bk] = dims[..] else {
            return Err(bad());
        };
        let workers_prefix = match family {
            Family::MmaSync => "w",
            Family::Wgmma => "wg",
        };
        let (swz, raster) = match swz.strip_suffix('c') {
            Some(s) => (s, Raster::Column),
            None => (swz, Raster::Row),
        };
        let schedule = Schedule {
            family,
            dtype,
            tile: Tile { bm, bn, bk },
            stages: strip_num(stages, "s").ok_or_else(bad)?,
            workers: strip_num(workers, workers_prefix).ok_or_else(bad)?,
            group: strip_num(swz, "swz").ok_or_else(bad)?,
            raster,
            persistence: Persistence::ALL
                .into_iter()
                .find(|p| p.as_str() == pers)
                .ok_or_else(bad)?,
            cluster: strip_num(cluster, "c").ok_or_else(bad)?,
            split_k: strip_num(split, "k").ok_or_else(bad)?,
        };
        // Only names that print back identically are canonical.
        if schedule.name() != name {
            return Err(bad());
        }
        Ok(schedule)
    }
}

/// Serde through the stable name, for files that store schedules as text (reports, jobs):
/// `#[serde(with = "crate::schedule::by_name")]`, and [`by_name::opt`] / [`by_name::vec`].
pub mod by_name {
    use super::Schedule;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(s: &Schedule, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(&s.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Schedule, D::Error> {
        String::deserialize(de)?.parse().map_err(D::Error::custom)
    }

    pub mod opt {
        use super::Schedule;
        use serde::{Deserialize, Deserializer, Serializer, de::Error};

        pub fn serialize<S: Serializer>(s: &Option<Schedule>, ser: S) -> Result<S::Ok, S::Error> {
            match s {
                Some(s) => ser.serialize_some(&s.name()),
                None => ser.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Schedule>, D::Error> {
            Option::<String>::deserialize(de)?
                .map(|n| n.parse().map_err(D::Error::custom))
                .transpose()
        }
    }

    pub mod vec {
        use super::Schedule;
        use serde::{Deserialize, Deserializer, Serializer, de::Error};

        pub fn serialize<S: Serializer>(s: &[Schedule], ser: S) -> Result<S::Ok, S::Error> {
            ser.collect_seq(s.iter().map(Schedule::name))
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<Schedule>, D::Error> {
            Vec::<String>::deserialize(de)?
                .iter()
                .map(|n| n.parse().map_err(D::Error::custom))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_tma_boxes_cover_the_rows_the_matrix_has() {
        let s = |name: &str| name.parse::<Schedule>().unwrap();
        let tall = s("wgmma_tf32_256x128x32_s4_wg2_swz1c_pers_c1_k1");
        assert_eq!(
            tall.short_tma_boxes(&Shape::new(192, 16384, 4096)),
            (Some(192), None)
        );
        assert_eq!(
            tall.short_tma_boxes(&Shape::new(61, 100, 64)),
            (Some(64), Some(104))
        );
        assert_eq!(
            tall.short_tma_boxes(&Shape::new(256, 128, 64)),
            (None, None)
        );
        let c2 = s("wgmma_tf32_128x256x32_s4_wg2_swz1c_pers_c2_k1");
        assert_eq!(
            c2.short_tma_boxes(&Shape::new(100, 176, 64)),
            (Some(104), None)
        );
        let rt = s("wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k1");
        assert_eq!(rt.short_tma_boxes(&Shape::new(4096, 176, 64)), (None, None));
        let sync = s("mma_sync_tf32_128x128x32_s3_w8_swz1_np_c1_k1");
        assert_eq!(sync.short_tma_boxes(&Shape::new(40, 40, 64)), (None, None));
    }

    #[test]
    fn names_round_trip() {
        let name = "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1";
        let s: Schedule = name.parse().unwrap();
        assert_eq!(s.name(), name);
        assert_eq!(s.tile.bn, 256);
        assert_eq!(s.workers, 2);
        let c = Schedule::canonical(Dtype::Tf32);
        assert_eq!(c.name(), "mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1");
        assert_eq!(c.name().parse::<Schedule>().unwrap(), c);
        let col = "mma_sync_tf32_64x64x16_s2_w4_swz4c_pers_c1_k2";
        assert_eq!(col.parse::<Schedule>().unwrap().raster, Raster::Column);
        let sk = "wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k1";
        assert_eq!(
            sk.parse::<Schedule>().unwrap().persistence,
            Persistence::ChainedTail
        );
    }

    #[test]
    fn tail_pieces_spread_the_last_wave() {
        let sk: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k1"
            .parse()
            .unwrap();
        // 8192³: 2048 tiles = 15·132 + 68, 256 K tiles.
        let d8192 = Shape::new(8192, 8192, 8192);
        let q = sk.tail_pieces(&d8192, 132) as u64;
        assert!((2..=15).contains(&q), "q = {q}");
        let tail = (68 * q).div_ceil(132) * (256u64.div_ceil(q) + CHAIN_HANDOFF_K_TILES);
        assert!(tail < 256 * 3 / 4, "tail of {tail} K tiles with q = {q}");
        // No partial wave (4 × 132 tiles), fewer tiles than CTAs, or a plain persistent
        // schedule: whole tiles.
        assert_eq!(
            sk.tail_pieces(&Shape::new(4 * 128, 132 * 256, 4096), 132),
            1
        );
        assert_eq!(sk.tail_pieces(&Shape::new(2048, 2048, 2048), 132), 1);
        let mut pers = sk;
        pers.persistence = Persistence::Tiles;
        assert_eq!(pers.tail_pieces(&d8192, 132), 1);
    }

    #[test]
    fn a_retiled_tail_cuts_rows_only_where_the_last_wave_shortens() {
        let rt: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k1"
            .parse()
            .unwrap();
        assert_eq!(rt.name(), "wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k1");
        assert_eq!(rt.tail_bn(), 192);
        let w = |bn| Schedule {
            tile: Tile {
                bm: 128,
                bn,
                bk: 32,
            },
            ..rt
        };
        assert_eq!(
            (w(232).tail_bn(), w(128).tail_bn(), w(200).tail_bn()),
            (168, 96, 144)
        );
        // 6144³: 48 × 24 = 1152 tiles = 8·132 + 96. Cutting the last 4 tile-rows leaves 1056
        // whole tiles (8 per CTA) and 4 × 32 = 128 narrow ones (one each on 128 CTAs).
        let d6144 = Shape::new(6144, 6144, 6144);
        assert_eq!(rt.retiled_tail_makespan(&d6144, 132, 0), 9.0);
        assert_eq!(rt.retiled_tail_rows(&d6144, 132), 4);
        let busiest = rt.retiled_tail_makespan(&d6144, 132, 4);
        assert!(
            (busiest - (8.0 + 0.75 + RETILED_TAIL_OVERHEAD)).abs() < 1e-9,
            "{busiest}"
        );
        // 4096³: 512 tiles = 3·132 + 116, nearly a whole last wave: no cut shortens it.
        assert_eq!(rt.retiled_tail_rows(&Shape::new(4096, 4096, 4096), 132), 0);
        // Fewer tiles than CTAs (the grid is one CTA per tile), and schedules of other kinds:
        // no cut.
        let d1024 = Shape::new(1024, 1024, 1024);
        assert_eq!(rt.grid_ctas(&d1024, 132), 32);
        assert_eq!(rt.retiled_tail_rows(&d1024, 32), 0);
        let pers = Schedule {
            persistence: Persistence::Tiles,
            ..rt
        };
        assert_eq!(pers.retiled_tail_rows(&d6144, 132), 0);
        // Ragged M and N: 6000×6100 has 47 × 24 tiles (the last row and column partial).
        let ragged = Shape::new(6000, 6100, 512);
        let rows = rt.retiled_tail_rows(&ragged, 132);
        assert!(
            rows > 0 && rt.retiled_tail_makespan(&ragged, 132, rows) < 9.0,
            "{rows}"
        );
        // The GPU test's cases (tests/gpu.rs) cut rows on the H200's 132 CTAs (one per SM).
        for case in [
            "wgmma_tf32_128x256x32_s4_wg2_swz8_rt_c1_k1@6000x6100x512",
            "wgmma_tf32_128x224x32_s4_wg2_swz4c_rt_c1_k1@2500x6000x700",
            "wgmma_tf32_128x128x32_s6_wg1_swz2_rt_c1_k1@1900x2900x1001",
            "wgmma_tf32_128x128x32_s6_wg1_swz1_rt_c1_k1@1900x2901x1000",
        ] {
            let (name, shape) = case.split_once('@').unwrap();
            let (s, shape): (Schedule, Shape) = (name.parse().unwrap(), shape.parse().unwrap());
            let rows = s.retiled_tail_rows(&shape, s.grid_ctas(&shape, 132));
            assert!(rows > 0, "{name} at {shape}: no cut");
        }
    }

    #[test]
    fn malformed_names_are_rejected() {
        for bad in [
            "",
            "wgmma_tf32",
            "wgmma_tf32_128x256_s4_wg2_swz8_pers_c2_k1",
            "wgmma_tf32_128x256x32_s4_w2_swz8_pers_c2_k1",
            "wgmma_tf32_128x256x32_s04_wg2_swz8_pers_c2_k1",
            "cuda_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1",
        ] {
            assert!(bad.parse::<Schedule>().is_err(), "{bad}");
        }
    }

    #[test]
    fn work_grid_follows_the_abi() {
        let mut s = Schedule::canonical(Dtype::Tf32);
        let g = s.work_grid(&Shape::new(1000, 1000, 1000));
        assert_eq!((g.tiles_m, g.tiles_n, g.k_tiles), (8, 8, 32));
        s.split_k = 4;
        s.persistence = Persistence::Tiles;
        let g = s.work_grid(&Shape::new(1000, 1000, 1000));
        assert_eq!((g.units, g.k_tiles_per_unit), (256, 8));
        assert_eq!(s.grid_ctas(&Shape::new(1000, 1000, 1000), 132), 132);
    }

    /// The staged-epilogue rule is the kernel's (`FWG_EPI_STAGED`, same constants), and
    /// decides the cases measured on the H200: 128×224 with 5 stages stores directly
    /// (1920×7680×640: 64.7 µs against 61.0 with 4 stages, 2026-12-03 calibration set 3).
    #[test]
    fn staged_epilogue_follows_the_kernel_rule() {
        let src = include_str!("../kernels/wgmma_tf32.cu");
        assert!(src.contains(&format!("#define FWG_EPI_LD {STAGED_EPILOGUE_PITCH} ")));
        assert!(src.contains(&format!("<= {SMEM_OPT_IN_BYTES})")));
        assert!(src.contains("FWG_ST * FWG_STAGE_BYTES + 1024 + FWG_EPI_BYTES + 24 * FWG_ST + 64"));
        let staged = |name: &str| name.parse::<Schedule>().unwrap().staged_epilogue();
        assert!(staged("wgmma_tf32_128x224x32_s4_wg2_swz16_pers_c1_k1"));
        assert!(!staged("wgmma_tf32_128x224x32_s5_wg2_swz16_pers_c1_k1"));
        assert!(staged("wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1"));
        assert!(!staged("wgmma_tf32_128x232x32_s5_wg2_swz16_pers_c1_k1"));
        assert!(staged("wgmma_tf32_64x64x32_s7_wg1_swz1_np_c1_k1"));
        assert!(!staged("mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1"));
    }
}
