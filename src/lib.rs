//! forge: a GEMM autotuner and shape-adaptive kernel selector for NVIDIA GPUs.
//!
//! The pure core (no device code): [`shape`], [`arch`], [`schedule`], [`space`],
//! [`cost_model`], [`profile`], [`report`], [`stats`], [`gate`], [`reference`],
//! [`kernel_source`]. [`device`] is the only module tree that touches CUDA; [`tune`] and
//! [`dispatch`] build on it. [`plot`] and [`summary`] read reports on any machine.

pub mod arch;
pub mod cli;
pub mod contract;
pub mod cost_model;
pub mod device;
pub mod dispatch;
pub mod gate;
pub mod kernel_check;
pub mod kernel_gen;
pub mod kernel_source;
pub mod plot;
pub mod profile;
pub mod reference;
pub mod report;
pub mod schedule;
pub mod shape;
pub mod space;
pub mod stats;
pub mod summary;
pub mod tune;
