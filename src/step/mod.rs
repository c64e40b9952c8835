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
