//! The step's GEMMs: TF32 through the profile's [`Dispatcher`] (every layout), or the plain
//! FP32 kernel. The three products of a linear layer, in forge's layout names:
//! Y = X·Wᵀ is [`Layout::Tn`], dX = dY·W is [`Layout::Nn`], dW = dYᵀ·X is [`Layout::Nt`].

use crate::device::DeviceError;
use crate::dispatch::Dispatcher;
use crate::schedule::Layout;
use crate::step::kernels::StepKernels;
use cudarc::driver::sys;

/// Which GEMM the step runs.
pub enum StepGemm<'a> {
    Tf32(&'a Dispatcher),
    Fp32,
}

impl StepGemm<'_> {
    /// Whether C can be accumulated onto (C += A·B) inside the GEMM, continuing its K order.
    pub fn accumulates(&self) -> bool {
        matches!(self, StepGemm::Fp32)
    }

    /// C (m × n) = A·B in `layout` (A m×k or k×m, B n×k or k×n; [`Layout`]); with
    /// `accumulate` (only where [`StepGemm::accumulates`]) C += A·B.
    ///
    /// # Safety
    /// `stream` is a live stream of the device's context; a, b, c device buffers of the
    /// sizes the layout names.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run(
        &self,
        kernels: &StepKernels,
        stream: sys::CUstream,
        layout: Layout,
        (m, n, k): (usize, usize, usize),
        (a, b, c): (u64, u64, u64),
        accumulate: bool,
    ) -> Result<(), DeviceError> {
        match self {
            StepGemm::Tf32(dispatcher) => {
                assert!(
                    !accumulate,
                    "the TF32 dispatcher writes C; it does not add to it"
                );
                let (m, n, k) = (m as u32, n as u32, k as u32);
                // Safety: the caller's guarantees.
                unsafe { dispatcher.gemm_layout_raw(stream, layout, m, n, k, a, b, c) }
            }
            StepGemm::Fp32 => {
                let (ta, tb) = layout.transposes();
                // Safety: the caller's guarantees.
                unsafe { kernels.sgemm(stream, (m, n, k), (a, b, c), (!ta, !tb), accumulate) }
            }
        }
    }
}
