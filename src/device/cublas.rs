//! The cuBLAS TF32 baseline, run on the same buffers and layout as forge's kernels:
//! `cublasGemmEx` with `CUBLAS_COMPUTE_32F_FAST_TF32` and `CUBLAS_GEMM_DEFAULT` (cuBLAS's own
//! heuristic picks the algorithm, split-K included), f32 in and out, with a 32 MiB workspace.

use super::buffers::DeviceBuffer;
use super::{DeviceError, Gpu};
use crate::shape::Shape;
use cudarc::cublas::{CudaBlas, sys};
use std::ffi::c_void;

/// Words of cuBLAS workspace (32 MiB, what cuBLAS recommends for Hopper).
const WORKSPACE_WORDS: usize = 8 << 20;

/// How the baseline is computed, for reports.
pub const CUBLAS_MODE: &str = "cuBLAS cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32, \
CUBLAS_GEMM_DEFAULT (cuBLAS heuristic), f32 in/out, C = A·Bᵀ with A M×K and B N×K row-major, \
32 MiB workspace";

pub struct Cublas {
    blas: CudaBlas,
    _workspace: DeviceBuffer,
    pub version: String,
}

fn check(call: &str, status: sys::cublasStatus_t) -> Result<(), DeviceError> {
    if status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(DeviceError::Cublas(format!("{call}: {status:?}")))
    }
}

impl Cublas {
    pub fn new(gpu: &Gpu) -> Result<Cublas, DeviceError> {
        let blas = CudaBlas::new(gpu.stream.clone())
            .map_err(|e| DeviceError::Cublas(format!("cannot create a handle: {e:?}")))?;
        let workspace = DeviceBuffer::new(&gpu.ctx, WORKSPACE_WORDS)?;
        let mut version = 0i32;
        unsafe {
            check(
                "cublasSetWorkspace",
                sys::cublasSetWorkspace_v2(
                    *blas.handle(),
                    workspace.ptr() as *mut c_void,
                    WORKSPACE_WORDS * 4,
                ),
            )?;
            check(
                "cublasGetVersion",
                sys::cublasGetVersion_v2(*blas.handle(), &mut version),
            )?;
        }
        Ok(Cublas {
            blas,
            _workspace: workspace,
            version: format!(
                "{}.{}.{}",
                version / 10000,
                (version % 10000) / 100,
                version % 100
            ),
        })
    }

    /// C (M×N row-major) = A (M×K row-major) · B (N×K row-major)ᵀ.
    ///
    /// Column-major view: Cᵀ (N×M, ld N) = op(B) · op(A) with B read as a K×N column-major
    /// matrix transposed (lda K) and A as K×M column-major, not transposed (ldb K).
    pub fn gemm(&self, shape: &Shape, a: u64, b: u64, c: u64) -> Result<(), DeviceError> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
        unsafe {
            check(
                "cublasGemmEx",
                sys::cublasGemmEx(
                    *self.blas.handle(),
                    sys::cublasOperation_t::CUBLAS_OP_T,
                    sys::cublasOperation_t::CUBLAS_OP_N,
                    n,
                    m,
                    k,
                    &alpha as *const f32 as *const c_void,
                    b as *const c_void,
                    sys::cudaDataType::CUDA_R_32F,
                    k,
                    a as *const c_void,
                    sys::cudaDataType::CUDA_R_32F,
                    k,
                    &beta as *const f32 as *const c_void,
                    c as *mut c_void,
                    sys::cudaDataType::CUDA_R_32F,
                    n,
                    sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
                    sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                ),
            )
        }
    }
}
