//! The operand-preparation kernel (`kernels/operand_prep.cu`): transposes or pads an operand
//! into a K-major workspace ([`crate::operand_prep`] decides which operands and how).

use super::buffers::DeviceBuffer;
use super::cache::KernelCache;
use super::{DeviceError, Gpu};
use crate::operand_prep::{OperandPrep, PrepPlan};
use cudarc::driver::{CudaFunction, CudaModule, CudaStream, sys};
use std::ffi::c_void;
use std::sync::Arc;

/// The kernel's source, embedded like the GEMM families'.
pub const SOURCE: &str = include_str!("../../kernels/operand_prep.cu");
/// Its entry point.
pub const ENTRY: &str = "forge_operand_prep";
/// Output tile of one CTA (rows × columns) and its threads (`forge_prep` in the source).
const TILE_ROWS: u32 = 32;
const TILE_COLS: u32 = 128;

/// The loaded kernel.
pub struct PrepKernel {
    _module: Arc<CudaModule>,
    func: CudaFunction,
}

/// A preparation plan with its workspaces: built once per launch plan, relaunched as is.
pub struct PreparedOperands {
    pub plan: PrepPlan,
    a: Option<DeviceBuffer>,
    b: Option<DeviceBuffer>,
}

impl PrepKernel {
    pub fn load(gpu: &Gpu, cache: &KernelCache) -> Result<PrepKernel, DeviceError> {
        let compiled = cache.get_or_compile("forge_operand_prep", SOURCE, &gpu.info.arch)?;
        let module = gpu
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin))?;
        let func = module.load_function(ENTRY)?;
        Ok(PrepKernel {
            _module: module,
            func,
        })
    }

    /// Writes `src` (stored as `prep` says) K-major into `dst` (`prep.workspace_words()` f32).
    pub fn launch(
        &self,
        stream: &CudaStream,
        prep: &OperandPrep,
        src: u64,
        dst: u64,
    ) -> Result<(), DeviceError> {
        // Safety: a cudarc stream is a live stream of its context.
        unsafe { self.launch_raw(stream.cu_stream(), prep, src, dst) }
    }

    /// [`PrepKernel::launch`] on a raw driver stream.
    ///
    /// # Safety
    /// `stream` must be null, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD` or a live stream of
    /// the current context, which must be the one the kernel was loaded in; `src` must hold
    /// the stored operand and `dst` `prep.workspace_words()` f32.
    pub unsafe fn launch_raw(
        &self,
        stream: sys::CUstream,
        prep: &OperandPrep,
        src: u64,
        dst: u64,
    ) -> Result<(), DeviceError> {
        let (mut src, mut dst) = (src, dst);
        let (mut rows, mut cols) = (prep.rows as i32, prep.k as i32);
        let (mut ld_in, mut ld_out) = (prep.ld_in as i64, prep.ld_out as i64);
        let mut transpose = prep.transpose as i32;
        let mut args: [*mut c_void; 7] = [
            &mut src as *mut u64 as *mut c_void,
            &mut dst as *mut u64 as *mut c_void,
            &mut rows as *mut i32 as *mut c_void,
            &mut cols as *mut i32 as *mut c_void,
            &mut ld_in as *mut i64 as *mut c_void,
            &mut ld_out as *mut i64 as *mut c_void,
            &mut transpose as *mut i32 as *mut c_void,
        ];
        let grid_y = prep.rows.div_ceil(TILE_ROWS);
        if grid_y > 65535 {
            return Err(DeviceError::Other(format!(
                "operand preparation of {} rows: at most {} rows",
                prep.rows,
                65535 * TILE_ROWS
            )));
        }
        let config = sys::CUlaunchConfig {
            gridDimX: prep.ld_out.div_ceil(TILE_COLS),
            gridDimY: grid_y,
            gridDimZ: 1,
            blockDimX: 32,
            blockDimY: 8,
            blockDimZ: 1,
            sharedMemBytes: 0,
            hStream: stream,
            attrs: std::ptr::null_mut(),
            numAttrs: 0,
        };
        // Safety: `args` match `forge_operand_prep`; the caller vouches for the rest.
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                self.func.cu_function(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()?;
        Ok(())
    }
}

impl PreparedOperands {
    /// Allocates the workspaces `plan` needs (none for an empty plan).
    pub fn new(gpu: &Gpu, plan: PrepPlan) -> Result<PreparedOperands, DeviceError> {
        let alloc = |p: &Option<OperandPrep>| {
            p.map(|p| DeviceBuffer::new(&gpu.ctx, p.workspace_words() as usize))
                .transpose()
        };
        Ok(PreparedOperands {
            a: alloc(&plan.a)?,
            b: alloc(&plan.b)?,
            plan,
        })
    }

    /// The pointers the GEMM kernel reads: a workspace where an operand is prepared, else the
    /// stored operand.
    pub fn operands(&self, a: u64, b: u64) -> (u64, u64) {
        (
            self.a.as_ref().map_or(a, DeviceBuffer::ptr),
            self.b.as_ref().map_or(b, DeviceBuffer::ptr),
        )
    }

    /// Row strides (floats) of what the GEMM kernel reads.
    pub fn strides(&self, k: u32) -> (u32, u32) {
        (
            self.plan.a.map_or(k, |p| p.ld_out),
            self.plan.b.map_or(k, |p| p.ld_out),
        )
    }

    /// Runs the passes for stored operands `a`, `b`.
    ///
    /// # Safety
    /// As [`PrepKernel::launch_raw`], with `a`, `b` the stored operands.
    pub unsafe fn run_raw(
        &self,
        kernel: &PrepKernel,
        stream: sys::CUstream,
        a: u64,
        b: u64,
    ) -> Result<(), DeviceError> {
        for (prep, buf, src) in [(&self.plan.a, &self.a, a), (&self.plan.b, &self.b, b)] {
            if let (Some(prep), Some(buf)) = (prep, buf) {
                // Safety: the caller's guarantees; `buf` holds the plan's workspace.
                unsafe { kernel.launch_raw(stream, prep, src, buf.ptr()) }?;
            }
        }
        Ok(())
    }

    /// [`PreparedOperands::run_raw`] on a cudarc stream.
    pub fn run(
        &self,
        kernel: &PrepKernel,
        stream: &CudaStream,
        a: u64,
        b: u64,
    ) -> Result<(), DeviceError> {
        // Safety: a cudarc stream is a live stream of its context.
        unsafe { self.run_raw(kernel, stream.cu_stream(), a, b) }
    }
}
