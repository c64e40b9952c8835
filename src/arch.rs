//! GPU architectures as data: one TOML file per architecture in `cost_model/arch/`,
//! embedded in the binary. Properties measured on a real device override the table
//! ([`Arch::with_measured`]).

use crate::schedule::Dtype;
use serde::{Deserialize, Serialize};

/// The architecture tables shipped with forge, by file name.
const ARCH_TABLES: &[(&str, &str)] = &[
    ("sm_80", include_str!("../cost_model/arch/sm_80.toml")),
    ("sm_86", include_str!("../cost_model/arch/sm_86.toml")),
    ("sm_89", include_str!("../cost_model/arch/sm_89.toml")),
    ("sm_90a", include_str!("../cost_model/arch/sm_90a.toml")),
    ("sm_120", include_str!("../cost_model/arch/sm_120.toml")),
];

/// Dense tensor-core throughput, FLOP per clock per SM (a multiply-add counts two).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorRates {
    pub tf32: f64,
    pub bf16: f64,
    pub fp16: f64,
    pub fp64: f64,
}

/// Which instruction families and copy engines an architecture has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Instructions {
    pub mma_sync: bool,
    pub wgmma: bool,
    pub tma: bool,
    pub clusters: bool,
}

/// One architecture's properties (see `cost_model/arch/*.toml` for sources).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arch {
    /// Target name, as given to `--arch` and NVRTC (`sm_90a`).
    pub name: String,
    /// The parts the table describes.
    pub devices: String,
    pub compute_capability: (u32, u32),
    pub sm_count: u32,
    pub boost_clock_mhz: f64,
    pub tensor_flops_per_clock_per_sm: TensorRates,
    pub smem_per_sm_bytes: u32,
    pub smem_per_block_bytes: u32,
    pub registers_per_sm: u32,
    pub max_registers_per_thread: u32,
    pub max_ctas_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub l2_bytes: u64,
    pub dram_bandwidth_gbs: f64,
    pub instructions: Instructions,
}

/// Properties read off a real device; each present field overrides the table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredProperties {
    pub sm_count: Option<u32>,
    pub boost_clock_mhz: Option<f64>,
    pub smem_per_sm_bytes: Option<u32>,
    pub smem_per_block_bytes: Option<u32>,
    pub l2_bytes: Option<u64>,
    pub dram_bandwidth_gbs: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ArchError {
    #[error("unknown architecture `{name}`; known: {known}")]
    Unknown { name: String, known: String },
    #[error("architecture table {file} is invalid: {cause}")]
    Table {
        file: String,
        cause: Box<toml::de::Error>,
    },
}

impl std::str::FromStr for Arch {
    type Err = ArchError;
    fn from_str(name: &str) -> Result<Arch, ArchError> {
        Arch::by_name(name)
    }
}

impl Arch {
    /// The names of every shipped architecture table.
    pub fn known() -> Vec<&'static str> {
        ARCH_TABLES.iter().map(|(name, _)| *name).collect()
    }

    /// Looks up a shipped architecture by its target name (`sm_90a`; `sm_90` is accepted
    /// as an alias of `sm_90a`).
    pub fn by_name(name: &str) -> Result<Arch, ArchError> {
        let wanted = if name == "sm_90" { "sm_90a" } else { name };
        let (file, text) = ARCH_TABLES
            .iter()
            .find(|(n, _)| *n == wanted)
            .ok_or_else(|| ArchError::Unknown {
                name: name.to_string(),
                known: Arch::known().join(", "),
            })?;
        toml::from_str(text).map_err(|e| ArchError::Table {
            file: format!("cost_model/arch/{file}.toml"),
            cause: Box::new(e),
        })
    }

    /// The NVRTC target forge compiles for on a device of compute capability
    /// `major.minor`: Hopper gets `sm_90a` (wgmma and setmaxnreg need the `a` target).
    pub fn target_name(major: u32, minor: u32) -> String {
        match (major, minor) {
            (9, 0) => "sm_90a".to_string(),
            (ma, mi) => format!("sm_{ma}{mi}"),
        }
    }

    /// This table with the device's measured properties applied.
    pub fn with_measured(mut self, m: &MeasuredProperties) -> Arch {
        if let Some(v) = m.sm_count {
            self.sm_count = v;
        }
        if let Some(v) = m.boost_clock_mhz {
            self.boost_clock_mhz = v;
        }
        if let Some(v) = m.smem_per_sm_bytes {
            self.smem_per_sm_bytes = v;
        }
        if let Some(v) = m.smem_per_block_bytes {
            self.smem_per_block_bytes = v;
        }
        if let Some(v) = m.l2_bytes {
            self.l2_bytes = v;
        }
        if let Some(v) = m.dram_bandwidth_gbs {
            self.dram_bandwidth_gbs = v;
        }
        self
    }

    /// Dense tensor-core peak for a dtype, FLOP/s.
    pub fn peak_flops(&self, dtype: Dtype) -> f64 {
        let per_clock = match dtype {
            Dtype::Tf32 => self.tensor_flops_per_clock_per_sm.tf32,
            Dtype::Bf16 => self.tensor_flops_per_clock_per_sm.bf16,
            Dtype::Fp16 => self.tensor_flops_per_clock_per_sm.fp16,
        };
        per_clock * self.sm_count as f64 * self.boost_clock_mhz * 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_table_parses_and_is_sane() {
        for name in Arch::known() {
            let arch = Arch::by_name(name).unwrap();
            assert_eq!(arch.name, name);
            assert!(arch.sm_count > 0 && arch.l2_bytes > 0 && arch.dram_bandwidth_gbs > 0.0);
            assert!(arch.smem_per_block_bytes <= arch.smem_per_sm_bytes);
            assert!(arch.instructions.mma_sync, "every sm_80+ arch has mma.sync");
        }
        assert!(Arch::by_name("sm_90a").unwrap().instructions.wgmma);
        assert!(!Arch::by_name("sm_80").unwrap().instructions.wgmma);
    }

    #[test]
    fn unknown_arch_names_the_known_ones() {
        let err = Arch::by_name("sm_99").unwrap_err().to_string();
        assert!(err.contains("sm_99") && err.contains("sm_90a"), "{err}");
    }

    #[test]
    fn measured_properties_override_the_table() {
        let arch = Arch::by_name("sm_90a")
            .unwrap()
            .with_measured(&MeasuredProperties {
                l2_bytes: Some(60 << 20),
                ..Default::default()
            });
        assert_eq!(arch.l2_bytes, 60 << 20);
    }
}
