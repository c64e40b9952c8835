//! The training step on the device: buffers allocated once, seeded initialisation, one step
//! as a fixed sequence of launches on one stream (micro-batches in order), and the whole step
//! captured once into a CUDA graph that later steps replay: the timed loop neither allocates
//! nor compiles.

use crate::device::buffers::DeviceBuffer;
use crate::device::fill::UtilKernels;
use crate::device::{DeviceError, Gpu};
use crate::schedule::Layout;
use crate::step::gemm::StepGemm;
use crate::step::kernels::StepKernels;
use crate::step::model::{Param, ParamLayout, StepConfig};
use crate::step::snapshot::Snapshot;
use cudarc::driver::{CudaGraph, CudaStream, sys};
use std::sync::Arc;

/// Hash-stream identifiers of the seeded tensors (`UtilKernels::fill_random`'s `tensor`).
const SEED_INPUT: u64 = 11;
const SEED_TARGET: u64 = 12;
const SEED_PARAMS: u64 = 13;

/// `StepState` in kernels/step.cu: 24 bytes.
const STATE_WORDS: usize = 6;

/// Per-row buffers of one step (rows = batch × seq).
struct Activations {
    x: DeviceBuffer,
    target: DeviceBuffer,
    z: DeviceBuffer,
    xhat: DeviceBuffer,
    g: DeviceBuffer,
    rstd: DeviceBuffer,
    y: DeviceBuffer,
    dy: DeviceBuffer,
    row_sq: DeviceBuffer,
    dg: DeviceBuffer,
    da: DeviceBuffer,
    dz: DeviceBuffer,
}

/// A model, its optimizer state and its data on one device.
pub struct Trainer<'a> {
    cfg: StepConfig,
    layout: ParamLayout,
    gpu: &'a Gpu,
    stream: Arc<CudaStream>,
    kernels: &'a StepKernels,
    gemm: StepGemm<'a>,
    act: Activations,
    params: DeviceBuffer,
    grads: DeviceBuffer,
    m: DeviceBuffer,
    v: DeviceBuffer,
    partial: DeviceBuffer,
    loss_sum: DeviceBuffer,
    history: DeviceBuffer,
    state: DeviceBuffer,
    /// A micro-batch's weight gradient when the GEMM cannot accumulate (TF32).
    dw_scratch: Option<DeviceBuffer>,
    graph: Option<CudaGraph>,
}

impl<'a> Trainer<'a> {
    /// Allocates everything for `cfg` (validated) and initialises it from `cfg.seed`. Keeps
    /// the loss of the first `history_len` steps.
    pub fn new(
        gpu: &'a Gpu,
        kernels: &'a StepKernels,
        util: &UtilKernels,
        gemm: StepGemm<'a>,
        cfg: &StepConfig,
        history_len: usize,
    ) -> Result<Trainer<'a>, DeviceError> {
        cfg.validate()
            .map_err(|e| DeviceError::Other(e.to_string()))?;
        let ctx = &gpu.ctx;
        let (rows, d, h) = (cfg.rows(), cfg.dim, cfg.hidden);
        let buf = |len: usize| DeviceBuffer::new(ctx, len);
        let act = Activations {
            x: buf(rows * d)?,
            target: buf(rows * d)?,
            z: buf(rows * h)?,
            xhat: buf(rows * h)?,
            g: buf(rows * h)?,
            rstd: buf(rows * cfg.groups)?,
            y: buf(rows * d)?,
            dy: buf(rows * d)?,
            row_sq: buf(rows)?,
            dg: buf(rows * h)?,
            da: buf(rows * h)?,
            dz: buf(rows * h)?,
        };
        let layout = cfg.params();
        let dw_scratch = match (cfg.micro_batches > 1, gemm.accumulates()) {
            (true, false) => Some(buf(d * h)?),
            _ => None,
        };
        let trainer = Trainer {
            cfg: cfg.clone(),
            gpu,
            stream: ctx.new_stream()?,
            kernels,
            gemm,
            act,
            params: buf(layout.total)?,
            grads: buf(layout.total)?,
            m: buf(layout.total)?,
            v: buf(layout.total)?,
            partial: buf(cfg.chunks() * d.max(h))?,
            loss_sum: buf(1)?,
            history: buf(history_len)?,
            state: buf(STATE_WORDS)?,
            dw_scratch,
            graph: None,
            layout,
        };
        trainer.init(util)?;
        Ok(trainer)
    }

    pub fn config(&self) -> &StepConfig {
        &self.cfg
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Seeded data and parameters (Linear: uniform ±1/√fan_in for weight and bias, as
    /// torch.nn.Linear; GroupNorm: γ = 1, β = 0), zero moments and gradients, step 0.
    fn init(&self, util: &UtilKernels) -> Result<(), DeviceError> {
        let (seed, d, h) = (self.cfg.seed, self.cfg.dim, self.cfg.hidden);
        let uniform = DeviceBuffer::new(&self.gpu.ctx, self.layout.total)?;
        util.fill_random(self.gpu, &self.act.x, seed, 0, SEED_INPUT)?;
        util.fill_random(self.gpu, &self.act.target, seed, 0, SEED_TARGET)?;
        util.fill_random(self.gpu, &uniform, seed, 0, SEED_PARAMS)?;
        // The fills ran on the device's default stream; the step's stream does not wait for it.
        self.gpu.stream.synchronize()?;
        for b in [
            &self.params,
            &self.grads,
            &self.m,
            &self.v,
            &self.history,
            &self.state,
        ] {
            b.fill_bits(&self.stream, 0)?;
        }
        let s = self.stream.cu_stream();
        let (in1, in2) = (1.0 / (d as f32).sqrt(), 1.0 / (h as f32).sqrt());
        for (p, scale, shift) in [
            (Param::W1, in1, 0.0),
            (Param::B1, in1, 0.0),
            (Param::Gamma, 0.0, 1.0),
            (Param::Beta, 0.0, 0.0),
            (Param::W2, in2, 0.0),
            (Param::B2, in2, 0.0),
        ] {
            let (at, len) = self.layout.range(p);
            let off = 4 * at as u64;
            // Safety: both ranges lie inside buffers of `layout.total` words.
            unsafe {
                self.kernels.affine(
                    s,
                    (self.params.ptr() + off, uniform.ptr() + off),
                    len,
                    scale,
                    shift,
                )
            }?;
        }
        self.stream.synchronize()?;
        Ok(())
    }

    fn at(buf: &DeviceBuffer, layout: &ParamLayout, p: Param) -> u64 {
        buf.ptr() + 4 * layout.range(p).0 as u64
    }

    /// Enqueues one step: forward and backward per micro-batch (gradients summed in
    /// micro-batch order), the optimizer's counters, AdamW.
    fn enqueue(&self) -> Result<(), DeviceError> {
        let s = self.stream.cu_stream();
        let c = &self.cfg;
        let (d, h, groups, mr) = (c.dim, c.hidden, c.groups, c.micro_rows());
        let k = self.kernels;
        let a = &self.act;
        let l = &self.layout;
        let p = |q| Self::at(&self.params, l, q);
        let gr = |q| Self::at(&self.grads, l, q);
        let count = (c.rows() * d) as f64;
        let scale = (2.0 / count) as f32;
        let partial = self.partial.ptr();
        for mb in 0..c.micro_batches {
            let r0 = (mb * mr) as u64;
            let row = |b: &DeviceBuffer, width: usize| b.ptr() + 4 * r0 * width as u64;
            let (x, t) = (row(&a.x, d), row(&a.target, d));
            let (z, xhat, g) = (row(&a.z, h), row(&a.xhat, h), row(&a.g, h));
            let rstd = row(&a.rstd, groups);
            let (y, dy, row_sq) = (row(&a.y, d), row(&a.dy, d), row(&a.row_sq, 1));
            let (dg, da, dz) = (row(&a.dg, h), row(&a.da, h), row(&a.dz, h));
            let more = mb > 0;
            // Safety: every pointer is a buffer of this trainer, offset by whole rows of a
            // micro-batch inside it; all work is ordered on `s`, a stream of this context.
            unsafe {
                self.gemm
                    .run(k, s, Layout::Tn, (mr, h, d), (x, p(Param::W1), z), false)?;
                k.gn_forward(
                    s,
                    z,
                    p(Param::B1),
                    p(Param::Gamma),
                    p(Param::Beta),
                    xhat,
                    g,
                    rstd,
                    (mr, h, groups),
                    c.gn_eps,
                )?;
                self.gemm
                    .run(k, s, Layout::Tn, (mr, d, h), (g, p(Param::W2), y), false)?;
                k.mse_forward(s, y, p(Param::B2), t, dy, row_sq, (mr, d), scale)?;
                k.column_sum(s, row_sq, 0, partial, self.loss_sum.ptr(), (mr, 1), more)?;
                k.column_sum(s, dy, 0, partial, gr(Param::B2), (mr, d), more)?;
                self.weight_grad(s, (d, h, mr), (dy, g), gr(Param::W2), more)?;
                self.gemm
                    .run(k, s, Layout::Nn, (mr, h, d), (dy, p(Param::W2), dg), false)?;
                k.gn_backward(
                    s,
                    dg,
                    xhat,
                    p(Param::Gamma),
                    p(Param::Beta),
                    rstd,
                    da,
                    dz,
                    (mr, h, groups),
                )?;
                k.column_sum(s, da, 0, partial, gr(Param::Beta), (mr, h), more)?;
                k.column_sum(s, da, xhat, partial, gr(Param::Gamma), (mr, h), more)?;
                k.column_sum(s, dz, 0, partial, gr(Param::B1), (mr, h), more)?;
                self.weight_grad(s, (h, d, mr), (dz, x), gr(Param::W1), more)?;
            }
        }
        let opt = &c.adamw;
        // Safety: as above; `state` holds STATE_WORDS words.
        unsafe {
            k.advance(
                s,
                self.state.ptr(),
                self.loss_sum.ptr(),
                self.history.ptr(),
                self.history.len(),
                (opt.beta1, opt.beta2),
                (1.0 / count) as f32,
            )?;
            k.adamw(
                s,
                (
                    self.params.ptr(),
                    self.grads.ptr(),
                    self.m.ptr(),
                    self.v.ptr(),
                ),
                l.total,
                self.state.ptr(),
                opt,
            )
        }
    }

    /// dW (m × n) = Aᵀ·B over one micro-batch's rows (Layout::Nt); later micro-batches add
    /// theirs: inside the GEMM where it accumulates (the K order continues), else through
    /// a scratch product and an addition.
    ///
    /// # Safety
    /// As in [`Trainer::enqueue`].
    unsafe fn weight_grad(
        &self,
        s: sys::CUstream,
        (m, n, rows): (usize, usize, usize),
        (a, b): (u64, u64),
        grad: u64,
        more: bool,
    ) -> Result<(), DeviceError> {
        let k = self.kernels;
        match (&self.dw_scratch, more) {
            (Some(scratch), true) => unsafe {
                self.gemm
                    .run(k, s, Layout::Nt, (m, n, rows), (a, b, scratch.ptr()), false)?;
                k.add(s, grad, scratch.ptr(), m * n)
            },
            _ => unsafe {
                self.gemm
                    .run(k, s, Layout::Nt, (m, n, rows), (a, b, grad), more)
            },
        }
    }

    /// Replaces the batch (x and target, rows × D each, row-major): later steps train on it.
    /// Waits for the step in flight; the buffers keep their addresses, so a captured graph
    /// stays valid.
    pub fn set_batch(&self, x: &[f32], target: &[f32]) -> Result<(), DeviceError> {
        let len = self.cfg.rows() * self.cfg.dim;
        if x.len() != len || target.len() != len {
            return Err(DeviceError::Other(format!(
                "a batch is {} rows × {} = {len} values; got x {} and target {}",
                self.cfg.rows(),
                self.cfg.dim,
                x.len(),
                target.len()
            )));
        }
        self.stream.synchronize()?;
        self.gpu.ctx.bind_to_thread()?;
        // Safety: both buffers hold `len` f32; the stream is idle.
        unsafe {
            cudarc::driver::result::memcpy_htod_sync(self.act.x.ptr(), x)?;
            cudarc::driver::result::memcpy_htod_sync(self.act.target.ptr(), target)?;
        }
        Ok(())
    }

    /// Runs one step: the captured graph when there is one, else the launches themselves.
    pub fn step(&self) -> Result<(), DeviceError> {
        match &self.graph {
            Some(graph) => Ok(graph.launch()?),
            None => self.enqueue(),
        }
    }

    /// Captures one step into a CUDA graph that [`Trainer::step`] replays from then on. Run
    /// at least one step first: the first one compiles kernels and builds GEMM plans, which
    /// a capture may not do.
    pub fn capture(&mut self) -> Result<(), DeviceError> {
        self.stream.synchronize()?;
        self.stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        let enqueued = self.enqueue();
        let graph = self.stream.end_capture(sys::CUgraphInstantiate_flags(0));
        enqueued?;
        let graph =
            graph?.ok_or_else(|| DeviceError::Other("the captured step is empty".into()))?;
        graph.upload()?;
        self.graph = Some(graph);
        Ok(())
    }

    /// Whether [`Trainer::step`] replays a captured graph.
    pub fn captured(&self) -> bool {
        self.graph.is_some()
    }

    pub fn synchronize(&self) -> Result<(), DeviceError> {
        Ok(self.stream.synchronize()?)
    }

    /// The loss of each step so far (up to the history length).
    pub fn loss_history(&self) -> Result<Vec<f32>, DeviceError> {
        self.history.to_host(&self.stream)
    }

    /// Host copies of the parameters, both moments, the gradients of the last step and the
    /// loss history, per tensor.
    pub fn snapshot(&self) -> Result<Snapshot, DeviceError> {
        let mut snap = Snapshot::default();
        for (kind, buf) in [
            ("", &self.params),
            ("m.", &self.m),
            ("v.", &self.v),
            ("grad.", &self.grads),
        ] {
            let flat = buf.to_host(&self.stream)?;
            for p in Param::ALL {
                snap.push(
                    format!("{kind}{}", p.name()),
                    self.layout.slice(&flat, p).to_vec(),
                );
            }
        }
        snap.push("loss".into(), self.loss_history()?);
        Ok(snap)
    }

    /// Host copies of the last step's per-row tensors: the output's gradient dy (a function
    /// of the forward rows), dg (the hidden layer's dX) and dz.
    pub fn row_tensors(&self) -> Result<Snapshot, DeviceError> {
        let mut snap = Snapshot::default();
        for (name, buf) in [
            ("dy", &self.act.dy),
            ("dg", &self.act.dg),
            ("dz", &self.act.dz),
        ] {
            snap.push(name.into(), buf.to_host(&self.stream)?);
        }
        Ok(snap)
    }

    /// The data and the current parameters, per tensor (for the PyTorch reference).
    pub fn data_and_params(&self) -> Result<Snapshot, DeviceError> {
        let mut snap = Snapshot::default();
        snap.push("x".into(), self.act.x.to_host(&self.stream)?);
        snap.push("target".into(), self.act.target.to_host(&self.stream)?);
        let flat = self.params.to_host(&self.stream)?;
        for p in Param::ALL {
            snap.push(p.name().into(), self.layout.slice(&flat, p).to_vec());
        }
        Ok(snap)
    }
}
