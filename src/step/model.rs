//! The model and its hyper-parameters (pure, no device code): x (rows × D) → Linear(D→H,
//! bias) → GroupNorm(groups, H) → tanh-GELU → Linear(H→D, bias) → MSE against a seeded
//! target; AdamW. Where each parameter lives in the one flat vector that parameters,
//! gradients and both Adam moments share.

use serde::{Deserialize, Serialize};

/// Rows per partial column sum (`STEP_CHUNK` in kernels/step.cu): micro-batches must be a
/// multiple of it for their column sums to continue the whole batch's fold.
pub const CHUNK_ROWS: usize = 64;

/// Alignment of each parameter in the flat vector, in f32 words (256 bytes: TMA and vector
/// loads need 16).
pub const PARAM_ALIGN: usize = 64;

/// How the step's GEMMs compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StepDtype {
    /// forge's TF32 tensor-core kernels, chosen per shape and layout by the profile.
    Tf32,
    /// A plain FP32 CUDA-core GEMM (one fmaf chain per element, increasing K).
    Fp32,
}

impl StepDtype {
    pub fn as_str(self) -> &'static str {
        match self {
            StepDtype::Tf32 => "tf32",
            StepDtype::Fp32 => "fp32",
        }
    }
}

/// AdamW's hyper-parameters (torch.optim.AdamW's meaning).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdamW {
    pub lr: f32,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f32,
    pub weight_decay: f32,
}

impl Default for AdamW {
    fn default() -> Self {
        AdamW {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.01,
        }
    }
}

/// One training step's shape and settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepConfig {
    pub dim: usize,
    pub hidden: usize,
    pub batch: usize,
    pub seq: usize,
    pub groups: usize,
    pub gn_eps: f32,
    pub adamw: AdamW,
    pub dtype: StepDtype,
    pub seed: u64,
    /// The batch's rows are processed in this many equal micro-batches whose gradients are
    /// summed in micro-batch order (1: the whole batch at once).
    pub micro_batches: usize,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("--{0} must be at least 1")]
    Zero(&'static str),
    #[error("--hidden {hidden} is not a multiple of --groups {groups}")]
    Groups { hidden: usize, groups: usize },
    #[error("--dim {0} and --hidden {1} must be multiples of 4 (16-byte rows for the GEMMs)")]
    Align(usize, usize),
    #[error(
        "{rows} rows (batch × seq) do not split into {micro} micro-batches of a multiple of \
         {CHUNK_ROWS} rows"
    )]
    MicroBatches { rows: usize, micro: usize },
    #[error("{what} = {value} is above the step kernels' limit of {limit} ({why})")]
    TooLarge {
        what: &'static str,
        value: usize,
        limit: usize,
        why: &'static str,
    },
}

impl StepConfig {
    /// D → 4·D → D, 32 groups, AdamW's defaults, TF32, seed 1, the whole batch at once.
    pub fn new(dim: usize, batch: usize, seq: usize) -> StepConfig {
        StepConfig {
            dim,
            hidden: 4 * dim,
            batch,
            seq,
            groups: 32,
            gn_eps: 1e-5,
            adamw: AdamW::default(),
            dtype: StepDtype::Tf32,
            seed: 1,
            micro_batches: 1,
        }
    }

    /// rows = batch × seq.
    pub fn rows(&self) -> usize {
        self.batch * self.seq
    }

    /// Rows per micro-batch.
    pub fn micro_rows(&self) -> usize {
        self.rows() / self.micro_batches
    }

    /// Checks the settings the kernels rely on; one error naming the first problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, v) in [
            ("dim", self.dim),
            ("hidden", self.hidden),
            ("batch", self.batch),
            ("seq", self.seq),
            ("groups", self.groups),
            ("micro-batches", self.micro_batches),
        ] {
            if v == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        if !self.hidden.is_multiple_of(self.groups) {
            return Err(ConfigError::Groups {
                hidden: self.hidden,
                groups: self.groups,
            });
        }
        if !self.dim.is_multiple_of(4) || !self.hidden.is_multiple_of(4) {
            return Err(ConfigError::Align(self.dim, self.hidden));
        }
        let rows = self.rows();
        if self.micro_batches > 1
            && (!rows.is_multiple_of(self.micro_batches)
                || !self.micro_rows().is_multiple_of(CHUNK_ROWS))
        {
            return Err(ConfigError::MicroBatches {
                rows,
                micro: self.micro_batches,
            });
        }
        let index = i32::MAX as usize;
        // One warp per row (per (row, group)) indexed in 32 bits: 2^27 warps; grids at most
        // 65,535 blocks high: 64-row column-sum chunks and 128-row FP32 GEMM tiles.
        let warps = 1usize << 27;
        let chunks = 65_535 * CHUNK_ROWS;
        let tiles = 65_535 * 128;
        for (what, value, limit, why) in [
            ("rows", rows, index, "32-bit indices"),
            (
                "rows × groups",
                rows * self.groups,
                warps,
                "one warp per row and group",
            ),
            (
                "dim × hidden",
                self.dim * self.hidden,
                index,
                "32-bit indices",
            ),
            (
                "rows",
                rows,
                chunks,
                "column sums: 65,535 chunks of 64 rows",
            ),
            (
                "hidden",
                self.hidden,
                tiles,
                "FP32 GEMM: 65,535 tiles of 128 rows",
            ),
            (
                "dim",
                self.dim,
                tiles,
                "FP32 GEMM: 65,535 tiles of 128 rows",
            ),
        ] {
            if value > limit {
                return Err(ConfigError::TooLarge {
                    what,
                    value,
                    limit,
                    why,
                });
            }
        }
        Ok(())
    }

    /// The flat parameter vector's layout.
    pub fn params(&self) -> ParamLayout {
        ParamLayout::new(self.dim, self.hidden)
    }

    /// Column-sum chunks of the largest pass (one micro-batch).
    pub fn chunks(&self) -> usize {
        self.micro_rows().div_ceil(CHUNK_ROWS)
    }

    /// FLOPs of the six GEMMs of one step (forward, dW and dX of both layers but the input's
    /// dX, which the step does not need): 5 × 2·rows·D·H.
    pub fn gemm_flops(&self) -> f64 {
        5.0 * 2.0 * self.rows() as f64 * self.dim as f64 * self.hidden as f64
    }
}

/// The parameters, in the order they sit in the flat vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Param {
    /// H × D (Linear 1's weight, row-major as torch stores it).
    W1,
    /// H.
    B1,
    /// H (GroupNorm weight).
    Gamma,
    /// H (GroupNorm bias).
    Beta,
    /// D × H.
    W2,
    /// D.
    B2,
}

impl Param {
    pub const ALL: [Param; 6] = [
        Param::W1,
        Param::B1,
        Param::Gamma,
        Param::Beta,
        Param::W2,
        Param::B2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Param::W1 => "w1",
            Param::B1 => "b1",
            Param::Gamma => "gamma",
            Param::Beta => "beta",
            Param::W2 => "w2",
            Param::B2 => "b2",
        }
    }
}

/// Offsets (f32 words) of each parameter in the flat vector, each aligned to
/// [`PARAM_ALIGN`]; the padding between them stays zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    ranges: [(usize, usize); 6],
    pub total: usize,
}

impl ParamLayout {
    pub fn new(dim: usize, hidden: usize) -> ParamLayout {
        let lens = [hidden * dim, hidden, hidden, hidden, dim * hidden, dim];
        let mut ranges = [(0, 0); 6];
        let mut at = 0;
        for (r, len) in ranges.iter_mut().zip(lens) {
            *r = (at, len);
            at = (at + len).next_multiple_of(PARAM_ALIGN);
        }
        ParamLayout { ranges, total: at }
    }

    /// (offset, length) in f32 words.
    pub fn range(&self, p: Param) -> (usize, usize) {
        self.ranges[p as usize]
    }

    /// The parameter's elements of a host copy of the flat vector.
    pub fn slice<'a>(&self, flat: &'a [f32], p: Param) -> &'a [f32] {
        let (at, len) = self.range(p);
        &flat[at..at + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_fold_columns_in_chunks_of_chunk_rows() {
        // The micro-batch invariance of the column sums and the host model's f32 order both
        // assume kernels/step.cu's chunk is this module's.
        let define = format!("#define STEP_CHUNK {CHUNK_ROWS}\n");
        assert!(crate::step::kernels::STEP_SOURCE.contains(&define));
    }

    pub(crate) fn config() -> StepConfig {
        StepConfig {
            dim: 768,
            hidden: 3072,
            batch: 2,
            seq: 512,
            groups: 32,
            gn_eps: 1e-5,
            adamw: AdamW::default(),
            dtype: StepDtype::Tf32,
            seed: 1,
            micro_batches: 1,
        }
    }

    #[test]
    fn sizes_the_kernels_cannot_index_are_refused_with_the_reason() {
        let rows_too_many = StepConfig {
            batch: 8192,
            seq: 1024,
            groups: 8,
            ..config()
        };
        let e = rows_too_many.validate().unwrap_err().to_string();
        assert!(
            e.contains("rows = 8388608") && e.contains("column sums"),
            "{e}"
        );
        let groups_too_many = StepConfig {
            batch: 4096,
            seq: 1024,
            groups: 64,
            ..config()
        };
        let e = groups_too_many.validate().unwrap_err().to_string();
        assert!(
            e.contains("rows × groups = 268435456") && e.contains("one warp"),
            "{e}"
        );
        let largest = StepConfig {
            batch: 4095,
            seq: 1024,
            ..config()
        };
        assert!(largest.validate().is_ok());
    }

    #[test]
    fn parameters_are_aligned_disjoint_and_in_order() {
        let l = ParamLayout::new(768, 3072);
        let mut end = 0;
        for p in Param::ALL {
            let (at, len) = l.range(p);
            assert_eq!(at % PARAM_ALIGN, 0, "{p:?}");
            assert!(at >= end, "{p:?} overlaps");
            end = at + len;
        }
        assert!(l.total >= end && l.total.is_multiple_of(PARAM_ALIGN));
        assert_eq!(l.range(Param::W2).1, 768 * 3072);
        assert_eq!(l.range(Param::B2).1, 768);
    }

    #[test]
    fn a_valid_config_passes_and_each_fault_is_named() {
        let c = config();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.rows(), 1024);
        let with = |f: fn(&mut StepConfig)| {
            let mut c = config();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert_eq!(with(|c| c.batch = 0), "--batch must be at least 1");
        assert!(with(|c| c.groups = 5).contains("not a multiple of --groups 5"));
        assert!(with(|c| c.dim = 770).contains("multiples of 4"));
        assert!(with(|c| c.micro_batches = 3).contains("3 micro-batches"));
        // 1024 rows in 32 micro-batches of 32 rows: not a multiple of the chunk.
        assert!(with(|c| c.micro_batches = 32).contains("multiple of 64 rows"));
        let mut ok = config();
        ok.micro_batches = 16;
        assert_eq!(ok.validate(), Ok(()));
        assert_eq!(ok.micro_rows(), 64);
    }
}
