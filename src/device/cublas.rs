//! The cuBLAS TF32 baseline, run on the same buffers and layout as forge's kernels:
//! `cublasGemmEx` with `CUBLAS_COMPUTE_32F_FAST_TF32` and `CUBLAS_GEMM_DEFAULT` (cuBLAS's own
//! heuristic picks the algorithm, split-K included), f32 in and out, with a 32 MiB workspace.

use super::buffers::DeviceBuffer;
use super::{DeviceError, Gpu};
use crate::schedule::Layout;
use crate::shape::Shape;
use cudarc::cublas::{CudaBlas, sys};
use std::ffi::c_void;

/// Words of cuBLAS workspace (32 MiB, what cuBLAS recommends for Hopper).
const WORKSPACE_WORDS: usize = 8 << 20;

/// How the baseline is computed, for reports.
pub const CUBLAS_MODE: &str = "cuBLAS cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32, \
CUBLAS_GEMM_DEFAULT (cuBLAS heuristic), f32 in/out, C = A·Bᵀ with A M×K and B N×K row-major (other layouts: the matching \
cuBLAS transposes on the stored operands), 32 MiB workspace";

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
    pub fn gemm(&self, shape: &Shape, a: u64, b: u64, c: u64) -> Result<(), DeviceError> {
        self.gemm_layout(shape, Layout::Tn, a, b, c)
    }

    /// C (M×N row-major) = op(A) · op(B) with A and B stored as `layout` says
    /// ([`Layout`]: A M×K or K×M, B N×K or K×N, row-major).
    ///
    /// Column-major view: Cᵀ (N×M, ld N) = B′ (N×K) · A′ (K×M). B stored N×K row-major is a
    /// K×N column-major matrix (op T, ld K); stored K×N row-major it is N×K column-major (op N,
    /// ld N). A stored M×K row-major is K×M column-major (op N, ld K); stored K×M row-major it
    /// is M×K column-major (op T, ld M).
    pub fn gemm_layout(
        &self,
        shape: &Shape,
        layout: Layout,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<(), DeviceError> {
        use sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
        let (a_transposed, b_transposed) = layout.transposes();
        let (op_b, ld_b) = if b_transposed {
            (CUBLAS_OP_N, n)
        } else {
            (CUBLAS_OP_T, k)
        };
        let (op_a, ld_a) = if a_transposed {
            (CUBLAS_OP_T, m)
        } else {
            (CUBLAS_OP_N, k)
        };
        unsafe {
            check(
                "cublasGemmEx",
                sys::cublasGemmEx(
                    *self.blas.handle(),
                    op_b,
                    op_a,
                    n,
                    m,
                    k,
                    &alpha as *const f32 as *const c_void,
                    b as *const c_void,
                    sys::cudaDataType::CUDA_R_32F,
                    ld_b,
                    a as *const c_void,
                    sys::cudaDataType::CUDA_R_32F,
                    ld_a,
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
