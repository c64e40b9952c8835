//! The dispatch profile: a versioned TOML file that maps each tuned problem to the schedule
//! that won it, with the numbers that justify the choice. Written by `forge tune`, loaded by
//! the training step (through [`crate::dispatch`]) to pick a kernel per shape.
//!
//! # Selection rule for shapes not in the table
//! 1. An entry with the same (dtype, layout, M, N, K): its schedule (`Exact`).
//! 2. Otherwise the tuned entry of the same dtype and layout nearest in log space,
//!    distance² = ln²(M/M') + ln²(N/N') + ln²(K/K'), whose schedule can run the new shape
//!    ([`space::runnable`]: a TMA schedule needs K % 4 == 0) (`Nearest`).
//! 3. Otherwise the canonical schedule, which is valid for every shape (`Canonical`).
//!
//! Every rule returns a schedule that passed the bit-exact gate or is the canonical one, so
//! the numerical result never depends on which rule fired.

use crate::arch::{Arch, ArchError};
use crate::contract::Contract;
use crate::problem::Problem;
use crate::schedule::{Dtype, Layout, Schedule, ScheduleError};
use crate::shape::Shape;
use crate::space;
use crate::util::{git_revision, now_rfc3339, write_atomically};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The schema this build writes and reads.
/// Version 2: `numerical_contract` names the contract (`tf32-rne-k8-inorder`, …); version 1's
/// "bitexact" meant today's `tf32-trunc-k8-inorder` and is refused.
pub const SCHEMA_VERSION: u32 = 2;

/// Where the profile came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// False when the entries are cost-model predictions only (no GPU was used).
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
pub struct Entry {
    pub dtype: Dtype,
    pub layout: Layout,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub schedule: String,
    pub predicted_us: f64,
    pub measured_us: Option<f64>,
    pub tflops: Option<f64>,
    pub cublas_us: Option<f64>,
    pub cublas_tflops: Option<f64>,
    /// cuBLAS time over own time: above 1 means the own kernel is faster.
    pub ratio_vs_cublas: Option<f64>,
    pub gate: Gate,
    /// The next best schedules (gate-passing when measured), best first.
    #[serde(default)]
    pub runners_up: Vec<String>,
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
        }
    }

    pub fn with_contract(mut self, contract: Contract) -> Metadata {
        self.numerical_contract = contract;
        self
    }
}

/// The on-disk document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Document {
    meta: Metadata,
    #[serde(default, rename = "entry")]
    entries: Vec<Entry>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("profile {path} is not valid TOML: {message}")]
    Syntax { path: String, message: String },
    #[error("profile {path} has schema version {found}; this forge reads version {SCHEMA_VERSION}")]
    SchemaVersion { path: String, found: u32 },
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
    #[error("profile {path}: {source}")]
    Arch { path: String, source: ArchError },
    #[error("profile {path}, entry {index} ({shape}): {source}")]
    Schedule {
        path: String,
        index: usize,
        shape: String,
        source: ScheduleError,
    },
    #[error("profile {path}, entry {index} ({shape}): schedule {schedule} cannot run it: {reason}")]
    InvalidEntry {
        path: String,
        index: usize,
        shape: String,
        schedule: String,
        reason: String,
    },
    #[error("cannot write profile {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Which rule chose a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    Exact { entry: usize },
    Nearest { entry: usize, distance: f64 },
    Canonical,
}

/// The answer of [`Profile::select`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    pub schedule: Schedule,
    pub rule: Rule,
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
}

fn log_dims(shape: &Shape) -> [f64; 3] {
    [
        (shape.m as f64).ln(),
        (shape.n as f64).ln(),
        (shape.k as f64).ln(),
    ]
}

impl Profile {
    /// Builds an indexed profile; every entry's schedule must parse and be valid for its shape.
    pub fn new(meta: Metadata, entries: Vec<Entry>) -> Result<Profile, ProfileError> {
        Profile::build(meta, entries, "<memory>")
    }

    fn build(meta: Metadata, entries: Vec<Entry>, path: &str) -> Result<Profile, ProfileError> {
        if meta.schema_version != SCHEMA_VERSION {
            return Err(ProfileError::SchemaVersion {
                path: path.to_string(),
                found: meta.schema_version,
            });
        }
        let arch = Arch::by_name(&meta.arch).map_err(|source| ProfileError::Arch {
            path: path.to_string(),
            source,
        })?;
        let mut schedules = Vec::with_capacity(entries.len());
        let mut exact = HashMap::with_capacity(entries.len());
        for (index, e) in entries.iter().enumerate() {
            let shape = e.shape();
            let schedule: Schedule =
                e.schedule
                    .parse()
                    .map_err(|source| ProfileError::Schedule {
                        path: path.to_string(),
                        index,
                        shape: shape.to_string(),
                        source,
                    })?;
            if let Err(reason) = space::check(&arch, &schedule, &shape) {
                return Err(ProfileError::InvalidEntry {
                    path: path.to_string(),
                    index,
                    shape: shape.to_string(),
                    schedule: e.schedule.clone(),
                    reason: reason.to_string(),
                });
            }
            schedules.push(schedule);
            exact.insert(e.problem(), index);
        }
        let log_dims = entries.iter().map(|e| log_dims(&e.shape())).collect();
        Ok(Profile {
            meta,
            entries,
            arch,
            schedules,
            exact,
            log_dims,
        })
    }

    /// Reads and validates a profile file.
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: shown.clone(),
            source,
        })?;
        Profile::parse(&text, &shown)
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

    /// Parses profile text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<Profile, ProfileError> {
        let doc: Document = toml::from_str(text).map_err(|e| ProfileError::Syntax {
            path: path.to_string(),
            message: e.to_string().trim_end().replace('\n', " "),
        })?;
        Profile::build(doc.meta, doc.entries, path)
    }

    /// The profile as TOML text.
    pub fn to_toml(&self) -> String {
        let doc = Document {
            meta: self.meta.clone(),
            entries: self.entries.clone(),
        };
        toml::to_string_pretty(&doc).expect("a profile always serializes")
    }

    /// Writes the profile atomically: a temporary file in the same directory, then rename.
    pub fn save(&self, path: &Path) -> Result<(), ProfileError> {
        write_atomically(path, self.to_toml().as_bytes()).map_err(|source| ProfileError::Write {
            path: path.display().to_string(),
            source,
        })
    }

    /// The architecture the profile was tuned for.
    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// Picks the schedule for a problem by the rule in the module docs.
    pub fn select(&self, problem: &Problem) -> Selection {
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
            };
        }
        let wanted = log_dims(shape);
        let mut best: Option<(usize, f64)> = None;
        for (i, (e, dims)) in self.entries.iter().zip(&self.log_dims).enumerate() {
            if e.dtype != dtype || e.layout != layout {
                continue;
            }
            let d2: f64 = (0..3).map(|j| (dims[j] - wanted[j]).powi(2)).sum();
            if best.is_none_or(|(_, b)| d2 < b) && space::runnable(&self.schedules[i], shape) {
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
            },
            None => Selection {
                schedule: Schedule::canonical(dtype),
                rule: Rule::Canonical,
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
    fn selects_exact_then_nearest_then_canonical() {
        let p = sample();
        let s = p.select(&Problem::new(
            Dtype::Tf32,
            Layout::Tn,
            Shape::new(4096, 4096, 4096),
        ));
        assert_eq!(s.rule, Rule::Exact { entry: 0 });
        assert_eq!(s.schedule.name(), BIG);
        let s = p.select(&Problem::new(
            Dtype::Tf32,
            Layout::Tn,
            Shape::new(600, 500, 520),
        ));
        assert!(matches!(s.rule, Rule::Nearest { entry: 1, .. }));
        // K odd: no TMA schedule can run it, so the canonical one is chosen.
        let s = p.select(&Problem::new(
            Dtype::Tf32,
            Layout::Tn,
            Shape::new(600, 500, 521),
        ));
        assert_eq!(s.rule, Rule::Canonical);
        assert_eq!(s.schedule, Schedule::canonical(Dtype::Tf32));
        let s = p.select(&Problem::new(
            Dtype::Tf32,
            Layout::Nn,
            Shape::new(4096, 4096, 4096),
        ));
        assert_eq!(s.rule, Rule::Canonical);
    }

    #[test]
    fn bad_profiles_fail_with_the_reason() {
        let p = sample();
        let text = p.to_toml();
        let wrong_version = text.replace("schema_version = 2", "schema_version = 99");
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
}
