//! forge: a GEMM autotuner and shape-adaptive kernel selector for NVIDIA GPUs.
//!
//! The pure core (no device code): [`shape`], [`arch`], [`schedule`], [`space`],
//! [`cost_model`], [`profile`], [`problem`], [`report`], [`stats`], [`gate`],
//! [`reference`](mod@reference), [`bitmodel`] (the tensor cores' arithmetic, bit for bit),
//! [`kernel_source`], [`util`] (atomic file writes, capped reads, one-line messages, build
//! revision, timestamps) and [`durable`] (locks, journaled commits of several files, stale
//! temporaries).
//! [`device`] is the only module tree that touches CUDA; [`tune`] and [`dispatch`] build on
//! it; [`step`] is a training step that consumes a profile. Reports are read on any machine: [`analysis`] computes their numbers, [`plot`] draws
//! them, [`summary`] writes them as Markdown, and [`outputs`] writes both into a directory.

pub mod analysis;
pub mod arch;
pub mod bitmodel;
pub mod calibrate;
pub mod capi;
pub mod cli;
pub mod contract;
pub mod cost_model;
pub mod device;
pub mod dispatch;
pub mod durable;
pub mod gate;
pub mod kernel_check;
pub mod kernel_gen;
pub mod kernel_source;
pub mod merge;
pub mod operand_prep;
pub mod outputs;
pub mod plot;
pub mod problem;
pub mod profile;
pub mod reference;
pub mod report;
pub mod schedule;
pub mod shape;
pub mod space;
pub mod stats;
pub mod step;
pub mod summary;
pub mod tune;
pub mod util;
pub mod wave_reuse;
