//! `forge merge`: profiles tuned apart (the shards of `forge tune --shard i/n` on several
//! hosts, or tunes of different shapes on one) put together into one profile.
//!
//! Inputs must agree on what makes their bits comparable: architecture, numerical contract,
//! canonical schedule and, for measured profiles, the device model. A problem that two
//! inputs chose differently (both measured) is refused rather than silently resolved; a
//! measured entry beats a predicted one, as in a tune. The result is written through the
//! tune's write path ([`record::write_profile`]): validated, locked, journaled, and merged
//! into `--out` by the same rules. The inputs' verified pools (`[[verified]]` tables: gate
//! verdicts of the same device) are carried over, each table once.

use crate::problem::Problem;
use crate::profile::{Entry, Metadata, Profile};
use crate::tune::record::{self, Target};
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Merges `inputs` into the profile at `out`; returns what was written.
pub fn merge_profiles(inputs: &[PathBuf], out: &Path, force: bool) -> anyhow::Result<Profile> {
    if inputs.is_empty() {
        bail!("nothing to merge: name at least one profile");
    }
    let mut loaded = Vec::with_capacity(inputs.len());
    for path in inputs {
        let p = Profile::load(path).with_context(|| format!("merge input {}", path.display()))?;
        loaded.push((path.as_path(), p));
    }
    let (meta, entries) = combine(&loaded)?;
    if let Ok(existing) = Profile::load(out)
        && existing.meta.measured
        && meta.measured
        && existing.meta.device_name != meta.device_name
    {
        bail!(
            "refusing to merge profiles measured on {} into {}, which was measured on {}: a \
             profile names one device",
            meta.device_name,
            out.display(),
            existing.meta.device_name
        );
    }
    let target = Target {
        arch: meta.arch.clone(),
        contract: meta.numerical_contract,
        measured: meta.measured,
        force,
    };
    let verified = loaded
        .iter()
        .flat_map(|(_, p)| p.verified.iter().cloned())
        .collect();
    record::write_profile(out, &target, meta, entries, verified)
}

/// The merged metadata and entries of `profiles` (path, profile), or why they cannot merge.
pub fn combine(profiles: &[(&Path, Profile)]) -> anyhow::Result<(Metadata, Vec<Entry>)> {
    let Some((first_path, first)) = profiles.first() else {
        bail!("nothing to merge");
    };
    let measured: Vec<&(&Path, Profile)> =
        profiles.iter().filter(|(_, p)| p.meta.measured).collect();
    for (path, p) in &profiles[1..] {
        let differs = |what: &str, a: &str, b: &str| {
            anyhow::anyhow!(
                "cannot merge {} ({what} {b}) with {} ({what} {a}): profiles of different \
                 {what}s do not share bits",
                path.display(),
                first_path.display()
            )
        };
        if p.meta.arch != first.meta.arch {
            return Err(differs("architecture", &first.meta.arch, &p.meta.arch));
        }
        if p.meta.numerical_contract != first.meta.numerical_contract {
            return Err(differs(
                "numerical contract",
                first.meta.numerical_contract.name(),
                p.meta.numerical_contract.name(),
            ));
        }
        if p.meta.canonical_schedule != first.meta.canonical_schedule {
            return Err(differs(
                "canonical schedule",
                &first.meta.canonical_schedule,
                &p.meta.canonical_schedule,
            ));
        }
    }
    if let Some((device_path, device)) = measured.first() {
        for (path, p) in &measured[1..] {
            if p.meta.device_name != device.meta.device_name {
                bail!(
                    "cannot merge {} (measured on {}) with {} (measured on {}): a profile \
                     names one device, and speed (and so the choices) are per device",
                    path.display(),
                    p.meta.device_name,
                    device_path.display(),
                    device.meta.device_name
                );
            }
        }
    }
    let mut merged: BTreeMap<Problem, (&Path, Entry)> = BTreeMap::new();
    for (path, p) in profiles {
        for e in &p.entries {
            let problem = e.problem();
            match merged.get(&problem) {
                None => {
                    merged.insert(problem, (path, e.clone()));
                }
                Some((_, old)) if old.is_measured() && !e.is_measured() => {}
                Some((_, old)) if !old.is_measured() && e.is_measured() => {
                    merged.insert(problem, (path, e.clone()));
                }
                Some((_, old)) if old.schedule == e.schedule => {}
                Some((old_path, old)) => bail!(
                    "{problem} is {} in {} and {} in {}: tuned twice with different choices; \
                     merge only one of them (re-tune the shape to settle it)",
                    old.schedule,
                    old_path.display(),
                    e.schedule,
                    path.display()
                ),
            }
        }
    }
    // The metadata of the newest measured input (RFC 3339 dates sort as text), else the
    // first input's; measured if any entry is.
    let newest = measured
        .iter()
        .max_by(|a, b| a.1.meta.date.cmp(&b.1.meta.date))
        .map_or(first, |(_, p)| p);
    let mut meta = newest.meta.clone();
    // An input written before profiles recorded their device leaves the table to another
    // input of the same device (they were checked to be one device above).
    if meta.device.is_none() {
        meta.device = measured.iter().find_map(|(_, p)| p.meta.device.clone());
    }
    let entries: Vec<Entry> = merged.into_values().map(|(_, e)| e).collect();
    meta.measured = entries.iter().any(Entry::is_measured);
    Ok((meta, entries))
}
