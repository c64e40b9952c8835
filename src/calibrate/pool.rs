//! `forge pool`: widens selection's pool with the schedules calibration data saw pass the gate
//! on the profile's device. A shape the profile does not hold is ranked by the cost model among
//! its pool ([`crate::profile::Profile::select`]); a pool of the tuned entries' winners and
//! runners-up lacks the tile widths that fit other shapes' waves (256×11008×4096 reaches 0.79
//! of its best with them), so every schedule measured bit-identical to the canonical output on
//! this device, on some calibration shape, is added as a `[[verified]]` table.

use super::data::CalibrationData;
use crate::profile::{Profile, Verified};
use crate::report::Verdict;
use anyhow::bail;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// `profile` with the gate-passing schedules of `data` (measured on `paths`) added to its
/// verified pool, per dtype and layout, each once (sorted by name); its other tables kept.
/// Refuses data of another architecture, device or numerical contract than the profile's.
pub fn add_verified(
    profile: Profile,
    data: &CalibrationData,
    paths: &[PathBuf],
) -> anyhow::Result<(Profile, usize)> {
    let meta = &profile.meta;
    if data.arch.name != meta.arch || data.device_name != meta.device_name {
        bail!(
            "the data was measured on {} ({}), the profile on {} ({}): the gate's verdicts are \
             the device's",
            data.device_name,
            data.arch.name,
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
    let mut passed: BTreeMap<_, BTreeSet<String>> = BTreeMap::new();
    for shape in data.shapes.iter().filter(|s| s.reference_passed) {
        // A split-K schedule that matched the canonical bits on one shape did so by chance: a
        // bit-exact pool never holds it (the profile refuses it).
        let kept = shape
            .points
            .iter()
            .filter(|p| p.gate == Verdict::Pass && !p.schedule.changes_reduction_order());
        for p in kept {
            let key = (shape.problem.dtype, shape.problem.layout);
            passed
                .entry(key)
                .or_default()
                .insert(p.schedule.to_string());
        }
    }
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let source = format!(
        "forge pool: passed the gate on {} ({} shapes, {})",
        data.device_name,
        data.shapes.len(),
        shown.join(", ")
    );
    let mut tables = profile.verified.clone();
    let mut added = 0;
    for ((dtype, layout), names) in passed {
        let known: BTreeSet<String> = profile
            .pool(dtype, layout)
            .iter()
            .map(|s| s.to_string())
            .collect();
        let new: Vec<String> = names.into_iter().filter(|n| !known.contains(n)).collect();
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
        let (p, added) = add_verified(h200_profile(&data), &data, &paths).unwrap();
        // A profile without entries has no pool to start from: every one is new.
        assert_eq!(added, passed.len());
        let pool: BTreeSet<String> = p
            .pool(crate::schedule::Dtype::Tf32, crate::schedule::Layout::Tn)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(passed.is_subset(&pool));
        // Adding the same data again adds nothing and writes no empty table.
        let (again, added) = add_verified(p.clone(), &data, &paths).unwrap();
        assert_eq!(added, 0);
        assert_eq!(again.verified, p.verified);
    }

    #[test]
    fn data_of_another_device_or_contract_is_refused() {
        let (data, paths) = set4();
        let mut other = h200_profile(&data);
        other.meta.device_name = "NVIDIA H100 80GB HBM3".into();
        let err = add_verified(other, &data, &paths).unwrap_err().to_string();
        assert!(err.contains("NVIDIA H100 80GB HBM3"), "{err}");
        let mut other = h200_profile(&data);
        other.meta.numerical_contract =
            crate::contract::Contract::new(crate::contract::Rounding::Truncate);
        let err = add_verified(other, &data, &paths).unwrap_err().to_string();
        assert!(err.contains("measured under"), "{err}");
    }
}
