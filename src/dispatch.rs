//! Run-time dispatch for the training step: launch the kernel the profile chose for each
//! shape and operand layout. Kernels are compiled (or read from the cache) and loaded once per
//! variant; the launch plan (grid, params, tensor maps, operand-preparation workspaces) once
//! per (layout, shape, operand pointers). The hot path is a read-locked hash lookup and one
//! `cuLaunchKernelEx`, plus one preparation pass per operand the kernel cannot read in place
//! (a transposed layout, or K % 4 ≠ 0 / an unaligned base for a TMA schedule:
//! [`crate::operand_prep`]).

use crate::device::buffers::DeviceBuffer;
use crate::device::cache::KernelCache;
use crate::device::kernel::{LoadedVariant, Prepared};
use crate::device::prep::{PrepKernel, PreparedOperands};
use crate::device::{DeviceError, Gpu};
use crate::kernel_source::KernelVariant;
use crate::operand_prep::PrepPlan;
use crate::problem::Problem;
use crate::profile::{Profile, Rule, Selection};
use crate::schedule::{Dtype, LaunchOrder, Layout, Schedule};
use crate::shape::Shape;
use crate::tune::first_use::{self, TunedCache};
use cudarc::driver::{CudaStream, sys};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// The alignment C needs: the epilogues store 8- and 16-byte vectors.
pub const C_ALIGN: u64 = 16;

type PlanKey = (Layout, u32, u32, u32, u64, u64);

struct Plan {
    kernel: Arc<LoadedVariant>,
    prepared: Prepared,
    /// The chained tail's flags and partial tiles (zeroed; each launch leaves them zeroed).
    /// Launches of one plan must be ordered on one stream: they share it.
    workspace: Option<DeviceBuffer>,
    /// The operands' preparation passes and their workspaces (same ordering rule), with the
    /// kernel that runs them; None when the GEMM reads both operands in place.
    operands: Option<(Arc<PrepKernel>, PreparedOperands)>,
    /// The stored operands the passes read.
    a: u64,
    b: u64,
}

impl Plan {
    fn workspace_ptr(&self) -> u64 {
        self.workspace.as_ref().map_or(0, DeviceBuffer::ptr)
    }

    /// # Safety
    /// As [`Dispatcher::gemm_layout_raw`], with the context current.
    unsafe fn launch(&self, stream: sys::CUstream, c: u64) -> Result<(), DeviceError> {
        if let Some((kernel, operands)) = &self.operands {
            // Safety: the caller's guarantees; the plan's workspaces are alive.
            unsafe { operands.run_raw(kernel, stream, (self.a, self.b), self.prepared.order) }?;
        }
        // Safety: as above.
        unsafe {
            self.kernel
                .launch_raw(stream, &self.prepared, c, self.workspace_ptr())
        }
    }
}

/// Owns what it launches with (the context, the device description, the loaded kernels and
/// plans), so it can live in a handle of its own (the C ABI, the Python package). `Send` and
/// `Sync`: calls from several threads are safe; see [`Dispatcher::gemm_raw`] for streams.
pub struct Dispatcher {
    gpu: Gpu,
    profile: Profile,
    cache: KernelCache,
    dtype: Dtype,
    kernels: RwLock<HashMap<KernelVariant, Arc<LoadedVariant>>>,
    prep: Mutex<Option<Arc<PrepKernel>>>,
    plans: RwLock<HashMap<PlanKey, Plan>>,
    /// The schedule chosen per shape (the model rule costs ~20 µs; plans are per operands).
    chosen: RwLock<HashMap<Problem, (Schedule, LaunchOrder)>>,
    /// Tuning on first use ([`first_use`]): the cache file and the budget per shape; `None`
    /// when off (the default).
    first_use: Option<Mutex<(TunedCache, Duration)>>,
}

impl Dispatcher {
    /// A dispatcher for TF32 TN GEMMs on `gpu` following `profile`, which must have been tuned
    /// for the device's architecture. It keeps its own references to the device's context and
    /// stream: `gpu` may be dropped afterwards.
    pub fn new(profile: Profile, gpu: &Gpu, cache_dir: &Path) -> Result<Self, DeviceError> {
        if profile.meta.device_name == crate::device::simulated::NAME {
            return Err(DeviceError::Other(format!(
                "the profile was written on the simulated device ({}): its choices were never \
                 timed or gated on a GPU; tune on the GPU",
                crate::device::simulated::ENV
            )));
        }
        if profile.meta.arch != gpu.info.arch {
            return Err(DeviceError::Other(format!(
                "the profile was tuned for {}, the device is {}",
                profile.meta.arch, gpu.info.arch
            )));
        }
        let mut d = Dispatcher {
            gpu: Gpu {
                ctx: gpu.ctx.clone(),
                stream: gpu.stream.clone(),
                info: gpu.info.clone(),
            },
            // Selection by the cost model prices this device, as the tune did.
            profile: profile.with_device(&gpu.info.measured_properties()),
            cache: KernelCache::new(cache_dir)?,
            dtype: Dtype::Tf32,
            kernels: RwLock::new(HashMap::new()),
            prep: Mutex::new(None),
            plans: RwLock::new(HashMap::new()),
            chosen: RwLock::new(HashMap::new()),
            first_use: None,
        };
        if first_use::enabled_by_env() {
            let info = &d.gpu.info;
            let contract = d.profile.meta.numerical_contract;
            let file = std::env::var_os(first_use::FILE_ENV).map_or_else(
                || first_use::default_path(d.cache.dir(), &info.arch, &info.name, contract),
                std::path::PathBuf::from,
            );
            d.tune_on_first_use(Some(&file))?;
        }
        Ok(d)
    }

    /// Tuning on first use ([`first_use`]; also `FORGE_TUNE_ON_FIRST_USE=1`, with the file
    /// `FORGE_TUNE_CACHE` or by default next to the kernel cache): a shape the profile does not
    /// hold is tuned briefly (the model's top 4, gated bit for bit against the canonical
    /// schedule, `FORGE_TUNE_BUDGET_MS` per shape) the first time it is seen, and the choice
    /// is appended to `file`, which later dispatchers load. `None`: off (the profile's rule
    /// alone), the default.
    pub fn tune_on_first_use(&mut self, file: Option<&Path>) -> Result<(), DeviceError> {
        // Plans built before carry the earlier choice: they go too (freeing their workspaces
        // waits for the work queued on them).
        self.chosen.write().expect("lock").clear();
        self.plans.write().expect("lock").clear();
        self.first_use = match file {
            Some(path) => {
                let info = &self.gpu.info;
                let contract = self.profile.meta.numerical_contract;
                let cache = TunedCache::open(path, &info.arch, &info.name, contract)
                    .map_err(|e| DeviceError::Other(format!("{e:#}")))?;
                Some(Mutex::new((cache, first_use::budget_from_env())))
            }
            None => None,
        };
        Ok(())
    }

    /// The schedule tuning on first use chose for a shape (this process or an earlier one),
    /// if any.
    pub fn tuned_on_first_use(&self, shape: &Shape) -> Option<crate::schedule::Schedule> {
        let problem = Problem::new(self.dtype, Layout::Tn, *shape);
        self.first_use
            .as_ref()?
            .lock()
            .expect("lock")
            .0
            .get(&problem)
    }

    /// The schedule a problem gets: the profile's exact entry; else, with tuning on first use
    /// (TN problems), the cache file's choice or a fresh brief tune (appended to the file);
    /// else the profile's rule; with the order to launch it in (the exact entry's, else serial).
    /// Remembered per problem: the model rule is not free.
    fn choose(&self, problem: &Problem) -> Result<(Schedule, LaunchOrder), DeviceError> {
        if let Some(s) = self.chosen.read().expect("lock").get(problem) {
            return Ok(*s);
        }
        let s = self.choose_uncached(problem)?;
        self.chosen.write().expect("lock").insert(*problem, s);
        Ok(s)
    }

    fn choose_uncached(&self, problem: &Problem) -> Result<(Schedule, LaunchOrder), DeviceError> {
        let sel = self.selection_for(problem);
        let Some(first_use) = &self.first_use else {
            return Ok((sel.schedule, sel.launch));
        };
        if matches!(sel.rule, Rule::Exact { .. }) || problem.layout != Layout::Tn {
            return Ok((sel.schedule, sel.launch));
        }
        let problem = *problem;
        let mut guard = first_use.lock().expect("lock");
        let (cache, budget) = &mut *guard;
        // First-use tuning times its candidates launched serially.
        if let Some(s) = cache.get(&problem) {
            return Ok((s, LaunchOrder::Serial));
        }
        let arch = self
            .gpu
            .info
            .arch()
            .map_err(|e| DeviceError::Other(e.to_string()))?;
        let contract = self.profile.meta.numerical_contract;
        let entry = first_use::tune(&self.gpu, &self.cache, contract, &arch, &problem, *budget)?;
        if let Err(e) = cache.append(entry.clone()) {
            // The choice stands for this process; only its persistence failed.
            eprintln!("forge: tune on first use: {e:#}");
        }
        Ok((entry.schedule, LaunchOrder::Serial))
    }

    /// The profile it follows.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The device it launches on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Which schedule a TN shape gets, and by which rule.
    pub fn selection(&self, shape: &Shape) -> Selection {
        self.selection_for(&Problem::new(self.dtype, Layout::Tn, *shape))
    }

    /// Which schedule a problem gets, and by which rule: the profile's choice for its layout;
    /// a layout the profile has no entry near falls back to the TN choice for the shape (the
    /// operands are transposed into TN first, so the TN schedule runs the rest).
    pub fn selection_for(&self, problem: &Problem) -> Selection {
        let chosen = self.profile.select(problem);
        if problem.layout != Layout::Tn && chosen.rule == Rule::Canonical {
            return self
                .profile
                .select(&Problem::new(problem.dtype, Layout::Tn, problem.shape));
        }
        chosen
    }

    fn prep_kernel(&self) -> Result<Arc<PrepKernel>, DeviceError> {
        let mut prep = self.prep.lock().expect("lock");
        if let Some(k) = prep.as_ref() {
            return Ok(k.clone());
        }
        let k = Arc::new(PrepKernel::load(&self.gpu, &self.cache)?);
        *prep = Some(k.clone());
        Ok(k)
    }

    fn kernel(&self, variant: KernelVariant) -> Result<Arc<LoadedVariant>, DeviceError> {
        if let Some(k) = self.kernels.read().expect("lock").get(&variant) {
            return Ok(k.clone());
        }
        let compiled =
            self.cache
                .get_or_compile(&variant.label(), &variant.source(), &self.gpu.info.arch)?;
        let loaded = Arc::new(LoadedVariant::load(&self.gpu, variant, &compiled)?);
        self.kernels
            .write()
            .expect("lock")
            .insert(variant, loaded.clone());
        Ok(loaded)
    }

    /// C (M×N) = A (M×K) · B (N×K)ᵀ, f32 row-major device pointers, on `stream`.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm(
        &self,
        stream: &CudaStream,
        m: u32,
        n: u32,
        k: u32,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<(), DeviceError> {
        self.gemm_layout(stream, Layout::Tn, m, n, k, a, b, c)
    }

    /// C (M×N) = op(A) · op(B) for operands stored as `layout` says (f32 row-major device
    /// pointers): `tn` A M×K, B N×K; `nn` A M×K, B K×N; `tt` A K×M, B N×K; `nt` A K×M,
    /// B K×N. Bit-identical to the TN product of the explicitly transposed operands.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_layout(
        &self,
        stream: &CudaStream,
        layout: Layout,
        m: u32,
        n: u32,
        k: u32,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<(), DeviceError> {
        // Safety: a cudarc stream is a live stream of its context.
        unsafe { self.gemm_layout_raw(stream.cu_stream(), layout, m, n, k, a, b, c) }
    }

    /// [`Dispatcher::gemm`] on a raw driver stream: a `CUstream` / `cudaStream_t` of another
    /// framework (PyTorch's current stream), or null for the legacy default stream.
    ///
    /// # Safety
    /// As [`Dispatcher::gemm_layout_raw`] with `layout` TN.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm_raw(
        &self,
        stream: sys::CUstream,
        m: u32,
        n: u32,
        k: u32,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<(), DeviceError> {
        // Safety: the caller's guarantees.
        unsafe { self.gemm_layout_raw(stream, Layout::Tn, m, n, k, a, b, c) }
    }

    /// [`Dispatcher::gemm_layout`] on a raw driver stream: a `CUstream` / `cudaStream_t` of
    /// another framework (PyTorch's current stream), or null for the legacy default stream.
    /// Binds the dispatcher's context (the device's primary context, which the CUDA runtime
    /// shares) to the calling thread when another one is current.
    ///
    /// The first call for a (layout, shape, A, B) compiles or loads the kernels and builds its
    /// launch plan (and the workspaces of the operands it prepares); later calls relaunch the
    /// plan. A plan's workspaces are shared by its launches: calls with the same (layout,
    /// shape, A, B) must not overlap in time on different streams.
    ///
    /// # Safety
    /// `stream` must be null, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD` or a stream of this
    /// device's primary context that stays alive for the call; `a`, `b` (M·K and N·K f32,
    /// 4-byte aligned, stored as `layout` says) and `c` (M×N, 16-byte aligned: checked) must
    /// be device allocations of that size in that context.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm_layout_raw(
        &self,
        stream: sys::CUstream,
        layout: Layout,
        m: u32,
        n: u32,
        k: u32,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<(), DeviceError> {
        if !c.is_multiple_of(C_ALIGN) {
            return Err(DeviceError::Other(format!(
                "GEMM {m}x{n}x{k}: C = {c:#x} must be {C_ALIGN}-byte aligned (the epilogues \
                 store vectors)"
            )));
        }
        self.gpu.ctx.bind_to_thread()?;
        let key = (layout, m, n, k, a, b);
        if let Some(plan) = self.plans.read().expect("lock").get(&key) {
            // Safety: the caller's guarantees on `stream`; the context is bound above.
            return unsafe { plan.launch(stream, c) };
        }
        let plan = self.build_plan(layout, m, n, k, a, b)?;
        // Another thread may have built the same plan meanwhile: keep the first one (its
        // workspace may be in use) and drop this one before anything ran on it.
        let mut plans = self.plans.write().expect("lock");
        let fresh = !plans.contains_key(&key);
        let plan = plans.entry(key).or_insert(plan);
        if fresh && let Some(workspace) = &plan.workspace {
            // Safety: as above.
            if let Err(e) = unsafe { workspace.fill_bits_raw(stream, 0) } {
                plans.remove(&key);
                return Err(e);
            }
        }
        // Safety: as above.
        unsafe { plan.launch(stream, c) }
    }

    fn build_plan(
        &self,
        layout: Layout,
        m: u32,
        n: u32,
        k: u32,
        a: u64,
        b: u64,
    ) -> Result<Plan, DeviceError> {
        if m == 0 || n == 0 || k == 0 {
            return Err(DeviceError::Other(format!(
                "GEMM {m}x{n}x{k}: every dimension must be at least 1"
            )));
        }
        if !a.is_multiple_of(4) || !b.is_multiple_of(4) {
            return Err(DeviceError::Other(format!(
                "GEMM {m}x{n}x{k}: operands must be f32-aligned (A {a:#x}, B {b:#x})"
            )));
        }
        let shape = Shape::new(m, n, k);
        let (schedule, launch) = self.choose(&Problem::new(self.dtype, layout, shape))?;
        if schedule.split_k > 1 {
            return Err(DeviceError::Other(format!(
                "{schedule} splits K; a bit-exact profile never chooses it"
            )));
        }
        // Kernels follow the profile's numerical contract: its schedules were gated under it.
        let rounding = self.profile.meta.numerical_contract.rounding;
        let kernel = self.kernel(KernelVariant::new(&schedule, &shape, rounding))?;
        let prep_plan = PrepPlan::new(&schedule, layout, &shape, a, b);
        let operands = if prep_plan.is_empty() {
            None
        } else {
            let ops = PreparedOperands::new(&self.gpu, prep_plan)?;
            Some((self.prep_kernel()?, ops))
        };
        let mut prepared = match &operands {
            None => kernel.prepare(&schedule, &shape, a, b)?,
            Some((_, ops)) => {
                let ((pa, pb), (lda, ldb)) = (ops.operands(a, b), ops.strides(k));
                kernel.prepare_strided(&schedule, &shape, (pa, lda), (pb, ldb))?
            }
        };
        prepared.order = launch;
        let workspace = match prepared.workspace_words {
            0 => None,
            words => Some(DeviceBuffer::new(&self.gpu.ctx, words as usize)?),
        };
        Ok(Plan {
            kernel,
            prepared,
            workspace,
            operands,
            a,
            b,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dispatcher_can_be_owned_by_another_thread() {
        fn owned<T: Send + Sync + 'static>() {}
        owned::<Dispatcher>();
    }
}
