//! Run-time dispatch for the training step: launch the kernel the profile chose for each
//! shape. Kernels are compiled (or read from the cache) and loaded once per variant; the
//! launch plan (grid, params, tensor maps) once per (shape, operand pointers). The hot path is
//! a read-locked hash lookup and one `cuLaunchKernelEx`.

use crate::device::buffers::DeviceBuffer;
use crate::device::cache::KernelCache;
use crate::device::kernel::{LoadedVariant, Prepared};
use crate::device::{DeviceError, Gpu};
use crate::kernel_source::KernelVariant;
use crate::profile::{Profile, Selection};
use crate::schedule::{Dtype, Layout};
use crate::shape::Shape;
use cudarc::driver::CudaStream;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

type PlanKey = (u32, u32, u32, u64, u64);

struct Plan {
    kernel: Arc<LoadedVariant>,
    prepared: Prepared,
    /// The chained tail's flags and partial tiles (zeroed; each launch leaves them zeroed).
    /// Launches of one plan must be ordered on one stream: they share it.
    workspace: Option<DeviceBuffer>,
}

impl Plan {
    fn workspace_ptr(&self) -> u64 {
        self.workspace.as_ref().map_or(0, DeviceBuffer::ptr)
    }
}

pub struct Dispatcher<'g> {
    gpu: &'g Gpu,
    profile: Profile,
    cache: KernelCache,
    dtype: Dtype,
    kernels: RwLock<HashMap<KernelVariant, Arc<LoadedVariant>>>,
    plans: RwLock<HashMap<PlanKey, Plan>>,
}

impl<'g> Dispatcher<'g> {
    /// A dispatcher for TF32 TN GEMMs on `gpu` following `profile`, which must have been tuned
    /// for the device's architecture.
    pub fn new(profile: Profile, gpu: &'g Gpu, cache_dir: &Path) -> Result<Self, DeviceError> {
        if profile.meta.arch != gpu.info.arch {
            return Err(DeviceError::Other(format!(
                "the profile was tuned for {}, the device is {}",
                profile.meta.arch, gpu.info.arch
            )));
        }
        Ok(Dispatcher {
            gpu,
            profile,
            cache: KernelCache::new(cache_dir)?,
            dtype: Dtype::Tf32,
            kernels: RwLock::new(HashMap::new()),
            plans: RwLock::new(HashMap::new()),
        })
    }

    /// Which schedule a shape gets, and by which rule.
    pub fn selection(&self, shape: &Shape) -> Selection {
        self.profile.select(self.dtype, Layout::Tn, shape)
    }

    fn kernel(&self, variant: KernelVariant) -> Result<Arc<LoadedVariant>, DeviceError> {
        if let Some(k) = self.kernels.read().expect("lock").get(&variant) {
            return Ok(k.clone());
        }
        let (compiled, _) =
            self.cache
                .get_or_compile(&variant.label(), &variant.source(), &self.gpu.info.arch)?;
        let loaded = Arc::new(LoadedVariant::load(self.gpu, variant, &compiled)?);
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
        let key = (m, n, k, a, b);
        if let Some(plan) = self.plans.read().expect("lock").get(&key) {
            return plan
                .kernel
                .launch(stream, &plan.prepared, c, plan.workspace_ptr());
        }
        let shape = Shape::new(m, n, k);
        let schedule = self.selection(&shape).schedule;
        if schedule.split_k > 1 {
            return Err(DeviceError::Other(format!(
                "{schedule} splits K; a bit-exact profile never chooses it"
            )));
        }
        let kernel = self.kernel(KernelVariant::new(
            &schedule,
            &shape,
            crate::contract::Rounding::NearestEven,
        ))?;
        let prepared = kernel.prepare(&schedule, &shape, a, b)?;
        let workspace = match prepared.workspace_words {
            0 => None,
            words => {
                let buffer = DeviceBuffer::new(&self.gpu.ctx, words as usize)?;
                buffer.fill_bits(stream, 0)?;
                Some(buffer)
            }
        };
        let plan = Plan {
            kernel,
            prepared,
            workspace,
        };
        plan.kernel
            .launch(stream, &plan.prepared, c, plan.workspace_ptr())?;
        self.plans.write().expect("lock").insert(key, plan);
        Ok(())
    }
}
