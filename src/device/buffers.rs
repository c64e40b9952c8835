//! Device buffers of f32 owned by forge: raw allocations with explicit pointers, because the
//! kernels take raw pointers and tensor maps, and timing needs no hidden synchronization.
//! Raw driver calls here: cudarc's `CudaSlice` hands out pointers only through stream-tracked
//! guards, and it has no 32-bit pattern fill (the gate's NaN poison).

use super::DeviceError;
use cudarc::driver::{CudaContext, CudaStream, result, sys};
use std::sync::Arc;

/// `len` f32 values in device memory.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Arc<CudaContext>,
}

impl DeviceBuffer {
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<DeviceBuffer, DeviceError> {
        ctx.bind_to_thread()?;
        let ptr = unsafe { result::malloc_sync(len.max(1) * 4) }?;
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn from_host(ctx: &Arc<CudaContext>, data: &[f32]) -> Result<DeviceBuffer, DeviceError> {
        let buf = DeviceBuffer::new(ctx, data.len())?;
        if !data.is_empty() {
            unsafe { result::memcpy_htod_sync(buf.ptr, data) }?;
        }
        Ok(buf)
    }

    pub fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fills every element with the same 32-bit pattern (the gate's NaN poison).
    pub fn fill_bits(&self, stream: &CudaStream, bits: u32) -> Result<(), DeviceError> {
        // Safety: a cudarc stream is a live stream of its context.
        unsafe { self.fill_bits_raw(stream.cu_stream(), bits) }
    }

    /// [`DeviceBuffer::fill_bits`] on a raw driver stream (null: the legacy default stream).
    ///
    /// # Safety
    /// `stream` must be null, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD` or a stream alive for
    /// the duration of the call in this buffer's context, and that context must be current.
    pub unsafe fn fill_bits_raw(
        &self,
        stream: sys::CUstream,
        bits: u32,
    ) -> Result<(), DeviceError> {
        unsafe { sys::cuMemsetD32Async(self.ptr, bits, self.len, stream) }.result()?;
        Ok(())
    }

    /// Copies the buffer to the host (synchronizes the stream first).
    pub fn to_host(&self, stream: &CudaStream) -> Result<Vec<f32>, DeviceError> {
        stream.synchronize()?;
        let mut out = vec![0f32; self.len];
        unsafe { result::memcpy_dtoh_sync(&mut out, self.ptr) }?;
        Ok(out)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}
