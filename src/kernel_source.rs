//! CUDA sources of the kernel families, embedded in the binary, and the compile-time
//! variant a schedule needs for a shape (`kernels/ABI.md`). Pure: no device code.
//!
//! Swizzle group, raster direction and the split count are run-time parameters, so many
//! schedules share one compiled [`KernelVariant`].

use crate::contract::Rounding;
use crate::schedule::{Dtype, Family, Persistence, Raster, Schedule, Tile};
use crate::shape::Shape;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

const COMMON: &str = include_str!("../kernels/common.cuh");
const MMA_SYNC_TF32: &str = include_str!("../kernels/mma_sync_tf32.cu");
const WGMMA_WRAPPERS: &str = include_str!("../kernels/wgmma_wrappers.cuh");
const WGMMA_TF32: &str = include_str!("../kernels/wgmma_tf32.cu");

/// Environment variable naming a directory to read kernel sources from instead of the
/// embedded copies (development only).
pub const SOURCE_DIR_ENV: &str = "FORGE_KERNEL_DIR";

/// Environment variable with extra `NAME=VALUE` defines, comma-separated, appended to every
/// prelude (kernel development only, e.g. `FORGE_KERNEL_DEFINES=FORGE_ROUND_IN=consumer`).
/// They change the source, hence the cache key, but not the label.
pub const EXTRA_DEFINES_ENV: &str = "FORGE_KERNEL_DEFINES";

/// Kernel entry points (`kernels/ABI.md`).
pub const GEMM_ENTRY: &str = "forge_gemm";
pub const SPLITK_REDUCE_ENTRY: &str = "forge_splitk_reduce";

/// The compile-time configuration of one kernel binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelVariant {
    pub family: Family,
    pub dtype: Dtype,
    pub tile: Tile,
    pub stages: u32,
    pub workers: u32,
    pub persistence: Persistence,
    pub cluster: u32,
    pub split_k: bool,
    /// Rows of A and B reach the kernel 16-byte aligned (mma_sync: K % 4 == 0; wgmma always:
    /// its tensor maps read a padded copy otherwise, `crate::operand_prep`).
    pub vec4: bool,
    /// How A and B are reduced to TF32 (`FORGE_ROUND`).
    pub rounding: Rounding,
}

impl KernelVariant {
    pub fn new(s: &Schedule, shape: &Shape, rounding: Rounding) -> KernelVariant {
        KernelVariant {
            family: s.family,
            dtype: s.dtype,
            tile: s.tile,
            stages: s.stages,
            workers: s.workers,
            persistence: s.persistence,
            cluster: s.cluster,
            split_k: s.split_k > 1,
            vec4: s.family == Family::Wgmma || shape.k.is_multiple_of(4),
            rounding,
        }
    }

    /// A schedule of this variant (raster and split count do not change the binary): what
    /// threads, shared memory and the tail width are read from.
    pub fn probe(&self) -> Schedule {
        Schedule {
            family: self.family,
            dtype: self.dtype,
            tile: self.tile,
            stages: self.stages,
            workers: self.workers,
            group: 1,
            raster: Raster::Row,
            persistence: self.persistence,
            cluster: self.cluster,
            split_k: 1,
        }
    }

    /// A short readable label, e.g. `wgmma_tf32_128x256x32_s4_wg2_pers_c2_k0_v1_rn`.
    pub fn label(&self) -> String {
        format!(
            "{}_{}_{}x{}x{}_s{}_{}{}_{}_c{}_k{}_v{}_{}",
            self.family.as_str(),
            self.dtype,
            self.tile.bm,
            self.tile.bn,
            self.tile.bk,
            self.stages,
            if self.family == Family::Wgmma {
                "wg"
            } else {
                "w"
            },
            self.workers,
            self.persistence.as_str(),
            self.cluster,
            self.split_k as u8,
            self.vec4 as u8,
            self.rounding.label_suffix()
        )
    }

    /// The `#define` prelude.
    pub fn prelude(&self) -> String {
        let workers = match self.family {
            Family::MmaSync => "FORGE_WARPS",
            Family::Wgmma => "FORGE_CONSUMER_WG",
        };
        format!(
            "// forge kernel variant {label}\n\
             #define FORGE_BM {bm}\n#define FORGE_BN {bn}\n#define FORGE_BK {bk}\n\
             #define FORGE_STAGES {stages}\n#define {workers} {w}\n\
             #define FORGE_PERSISTENT {pers}\n#define FORGE_CHAINED_TAIL {chained}\n\
             #define FORGE_PINGPONG {pingpong}\n\
             #define FORGE_CLUSTER {cluster}\n\
             #define FORGE_SPLITK {splitk}\n#define FORGE_VEC4 {vec4}\n\
             #define FORGE_ROUND {round}\n{round_in}{retiled}",
            label = self.label(),
            bm = self.tile.bm,
            bn = self.tile.bn,
            bk = self.tile.bk,
            stages = self.stages,
            w = self.workers,
            pers = self.persistence.is_persistent() as u8,
            chained = (self.persistence == Persistence::ChainedTail) as u8,
            pingpong = (self.persistence == Persistence::PingPong) as u8,
            cluster = self.cluster,
            splitk = self.split_k as u8,
            vec4 = self.vec4 as u8,
            round = self.rounding.define(),
            round_in = match (self.family, self.rounding) {
                (Family::Wgmma, Rounding::NearestEven) => {
                    format!("#define FORGE_ROUND_IN {}\n", wgmma_round_in().as_str())
                }
                _ => String::new(),
            },
            // Only retiled-tail variants carry these (every other prelude stays as it was).
            retiled = if self.persistence == Persistence::RetiledTail {
                format!(
                    "#define FORGE_RETILED_TAIL 1\n#define FORGE_TAIL_BN {}\n",
                    self.probe().tail_bn()
                )
            } else {
                String::new()
            },
        )
    }

    /// Whether the copy engine rounds A and B to TF32 (tensor maps of type TFLOAT32): the
    /// wgmma family under round-to-nearest with [`RoundIn::Tma`].
    pub fn tma_rounds(&self) -> bool {
        self.family == Family::Wgmma
            && self.rounding == Rounding::NearestEven
            && wgmma_round_in() == RoundIn::Tma
    }

    /// The whole translation unit NVRTC compiles: prelude, `common.cuh`, then the family's
    /// files in order (`kernels/ABI.md`, "Source assembly").
    pub fn source(&self) -> String {
        let mut parts = vec![
            Cow::Owned(self.prelude() + &extra_defines()),
            source_file("common.cuh", COMMON),
        ];
        match (self.family, self.dtype) {
            (Family::MmaSync, _) => parts.push(source_file("mma_sync_tf32.cu", MMA_SYNC_TF32)),
            (Family::Wgmma, _) => {
                parts.push(source_file("wgmma_wrappers.cuh", WGMMA_WRAPPERS));
                parts.push(source_file("wgmma_tf32.cu", WGMMA_TF32));
            }
        }
        parts.join("\n")
    }
}

/// Where the wgmma family rounds A and B to TF32 under round-to-nearest (`FORGE_ROUND_IN`,
/// `kernels/ABI.md` "Numerics"); mma_sync always rounds its fragment registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundIn {
    /// Idle producer warps round each stage in place in shared memory.
    Producer,
    /// The consumer warpgroups round each stage before their first wgmma on it.
    Consumer,
    /// The copy engine rounds while loading (tensor maps of type TFLOAT32): no pass at all.
    Tma,
}

impl RoundIn {
    pub fn as_str(self) -> &'static str {
        match self {
            RoundIn::Producer => "producer",
            RoundIn::Consumer => "consumer",
            RoundIn::Tma => "tma",
        }
    }
}

/// The form forge builds with. Measured on the H200 (2026-12-03,
/// `reports/2026-12-03-h200-contract-ab/`): the copy engine's TFLOAT32 rounding gives exactly
/// `cvt.rn.tf32.f32`'s bits (canonical mma_sync output and bit model, every sample) at the
/// speed of truncation; the in-kernel passes cost 30–37% (shared-memory bandwidth).
pub const DEFAULT_ROUND_IN: RoundIn = RoundIn::Tma;

/// [`DEFAULT_ROUND_IN`], or `FORGE_ROUND_IN=producer|consumer|tma` in [`EXTRA_DEFINES_ENV`]
/// (kernel development and A/B measurements).
pub fn wgmma_round_in() -> RoundIn {
    let defines = std::env::var(EXTRA_DEFINES_ENV).unwrap_or_default();
    let chosen = defines
        .split(',')
        .filter_map(|d| d.trim().split_once('='))
        .find(|(name, _)| *name == "FORGE_ROUND_IN")
        .map(|(_, v)| v.trim());
    match chosen {
        Some("producer") => RoundIn::Producer,
        Some("consumer") => RoundIn::Consumer,
        Some("tma") => RoundIn::Tma,
        Some(other) => {
            panic!("{EXTRA_DEFINES_ENV}: FORGE_ROUND_IN={other} is not producer, consumer or tma")
        }
        None => DEFAULT_ROUND_IN,
    }
}

/// `#define` lines from [`EXTRA_DEFINES_ENV`] (empty when unset), except `FORGE_ROUND_IN`,
/// which the prelude defines ([`wgmma_round_in`]).
fn extra_defines() -> String {
    let list = std::env::var(EXTRA_DEFINES_ENV).unwrap_or_default();
    let kept: Vec<&str> = list
        .split(',')
        .filter(|d| !d.trim().starts_with("FORGE_ROUND_IN"))
        .collect();
    define_lines(&kept.join(","))
}

/// `A=1,B` → `#define A 1\n#define B 1\n`.
fn define_lines(list: &str) -> String {
    list.split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| match d.split_once('=') {
            Some((name, value)) => format!("#define {name} {value}\n"),
            None => format!("#define {d} 1\n"),
        })
        .collect()
}

fn source_file(name: &str, embedded: &'static str) -> Cow<'static, str> {
    match std::env::var_os(SOURCE_DIR_ENV) {
        Some(dir) => {
            let path = std::path::Path::new(&dir).join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => Cow::Owned(text),
                Err(e) => panic!("{SOURCE_DIR_ENV}: cannot read {}: {e}", path.display()),
            }
        }
        None => Cow::Borrowed(embedded),
    }
}

/// Hex SHA-256 of a byte string (cache keys).
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raster_variants_share_a_binary_and_split_k_does_not() {
        let shape = Shape::new(4096, 4096, 4096);
        let a: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1"
            .parse()
            .unwrap();
        let b: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz1c_pers_c1_k1"
            .parse()
            .unwrap();
        let c: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz1c_pers_c1_k2"
            .parse()
            .unwrap();
        assert_eq!(
            KernelVariant::new(&a, &shape, Rounding::NearestEven),
            KernelVariant::new(&b, &shape, Rounding::NearestEven)
        );
        assert_ne!(
            KernelVariant::new(&a, &shape, Rounding::NearestEven),
            KernelVariant::new(&c, &shape, Rounding::NearestEven)
        );
        let rz = KernelVariant::new(&a, &shape, Rounding::Truncate);
        assert_ne!(rz, KernelVariant::new(&a, &shape, Rounding::NearestEven));
        assert!(rz.label().ends_with("_v1_rz"), "{}", rz.label());
        assert!(rz.prelude().contains("#define FORGE_ROUND 0\n"));
        // Ragged K: mma_sync reads 4-byte rows; wgmma always reads 16-byte rows (a padded
        // copy), so it needs no second binary.
        let ragged = Shape::new(1000, 1000, 1001);
        let canonical = Schedule::canonical(Dtype::Tf32);
        assert!(!KernelVariant::new(&canonical, &ragged, Rounding::NearestEven).vec4);
        assert_eq!(
            KernelVariant::new(&a, &ragged, Rounding::NearestEven),
            KernelVariant::new(&a, &shape, Rounding::NearestEven)
        );
    }

    #[test]
    fn wgmma_source_puts_the_generated_wrappers_before_the_family_file() {
        let s: Schedule = "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1"
            .parse()
            .unwrap();
        let src =
            KernelVariant::new(&s, &Shape::new(4096, 4096, 4096), Rounding::Truncate).source();
        let common = src.find("#define FORGE_COMMON_CUH").unwrap();
        let wrappers = src.find("#define FORGE_WGMMA_WRAPPERS_CUH").unwrap();
        let family = src.find("fwg_wgmma(float* d").unwrap();
        assert!(common < wrappers && wrappers < family);
        let mma = KernelVariant::new(
            &Schedule::canonical(Dtype::Tf32),
            &Shape::new(64, 64, 64),
            Rounding::Truncate,
        );
        assert!(!mma.source().contains("FORGE_WGMMA_WRAPPERS_CUH"));
    }

    #[test]
    fn extra_defines_become_define_lines() {
        assert_eq!(
            define_lines("FORGE_ROUND_IN=consumer, X ,"),
            "#define FORGE_ROUND_IN consumer\n#define X 1\n"
        );
        assert_eq!(define_lines(""), "");
    }

    #[test]
    fn prelude_defines_what_the_abi_lists() {
        let s = Schedule::canonical(Dtype::Tf32);
        let p = KernelVariant::new(&s, &Shape::new(64, 64, 64), Rounding::NearestEven).prelude();
        for d in [
            "FORGE_BM 128",
            "FORGE_BN 128",
            "FORGE_BK 32",
            "FORGE_STAGES 2",
            "FORGE_WARPS 8",
            "FORGE_PERSISTENT 0",
            "FORGE_CLUSTER 1",
            "FORGE_SPLITK 0",
            "FORGE_VEC4 1",
            "FORGE_ROUND 1",
        ] {
            assert!(p.contains(&format!("#define {d}\n")), "{d} missing in {p}");
        }
    }
}
