//! forge's utility kernels (`kernels/util.cu`): seeded random fill of input buffers on the
//! device, so inputs of any size cost no host work and every run draws the same values, and
//! the count of differing bit patterns behind the gate on the device.

use super::buffers::DeviceBuffer;
use super::cache::KernelCache;
use super::{DeviceError, Gpu};
use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// The loaded utility module.
pub struct UtilKernels {
    _module: Arc<CudaModule>,
    fill: CudaFunction,
    count_differing: CudaFunction,
}

impl UtilKernels {
    pub fn load(gpu: &Gpu, cache: &KernelCache) -> Result<UtilKernels, DeviceError> {
        let compiled = cache.get_or_compile(
            "forge_util",
            include_str!("../../kernels/util.cu"),
            &gpu.info.arch,
        )?;
        let module = gpu
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin))?;
        let fill = module.load_function("forge_fill_random")?;
        let count_differing = module.load_function("forge_count_differing")?;
        Ok(UtilKernels {
            _module: module,
            fill,
            count_differing,
        })
    }

    /// Fills `buf` with uniform [-1, 1) values drawn from (seed, set, tensor): the same
    /// numbers the FP64 reference ([`crate::reference`]) regenerates on the host.
    pub fn fill_random(
        &self,
        gpu: &Gpu,
        buf: &DeviceBuffer,
        seed: u64,
        set: u32,
        tensor: u64,
    ) -> Result<(), DeviceError> {
        let (out, n) = (buf.ptr(), buf.len() as u64);
        let blocks = n.div_ceil(256).min(gpu.info.sm_count as u64 * 16) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = gpu.stream.launch_builder(&self.fill);
        launch.arg(&out).arg(&n).arg(&seed).arg(&set).arg(&tensor);
        // Safety: the arguments match `forge_fill_random(float*, u64, u64, u32, u64)` and
        // `out` holds `n` f32.
        unsafe { launch.launch(cfg) }?;
        Ok(())
    }

    /// How many elements of `a` and `b` (of equal length) differ in their bit pattern: counted
    /// on the device into `count` (a scratch buffer of at least two words), so only eight
    /// bytes cross to the host. Synchronizes the stream.
    pub fn count_differing(
        &self,
        gpu: &Gpu,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
        count: &DeviceBuffer,
    ) -> Result<u64, DeviceError> {
        assert_eq!(a.len(), b.len(), "outputs of different sizes");
        assert!(count.len() >= 2, "the count needs two words");
        count.fill_bits(&gpu.stream, 0)?;
        let (pa, pb, pc, n) = (a.ptr(), b.ptr(), count.ptr(), a.len() as u64);
        let blocks = n.div_ceil(256).clamp(1, gpu.info.sm_count as u64 * 16) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = gpu.stream.launch_builder(&self.count_differing);
        launch.arg(&pa).arg(&pb).arg(&n).arg(&pc);
        // Safety: the arguments match `forge_count_differing(const u32*, const u32*, u64,
        // u64*)`; `a` and `b` hold `n` words and `count` at least two (one u64).
        unsafe { launch.launch(cfg) }?;
        let words = count.to_host(&gpu.stream)?;
        Ok(words[0].to_bits() as u64 | (words[1].to_bits() as u64) << 32)
    }
}
