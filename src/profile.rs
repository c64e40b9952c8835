//! The dispatch profile: a versioned TOML file that maps each tuned problem to the schedule
//! that won it, with the numbers that justify the choice. Written by `forge tune`, loaded by
//! the training step (through [`crate::dispatch`]) to pick a kernel per shape.
//!
//! Why one file of ~730 lines (plus tests): the format's types, every validation rule with its
//! error (one line naming file and entry) and the selection rule are one contract with the
//! files on disk; the rules are listed below and tested together (`tests/profile_fuzz.rs`).
//!
//! # Selection rule for shapes not in the table
//! 1. An entry with the same (dtype, layout, M, N, K): its schedule (`Exact`).
//! 2. Otherwise the calibrated cost model ([`CostModel::shipped`]) ranks the profile's pool
//!    for the new shape and the lowest prediction wins (`Model`). The pool is every
//!    schedule the profile holds for the dtype and layout (each entry's schedule and its
//!    runners-up: the schedules that passed the gate on the profile's device; then the
//!    `[[verified]]` tables: schedules that passed the gate on that device in calibration
//!    runs, added by `forge pool`) plus the canonical schedule, restricted to those that run
//!    the new shape ([`space::runnable`] on the profile's arch: valid, or pruned from the
//!    search only as wasteful, e.g. a swizzle group wider than the grid; the dispatcher pads
//!    rows a TMA schedule cannot read in place, K % 4 ≠ 0). Ties keep pool order. (Correcting each prediction by the profile's
//!    own timings of that schedule on nearby entries, [`Profile::measured_correction`], did
//!    worse offline: the profile times only each entry's choice.)
//! 3. When no pool schedule but the canonical one is valid: the canonical schedule, which is
//!    valid for every shape (`Canonical`).
//!
//! [`Profile::select_nearest`] keeps the earlier rule 2 (the tuned entry nearest in log space,
//! distance² = ln²(M/M') + ln²(N/N') + ln²(K/K'), whose schedule can run the shape) for
//! comparison (`Nearest`).
//!
//! Every rule returns a schedule that passed the bit-exact gate or is the canonical one, so
//! the numerical result never depends on which rule fired.
//!
//! # What loading checks
//! A file of at most [`MAX_PROFILE_BYTES`], UTF-8 (else the byte's line and column), TOML with
//! no unknown keys; `schema_version`, `numerical_contract` (a known [`Contract`], checked while parsing),
//! a known `arch`, and a `canonical_schedule` that is the canonical schedule of its dtype, a
//! dtype with kernels ([`Dtype::has_kernels`]); `entries` equal to the number of `[[entry]]`
//! tables. Per entry: dimensions in 1..=2^31 − 1; the canonical schedule's dtype; a schedule
//! (and each runner-up) that parses, is of the entry's dtype, keeps the reduction order (no
//! split-K) and is valid for the shape on the profile's arch; times and ratios finite and
//! positive where present (`predicted_us` may be 0: unknown); `gate = "passed"` only with its
//! measurements and in a profile with `measured = true`; each problem once. Per `[[verified]]`
//! table: the canonical schedule's dtype, and schedules checked as an entry's (valid for some
//! shape is not checked: selection keeps those that run the shape). Every error is one line
//! naming the file and, for an entry, its index (from 0) and problem (for a table, its index).

use crate::arch::{Arch, MeasuredProperties};
use crate::contract::Contract;
use crate::cost_model::CostModel;
use crate::problem::Problem;
use crate::schedule::{Dtype, LaunchOrder, Layout, Schedule};
use crate::shape::{MAX_DIM, Shape};
use crate::space;
use crate::util::{
    MAX_QUOTED, ReadCapped, clip, git_revision, line_column, now_rfc3339, read_capped,
    write_atomically,
};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The schema this build writes.
/// Version 3: an optional `[meta.device]` table (the tuned device's measured properties).
/// Version 2: `numerical_contract` names the contract (`tf32-rne-k8-inorder`, …); version 1's
/// "bitexact" meant today's `tf32-trunc-k8-inorder` and is refused.
pub const SCHEMA_VERSION: u32 = 3;
/// The oldest schema this build reads (version 2 is version 3 without `[meta.device]`).
pub const OLDEST_SCHEMA_VERSION: u32 = 2;

fn schema_readable(version: i64) -> bool {
    (OLDEST_SCHEMA_VERSION as i64..=SCHEMA_VERSION as i64).contains(&version)
}
/// The largest profile file forge reads (the shipped H200 profile, 21 entries plus a verified
/// pool of 4,957 schedules, is 263 KB).
pub const MAX_PROFILE_BYTES: u64 = 16 << 20;

/// Where the profile came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    pub schema_version: u32,
    pub arch: String,
    pub device_name: String,
    pub driver_version: String,
    pub nvrtc_version: String,
    pub forge_version: String,
    pub git_revision: String,
    /// RFC 3339, UTC.
    pub date: String,
    /// False when the entries are cost-model predictions only (no GPU was used). True when
    /// any entry was measured; each entry's `gate` says which.
    pub measured: bool,
    /// The numerical contract (`tf32-rne-k8-inorder`): how inputs become TF32 and the K order.
    /// Every chosen schedule's output equals the canonical schedule's under it, bit for bit;
    /// the kernels a dispatcher compiles for this profile follow it.
    pub numerical_contract: Contract,
    /// The schedule whose output is the golden reference.
    pub canonical_schedule: String,
    /// What the cuBLAS columns measured (empty when not measured).
    #[serde(default)]
    pub cublas_mode: String,
    /// The number of `[[entry]]` tables that follow. Required: [`Profile::to_toml`] writes it
    /// and loading checks it, so a file cut at an entry boundary is refused instead of
    /// silently turning exact choices into nearest ones. [`Profile::new`] sets it.
    pub entries: usize,
    /// The tuned device's measured properties (SMs, clock, shared memory, L2, DRAM
    /// bandwidth), applied to the architecture table for selection by the cost model, as the
    /// tune ranked with them and the calibration fitted with them. Absent in profiles
    /// written before session 11 (2026-12-04) and in cost-model-only ones: the table alone
    /// (a dispatcher applies its own device's properties either way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<MeasuredProperties>,
}

/// Gate outcome stored per entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Measured bit-identical to the canonical output on this device.
    Passed,
    /// Not measured (cost-model-only profile): only reduction-order-preserving schedules
    /// are chosen, but no device has confirmed the bits.
    Unverified,
}

/// One tuned problem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub dtype: Dtype,
    pub layout: Layout,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub schedule: String,
    /// The cost model's time; 0 when unknown.
    pub predicted_us: f64,
    pub measured_us: Option<f64>,
    pub tflops: Option<f64>,
    pub cublas_us: Option<f64>,
    pub cublas_tflops: Option<f64>,
    /// cuBLAS time over own time: above 1 means the own kernel is faster. From the
    /// head-to-head's sustained regime (what a training step sees) where it ran.
    pub ratio_vs_cublas: Option<f64>,
    /// The same ratio in the head-to-head's burst regime (short batches after idle gaps).
    /// Optional: profiles written before it existed load unchanged (same schema version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_ratio_vs_cublas: Option<f64>,
    pub gate: Gate,
    /// The next best schedules (gate-passing when measured), best first.
    #[serde(default)]
    pub runners_up: Vec<String>,
    /// How the dispatcher launches the schedule (the order the tuner measured faster; the bits
    /// are the same either way). Absent (serial) in profiles written before it existed.
    #[serde(default, skip_serializing_if = "is_serial")]
    pub launch: LaunchOrder,
}

fn is_serial(order: &LaunchOrder) -> bool {
    *order == LaunchOrder::Serial
}

impl Entry {
    /// An entry chosen by the cost model alone (nothing measured, gate unverified).
    pub fn predicted(problem: Problem, schedule: &Schedule, predicted_us: f64) -> Entry {
        let Problem {
            shape,
            dtype,
            layout,
        } = problem;
        Entry {
            dtype,
            layout,
            m: shape.m,
            n: shape.n,
            k: shape.k,
            schedule: schedule.name(),
            predicted_us,
            measured_us: None,
            tflops: None,
            cublas_us: None,
            cublas_tflops: None,
            ratio_vs_cublas: None,
            burst_ratio_vs_cublas: None,
            launch: LaunchOrder::Serial,
            gate: Gate::Unverified,
            runners_up: vec![],
        }
    }

    pub fn shape(&self) -> Shape {
        Shape::new(self.m, self.n, self.k)
    }

    pub fn problem(&self) -> Problem {
        Problem::new(self.dtype, self.layout, self.shape())
    }

    /// Whether a device measured this entry (its gate passed).
    pub fn is_measured(&self) -> bool {
        self.gate == Gate::Passed
    }
}

impl Metadata {
    /// Metadata for a profile written now by this build, under the default contract
    /// ([`Contract::default`], round to nearest; see [`Metadata::with_contract`]). The device
    /// fields are left empty for the caller to fill.
    pub fn now(arch: &str, dtype: Dtype, measured: bool) -> Metadata {
        Metadata {
            schema_version: SCHEMA_VERSION,
            arch: arch.to_string(),
            device_name: String::new(),
            driver_version: String::new(),
            nvrtc_version: String::new(),
            forge_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: git_revision().into(),
            date: now_rfc3339(),
            measured,
            numerical_contract: Contract::default(),
            canonical_schedule: Schedule::canonical(dtype).name(),
            cublas_mode: String::new(),
            entries: 0,
            device: None,
        }
    }

    pub fn with_contract(mut self, contract: Contract) -> Metadata {
        self.numerical_contract = contract;
        self
    }
}

/// The on-disk document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    meta: Metadata,
    #[serde(default, rename = "entry")]
    entries: Vec<Entry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    verified: Vec<Verified>,
}

/// Schedules beyond the entries' own that passed the gate (output bit-identical to the
/// canonical schedule's) on the profile's device, on at least one measured shape: selection's
/// wider pool for shapes the profile does not hold (`forge pool` adds them from calibration
/// data). Optional: profiles without it load unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verified {
    pub dtype: Dtype,
    pub layout: Layout,
    /// Where the verdicts come from (the data sets, their device and date).
    pub source: String,
    pub schedules: Vec<String>,
}

/// Why a profile was refused. Every message is one line that names the file (and the entry:
/// its index from 0 and its problem), says what is wrong once, and quotes at most
/// [`MAX_QUOTED`] characters of the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {path}: {cause}")]
    Read { path: String, cause: std::io::Error },
    #[error(
        "profile {path} is larger than {} MiB, far more than a profile holds: refused",
        limit >> 20
    )]
    TooLarge { path: String, limit: u64 },
    #[error(
        "profile {path} is not UTF-8 text: byte 0x{byte:02x} at line {line}, column {column} \
         (byte offset {offset})"
    )]
    NotUtf8 {
        path: String,
        byte: u8,
        line: usize,
        column: usize,
        offset: usize,
    },
    #[error("profile {path} is not a valid profile: {message}")]
    Syntax { path: String, message: String },
    #[error(
        "profile {path} has schema version {found}; this forge reads versions \
         {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION}"
    )]
    SchemaVersion { path: String, found: u32 },
    #[error("profile {path}: [meta.device] {reason}")]
    Device { path: String, reason: String },
    #[error("profile {path} was tuned for {found}, not {expected}")]
    WrongArch {
        path: String,
        found: String,
        expected: String,
    },
    #[error(
        "profile {path} follows the numerical contract {found}, not {expected}: its schedules were \
         gated under other bits"
    )]
    WrongContract {
        path: String,
        found: Contract,
        expected: Contract,
    },
    #[error("profile {path}: {message}")]
    Arch { path: String, message: String },
    #[error("profile {path}: canonical_schedule `{found}` {reason}")]
    Canonical {
        path: String,
        found: String,
        reason: String,
    },
    #[error(
        "profile {path} says entries = {declared} but holds {found} [[entry]] table(s): it was \
         cut short or edited"
    )]
    EntryCount {
        path: String,
        declared: usize,
        found: usize,
    },
    #[error("profile {path}, entry {index} ({problem}): {message}")]
    Schedule {
        path: String,
        index: usize,
        problem: String,
        message: String,
    },
    #[error(
        "profile {path}, entry {index} ({problem}): schedule {schedule} cannot run it: {reason}"
    )]
    InvalidEntry {
        path: String,
        index: usize,
        problem: String,
        schedule: String,
        reason: String,
    },
    #[error("profile {path}, verified table {index}: {reason}")]
    Verified {
        path: String,
        index: usize,
        reason: String,
    },
    #[error("profile {path}, entry {index} ({problem}): {reason}")]
    Entry {
        path: String,
        index: usize,
        problem: String,
        reason: String,
    },
    #[error("cannot write profile {path}: {cause}")]
    Write { path: String, cause: std::io::Error },
    #[error(
        "no measured {arch} profile in {dir} was tuned on {device}: it holds {found}; tune on \
         this device or pass one profile's file"
    )]
    NoneForDevice {
        dir: String,
        arch: String,
        device: String,
        found: String,
    },
    #[error("{dir} holds several measured {arch} profiles of {device}: {found}; pass one file")]
    SeveralForDevice {
        dir: String,
        arch: String,
        device: String,
        found: String,
    },
}

/// [`Profile::source`]: a profile read from its file, or a directory to choose from once the
/// device is known.
pub enum ProfileSource {
    Loaded(Box<Profile>),
    Directory(PathBuf),
}

impl ProfileSource {
    /// The profile: the one read, or the directory's measured profile of this device
    /// ([`Profile::load_for_device`]). The caller checks the architecture of a file's profile.
    pub fn for_device(self, arch: &str, device_name: &str) -> Result<Profile, ProfileError> {
        match self {
            ProfileSource::Loaded(p) => Ok(*p),
            ProfileSource::Directory(dir) => Profile::load_for_device(&dir, arch, device_name),
        }
    }
}

/// A name from the file, quoted in a message.
fn quoted(text: &str) -> String {
    clip(text, MAX_QUOTED)
}

/// Checks one schedule name (an entry's schedule or runner-up, or a verified one) against
/// everything a bit-exact profile promises: it parses, it is of the entry's (table's) dtype,
/// it has a kernel, and it keeps the reduction order (the caller checks its validity for a
/// shape).
fn check_schedule(dtype: Dtype, name: &str) -> Result<Schedule, String> {
    let schedule: Schedule = name.parse().map_err(|_| {
        format!(
            "`{}` is not a schedule name (expected e.g. wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1)",
            quoted(name)
        )
    })?;
    if schedule.dtype != dtype {
        return Err(format!(
            "schedule {name} is a {} schedule, the entry's dtype is {}",
            schedule.dtype, dtype
        ));
    }
    if !schedule.dtype.has_kernels() {
        return Err(format!(
            "schedule {name}: no {} kernel is implemented",
            schedule.dtype
        ));
    }
    if schedule.changes_reduction_order() {
        return Err(format!(
            "schedule {name} splits K ({} ways), which changes the reduction order: a \
             bit-exact profile never holds it",
            schedule.split_k
        ));
    }
    Ok(schedule)
}

/// Entry checks other than its schedule's validity for the shape.
fn check_fields(meta: &Metadata, e: &Entry) -> Result<(), String> {
    for (dim, value) in [("m", e.m), ("n", e.n), ("k", e.k)] {
        if value == 0 || value as u64 > MAX_DIM {
            return Err(format!("{dim} = {value} is outside 1..={MAX_DIM}"));
        }
    }
    let non_negative = [("predicted_us", Some(e.predicted_us))];
    let positive = [
        ("measured_us", e.measured_us),
        ("tflops", e.tflops),
        ("cublas_us", e.cublas_us),
        ("cublas_tflops", e.cublas_tflops),
        ("ratio_vs_cublas", e.ratio_vs_cublas),
    ];
    for (name, value) in non_negative {
        if let Some(v) = value
            && !(v.is_finite() && v >= 0.0)
        {
            return Err(format!("{name} = {v} is not a finite number >= 0"));
        }
    }
    let optional_positive = [("burst_ratio_vs_cublas", e.burst_ratio_vs_cublas)];
    for (name, value) in positive.into_iter().chain(optional_positive) {
        if let Some(v) = value
            && !(v.is_finite() && v > 0.0)
        {
            return Err(format!("{name} = {v} is not a finite number > 0"));
        }
    }
    if e.gate == Gate::Passed {
        if !meta.measured {
            return Err("gate = \"passed\" in a profile with measured = false".into());
        }
        if let Some((name, _)) = positive.iter().find(|(_, v)| v.is_none()) {
            return Err(format!("gate = \"passed\" but {name} is missing"));
        }
    }
    Ok(())
}
/// Tuned entries whose measurements correct the predictions of the corrected model rule that
/// `forge calibrate --fit` evaluates beside the run-time one ([`Profile::measured_correction`]).
pub const CORRECTION_NEIGHBOURS: usize = 3;

/// Which rule chose a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    Exact {
        entry: usize,
    },
    Nearest {
        entry: usize,
        distance: f64,
    },
    /// The cost model ranked `candidates` pool schedules valid for the shape; the winner's
    /// predicted time.
    Model {
        predicted_us: f64,
        candidates: usize,
    },
    Canonical,
}

/// The answer of [`Profile::select`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    pub schedule: Schedule,
    pub rule: Rule,
    /// The exact entry's launch order; serial for every other rule (no measurement says
    /// the programmatic launch is faster for that shape).
    pub launch: LaunchOrder,
}

type Key = Problem;

/// A loaded profile, indexed for fast selection.
#[derive(Clone, Debug)]
pub struct Profile {
    pub meta: Metadata,
    pub entries: Vec<Entry>,
    arch: Arch,
    schedules: Vec<Schedule>,
    exact: HashMap<Key, usize>,
    /// (ln M, ln N, ln K) per entry.
    log_dims: Vec<[f64; 3]>,
    /// Selection's pool per (dtype, layout): entry schedules and runners-up, each once, in
    /// file order, then the verified schedules, then the canonical schedule.
    pool: HashMap<(Dtype, Layout), Vec<Schedule>>,
    /// The `[[verified]]` tables, as read.
    pub verified: Vec<Verified>,
}

fn log_dims(shape: &Shape) -> [f64; 3] {
    [
        (shape.m as f64).ln(),
        (shape.n as f64).ln(),
        (shape.k as f64).ln(),
    ]
}

/// A recorded device's properties are positive and finite (selection divides by them).
fn check_device(d: &MeasuredProperties) -> Result<(), String> {
    let counts = [
        ("sm_count", d.sm_count.map(u64::from)),
        ("smem_per_sm_bytes", d.smem_per_sm_bytes.map(u64::from)),
        (
            "smem_per_block_bytes",
            d.smem_per_block_bytes.map(u64::from),
        ),
        ("l2_bytes", d.l2_bytes),
    ];
    for (key, v) in counts {
        if v == Some(0) {
            return Err(format!("{key} must be positive"));
        }
    }
    for (key, v) in [
        ("boost_clock_mhz", d.boost_clock_mhz),
        ("dram_bandwidth_gbs", d.dram_bandwidth_gbs),
    ] {
        if let Some(v) = v
            && !(v.is_finite() && v > 0.0)
        {
            return Err(format!("{key} = {v} must be positive and finite"));
        }
    }
    Ok(())
}

/// `meta.schema_version` of a parsed TOML table, when it is an integer.
fn declared_schema_version(table: &toml::Table) -> Option<i64> {
    table.get("meta")?.get("schema_version")?.as_integer()
}

/// A TOML or schema error as one line: line, column, the entry it falls in, and the parser's
/// message, capped.
fn syntax_error(path: &str, text: &str, e: &toml::de::Error) -> ProfileError {
    ProfileError::Syntax {
        path: path.to_string(),
        message: syntax_message(text, e),
    }
}

fn syntax_message(text: &str, e: &toml::de::Error) -> String {
    let message = clip(e.message().trim(), MAX_QUOTED + 100);
    let location = match e.span() {
        Some(span) => {
            let (line, column) = line_column(text.as_bytes(), span.start);
            let entries_before = text[..span.start.min(text.len())]
                .lines()
                .filter(|l| l.trim_start().starts_with("[[entry]]"))
                .count();
            match entries_before {
                0 => format!("line {line}, column {column}: "),
                n => format!("line {line}, column {column} (entry {}): ", n - 1),
            }
        }
        None => String::new(),
    };
    format!("{location}{message}")
}

/// What is at a profile's path, for a writer deciding whether it may replace it.
#[derive(Debug)]
pub enum OnDisk {
    /// Nothing (or an empty file): a new profile may be written.
    Missing,
    /// A valid profile.
    Valid(Box<Profile>),
    /// A forge profile (a `[meta]` table with a `schema_version`) that does not load.
    Invalid(ProfileError),
    /// Anything else (unreadable, not text, not TOML, not a profile): never overwritten.
    Foreign(String),
}

impl OnDisk {
    /// Classifies what is at `path`.
    pub fn inspect(path: &Path) -> OnDisk {
        let shown = path.display().to_string();
        let bytes = match read_capped(path, MAX_PROFILE_BYTES) {
            Ok(b) => b,
            Err(ReadCapped::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return OnDisk::Missing;
            }
            Err(ReadCapped::Io(e)) => return OnDisk::Foreign(format!("cannot read it: {e}")),
            Err(ReadCapped::TooLarge { limit }) => {
                return OnDisk::Foreign(format!("it is larger than {} MiB", limit >> 20));
            }
        };
        if bytes.is_empty() && std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return OnDisk::Missing; // an empty file holds nothing to lose
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return OnDisk::Foreign("it is not UTF-8 text".into());
        };
        let table: toml::Table = match toml::from_str(text) {
            Ok(t) => t,
            Err(e) => {
                return OnDisk::Foreign(format!("it is not TOML: {}", syntax_message(text, &e)));
            }
        };
        if declared_schema_version(&table).is_none() {
            return OnDisk::Foreign("it has no [meta] table with a schema_version".into());
        }
        match Profile::parse(text, &shown) {
            Ok(p) => OnDisk::Valid(Box::new(p)),
            Err(e) => OnDisk::Invalid(e),
        }
    }
}

impl Profile {
    /// Builds an indexed profile from entries in memory (setting `meta.entries` to their
    /// number), validated as [`Profile::load`] validates a file.
    pub fn new(meta: Metadata, entries: Vec<Entry>) -> Result<Profile, ProfileError> {
        Profile::with_pool(meta, entries, vec![])
    }

    /// [`Profile::new`] with `[[verified]]` tables.
    pub fn with_pool(
        mut meta: Metadata,
        entries: Vec<Entry>,
        verified: Vec<Verified>,
    ) -> Result<Profile, ProfileError> {
        meta.entries = entries.len();
        Profile::build(meta, entries, verified, "<memory>")
    }

    /// The same profile with these `[[verified]]` tables in place of its own.
    pub fn with_verified(self, verified: Vec<Verified>) -> Result<Profile, ProfileError> {
        Profile::build(self.meta, self.entries, verified, "<memory>")
    }

    fn build(
        meta: Metadata,
        entries: Vec<Entry>,
        verified: Vec<Verified>,
        path: &str,
    ) -> Result<Profile, ProfileError> {
        let path_s = || path.to_string();
        if !schema_readable(meta.schema_version as i64) {
            return Err(ProfileError::SchemaVersion {
                path: path_s(),
                found: meta.schema_version,
            });
        }
        let arch = Arch::by_name(&meta.arch).map_err(|_| ProfileError::Arch {
            path: path_s(),
            message: format!(
                "unknown architecture `{}`; known: {}",
                quoted(&meta.arch),
                Arch::known().join(", ")
            ),
        })?;
        let arch = match &meta.device {
            Some(d) => {
                check_device(d).map_err(|reason| ProfileError::Device {
                    path: path_s(),
                    reason,
                })?;
                arch.with_measured(d)
            }
            None => arch,
        };
        let canonical_error = |reason: String| ProfileError::Canonical {
            path: path_s(),
            found: quoted(&meta.canonical_schedule),
            reason,
        };
        let canonical: Schedule = meta
            .canonical_schedule
            .parse()
            .map_err(|_| canonical_error("is not a schedule name".into()))?;
        if canonical != Schedule::canonical(canonical.dtype) {
            return Err(canonical_error(format!(
                "is not the canonical {} schedule ({})",
                canonical.dtype,
                Schedule::canonical(canonical.dtype)
            )));
        }
        if !canonical.dtype.has_kernels() {
            return Err(canonical_error(format!(
                "is a {} schedule, and no {} kernel is implemented",
                canonical.dtype, canonical.dtype
            )));
        }
        if meta.entries != entries.len() {
            return Err(ProfileError::EntryCount {
                path: path_s(),
                declared: meta.entries,
                found: entries.len(),
            });
        }
        let mut schedules = Vec::with_capacity(entries.len());
        let mut exact = HashMap::with_capacity(entries.len());
        for (index, e) in entries.iter().enumerate() {
            let problem = || format!("{}/{}/{}x{}x{}", e.dtype, e.layout.as_str(), e.m, e.n, e.k);
            let entry_error = |reason: String| ProfileError::Entry {
                path: path_s(),
                index,
                problem: problem(),
                reason,
            };
            check_fields(&meta, e).map_err(entry_error)?;
            if e.dtype != canonical.dtype {
                return Err(entry_error(format!(
                    "dtype {} differs from the canonical schedule's ({})",
                    e.dtype, canonical.dtype
                )));
            }
            let schedule =
                check_schedule(e.dtype, &e.schedule).map_err(|message| ProfileError::Schedule {
                    path: path_s(),
                    index,
                    problem: problem(),
                    message,
                })?;
            let shape = e.shape();
            if let Err(reason) = space::check(&arch, &schedule, &shape) {
                return Err(ProfileError::InvalidEntry {
                    path: path_s(),
                    index,
                    problem: problem(),
                    schedule: e.schedule.clone(),
                    reason: reason.to_string(),
                });
            }
            for (i, name) in e.runners_up.iter().enumerate() {
                let runner = check_schedule(e.dtype, name)
                    .map_err(|m| entry_error(format!("runner-up {i}: {m}")))?;
                if let Err(reason) = space::check(&arch, &runner, &shape) {
                    return Err(entry_error(format!(
                        "runner-up {i}: schedule {name} cannot run it: {reason}"
                    )));
                }
            }
            if let Some(first) = exact.insert(e.problem(), index) {
                return Err(entry_error(format!(
                    "duplicates entry {first}: a problem may appear once"
                )));
            }
            schedules.push(schedule);
        }
        let log_dims = entries.iter().map(|e| log_dims(&e.shape())).collect();
        // Each schedule once per (dtype, layout), in first-seen order: a set beside the lists
        // (a verified pool holds thousands of names; a linear `contains` per name was
        // quadratic at every load).
        let mut pool: HashMap<(Dtype, Layout), Vec<Schedule>> = HashMap::new();
        let mut seen: HashSet<(Dtype, Layout, Schedule)> = HashSet::new();
        for (e, schedule) in entries.iter().zip(&schedules) {
            let list = pool.entry((e.dtype, e.layout)).or_default();
            // Validated above: every name parses.
            let runners = e
                .runners_up
                .iter()
                .filter_map(|n| n.parse::<Schedule>().ok());
            for s in std::iter::once(*schedule).chain(runners) {
                if seen.insert((e.dtype, e.layout, s)) {
                    list.push(s);
                }
            }
        }
        for (index, v) in verified.iter().enumerate() {
            let table_error = |reason: String| ProfileError::Verified {
                path: path_s(),
                index,
                reason,
            };
            if v.dtype != canonical.dtype {
                return Err(table_error(format!(
                    "dtype {} differs from the canonical schedule's ({})",
                    v.dtype, canonical.dtype
                )));
            }
            let list = pool.entry((v.dtype, v.layout)).or_default();
            for name in &v.schedules {
                let s = check_schedule(v.dtype, name).map_err(table_error)?;
                if seen.insert((v.dtype, v.layout, s)) {
                    list.push(s);
                }
            }
        }
        for list in pool.values_mut() {
            list.retain(|s| *s != canonical);
            list.push(canonical);
        }
        Ok(Profile {
            meta,
            entries,
            arch,
            schedules,
            exact,
            log_dims,
            pool,
            verified,
        })
    }

    /// Reads and validates a profile file (at most [`MAX_PROFILE_BYTES`]).
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let shown = path.display().to_string();
        let bytes = read_capped(path, MAX_PROFILE_BYTES).map_err(|e| match e {
            ReadCapped::Io(cause) => ProfileError::Read {
                path: shown.clone(),
                cause,
            },
            ReadCapped::TooLarge { limit } => ProfileError::TooLarge {
                path: shown.clone(),
                limit,
            },
        })?;
        Profile::parse_bytes(&bytes, &shown)
    }

    /// Reads a profile and checks it was tuned for `arch`.
    pub fn load_for_arch(path: &Path, arch: &str) -> Result<Profile, ProfileError> {
        let profile = Profile::load(path)?;
        if profile.meta.arch != arch {
            return Err(ProfileError::WrongArch {
                path: path.display().to_string(),
                found: profile.meta.arch.clone(),
                expected: arch.to_string(),
            });
        }
        Ok(profile)
    }

    /// A profile path as a dispatcher opens it: a file is read now (so a missing or broken
    /// profile is reported on any machine, before a device is opened); a directory waits for
    /// the device ([`ProfileSource::for_device`]).
    pub fn source(path: &Path) -> Result<ProfileSource, ProfileError> {
        Ok(if path.is_dir() {
            ProfileSource::Directory(path.to_path_buf())
        } else {
            ProfileSource::Loaded(Box::new(Profile::load(path)?))
        })
    }

    /// The profile for a device of `arch` named `device_name` (`GpuInfo::name`): a file is
    /// loaded and must be of `arch` ([`Profile::load_for_arch`]); a directory (such as
    /// profiles/) gives its one measured profile of `arch` tuned on that device
    /// (`meta.device_name`), and an error that lists what it holds when there is none or more
    /// than one. Files of the directory that are not profiles count as held, not as errors.
    pub fn load_for_device(
        path: &Path,
        arch: &str,
        device_name: &str,
    ) -> Result<Profile, ProfileError> {
        if !path.is_dir() {
            return Profile::load_for_arch(path, arch);
        }
        let read = |cause| ProfileError::Read {
            path: path.display().to_string(),
            cause,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
            .collect();
        files.sort();
        let (mut matching, mut held) = (vec![], vec![]);
        for file in files {
            let name = file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            match Profile::load(&file) {
                Ok(p) => {
                    let m = &p.meta;
                    held.push(format!(
                        "{name} ({}, {}{})",
                        quoted(&m.device_name),
                        m.arch,
                        if m.measured { "" } else { ", predicted" }
                    ));
                    if m.measured && m.arch == arch && m.device_name == device_name {
                        matching.push((name, p));
                    }
                }
                Err(e) => held.push(format!("{name} (not loaded: {e})")),
            }
        }
        let dir = path.display().to_string();
        match matching.len() {
            1 => Ok(matching.pop().expect("one").1),
            0 => Err(ProfileError::NoneForDevice {
                dir,
                arch: arch.to_string(),
                device: device_name.to_string(),
                found: if held.is_empty() {
                    "no .toml file".to_string()
                } else {
                    held.join(", ")
                },
            }),
            _ => Err(ProfileError::SeveralForDevice {
                dir,
                arch: arch.to_string(),
                device: device_name.to_string(),
                found: matching
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Refuses a profile of another numerical contract than `expected`.
    pub fn require_contract(&self, path: &Path, expected: Contract) -> Result<(), ProfileError> {
        if self.meta.numerical_contract != expected {
            return Err(ProfileError::WrongContract {
                path: path.display().to_string(),
                found: self.meta.numerical_contract,
                expected,
            });
        }
        Ok(())
    }

    /// Parses profile bytes, which must be UTF-8; `path` names them in errors.
    pub fn parse_bytes(bytes: &[u8], path: &str) -> Result<Profile, ProfileError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let offset = e.valid_up_to();
            let (line, column) = line_column(bytes, offset);
            ProfileError::NotUtf8 {
                path: path.to_string(),
                byte: bytes[offset],
                line,
                column,
                offset,
            }
        })?;
        Profile::parse(text, path)
    }

    /// Parses profile text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<Profile, ProfileError> {
        // The schema version first, loosely: a file of another version gets that error, not
        // one about a field the versions disagree on.
        let table: toml::Table = toml::from_str(text).map_err(|e| syntax_error(path, text, &e))?;
        if let Some(found) = declared_schema_version(&table)
            && !schema_readable(found)
        {
            return Err(ProfileError::SchemaVersion {
                path: path.to_string(),
                found: u32::try_from(found).unwrap_or(u32::MAX),
            });
        }
        let doc: Document = toml::from_str(text).map_err(|e| syntax_error(path, text, &e))?;
        Profile::build(doc.meta, doc.entries, doc.verified, path)
    }

    /// The profile as TOML text (`meta.entries` is the number of entries it holds).
    pub fn to_toml(&self) -> String {
        let mut meta = self.meta.clone();
        meta.entries = self.entries.len();
        // This build writes its own schema (a version-2 file read here is valid version 3).
        meta.schema_version = SCHEMA_VERSION;
        let doc = Document {
            meta,
            entries: self.entries.clone(),
            verified: self.verified.clone(),
        };
        toml::to_string_pretty(&doc).expect("a profile always serializes")
    }

    /// Writes the profile atomically: a temporary file in the same directory, then rename.
    /// (`forge tune` writes through [`crate::durable::Commit`] under a lock instead.)
    pub fn save(&self, path: &Path) -> Result<(), ProfileError> {
        write_atomically(path, self.to_toml().as_bytes()).map_err(|cause| ProfileError::Write {
            path: path.display().to_string(),
            cause,
        })
    }

    /// The architecture the profile was tuned for.
    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// Selects by the cost model with a device's measured properties applied to the
    /// architecture table (a dispatcher's own device: what the tune ranked with).
    pub fn with_device(mut self, device: &MeasuredProperties) -> Profile {
        self.arch = self.arch.with_measured(device);
        self
    }

    /// Picks the schedule for a problem by the rule in the module docs. A dtype without
    /// kernels ([`Dtype::has_kernels`]) has no entries, so it gets its canonical schedule,
    /// which has no kernel either: callers check the dtype first (`forge select` does).
    pub fn select(&self, problem: &Problem) -> Selection {
        self.select_with(problem, CostModel::shipped_ref())
    }

    /// [`Profile::select`] with another cost model's constants for rule 2 (`forge select
    /// --model`: what a fit's constants would choose).
    pub fn select_with(&self, problem: &Problem, model: &CostModel) -> Selection {
        if let Some(&entry) = self.exact.get(problem) {
            return Selection {
                schedule: self.schedules[entry],
                rule: Rule::Exact { entry },
                launch: self.entries[entry].launch,
            };
        }
        self.select_by_model(problem, model, &self.arch)
    }

    /// Rule 2 with a given model and arch (the profile's arch table by default; a device's
    /// measured properties where known): the pool schedule that runs the shape with the
    /// lowest predicted time.
    pub fn select_by_model(&self, problem: &Problem, model: &CostModel, arch: &Arch) -> Selection {
        self.select_by_model_with(problem, model, arch, 0)
    }

    /// Rule 2 with each prediction corrected from the `neighbours` tuned entries nearest in
    /// log space ([`Profile::measured_correction`]; 0: no correction, the run-time rule). The
    /// correction lost offline (`forge calibrate --fit`, selection table): kept to report.
    pub fn select_by_model_with(
        &self,
        problem: &Problem,
        model: &CostModel,
        arch: &Arch,
        neighbours: usize,
    ) -> Selection {
        let near = self.nearest_entries(problem, neighbours);
        let canonical = Schedule::canonical(problem.dtype);
        let mut best: Option<(Schedule, f64)> = None;
        let mut candidates = 0;
        let pool = self.pool.get(&(problem.dtype, problem.layout));
        for s in pool.into_iter().flatten() {
            if space::runnable(&self.arch, s, &problem.shape).is_err() {
                continue;
            }
            candidates += 1;
            let t = model
                .predict(arch, s, &problem.shape, problem.layout)
                .time_us
                * self.measured_correction(s, &near, model, arch);
            if best.is_none_or(|(_, b)| t < b) {
                best = Some((*s, t));
            }
        }
        match best {
            Some((schedule, predicted_us)) if candidates > 1 || schedule != canonical => {
                Selection {
                    schedule,
                    rule: Rule::Model {
                        predicted_us,
                        candidates,
                    },
                    launch: LaunchOrder::Serial,
                }
            }
            _ => Selection {
                schedule: canonical,
                rule: Rule::Canonical,
                launch: LaunchOrder::Serial,
            },
        }
    }

    /// Selection's pool for a dtype and layout (entry schedules and runners-up, each once, in
    /// file order, then the verified schedules, then the canonical schedule).
    pub fn pool(&self, dtype: Dtype, layout: Layout) -> &[Schedule] {
        self.pool.get(&(dtype, layout)).map_or(&[], Vec::as_slice)
    }

    /// The `k` entries of the problem's dtype and layout nearest to it in log space
    /// (distance² = ln²(M/M') + ln²(N/N') + ln²(K/K')), nearest first (ties: file order).
    fn nearest_entries(&self, problem: &Problem, k: usize) -> Vec<usize> {
        if k == 0 {
            return vec![]; // the run-time rule: nothing to sort
        }
        let wanted = log_dims(&problem.shape);
        let mut by_distance: Vec<(f64, usize)> = self
            .entries
            .iter()
            .zip(&self.log_dims)
            .enumerate()
            .filter(|(_, (e, _))| e.dtype == problem.dtype && e.layout == problem.layout)
            .map(|(i, (_, d))| ((0..3).map(|j| (d[j] - wanted[j]).powi(2)).sum(), i))
            .collect();
        by_distance.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        by_distance.into_iter().take(k).map(|(_, i)| i).collect()
    }

    /// How much faster or slower than predicted `schedule` measured where the profile tuned
    /// it: the geometric mean of measured / predicted over the `near` entries whose chosen
    /// schedule it is (the profile times only its choices); 1 where it won none of them. A
    /// schedule the model under-rates on neighbouring shapes is likely under-rated here too.
    pub fn measured_correction(
        &self,
        schedule: &Schedule,
        near: &[usize],
        model: &CostModel,
        arch: &Arch,
    ) -> f64 {
        let (mut sum, mut n) = (0.0, 0usize);
        for &i in near {
            let e = &self.entries[i];
            let Some(measured) = e.measured_us else {
                continue;
            };
            if self.schedules[i] != *schedule || measured <= 0.0 {
                continue;
            }
            let predicted = model.predict(arch, schedule, &e.shape(), e.layout).time_us;
            sum += (measured / predicted).ln();
            n += 1;
        }
        if n == 0 { 1.0 } else { (sum / n as f64).exp() }
    }

    /// The earlier rule 2 (kept for comparison): the tuned entry of the same dtype and layout
    /// nearest in log space whose schedule can run the shape; else the canonical schedule.
    pub fn select_nearest(&self, problem: &Problem) -> Selection {
        let Problem {
            shape,
            dtype,
            layout,
        } = problem;
        let (dtype, layout, shape) = (*dtype, *layout, shape);
        if let Some(&entry) = self.exact.get(problem) {
            return Selection {
                schedule: self.schedules[entry],
                rule: Rule::Exact { entry },
                launch: self.entries[entry].launch,
            };
        }
        let wanted = log_dims(shape);
        let mut best: Option<(usize, f64)> = None;
        for (i, (e, dims)) in self.entries.iter().zip(&self.log_dims).enumerate() {
            if e.dtype != dtype || e.layout != layout {
                continue;
            }
            let d2: f64 = (0..3).map(|j| (dims[j] - wanted[j]).powi(2)).sum();
            if best.is_none_or(|(_, b)| d2 < b) {
                best = Some((i, d2));
            }
        }
        match best {
            Some((entry, d2)) => Selection {
                schedule: self.schedules[entry],
                rule: Rule::Nearest {
                    entry,
                    distance: d2.sqrt(),
                },
                launch: LaunchOrder::Serial,
            },
            None => Selection {
                schedule: Schedule::canonical(dtype),
                rule: Rule::Canonical,
                launch: LaunchOrder::Serial,
            },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn meta(arch: &str) -> Metadata {
        Metadata::now(arch, Dtype::Tf32, false)
    }

    pub(crate) fn entry(shape: Shape, schedule: &str) -> Entry {
        let schedule: Schedule = schedule.parse().unwrap();
        Entry::predicted(
            Problem::new(Dtype::Tf32, Layout::Tn, shape),
            &schedule,
            10.0,
        )
    }

    const BIG: &str = "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1";
    const SMALL: &str = "wgmma_tf32_128x128x32_s4_wg2_swz1_pers_c1_k1";

    fn sample() -> Profile {
        Profile::new(
            meta("sm_90a"),
            vec![
                entry(Shape::new(4096, 4096, 4096), BIG),
                entry(Shape::new(512, 512, 512), SMALL),
            ],
        )
        .unwrap()
    }

    #[test]
    fn round_trips_through_toml_and_disk() {
        let p = sample();
        let dir = std::env::temp_dir().join(format!("forge-profile-{}", std::process::id()));
        let path = dir.join("p.toml");
        p.save(&path).unwrap();
        let back = Profile::load(&path).unwrap();
        assert_eq!(back.meta, p.meta);
        assert_eq!(back.entries, p.entries);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn selection_prices_the_device_the_profile_recorded() {
        let plain = sample();
        assert_eq!(plain.meta.device, None);
        assert!(!plain.to_toml().contains("[meta.device]"));
        let h200 = MeasuredProperties {
            boost_clock_mhz: Some(1980.0),
            l2_bytes: Some(60 << 20),
            dram_bandwidth_gbs: Some(4800.0),
            ..Default::default()
        };
        let mut meta = meta("sm_90a");
        meta.device = Some(h200.clone());
        let p = Profile::new(meta, plain.entries.clone()).unwrap();
        let text = p.to_toml();
        assert!(text.contains("[meta.device]"), "{text}");
        let back = Profile::parse(&text, "p.toml").unwrap();
        assert_eq!(back.meta.device, Some(h200.clone()));
        let table = Arch::by_name("sm_90a").unwrap();
        assert_eq!(back.arch(), &table.clone().with_measured(&h200));
        assert_ne!(
            plain.arch().dram_bandwidth_gbs,
            back.arch().dram_bandwidth_gbs
        );
        // A dispatcher applies its own device's properties over either.
        assert_eq!(plain.with_device(&h200).arch(), back.arch());
        // Bad tables are refused, each with its reason.
        for (bad, why) in [
            ("dram_bandwidth_gbs = 4800.0", "dram_bandwidth_gbs = nan"),
            ("dram_bandwidth_gbs = 4800.0", "dram_bandwidth_gbs = 0.0"),
            ("l2_bytes = 62914560", "l2_bytes = 0"),
            ("l2_bytes = 62914560", "l2_byte = 62914560"),
        ] {
            let text = text.replace(bad, why);
            let err = Profile::parse(&text, "p.toml").unwrap_err().to_string();
            let key = why.split(' ').next().unwrap();
            assert!(err.contains(key), "{why}: {err}");
        }
    }

    #[test]
    fn the_burst_ratio_is_optional_and_checked() {
        let mut p = sample();
        let text = p.to_toml();
        assert!(!text.contains("burst_ratio_vs_cublas"), "{text}");
        p.entries[0].burst_ratio_vs_cublas = Some(0.95);
        let text = p.to_toml();
        let back = Profile::parse(&text, "x.toml").unwrap();
        assert_eq!(back.entries[0].burst_ratio_vs_cublas, Some(0.95));
        assert_eq!(back.entries[1].burst_ratio_vs_cublas, None);
        let bad = text.replace(
            "burst_ratio_vs_cublas = 0.95",
            "burst_ratio_vs_cublas = -1.0",
        );
        let err = Profile::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(err.contains("burst_ratio_vs_cublas = -1"), "{err}");
    }

    #[test]
    fn the_launch_order_is_the_exact_entrys_and_serial_otherwise() {
        let mut p = sample();
        let text = p.to_toml();
        assert!(!text.contains("launch"), "{text}");
        p.entries[0].launch = LaunchOrder::Programmatic;
        let text = p.to_toml();
        assert!(text.contains(r#"launch = "programmatic""#), "{text}");
        let back = Profile::parse(&text, "x.toml").unwrap();
        assert_eq!(back.entries[0].launch, LaunchOrder::Programmatic);
        assert_eq!(back.entries[1].launch, LaunchOrder::Serial);
        let tn = |m, n, k| Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(m, n, k));
        assert_eq!(
            back.select(&tn(4096, 4096, 4096)).launch,
            LaunchOrder::Programmatic
        );
        assert_eq!(back.select(&tn(512, 512, 512)).launch, LaunchOrder::Serial);
        assert_eq!(
            back.select(&tn(4000, 4096, 4096)).launch,
            LaunchOrder::Serial
        );
        assert_eq!(
            back.select_nearest(&tn(4000, 4096, 4096)).launch,
            LaunchOrder::Serial
        );
        let bad = text.replace(r#"launch = "programmatic""#, r#"launch = "eager""#);
        let err = Profile::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(err.contains("eager"), "{err}");
    }

    #[test]
    fn selects_exact_then_by_model_then_canonical() {
        let p = sample();
        let tn = |m, n, k| Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(m, n, k));
        let s = p.select(&tn(4096, 4096, 4096));
        assert_eq!(s.rule, Rule::Exact { entry: 0 });
        assert_eq!(s.schedule.name(), BIG);
        // Unseen shapes: the model's best of the pool (both entries and the canonical).
        let model = CostModel::shipped();
        for problem in [tn(600, 500, 520), tn(8000, 8000, 8000), tn(64, 64, 4096)] {
            let s = p.select(&problem);
            let Rule::Model {
                predicted_us,
                candidates,
            } = s.rule
            else {
                panic!("{:?} for {problem}", s.rule)
            };
            let canonical = Schedule::canonical(Dtype::Tf32);
            let pool: Vec<Schedule> = [BIG.parse().unwrap(), SMALL.parse().unwrap(), canonical]
                .into_iter()
                .filter(|s| space::runnable(p.arch(), s, &problem.shape).is_ok())
                .collect();
            assert_eq!(candidates, pool.len(), "{problem}");
            for other in pool {
                let t = model
                    .predict(p.arch(), &other, &problem.shape, Layout::Tn)
                    .time_us;
                assert!(
                    predicted_us <= t,
                    "{problem}: {other} predicted {t} < {predicted_us}"
                );
            }
        }
        let big = p.select(&tn(8000, 8000, 8000)).schedule.name();
        assert_eq!(big, BIG);
        // The earlier rule, kept for comparison.
        assert!(matches!(
            p.select_nearest(&tn(600, 500, 520)).rule,
            Rule::Nearest { entry: 1, .. }
        ));
        // K odd: TMA schedules run it from a padded copy, so the whole pool competes.
        let s = p.select(&tn(600, 500, 521));
        assert!(
            matches!(s.rule, Rule::Model { candidates: 3, .. }),
            "{:?}",
            s.rule
        );
        let s = p.select(&Problem::new(
            Dtype::Tf32,
            Layout::Nn,
            Shape::new(4096, 4096, 4096),
        ));
        assert_eq!(s.rule, Rule::Canonical);
    }

    #[test]
    fn the_model_rule_keeps_pool_schedules_pruned_only_as_redundant() {
        // A swizzle group of 16 is pruned from the search at 512x512x512 (8 tile rows: it
        // orders tiles like group 8), but the kernel runs it: selection keeps it in the pool.
        let wide = "wgmma_tf32_64x64x32_s7_wg1_swz16_np_c1_k1";
        let p = Profile::new(
            meta("sm_90a"),
            vec![
                entry(Shape::new(4096, 4096, 4096), BIG),
                entry(Shape::new(2048, 2048, 512), wide),
            ],
        )
        .unwrap();
        let small = Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(512, 512, 512));
        let s: Schedule = wide.parse().unwrap();
        assert!(space::check(p.arch(), &s, &small.shape).is_err());
        assert!(space::runnable(p.arch(), &s, &small.shape).is_ok());
        let chosen = p.select(&small);
        assert!(
            matches!(chosen.rule, Rule::Model { candidates: 3, .. }),
            "{chosen:?}"
        );
        assert_eq!(chosen.schedule, s);
        // The correction: a schedule that measured faster than predicted where it was
        // chosen is scaled by that ratio; one chosen nowhere near is not.
        let model = CostModel::shipped();
        let mut q = p.clone();
        let predicted = model
            .predict(q.arch(), &s, &q.entries[1].shape(), Layout::Tn)
            .time_us;
        q.entries[1].measured_us = Some(0.5 * predicted);
        let near = q.nearest_entries(&small, 1);
        assert_eq!(near, vec![1]);
        let big: Schedule = BIG.parse().unwrap();
        assert!((q.measured_correction(&s, &near, &model, q.arch()) - 0.5).abs() < 1e-9);
        assert_eq!(q.measured_correction(&big, &near, &model, q.arch()), 1.0);
    }

    #[test]
    fn the_verified_pool_round_trips_and_widens_selection() {
        // 128×168 fits 256×11008×4096 in one wave (2 × 66 tiles on 132 SMs); neither entry
        // of the sample can, so the model rule picks it once the verified pool holds it.
        const FIT: &str = "wgmma_tf32_128x168x32_s5_wg2_swz2_pers_c1_k1";
        let tn = |m, n, k| Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(m, n, k));
        let problem = tn(256, 11008, 4096);
        let narrow = sample();
        assert_ne!(narrow.select(&problem).schedule.name(), FIT);
        let table = |names: &[&str]| Verified {
            dtype: Dtype::Tf32,
            layout: Layout::Tn,
            source: "test".into(),
            schedules: names.iter().map(|n| n.to_string()).collect(),
        };
        let wide = sample().with_verified(vec![table(&[FIT, BIG])]).unwrap();
        // Each schedule once: BIG is an entry's already.
        assert_eq!(
            wide.pool(Dtype::Tf32, Layout::Tn).len(),
            narrow.pool(Dtype::Tf32, Layout::Tn).len() + 1
        );
        let text = wide.to_toml();
        assert!(text.contains("[[verified]]"), "{text}");
        let back = Profile::parse(&text, "x.toml").unwrap();
        assert_eq!(back.verified, wide.verified);
        let s = back.select(&problem);
        assert_eq!(s.schedule.name(), FIT, "{:?}", s.rule);
        assert!(matches!(s.rule, Rule::Model { .. }));
        // Exact entries still win, and a profile without the table writes none.
        assert_eq!(
            back.select(&tn(4096, 4096, 4096)).rule,
            Rule::Exact { entry: 0 }
        );
        assert!(!narrow.to_toml().contains("[[verified]]"));
        // Bad tables name themselves.
        let err = sample()
            .with_verified(vec![table(&["wgmma_tf32_nonsense"])])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("verified table 0") && err.contains("nonsense"),
            "{err}"
        );
        // A split-K schedule changes the reduction order: never in a bit-exact pool.
        let err = sample()
            .with_verified(vec![table(&[
                "wgmma_tf32_128x128x32_s4_wg2_swz8_pers_c1_k2",
            ])])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("verified table 0") && err.contains("reduction order"),
            "{err}"
        );
        let bf16 = Verified {
            dtype: Dtype::Bf16,
            ..table(&[])
        };
        let err = sample().with_verified(vec![bf16]).unwrap_err().to_string();
        assert!(
            err.contains("verified table 0") && err.contains("dtype"),
            "{err}"
        );
    }

    #[test]
    fn bad_profiles_fail_with_the_reason() {
        let p = sample();
        let text = p.to_toml();
        let wrong_version = text.replace("schema_version = 3", "schema_version = 99");
        assert!(matches!(
            Profile::parse(&wrong_version, "x.toml"),
            Err(ProfileError::SchemaVersion { found: 99, .. })
        ));
        let broken = format!("{text}\n[[entry]\nm = ");
        let err = Profile::parse(&broken, "x.toml").unwrap_err().to_string();
        assert!(err.contains("x.toml") && err.contains("line"), "{err}");
        let bad_schedule = text.replace(BIG, "wgmma_tf32_999x1x1_s4_wg2_swz8_pers_c1_k1");
        assert!(matches!(
            Profile::parse(&bad_schedule, "x.toml"),
            Err(ProfileError::InvalidEntry { .. })
        ));
        let other_arch = text.replace("arch = \"sm_90a\"", "arch = \"sm_80\"");
        assert!(matches!(
            Profile::parse(&other_arch, "x.toml"),
            Err(ProfileError::InvalidEntry { .. })
        ));
    }

    #[test]
    fn a_directory_gives_the_measured_profile_of_this_device() {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        for (device, file) in [
            ("NVIDIA H200", "sm_90a-h200.toml"),
            ("NVIDIA H100 80GB HBM3", "sm_90a-h100.toml"),
        ] {
            let (p, f) = (
                Profile::load_for_device(&shipped, "sm_90a", device).unwrap(),
                Profile::load(&shipped.join(file)).unwrap(),
            );
            assert_eq!((p.meta, p.entries), (f.meta, f.entries));
        }
        // No profile of this device: the error lists what the directory holds.
        let err = Profile::load_for_device(&shipped, "sm_90a", "NVIDIA A100-SXM4-80GB")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("NVIDIA A100-SXM4-80GB")
                && err.contains("sm_90a-h200.toml (NVIDIA H200, sm_90a)")
                && err.contains("sm_89-model.toml (none (cost model only), sm_89, predicted)"),
            "{err}"
        );
        // The right device of another architecture is no match either.
        assert!(matches!(
            Profile::load_for_device(&shipped, "sm_120", "NVIDIA H200"),
            Err(ProfileError::NoneForDevice { .. })
        ));
        // Two profiles of one device: refused, both named. A file that is not a profile is
        // listed, not fatal, and a file path is loaded as before (its architecture checked).
        let dir = std::env::temp_dir().join(format!("forge-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let h100 = shipped.join("sm_90a-h100.toml");
        std::fs::copy(&h100, dir.join("a.toml")).unwrap();
        std::fs::write(dir.join("broken.toml"), "entries = [").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a profile").unwrap();
        let p = Profile::load_for_device(&dir, "sm_90a", "NVIDIA H100 80GB HBM3").unwrap();
        assert_eq!(p.meta.device_name, "NVIDIA H100 80GB HBM3");
        let err = Profile::load_for_device(&dir, "sm_90a", "NVIDIA H200")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("broken.toml (not loaded:") && !err.contains("notes.txt"),
            "{err}"
        );
        std::fs::copy(&h100, dir.join("b.toml")).unwrap();
        let err = Profile::load_for_device(&dir, "sm_90a", "NVIDIA H100 80GB HBM3")
            .unwrap_err()
            .to_string();
        assert!(err.contains("a.toml, b.toml"), "{err}");
        assert!(matches!(
            Profile::load_for_device(&dir.join("a.toml"), "sm_80", "NVIDIA H100 80GB HBM3"),
            Err(ProfileError::WrongArch { .. })
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
