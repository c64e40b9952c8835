//! The step's own kernels (`kernels/step.cu`, embedded): GroupNorm + GELU forward and
//! backward, MSE, fixed-order column sums, AdamW, and the plain FP32 GEMM. Launches are raw
//! `cuLaunchKernelEx` calls with arguments on the stack: nothing is allocated per launch, and
//! every launch can be captured into a CUDA graph.

use crate::device::cache::KernelCache;
use crate::device::kernel::{LaunchOrder, launch_raw};
use crate::device::{DeviceError, Gpu};
use crate::step::model::CHUNK_ROWS;
use cudarc::driver::{CudaFunction, CudaModule, sys};
use std::ffi::c_void;
use std::sync::Arc;

/// The kernel source, embedded in the binary.
pub const STEP_SOURCE: &str = include_str!("../../kernels/step.cu");
/// Its label in the kernel cache and in compiler messages.
pub const STEP_LABEL: &str = "forge_step";
/// Every entry point of the source (the ptxas test checks each one).
pub const STEP_ENTRIES: [&str; 10] = [
    "step_gn_forward",
    "step_mse_forward",
    "step_gn_backward",
    "step_colsum_partial",
    "step_colsum_fold",
    "step_add",
    "step_affine",
    "step_advance",
    "step_adamw",
    "step_sgemm",
];

const THREADS: u32 = 256;
const WARPS_PER_BLOCK: usize = THREADS as usize / 32;
/// Grid-stride kernels use at most this many blocks per SM.
const BLOCKS_PER_SM: u32 = 8;
/// Tile edge of `step_sgemm` (128 × 128 outputs per block).
const SGEMM_TILE: usize = 128;

/// The loaded module and its functions.
pub struct StepKernels {
    _module: Arc<CudaModule>,
    gn_forward: CudaFunction,
    mse_forward: CudaFunction,
    gn_backward: CudaFunction,
    colsum_partial: CudaFunction,
    colsum_fold: CudaFunction,
    add: CudaFunction,
    affine: CudaFunction,
    advance: CudaFunction,
    adamw: CudaFunction,
    sgemm: CudaFunction,
    stride_blocks: u32,
}

/// A kernel argument by address (`cuLaunchKernelEx` copies the values at launch).
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        [$(&$v as *const _ as *mut c_void),*]
    };
}

/// Launches `func` on a (grid.0, grid.1) grid of `THREADS`-thread blocks.
///
/// # Safety
/// `args` must match `func`'s parameters and every pointer among them must be a device
/// allocation of the size the kernel indexes; `stream` a live stream of `func`'s context.
unsafe fn launch(
    func: &CudaFunction,
    grid: (u32, u32),
    stream: sys::CUstream,
    args: &mut [*mut c_void],
) -> Result<(), DeviceError> {
    let grid = (grid.0.max(1), grid.1.max(1), 1);
    // Safety: the caller's guarantees.
    unsafe {
        launch_raw(
            func,
            grid,
            (THREADS, 1, 1),
            0,
            stream,
            args,
            LaunchOrder::Serial,
        )
    }
}

fn blocks_for_warps(warps: usize) -> u32 {
    warps.div_ceil(WARPS_PER_BLOCK) as u32
}

fn blocks_for_threads(threads: usize) -> u32 {
    threads.div_ceil(THREADS as usize) as u32
}

impl StepKernels {
    /// Compiles (or reads from the cache) and loads `kernels/step.cu` for the device.
    pub fn load(gpu: &Gpu, cache: &KernelCache) -> Result<StepKernels, DeviceError> {
        let compiled = cache.get_or_compile(STEP_LABEL, STEP_SOURCE, &gpu.info.arch)?;
        let module = gpu
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin))?;
        let f = |name: &str| module.load_function(name);
        Ok(StepKernels {
            gn_forward: f("step_gn_forward")?,
            mse_forward: f("step_mse_forward")?,
            gn_backward: f("step_gn_backward")?,
            colsum_partial: f("step_colsum_partial")?,
            colsum_fold: f("step_colsum_fold")?,
            add: f("step_add")?,
            affine: f("step_affine")?,
            advance: f("step_advance")?,
            adamw: f("step_adamw")?,
            sgemm: f("step_sgemm")?,
            stride_blocks: gpu.info.sm_count * BLOCKS_PER_SM,
            _module: module,
        })
    }

    fn stride_grid(&self, n: usize) -> (u32, u32) {
        (blocks_for_threads(n).min(self.stride_blocks), 1)
    }

    /// xhat, g (rows × h) and rstd (rows × groups) from the GEMM output z (rows × h).
    ///
    /// # Safety
    /// Pointers: device buffers of the sizes named; `stream` live in the kernels' context.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gn_forward(
        &self,
        s: sys::CUstream,
        z: u64,
        b1: u64,
        gamma: u64,
        beta: u64,
        xhat: u64,
        g: u64,
        rstd: u64,
        (rows, h, groups): (usize, usize, usize),
        eps: f32,
    ) -> Result<(), DeviceError> {
        let (r, hh, gg) = (rows as i32, h as i32, groups as i32);
        let mut a = args![z, b1, gamma, beta, xhat, g, rstd, r, hh, gg, eps];
        let grid = (blocks_for_warps(rows * groups), 1);
        unsafe { launch(&self.gn_forward, grid, s, &mut a) }
    }

    /// dy = scale·(y + b2 − target) and row_sq[row] = Σ (y + b2 − target)².
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn mse_forward(
        &self,
        s: sys::CUstream,
        y: u64,
        b2: u64,
        target: u64,
        dy: u64,
        row_sq: u64,
        (rows, d): (usize, usize),
        scale: f32,
    ) -> Result<(), DeviceError> {
        let (r, dd) = (rows as i32, d as i32);
        let mut a = args![y, b2, target, dy, row_sq, r, dd, scale];
        unsafe { launch(&self.mse_forward, (blocks_for_warps(rows), 1), s, &mut a) }
    }

    /// da and dz (rows × h) from dg, xhat, gamma, beta and rstd.
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gn_backward(
        &self,
        s: sys::CUstream,
        dg: u64,
        xhat: u64,
        gamma: u64,
        beta: u64,
        rstd: u64,
        da: u64,
        dz: u64,
        (rows, h, groups): (usize, usize, usize),
    ) -> Result<(), DeviceError> {
        let (r, hh, gg) = (rows as i32, h as i32, groups as i32);
        let mut a = args![dg, xhat, gamma, beta, rstd, da, dz, r, hh, gg];
        let grid = (blocks_for_warps(rows * groups), 1);
        unsafe { launch(&self.gn_backward, grid, s, &mut a) }
    }

    /// acc[col] (+)= Σ_rows x[row][col] (· y[row][col] when `y` is not 0), in the fixed
    /// chunked order of kernels/step.cu; `partial` holds ⌈rows / CHUNK_ROWS⌉ × cols words.
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn column_sum(
        &self,
        s: sys::CUstream,
        x: u64,
        y: u64,
        partial: u64,
        acc: u64,
        (rows, cols): (usize, usize),
        accumulate: bool,
    ) -> Result<(), DeviceError> {
        let chunks = rows.div_ceil(CHUNK_ROWS);
        let (r, c, ch, acc_flag) = (rows as i32, cols as i32, chunks as i32, accumulate as i32);
        let mut a = args![x, y, partial, r, c];
        let grid = (blocks_for_threads(cols), chunks as u32);
        unsafe { launch(&self.colsum_partial, grid, s, &mut a) }?;
        let mut a = args![partial, acc, ch, c, acc_flag];
        unsafe { launch(&self.colsum_fold, (blocks_for_threads(cols), 1), s, &mut a) }
    }

    /// acc[i] += x[i], i < n.
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`].
    pub unsafe fn add(
        &self,
        s: sys::CUstream,
        acc: u64,
        x: u64,
        n: usize,
    ) -> Result<(), DeviceError> {
        let nn = n as i64;
        let mut a = args![acc, x, nn];
        unsafe { launch(&self.add, self.stride_grid(n), s, &mut a) }
    }

    /// dst[i] = src[i]·scale + shift, i < n.
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`].
    pub unsafe fn affine(
        &self,
        s: sys::CUstream,
        (dst, src): (u64, u64),
        n: usize,
        scale: f32,
        shift: f32,
    ) -> Result<(), DeviceError> {
        let nn = n as i64;
        let mut a = args![dst, src, nn, scale, shift];
        unsafe { launch(&self.affine, self.stride_grid(n), s, &mut a) }
    }

    /// The optimizer's step counter and bias-correction powers; records the loss.
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`]; `state` holds a `StepState` (6 words).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn advance(
        &self,
        s: sys::CUstream,
        state: u64,
        loss_sum: u64,
        history: u64,
        history_len: usize,
        (beta1, beta2): (f64, f64),
        inv_count: f32,
    ) -> Result<(), DeviceError> {
        let len = history_len as i32;
        let mut a = args![state, loss_sum, history, len, beta1, beta2, inv_count];
        unsafe { launch(&self.advance, (1, 1), s, &mut a) }
    }

    /// AdamW over n elements of the flat vectors.
    ///
    /// # Safety
    /// As [`StepKernels::advance`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn adamw(
        &self,
        s: sys::CUstream,
        (p, g, m, v): (u64, u64, u64, u64),
        n: usize,
        state: u64,
        opt: &crate::step::model::AdamW,
    ) -> Result<(), DeviceError> {
        let nn = n as i64;
        let (lr, b1, b2, eps, wd) = (
            opt.lr,
            opt.beta1 as f32,
            opt.beta2 as f32,
            opt.eps,
            opt.weight_decay,
        );
        let mut a = args![p, g, m, v, nn, state, lr, b1, b2, eps, wd];
        unsafe { launch(&self.adamw, self.stride_grid(n), s, &mut a) }
    }

    /// C (m × n) (+)= A·Bᵀ in FP32 on the CUDA cores; `a_k_major`: A is m × k row-major,
    /// else k × m; `b_k_major`: B is n × k, else k × n.
    ///
    /// # Safety
    /// As [`StepKernels::gn_forward`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn sgemm(
        &self,
        s: sys::CUstream,
        (m, n, k): (usize, usize, usize),
        (a, b, c): (u64, u64, u64),
        (a_k_major, b_k_major): (bool, bool),
        accumulate: bool,
    ) -> Result<(), DeviceError> {
        let (mm, nn, kk) = (m as i32, n as i32, k as i32);
        let (ak, bk, acc) = (a_k_major as i32, b_k_major as i32, accumulate as i32);
        let mut args = args![a, b, c, mm, nn, kk, ak, bk, acc];
        let grid = (n.div_ceil(SGEMM_TILE) as u32, m.div_ceil(SGEMM_TILE) as u32);
        unsafe { launch(&self.sgemm, grid, s, &mut args) }
    }
}
