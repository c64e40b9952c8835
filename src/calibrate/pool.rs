//! `forge pool`: widens selection's pool with the schedules calibration data saw pass the gate
//! on the profile's device. A shape the profile does not hold is ranked by the cost model among
//! its pool ([`crate::profile::Profile::select`]); a pool of the tuned entries' winners and
//! runners-up lacks the tile widths that fit other shapes' waves (256×11008×4096 reaches 0.79
//! of its best with them), so every schedule measured bit-identical to the canonical output on
//! this device, on some calibration shape or some shape of a tune's run report, is added as a
//! `[[verified]]` table.

use super::data::CalibrationData;
use crate::contract::Contract;
use crate::profile::{Profile, Verified};
use crate::report::{RunReport, Verdict};
use crate::schedule::{Dtype, Layout, Schedule};
use anyhow::{Context, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The schedules one data set saw pass the gate, per dtype and layout, with the device,
/// architecture and numerical contract it was measured on.
pub struct GatePasses {
    pub device_name: String,
    pub arch: String,
    pub contract: Contract,
    /// Shapes measured (the pool's source line names the count).
    pub shapes: usize,
    pub passed: BTreeMap<(Dtype, Layout), BTreeSet<String>>,
}

impl GatePasses {
    fn new(device_name: &str, arch: &str, contract: Contract, shapes: usize) -> GatePasses {
        GatePasses {
            device_name: device_name.to_string(),
            arch: arch.to_string(),
            contract,
            shapes,
            passed: BTreeMap::new(),
        }
    }

    /// A schedule that passed on a shape whose reference check passed. A split-K schedule
    /// that matched the canonical bits on one shape did so by chance: a bit-exact pool never
    /// holds it (the profile refuses it).
    fn add(&mut self, dtype: Dtype, layout: Layout, schedule: &Schedule, gate: Verdict) {
        if gate == Verdict::Pass && !schedule.changes_reduction_order() {
            let names = self.passed.entry((dtype, layout)).or_default();
            names.insert(schedule.to_string());
        }
    }

    /// Every gate-passing point of a calibration data set (`forge calibrate`).
    pub fn from_calibration(data: &CalibrationData) -> GatePasses {
        let mut g = GatePasses::new(
            &data.device_name,
            &data.arch.name,
            data.contract,
            data.shapes.len(),
        );
        for shape in data.shapes.iter().filter(|s| s.reference_passed) {
            for p in &shape.points {
                g.add(
                    shape.problem.dtype,
                    shape.problem.layout,
                    &p.schedule,
                    p.gate,
                );
            }
        }
        g
    }

    /// Every gate-passing candidate of a tune's run report (`forge tune --run-dir`).
    pub fn from_run(report: &RunReport) -> anyhow::Result<GatePasses> {
        let prov = &report.provenance;
        let contract: Contract = prov.numerical_contract.parse().map_err(|e| {
            anyhow::anyhow!(
                "run report's numerical contract {:?}: {e}",
                prov.numerical_contract
            )
        })?;
        let mut g = GatePasses::new(&prov.device_name, &prov.arch, contract, report.shapes.len());
        let checked = report
            .shapes
            .iter()
            .filter(|s| s.reference.as_ref().is_some_and(|r| r.passed));
        for shape in checked {
            for c in &shape.candidates {
                g.add(
                    shape.problem.dtype,
                    shape.problem.layout,
                    &c.schedule,
                    c.gate.verdict,
                );
            }
        }
        Ok(g)
    }

    /// The data at `path`: a tune's run directory (or its report.json), else a calibration
    /// data set (or its calibration.json).
    pub fn load(path: &std::path::Path) -> anyhow::Result<GatePasses> {
        let run = if path.is_dir() {
            path.join(crate::report::REPORT_JSON).is_file()
        } else {
            path.file_name() == Some(crate::report::REPORT_JSON.as_ref())
        };
        if run {
            let report = RunReport::load(path)?;
            GatePasses::from_run(&report).with_context(|| path.display().to_string())
        } else {
            Ok(GatePasses::from_calibration(&CalibrationData::load(path)?))
        }
    }
}

/// `profile` with the gate-passing schedules of `data` (measured on `paths`) added to its
/// verified pool, per dtype and layout, each once (sorted by name); its other tables kept.
/// Refuses data of another architecture, device or numerical contract than the profile's.
pub fn add_verified(
    profile: Profile,
    data: &GatePasses,
    paths: &[PathBuf],
) -> anyhow::Result<(Profile, usize)> {
    let meta = &profile.meta;
    if data.arch != meta.arch || data.device_name != meta.device_name {
        bail!(
            "the data was measured on {} ({}), the profile on {} ({}): the gate's verdicts are \
             the device's",
            data.device_name,
            data.arch,
            meta.device_name,
            meta.arch
        );
    }
    if data.contract != meta.numerical_contract {
        bail!(
            "the data was measured under {}, the profile is {}",
            data.contract,
            meta.numerical_contract
        );
    }
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let source = format!(
        "forge pool: passed the gate on {} ({} shapes, {})",
        data.device_name,
        data.shapes,
        shown.join(", ")
    );
    let mut tables = profile.verified.clone();
    let mut added = 0;
    for (&(dtype, layout), names) in &data.passed {
        let known: BTreeSet<String> = profile
            .pool(dtype, layout)
            .iter()
            .map(|s| s.to_string())
            .collect();
        let new: Vec<String> = names
            .iter()
            .filter(|n| !known.contains(*n))
            .cloned()
            .collect();
        if new.is_empty() {
            continue;
        }
        added += new.len();
        tables.push(Verified {
            dtype,
            layout,
            source: source.clone(),
            schedules: new,
        });
    }
    Ok((profile.with_verified(tables)?, added))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::meta;

    fn set4() -> (CalibrationData, Vec<PathBuf>) {
        let dir =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reports/2026-12-04-h200-calibration-4");
        (CalibrationData::load(&dir).unwrap(), vec![dir])
    }

    fn h200_profile(data: &CalibrationData) -> Profile {
        let mut m = meta("sm_90a");
        m.device_name = data.device_name.clone();
        m.numerical_contract = data.contract;
        Profile::new(m, vec![]).unwrap()
    }

    #[test]
    fn every_gate_passing_schedule_joins_the_pool_once() {
        let (data, paths) = set4();
        let passed: BTreeSet<String> = data
            .shapes
            .iter()
            .filter(|s| s.reference_passed)
            .flat_map(|s| s.points.iter().filter(|p| p.gate == Verdict::Pass))
            .filter(|p| !p.schedule.changes_reduction_order())
            .map(|p| p.schedule.to_string())
            .collect();
        assert!(passed.len() > 100);
        let (p, added) = add_verified(
            h200_profile(&data),
            &GatePasses::from_calibration(&data),
            &paths,
        )
        .unwrap();
        // A profile without entries has no pool to start from: every one is new.
        assert_eq!(added, passed.len());
        let pool: BTreeSet<String> = p
            .pool(crate::schedule::Dtype::Tf32, crate::schedule::Layout::Tn)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(passed.is_subset(&pool));
        // Adding the same data again adds nothing and writes no empty table.
        let (again, added) =
            add_verified(p.clone(), &GatePasses::from_calibration(&data), &paths).unwrap();
        assert_eq!(added, 0);
        assert_eq!(again.verified, p.verified);
    }

    #[test]
    fn data_of_another_device_or_contract_is_refused() {
        let (data, paths) = set4();
        let mut other = h200_profile(&data);
        other.meta.device_name = "NVIDIA H100 80GB HBM3".into();
        let err = add_verified(other, &GatePasses::from_calibration(&data), &paths)
            .unwrap_err()
            .to_string();
        assert!(err.contains("NVIDIA H100 80GB HBM3"), "{err}");
        let mut other = h200_profile(&data);
        other.meta.numerical_contract =
            crate::contract::Contract::new(crate::contract::Rounding::Truncate);
        let err = add_verified(other, &GatePasses::from_calibration(&data), &paths)
            .unwrap_err()
            .to_string();
        assert!(err.contains("measured under"), "{err}");
    }

    #[test]
    fn a_tune_run_widens_the_pool_of_its_own_device_only() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let run = root.join("reports/2026-12-05-h100-session15/suite/run_suite");
        let data = GatePasses::load(&run).unwrap();
        assert_eq!(data.device_name, "NVIDIA H100 80GB HBM3");
        assert_eq!(data.shapes, 21);
        let report = RunReport::load(&run).unwrap();
        let split_k = report
            .shapes
            .iter()
            .flat_map(|s| &s.candidates)
            .filter(|c| c.schedule.changes_reduction_order())
            .count();
        assert!(split_k > 0, "the suite screens split-K candidates");
        let names = &data.passed[&(Dtype::Tf32, Layout::Tn)];
        assert!(names.len() > 100, "{}", names.len());
        assert!(
            names
                .iter()
                .all(|n| !n.parse::<Schedule>().unwrap().changes_reduction_order())
        );
        // The profile that run wrote (profiles/sm_90a-h100.toml is it after this `forge pool`).
        let profile = Profile::load(&run.join("../profile_suite.toml")).unwrap();
        assert!(profile.verified.is_empty());
        let before: BTreeSet<String> = profile
            .pool(Dtype::Tf32, Layout::Tn)
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (widened, added) = add_verified(profile, &data, std::slice::from_ref(&run)).unwrap();
        assert_eq!(added, names.difference(&before).count());
        assert!(added > 0);
        let after: BTreeSet<String> = widened
            .pool(Dtype::Tf32, Layout::Tn)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(names.is_subset(&after) && before.is_subset(&after));
        // The H200's profile refuses the H100's verdicts.
        let h200 = Profile::load(&root.join("profiles/sm_90a-h200.toml")).unwrap();
        let err = add_verified(h200, &data, &[run]).unwrap_err().to_string();
        assert!(err.contains("NVIDIA H100 80GB HBM3"), "{err}");
    }
}
