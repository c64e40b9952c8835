//! The reference consumer of a dispatch profile: a deterministic training step (issue #11).
//!
//! x (rows × D) → Linear(D→H, bias) → GroupNorm → tanh-GELU → Linear(H→D, bias) → MSE
//! against a seeded target, full backward, AdamW; on forge's own kernels: the profile's TF32
//! GEMMs through [`crate::dispatch::Dispatcher`] (or a plain FP32 GEMM), and the step's
//! kernels in `kernels/step.cu`. Every reduction runs in an order fixed by the code.
//!
//! | module | job |
//! |---|---|
//! | [`model`] | configuration, validation, the flat parameter layout (pure) |
//! | [`reference`](mod@reference) | the same math in FP64 on the host; the column sums' f32 order (pure) |
//! | [`snapshot`] | named host tensors and their max \|Δ\| comparison (pure) |
//! | [`kernels`] | loading and launching `kernels/step.cu` |
//! | [`gemm`] | TF32 (profile) or FP32 GEMMs in the three layouts of a linear layer |
//! | [`trainer`] | buffers, initialisation, one step, CUDA graph capture |
//! | [`timing`] | steps/s |
//! | [`run`] | `forge step`: training, determinism checks, dump, timing |

//! A training loop that uses a profile:
//!
//! ```no_run
//! use forge::device::{Gpu, cache::{KernelCache, default_dir}, fill::UtilKernels};
//! use forge::dispatch::Dispatcher;
//! use forge::profile::Profile;
//! use forge::step::{StepConfig, Trainer, gemm::StepGemm, kernels::StepKernels};
//!
//! # fn main() -> anyhow::Result<()> {
//! let gpu = Gpu::open(0)?;
//! let cache_dir = default_dir();
//! let cache = KernelCache::new(&cache_dir)?;
//! let profile = Profile::load_for_arch("profiles/sm_90a-h200.toml".as_ref(), &gpu.info.arch)?;
//! // The profile picks each GEMM's kernel (per layout and shape); bits do not depend on it.
//! let dispatcher = Dispatcher::new(profile, &gpu, &cache_dir)?;
//! let (kernels, util) = (StepKernels::load(&gpu, &cache)?, UtilKernels::load(&gpu, &cache)?);
//! let cfg = StepConfig::new(768, 4, 512); // D = 768, H = 3072, 4 × 512 rows, TF32
//! let steps = 100;
//! let mut trainer = Trainer::new(&gpu, &kernels, &util, StepGemm::Tf32(&dispatcher), &cfg, steps)?;
//! let (x, target) = (vec![0.5f32; cfg.rows() * cfg.dim], vec![0.0f32; cfg.rows() * cfg.dim]);
//! trainer.set_batch(&x, &target)?;
//! trainer.step()?; // the first step compiles kernels and builds the GEMM plans
//! trainer.capture()?; // later steps replay one CUDA graph: no allocation, no compilation
//! for _ in 1..steps {
//!     trainer.step()?; // (set_batch between steps feeds new data)
//! }
//! println!("loss {:?}", trainer.loss_history()?);
//! let state = trainer.snapshot()?; // weights, both Adam moments, gradients, loss: bit-exact
//! # let _ = state;
//! # Ok(())
//! # }
//! ```

pub mod gemm;
pub mod kernels;
pub mod model;
pub mod reference;
pub mod run;
pub mod snapshot;
pub mod timing;
pub mod trainer;

pub use model::{AdamW, StepConfig, StepDtype};
pub use trainer::Trainer;
