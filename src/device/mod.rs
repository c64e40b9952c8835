//! The only module tree that touches CUDA (through cudarc): context and device query,
//! NVRTC compilation and the kernel cache, kernel launches, cuBLAS, event timing.

pub mod buffers;
pub mod cache;
pub mod cublas;
pub mod fill;
pub mod kernel;
pub mod nvrtc;
pub mod prep;
pub mod simulated;
pub mod timing;

use crate::arch::{Arch, MeasuredProperties};
use cudarc::driver::{CudaContext, CudaStream, DriverError, sys};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    /// (The driver's error is printed in the message, so it is not also a `source`.)
    #[error("CUDA driver call failed: {0}")]
    Driver(DriverError),
    #[error(transparent)]
    Nvrtc(#[from] nvrtc::NvrtcError),
    #[error("cuBLAS call failed: {0}")]
    Cublas(String),
    #[error("{0}")]
    Other(String),
}

impl From<DriverError> for DeviceError {
    fn from(e: DriverError) -> Self {
        DeviceError::Driver(e)
    }
}

/// What the device reports about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: (u32, u32),
    /// The NVRTC target forge compiles for (`sm_90a` on Hopper).
    pub arch: String,
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub smem_per_block_optin: u32,
    pub smem_per_sm: u32,
    pub sm_clock_mhz: f64,
    pub memory_bandwidth_gbs: f64,
    /// The CUDA version the driver supports (`cuDriverGetVersion`), e.g. "13.0".
    pub driver_version: String,
    pub nvrtc_version: String,
    pub total_memory: u64,
}

impl DeviceInfo {
    /// The measured properties that override the architecture table.
    pub fn measured_properties(&self) -> MeasuredProperties {
        MeasuredProperties {
            sm_count: Some(self.sm_count),
            boost_clock_mhz: Some(self.sm_clock_mhz),
            smem_per_sm_bytes: Some(self.smem_per_sm),
            smem_per_block_bytes: Some(self.smem_per_block_optin),
            l2_bytes: Some(self.l2_bytes),
            dram_bandwidth_gbs: Some(self.memory_bandwidth_gbs),
        }
    }

    /// The architecture table for this device with its measured properties applied.
    pub fn arch(&self) -> Result<Arch, crate::arch::ArchError> {
        Ok(Arch::by_name(&self.arch)?.with_measured(&self.measured_properties()))
    }
}

/// Whether the CUDA driver library can be loaded (never panics).
pub fn driver_available() -> bool {
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// How many devices the driver sees (an error says why it sees none).
pub fn device_count() -> Result<usize, DeviceError> {
    if !driver_available() {
        return Err(DeviceError::NoDevice(
            "libcuda.so could not be loaded (no NVIDIA driver on this machine)".into(),
        ));
    }
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| DeviceError::NoDevice(format!("the driver reports: {e}")))
}

/// An open device: context, one stream, and its description.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
}

impl Gpu {
    /// Opens device `ordinal`, or says why there is none.
    pub fn open(ordinal: usize) -> Result<Gpu, DeviceError> {
        let count = device_count()?;
        if count <= ordinal {
            return Err(DeviceError::NoDevice(format!(
                "the driver sees {count} device(s)"
            )));
        }
        let ctx = CudaContext::new(ordinal)?;
        // forge orders its own work on one stream; cudarc's per-buffer event tracking
        // would only add overhead to every launch.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let info = query(&ctx)?;
        Ok(Gpu { ctx, stream, info })
    }
}

fn query(ctx: &Arc<CudaContext>) -> Result<DeviceInfo, DeviceError> {
    use sys::CUdevice_attribute as A;
    let attr = |a: A| ctx.attribute(a).map(|v| v as i64);
    let (major, minor) = ctx.compute_capability()?;
    let (major, minor) = (major as u32, minor as u32);
    let arch = Arch::target_name(major, minor);
    let mem_clock_khz = attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? as f64;
    let bus_bits = attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as f64;
    let mut driver = 0i32;
    // Raw: cudarc has no safe form for the driver version.
    unsafe { sys::cuDriverGetVersion(&mut driver) }.result()?;
    Ok(DeviceInfo {
        name: ctx.name()?,
        compute_capability: (major, minor),
        arch,
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        smem_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
            as u32,
        smem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as u32,
        sm_clock_mhz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64 / 1000.0,
        // Double data rate: two transfers per memory clock.
        memory_bandwidth_gbs: 2.0 * mem_clock_khz * 1e3 * bus_bits / 8.0 / 1e9,
        driver_version: format!("{}.{}", driver / 1000, (driver % 1000) / 10),
        nvrtc_version: nvrtc::version().unwrap_or_else(|e| e.to_string()),
        total_memory: ctx.total_mem()? as u64,
    })
}
