//! Loading compiled GEMM variants and launching them (`kernels/ABI.md`).

use super::nvrtc::Compiled;
use super::{DeviceError, Gpu};
use crate::kernel_source::{GEMM_ENTRY, KernelVariant, SPLITK_REDUCE_ENTRY};
pub use crate::schedule::LaunchOrder;
use crate::schedule::{Family, Persistence, Raster, Schedule};
use crate::shape::Shape;
use cudarc::driver::{CudaFunction, CudaModule, CudaStream, sys};
use cudarc::nvrtc::Ptx;
use std::ffi::c_void;
use std::sync::Arc;

/// Run-time parameters every family takes by value (`ForgeParams` in common.cuh).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForgeParams {
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub group: i32,
    pub raster_n: i32,
    pub splits: i32,
    /// A chained tail's K pieces per tail tile, or a retiled tail's tile-rows cut into
    /// narrow tiles (a kernel is at most one of the two); else unused.
    pub tail: i32,
    /// wgmma: rows of A's TMA box where shorter than the tile ([`short_boxes`]); 0: BM.
    pub a_rows: i32,
    /// wgmma: rows of B's TMA box where shorter than the tile; 0: BN.
    pub b_rows: i32,
}

/// The launch's short TMA boxes ([`Schedule::short_tma_boxes`]), or none where
/// `FORGE_FULL_TMA_BOX` is set in the environment (the full, zero-filled boxes, for A/B
/// timings in one binary).
pub fn short_boxes(schedule: &Schedule, shape: &Shape) -> (Option<u32>, Option<u32>) {
    static FULL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *FULL.get_or_init(|| std::env::var_os("FORGE_FULL_TMA_BOX").is_some()) {
        (None, None)
    } else {
        schedule.short_tma_boxes(shape)
    }
}

/// A TMA descriptor (`CUtensorMap`, 128 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct TensorMap(pub [u64; 16]);

/// Everything a launch needs that depends only on (schedule, shape, operand pointers):
/// computed once, reused by the dispatcher.
#[derive(Clone, Copy)]
pub struct Prepared {
    pub params: ForgeParams,
    pub grid: u32,
    pub maps: Option<(TensorMap, TensorMap)>,
    /// A retiled tail's second B map (box {BK, tail_bn}), passed after the params.
    pub tail_map: Option<TensorMap>,
    pub a: u64,
    pub b: u64,
    /// How the launch orders itself after the stream's previous kernel: serial unless the
    /// caller says otherwise (a profile entry records the order the tuner measured faster).
    pub order: LaunchOrder,
    /// f32 words of workspace the launch needs (`Schedule::workspace_words`).
    pub workspace_words: u64,
}

/// Threads per block of the split-K reduction.
const REDUCE_THREADS: u32 = 256;

/// One compiled variant loaded on the device.
pub struct LoadedVariant {
    pub variant: KernelVariant,
    _module: Arc<CudaModule>,
    gemm: CudaFunction,
    reduce: CudaFunction,
    threads: u32,
    smem: u32,
    /// CTAs resident on the whole device at once (occupancy × SMs).
    pub resident_ctas: u64,
    sm_count: u32,
    /// The tensor maps round A and B to TF32 ([`KernelVariant::tma_rounds`]).
    tma_rounds: bool,
}

impl LoadedVariant {
    pub fn load(
        gpu: &Gpu,
        variant: KernelVariant,
        compiled: &Compiled,
    ) -> Result<LoadedVariant, DeviceError> {
        let module = gpu
            .ctx
            .load_module(Ptx::from_binary(compiled.cubin.clone()))?;
        let gemm = module.load_function(GEMM_ENTRY)?;
        let reduce = module.load_function(SPLITK_REDUCE_ENTRY)?;
        // Any schedule of the variant gives the same threads and shared memory.
        let probe = variant.probe();
        let threads = probe.threads();
        let smem = probe.smem_bytes();
        gemm.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem as i32,
        )?;
        let per_sm =
            gemm.occupancy_max_active_blocks_per_multiprocessor(threads, smem as usize, None)?;
        if per_sm < 1 {
            return Err(DeviceError::Other(format!(
                "{}: no CTA fits on an SM ({threads} threads, {smem} B shared memory)",
                variant.label()
            )));
        }
        Ok(LoadedVariant {
            variant,
            _module: module,
            gemm,
            reduce,
            threads,
            smem,
            resident_ctas: per_sm as u64 * gpu.info.sm_count as u64,
            sm_count: gpu.info.sm_count,
            tma_rounds: variant.tma_rounds(),
        })
    }

    /// Computes grid, params and (for TMA families) the tensor maps, for A and B of row
    /// stride K.
    pub fn prepare(
        &self,
        schedule: &Schedule,
        shape: &Shape,
        a: u64,
        b: u64,
    ) -> Result<Prepared, DeviceError> {
        self.prepare_strided(schedule, shape, (a, shape.k), (b, shape.k))
    }

    /// [`LoadedVariant::prepare`] for operands (pointer, row stride in floats) whose row
    /// stride may exceed K (a padded workspace, `crate::operand_prep`): only the wgmma family's
    /// tensor maps take a stride; the mma_sync family reads rows of stride K.
    pub fn prepare_strided(
        &self,
        schedule: &Schedule,
        shape: &Shape,
        (a, lda): (u64, u32),
        (b, ldb): (u64, u32),
    ) -> Result<Prepared, DeviceError> {
        if self.variant.family == Family::MmaSync && (lda != shape.k || ldb != shape.k) {
            return Err(DeviceError::Other(format!(
                "{}: the mma_sync family reads rows of stride K = {}, not {lda}/{ldb}",
                self.variant.label(),
                shape.k
            )));
        }
        let grid = schedule.grid_ctas(shape, self.resident_ctas);
        let grid = u32::try_from(grid)
            .map_err(|_| DeviceError::Other(format!("grid of {grid} CTAs is too large")))?;
        let mut params = ForgeParams {
            m: shape.m as i32,
            n: shape.n as i32,
            k: shape.k as i32,
            group: schedule.group as i32,
            raster_n: (schedule.raster == Raster::Row) as i32,
            splits: schedule.split_k as i32,
            tail: match schedule.persistence {
                Persistence::RetiledTail => schedule.retiled_tail_rows(shape, grid as u64),
                _ => schedule.tail_pieces(shape, grid as u64),
            } as i32,
            a_rows: 0,
            b_rows: 0,
        };
        let maps = match self.variant.family {
            Family::MmaSync => None,
            Family::Wgmma => {
                let t = schedule.tile;
                let (a_box, b_box) = short_boxes(schedule, shape);
                params.a_rows = a_box.unwrap_or(0) as i32;
                params.b_rows = b_box.unwrap_or(0) as i32;
                Some((
                    encode_tensor_map(
                        a,
                        shape.k,
                        lda,
                        shape.m,
                        t.bk,
                        a_box.unwrap_or(t.bm),
                        self.tma_rounds,
                    )?,
                    encode_tensor_map(
                        b,
                        shape.k,
                        ldb,
                        shape.n,
                        t.bk,
                        b_box.unwrap_or(t.bn / schedule.cluster),
                        self.tma_rounds,
                    )?,
                ))
            }
        };
        let tail_map = if schedule.persistence == Persistence::RetiledTail {
            let t = schedule.tile;
            Some(encode_tensor_map(
                b,
                shape.k,
                ldb,
                shape.n,
                t.bk,
                schedule.tail_bn(),
                self.tma_rounds,
            )?)
        } else {
            None
        };
        Ok(Prepared {
            params,
            grid,
            maps,
            tail_map,
            a,
            b,
            order: LaunchOrder::Serial,
            workspace_words: schedule.workspace_words(shape, self.resident_ctas),
        })
    }

    /// Launches the GEMM (and the split-K reduction when splits > 1) on `stream`.
    pub fn launch(
        &self,
        stream: &CudaStream,
        p: &Prepared,
        c: u64,
        workspace: u64,
    ) -> Result<(), DeviceError> {
        // Safety: a cudarc stream is a live stream of its context.
        unsafe { self.launch_raw(stream.cu_stream(), p, c, workspace) }
    }

    /// [`LoadedVariant::launch`] on a raw driver stream (a `CUstream` / `cudaStream_t` from
    /// another framework, or null for the legacy default stream).
    ///
    /// # Safety
    /// `stream` must be null, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD` or a stream that is
    /// alive for the duration of the call and belongs to the context this variant was loaded
    /// in, and that context must be current on the calling thread.
    pub unsafe fn launch_raw(
        &self,
        stream: sys::CUstream,
        p: &Prepared,
        c: u64,
        workspace: u64,
    ) -> Result<(), DeviceError> {
        let mut params = p.params;
        let mut c = c;
        let mut ws = workspace;
        let (mut a, mut b) = (p.a, p.b);
        let (mut map_a, mut map_b) = p.maps.unwrap_or((TensorMap([0; 16]), TensorMap([0; 16])));
        let (op_a, op_b): (*mut c_void, *mut c_void) = match self.variant.family {
            Family::MmaSync => (
                &mut a as *mut u64 as *mut c_void,
                &mut b as *mut u64 as *mut c_void,
            ),
            Family::Wgmma => (
                &mut map_a as *mut TensorMap as *mut c_void,
                &mut map_b as *mut TensorMap as *mut c_void,
            ),
        };
        let mut map_b2 = p.tail_map.unwrap_or(TensorMap([0; 16]));
        let mut args: [*mut c_void; 6] = [
            op_a,
            op_b,
            &mut c as *mut u64 as *mut c_void,
            &mut ws as *mut u64 as *mut c_void,
            &mut params as *mut ForgeParams as *mut c_void,
            &mut map_b2 as *mut TensorMap as *mut c_void,
        ];
        // The tail map is a parameter of retiled-tail kernels only.
        let n_args = if p.tail_map.is_some() { 6 } else { 5 };
        // Clustered kernels declare `__cluster_dims__` at compile time (a launch attribute
        // would conflict with it); the grid is a whole number of clusters.
        // Safety: `args` match `forge_gemm` (kernels/ABI.md); the caller vouches for `stream`.
        unsafe {
            launch_1d(
                &self.gemm,
                p.grid,
                self.threads,
                self.smem,
                stream,
                &mut args[..n_args],
                p.order,
            )
        }?;
        if p.params.splits > 1 {
            // Safety: the caller's guarantees on `stream` carry over.
            unsafe { self.launch_reduce(stream, workspace, c, p) }?;
        }
        Ok(())
    }

    /// # Safety
    /// As [`LoadedVariant::launch_raw`].
    unsafe fn launch_reduce(
        &self,
        stream: sys::CUstream,
        workspace: u64,
        c: u64,
        p: &Prepared,
    ) -> Result<(), DeviceError> {
        let (mut mn, mut splits) = (p.params.m * p.params.n, p.params.splits);
        let blocks = ((mn as u32).div_ceil(REDUCE_THREADS)).min(self.sm_count * 8);
        let (mut ws, mut c) = (workspace, c);
        // `forge_splitk_reduce(const float* ws, float* C, int MN, int splits)`; the workspace
        // holds `splits` partial products of M×N.
        let mut args: [*mut c_void; 4] = [
            &mut ws as *mut u64 as *mut c_void,
            &mut c as *mut u64 as *mut c_void,
            &mut mn as *mut i32 as *mut c_void,
            &mut splits as *mut i32 as *mut c_void,
        ];
        // Safety: `args` match the reduction's signature; the caller vouches for `stream`.
        unsafe {
            launch_1d(
                &self.reduce,
                blocks,
                REDUCE_THREADS,
                0,
                stream,
                &mut args,
                p.order,
            )
        }?;
        Ok(())
    }
}

/// Launches one of forge's GEMM kernels (or the split-K reduction) on a 1-D grid:
/// [`launch_raw`] with one dimension.
///
/// # Safety
/// As [`launch_raw`].
unsafe fn launch_1d(
    func: &CudaFunction,
    grid: u32,
    block: u32,
    smem: u32,
    stream: sys::CUstream,
    args: &mut [*mut c_void],
    order: LaunchOrder,
) -> Result<(), DeviceError> {
    // Safety: the caller's guarantees.
    unsafe { launch_raw(func, (grid, 1, 1), (block, 1, 1), smem, stream, args, order) }
}

/// Whether programmatic launches are allowed at all: `FORGE_PDL=0` in the environment turns
/// every [`LaunchOrder::Programmatic`] launch into a serial one (read once).
pub fn programmatic_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var("FORGE_PDL").map_or(true, |v| v.trim() != "0"))
}

/// The order a launch that asks for `order` gets: serial when `FORGE_PDL=0`.
pub fn effective_order(order: LaunchOrder) -> LaunchOrder {
    if programmatic_allowed() {
        order
    } else {
        LaunchOrder::Serial
    }
}

/// Whether `stream` is being captured into a CUDA graph. Programmatic launches are not used
/// there: their graph edges have not been run on a GPU by forge's tests.
///
/// # Safety
/// `stream` must be null or a live stream of the current context.
unsafe fn capturing(stream: sys::CUstream) -> bool {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // Safety: the caller's guarantees; `status` is a valid out-pointer.
    let ok = unsafe { sys::cuStreamIsCapturing(stream, &mut status) }.result();
    ok.is_err() || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// Launches `func` on a `grid` of `block`-shaped blocks with `smem` bytes of dynamic shared
/// memory, ordered after the stream's previous work as `order` says: programmatic only for
/// kernels that execute `griddepcontrol.wait` before any global access (forge's GEMMs, split-K
/// reduction and operand preparation; `kernels/ABI.md` "Launch order"), never while `stream`
/// is being captured into a graph, and not with `FORGE_PDL=0`. Raw (`cuLaunchKernelEx`): the
/// hot path of every dispatched GEMM, where cudarc's launch builder would allocate its
/// argument list per launch, and a tensor map is a 128-byte by-value parameter; the operand
/// preparation and the step's kernels (launched inside a captured graph) use it too.
///
/// # Safety
/// `args` must point at values matching `func`'s parameters, alive for the call (and every
/// pointer among them a device allocation of the size the kernel indexes), and `stream` must
/// be a live stream (or null) of `func`'s context.
pub unsafe fn launch_raw(
    func: &CudaFunction,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    smem: u32,
    stream: sys::CUstream,
    args: &mut [*mut c_void],
    order: LaunchOrder,
) -> Result<(), DeviceError> {
    // Safety (of the zeroed value): a plain C union of integers and arrays.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    let mut programmatic = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let with_attribute = effective_order(order) == LaunchOrder::Programmatic
        // Safety: the caller's guarantees on `stream`.
        && !unsafe { capturing(stream) };
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: block.0,
        blockDimY: block.1,
        blockDimZ: block.2,
        sharedMemBytes: smem,
        hStream: stream,
        attrs: if with_attribute {
            &mut programmatic
        } else {
            std::ptr::null_mut()
        },
        numAttrs: with_attribute as u32,
    };
    // Safety: the caller's guarantees.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            func.cu_function(),
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    Ok(())
}

/// Encodes a 2-D f32 row-major tensor (`rows` × `cols`, K-major, row stride `ld` ≥ `cols`
/// floats, a multiple of 4) for TMA with a box of `box_cols` × `box_rows` and 128-byte swizzle
/// (`kernels/ABI.md`). With `round_to_tf32` the map's element type is TFLOAT32: the copy
/// engine rounds each f32 to TF32 as it loads.
pub fn encode_tensor_map(
    base: u64,
    cols: u32,
    ld: u32,
    rows: u32,
    box_cols: u32,
    box_rows: u32,
    round_to_tf32: bool,
) -> Result<TensorMap, DeviceError> {
    use sys::CUtensorMapDataType as T;
    let element = if round_to_tf32 {
        T::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
    } else {
        T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    };
    let mut map = TensorMap([0; 16]);
    let dims: [u64; 2] = [cols as u64, rows as u64];
    let strides: [u64; 1] = [ld as u64 * 4];
    let boxes: [u32; 2] = [box_cols, box_rows];
    let elem: [u32; 2] = [1, 1];
    // Raw: cudarc has no safe form for tensor maps.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map as *mut TensorMap as *mut sys::CUtensorMap,
            element,
            2,
            base as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .map_err(|e| {
        DeviceError::Other(format!(
            "cuTensorMapEncodeTiled({cols}x{rows} stride {ld}, box {box_cols}x{box_rows}): {e}"
        ))
    })?;
    Ok(map)
}
