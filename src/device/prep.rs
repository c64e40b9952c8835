//! The operand-preparation kernel (`kernels/operand_prep.cu`): transposes or pads an operand
//! into a K-major workspace ([`crate::operand_prep`] decides which operands and how).

use super::buffers::DeviceBuffer;
use super::cache::KernelCache;
use super::kernel::{LaunchOrder, launch_raw};
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
        unsafe { self.launch_raw(stream.cu_stream(), &[(prep, src, dst)], LaunchOrder::Serial) }
    }

    /// Runs one or two passes `(prep, src, dst)` in one launch on a raw driver stream.
    ///
    /// # Safety
    /// `stream` must be null, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD` or a live stream of
    /// the current context, which must be the one the kernel was loaded in; each `src` must
    /// hold its stored operand and each `dst` `prep.workspace_words()` f32.
    pub unsafe fn launch_raw(
        &self,
        stream: sys::CUstream,
        passes: &[(&OperandPrep, u64, u64)],
        order: LaunchOrder,
    ) -> Result<(), DeviceError> {
        let pass = |&(p, src, dst): &(&OperandPrep, u64, u64)| PrepPass {
            src,
            dst,
            rows: p.rows as i32,
            cols: p.k as i32,
            ld_in: p.ld_in as i64,
            ld_out: p.ld_out as i64,
            transpose: p.transpose as i32,
        };
        let (mut p0, mut p1) = match passes {
            [one] => (pass(one), pass(one)),
            [first, second] => (pass(first), pass(second)),
            _ => {
                return Err(DeviceError::Other(format!(
                    "operand preparation runs 1 or 2 passes per launch, not {}",
                    passes.len()
                )));
            }
        };
        let grid_x = passes
            .iter()
            .map(|(p, ..)| p.ld_out.div_ceil(TILE_COLS))
            .max();
        let grid_y = passes
            .iter()
            .map(|(p, ..)| p.rows.div_ceil(TILE_ROWS))
            .max();
        let (grid_x, grid_y) = (grid_x.unwrap_or(1), grid_y.unwrap_or(1));
        if grid_y > 65535 {
            return Err(DeviceError::Other(format!(
                "operand preparation of {} rows: at most {} rows",
                grid_y * TILE_ROWS,
                65535 * TILE_ROWS
            )));
        }
        let mut args: [*mut c_void; 2] = [
            &mut p0 as *mut PrepPass as *mut c_void,
            &mut p1 as *mut PrepPass as *mut c_void,
        ];
        // Safety: `args` match `forge_operand_prep(ForgePrepPass, ForgePrepPass)`; the caller
        // vouches for the rest.
        let grid = (grid_x, grid_y, passes.len() as u32);
        unsafe { launch_raw(&self.func, grid, (32, 8, 1), 0, stream, &mut args, order) }?;
        Ok(())
    }
}

/// One pass as the kernel takes it (`ForgePrepPass` in kernels/operand_prep.cu, 48 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
struct PrepPass {
    src: u64,
    dst: u64,
    rows: i32,
    cols: i32,
    ld_in: i64,
    ld_out: i64,
    transpose: i32,
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

    /// Runs the passes for stored operands `a`, `b`, launched in `order` (the GEMM plan's:
    /// the passes and the GEMM they feed order themselves alike).
    ///
    /// # Safety
    /// As [`PrepKernel::launch_raw`], with `a`, `b` the stored operands.
    pub unsafe fn run_raw(
        &self,
        kernel: &PrepKernel,
        stream: sys::CUstream,
        (a, b): (u64, u64),
        order: LaunchOrder,
    ) -> Result<(), DeviceError> {
        let pa = self
            .plan
            .a
            .as_ref()
            .zip(self.a.as_ref())
            .map(|(p, w)| (p, a, w.ptr()));
        let pb = self
            .plan
            .b
            .as_ref()
            .zip(self.b.as_ref())
            .map(|(p, w)| (p, b, w.ptr()));
        // Safety (each launch): the caller's guarantees; the buffers hold the plan's
        // workspaces.
        match (pa, pb) {
            (Some(pa), Some(pb)) => unsafe { kernel.launch_raw(stream, &[pa, pb], order) },
            (Some(one), None) | (None, Some(one)) => unsafe {
                kernel.launch_raw(stream, &[one], order)
            },
            (None, None) => Ok(()),
        }
    }

    /// [`PreparedOperands::run_raw`] on a cudarc stream.
    pub fn run(
        &self,
        kernel: &PrepKernel,
        stream: &CudaStream,
        operands: (u64, u64),
        order: LaunchOrder,
    ) -> Result<(), DeviceError> {
        // Safety: a cudarc stream is a live stream of its context.
        unsafe { self.run_raw(kernel, stream.cu_stream(), operands, order) }
    }
}
