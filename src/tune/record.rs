//! What a tune leaves behind: provenance, the profile's entries (assembled from the report
//! and merged into an existing profile), and the one write path that both the measured and
//! the cost-model-only run use ([`RunFiles`]: report after every shape, then report and
//! profile together, then summary and plots).
//!
//! # Rules for files already there
//! Checked before anything is written ([`RunFiles::open`]) and again under the locks at every
//! write:
//! * a file at the profile's path that is not a forge profile (unreadable, not text, not
//!   TOML, no `[meta]` with a `schema_version`) is never overwritten, not even with `--force`;
//!   a forge profile that does not load, or one for another architecture, is replaced only
//!   with `--force`;
//! * a run that measured nothing (no GPU) does not write into a profile with measured entries
//!   (or a run directory with measured shapes) without `--force`; with it, the measured
//!   entries and shapes are kept and the predictions added beside them;
//! * otherwise the entries merge by problem: a measured entry is never replaced by a
//!   predicted one; else the newer wins.
//!
//! # Concurrency and interruption
//! The run directory has a lock (`.forge.lock`), held for each read-merge-write of its report
//! (not for the whole run: two tunes sharing a directory both land their shapes); the profile
//! has one (`.<name>.lock`), taken after the run directory's. The report (JSON and CSV) and
//! the profile are replaced in one journaled [`Commit`] whose journal lives in the run
//! directory: a process killed at any point leaves either the old files or a journal that the
//! next writer of that run directory completes. Stale temporaries of dead processes are
//! removed when a run starts.

use super::{TuneOptions, export};
use crate::contract::Contract;
use crate::device::DeviceInfo;
use crate::device::cublas::CUBLAS_MODE;
use crate::durable::{self, Commit, Lock};
use crate::problem::Problem;
use crate::profile::{Entry, Gate, Metadata, OnDisk, Profile, Verified};
use crate::report::{Provenance, REPORT_JSON, ReportError, RunReport, ShapeReport, Verdict};
use crate::schedule::LaunchOrder;
use crate::util::parent_dir;
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A device name as a file-name part: `NVIDIA H200` → `h200`.
pub fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty() && *p != "nvidia")
        .collect::<Vec<_>>()
        .join("-")
}

/// The profile's metadata for this run (`info` is None for a cost-model-only run).
pub fn metadata(opts: &TuneOptions, info: Option<&DeviceInfo>) -> Metadata {
    let measured = info.is_some();
    let mut meta =
        Metadata::now(&opts.arch.name, opts.dtype(), measured).with_contract(opts.contract);
    meta.device_name = info.map_or("none (cost model only)".into(), |i| i.name.clone());
    if let Some(i) = info {
        meta.driver_version = i.driver_version.clone();
        meta.nvrtc_version = i.nvrtc_version.clone();
        meta.cublas_mode = CUBLAS_MODE.into();
        meta.device = Some(i.measured_properties());
    }
    meta
}

/// Where and how the report's numbers were taken.
pub fn provenance(
    opts: &TuneOptions,
    info: Option<&DeviceInfo>,
    cublas_version: &str,
) -> Provenance {
    let measured = info.is_some();
    Provenance {
        device_name: info.map_or("none".into(), |i| i.name.clone()),
        arch: opts.arch.name.clone(),
        sm_count: info.map_or(0, |i| i.sm_count),
        l2_bytes: info.map_or(0, |i| i.l2_bytes),
        sm_clock_mhz: info.map_or(0.0, |i| i.sm_clock_mhz),
        driver_version: info.map_or(String::new(), |i| i.driver_version.clone()),
        nvrtc_version: info.map_or(String::new(), |i| i.nvrtc_version.clone()),
        cublas_version: cublas_version.into(),
        forge_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: crate::util::git_revision().into(),
        date: crate::util::now_rfc3339(),
        command: opts.command.clone(),
        numerical_contract: opts.contract.name().into(),
        measured,
        timing_method: if measured {
            opts.timing.describe()
        } else {
            "none: cost-model predictions".into()
        },
        cublas_mode: if measured {
            CUBLAS_MODE.into()
        } else {
            String::new()
        },
    }
}

/// The profile entry of one measured shape: its chosen schedule with the head-to-head (or
/// screen) numbers, and the next gate-passing schedules as runners-up. None when nothing
/// passed.
pub fn measured_entry(s: &ShapeReport) -> Option<Entry> {
    let (chosen, own, cublas) = s.parity()?;
    let predicted_us = s
        .candidates
        .iter()
        .find(|c| c.schedule == chosen)
        .map_or(0.0, |c| c.predicted_us);
    if chosen.changes_reduction_order() {
        eprintln!(
            "{}: {chosen} splits K; a bit-exact profile never holds it",
            s.problem.shape
        );
        return None;
    }
    let mut passing: Vec<_> = s
        .measured()
        .filter(|(c, _)| {
            c.gate.verdict == Verdict::Pass
                && c.schedule != chosen
                && !c.schedule.changes_reduction_order()
        })
        .collect();
    passing.sort_by(|a, b| a.1.median_us.total_cmp(&b.1.median_us));
    let mut entry = Entry::predicted(s.problem, &chosen, predicted_us);
    entry.measured_us = Some(own.median_us);
    entry.tflops = Some(own.tflops);
    entry.cublas_us = Some(cublas.median_us);
    entry.cublas_tflops = Some(cublas.tflops);
    entry.ratio_vs_cublas = Some(cublas.median_us / own.median_us);
    entry.burst_ratio_vs_cublas = s
        .head_to_head
        .as_ref()
        .and_then(|h| h.burst_ratio())
        .filter(|r| r.is_finite() && *r > 0.0);
    // Screens launch serially; a head-to-head says how it launched.
    entry.launch = s
        .head_to_head
        .as_ref()
        .map_or(LaunchOrder::Serial, |h| h.launch);
    entry.gate = Gate::Passed;
    // The next fastest kernels, one launch variant each (with the tune's second screen the
    // fastest few are often the chosen kernel's own rasters): the pool selection ranks for
    // other shapes then holds other kernels.
    let kernels = super::picks::one_per_kernel(
        std::iter::once(chosen).chain(passing.iter().map(|(c, _)| c.schedule)),
        4,
    );
    entry.runners_up = kernels[1..].iter().map(|s| s.name()).collect();
    let numbers = [
        own.median_us,
        own.tflops,
        cublas.median_us,
        cublas.tflops,
        cublas.median_us / own.median_us,
    ];
    if !numbers.iter().all(|v| v.is_finite() && *v > 0.0) {
        eprintln!(
            "{}: the measurements of {chosen} are not all finite and positive ({numbers:?}): \
             no profile entry",
            s.problem.shape
        );
        return None;
    }
    Some(entry)
}

/// What this run writes, for the rules on files already there.
#[derive(Clone, Debug)]
pub struct Target {
    pub arch: String,
    /// Profiles and reports of another contract are another arch's, for these rules: their
    /// schedules were gated under other bits.
    pub contract: Contract,
    /// Whether a device measured this run.
    pub measured: bool,
    pub force: bool,
}

/// How an existing file and this run are named when they differ: by architecture when that
/// differs (`sm_90a`), else by architecture and contract (`sm_90a tf32-rne-k8-inorder`).
fn kinds(old: (&str, &str), new: (&str, &str)) -> (String, String) {
    if old.0 != new.0 {
        (old.0.to_string(), new.0.to_string())
    } else {
        (
            format!("{} {}", old.0, old.1),
            format!("{} {}", new.0, new.1),
        )
    }
}

/// Whether this run's results are the simulated device's (`crate::device::simulated`).
fn run_is_simulated(t: &Target) -> bool {
    t.measured && crate::device::simulated::enabled()
}

/// Simulated and device-measured results never share a file: when a file with `measured`
/// measured entries (or shapes) of `old_device` and this run differ in that, the merge is
/// refused, or with --force the file is replaced (`Some(note)`).
fn refuse_mixing(
    what_file: &str,
    shown: impl std::fmt::Display,
    old_device: &str,
    measured: usize,
    t: &Target,
) -> anyhow::Result<Option<String>> {
    let old_sim = old_device == crate::device::simulated::NAME;
    if measured == 0 || old_sim == run_is_simulated(t) {
        return Ok(None);
    }
    let (old, new) = if old_sim {
        ("simulated", "measures on a GPU")
    } else {
        ("measured on a GPU", "is simulated")
    };
    if !t.force {
        bail!(
            "refusing to mix simulated and device-measured results in {what_file} {shown}: it \
             holds {measured} results {old} ({old_device}) and this run {new}: pass another \
             path, or --force to replace it"
        );
    }
    Ok(Some(format!(
        "replacing {what_file} {shown} ({measured} results {old}) with this run's (--force)"
    )))
}

/// The base an existing profile gives the merge (None: start empty), and a note to print.
fn profile_base(
    path: &Path,
    on_disk: OnDisk,
    t: &Target,
) -> anyhow::Result<(Option<Profile>, Option<String>)> {
    let shown = path.display();
    match on_disk {
        OnDisk::Missing => Ok((None, None)),
        OnDisk::Foreign(reason) => bail!(
            "refusing to overwrite {shown}: it is not a forge profile ({reason}); forge never \
             overwrites such a file, not even with --force: move it away or pass another --profile"
        ),
        OnDisk::Invalid(e) if t.force => Ok((
            None,
            Some(format!(
                "replacing a profile that does not load (--force): {e}"
            )),
        )),
        OnDisk::Invalid(e) => bail!(
            "refusing to replace {shown}, a forge profile that does not load ({e}): fix or move \
             it, or pass --force to replace it"
        ),
        OnDisk::Valid(old) => {
            let measured = old.entries.iter().filter(|e| e.is_measured()).count();
            let what = format!(
                "{} entries, {measured} measured{}",
                old.entries.len(),
                if measured > 0 {
                    format!(" on {}", old.meta.device_name)
                } else {
                    String::new()
                }
            );
            if let Some(note) =
                refuse_mixing("the profile", &shown, &old.meta.device_name, measured, t)?
            {
                return Ok((None, Some(note)));
            }
            let (old_kind, new_kind) = kinds(
                (&old.meta.arch, old.meta.numerical_contract.name()),
                (&t.arch, t.contract.name()),
            );
            if old_kind != new_kind {
                if !t.force {
                    bail!(
                        "refusing to replace {shown}: it is the {old_kind} profile ({what}) and \
                         this run is for {new_kind}: pass another --profile, or --force to \
                         replace it"
                    );
                }
                let note = format!(
                    "replacing the {old_kind} profile {shown} ({what}) with a {new_kind} one \
                     (--force)"
                );
                return Ok((None, Some(note)));
            }
            if measured > 0 && !t.measured && !t.force {
                bail!(
                    "refusing to write cost-model predictions into {shown}: it holds {measured} \
                     measured entries (of {}, measured on {}) and no GPU measured this run: \
                     pass another --profile, or --force to add the predictions (measured \
                     entries are kept)",
                    old.entries.len(),
                    old.meta.device_name
                );
            }
            Ok((Some(*old), None))
        }
    }
}

/// The run directory's report: None when it has none.
fn read_report(dir: &Path) -> Result<Option<RunReport>, ReportError> {
    match std::fs::metadata(dir.join(REPORT_JSON)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => RunReport::load(dir).map(Some),
    }
}

/// Whether a shape was measured on a device (its cuBLAS baseline ran).
fn shape_measured(s: &ShapeReport) -> bool {
    s.cublas.is_some()
}

/// The base an existing report gives the merge (None: start empty), and a note to print.
fn report_base(
    dir: &Path,
    on_disk: Result<Option<RunReport>, ReportError>,
    t: &Target,
) -> anyhow::Result<(Option<RunReport>, Option<String>)> {
    let shown = dir.display();
    match on_disk {
        Ok(None) => Ok((None, None)),
        Err(e) if t.force => Ok((
            None,
            Some(format!(
                "replacing a report that does not load (--force): {e}"
            )),
        )),
        Err(e) => bail!(
            "refusing to overwrite the run directory's report: {e}; pass another --run-dir, or \
             --force to replace it"
        ),
        Ok(Some(old)) => {
            let measured = old.shapes.iter().filter(|s| shape_measured(s)).count();
            if let Some(note) = refuse_mixing(
                "the run directory",
                &shown,
                &old.provenance.device_name,
                measured,
                t,
            )? {
                return Ok((None, Some(note)));
            }
            let (old_kind, new_kind) = (
                format!(
                    "{} {}",
                    old.provenance.arch, old.provenance.numerical_contract
                ),
                format!("{} {}", t.arch, t.contract),
            );
            if !old.shapes.is_empty() && old_kind != new_kind {
                if !t.force {
                    bail!(
                        "refusing to reuse run directory {shown}: its report is for {old_kind} \
                         ({} shapes) and this run is for {new_kind}: pass another --run-dir, or \
                         --force to replace the report",
                        old.shapes.len(),
                    );
                }
                let note = format!(
                    "replacing the {old_kind} report in {shown} with a {new_kind} one (--force)"
                );
                return Ok((None, Some(note)));
            }
            if measured > 0 && !t.measured && !t.force {
                bail!(
                    "refusing to write cost-model predictions into run directory {shown}: its \
                     report holds {measured} measured shapes and no GPU measured this run: pass \
                     another --run-dir, or --force to add the predictions (measured shapes are \
                     kept)"
                );
            }
            Ok((Some(old), None))
        }
    }
}

/// Merges this run's shapes into the report on disk: per problem a measured shape is never
/// replaced by a predicted one; else this run's wins. The provenance is this run's, unless
/// this run measured nothing and measured shapes are kept.
fn merge_report(
    base: Option<RunReport>,
    provenance: &Provenance,
    mine: &[ShapeReport],
) -> RunReport {
    let (old_provenance, mut shapes) = match base {
        Some(b) => (Some(b.provenance), b.shapes),
        None => (None, vec![]),
    };
    for s in mine {
        match shapes.iter().position(|o| o.problem == s.problem) {
            Some(i) if shape_measured(&shapes[i]) && !shape_measured(s) => {}
            Some(i) => shapes[i] = s.clone(),
            None => shapes.push(s.clone()),
        }
    }
    let provenance = match old_provenance {
        Some(old) if !provenance.measured && shapes.iter().any(shape_measured) => old,
        _ => provenance.clone(),
    };
    RunReport { provenance, shapes }
}

/// Merges this run's entries into the profile on disk (the rule of [`merge_report`]), and
/// the metadata: this run's, unless it measured nothing and measured entries are kept (then
/// the old device fields stay and only the build and date are this run's).
fn merge_profile(
    base: Option<Profile>,
    meta: Metadata,
    entries: Vec<Entry>,
) -> (Metadata, Vec<Entry>, Vec<Verified>) {
    let mut merged: BTreeMap<Problem, Entry> = BTreeMap::new();
    let mut verified = vec![];
    let old_meta = base.map(|old| {
        for e in old.entries {
            merged.insert(e.problem(), e);
        }
        verified = old.verified;
        old.meta
    });
    for e in entries {
        match merged.get(&e.problem()) {
            Some(old) if old.is_measured() && !e.is_measured() => {}
            _ => {
                merged.insert(e.problem(), e);
            }
        }
    }
    let any_measured = merged.values().any(Entry::is_measured);
    let mut meta = match old_meta {
        Some(mut old) if !meta.measured && any_measured => {
            old.forge_version = meta.forge_version;
            old.git_revision = meta.git_revision;
            old.date = meta.date;
            old
        }
        _ => meta,
    };
    meta.measured |= any_measured;
    (meta, merged.into_values().collect(), verified)
}

/// Writes `entries` (with `meta`) into the profile at `path` under its lock, by the rules of
/// a tune (what is there is merged into, or refused; see the module's rules), in one
/// journaled commit whose journal lives in the profile's directory; `verified` tables are
/// added after the ones already there (a table already there is not repeated). `forge
/// merge`'s write path.
pub fn write_profile(
    path: &Path,
    target: &Target,
    meta: Metadata,
    entries: Vec<Entry>,
    verified: Vec<Verified>,
) -> anyhow::Result<Profile> {
    let dir = parent_dir(path);
    durable::check_writable(&dir, "profile directory").map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create profile directory {}", dir.display()))?;
    // The journal lives in the directory: its lock first (as a tune takes its run
    // directory's), then the profile's.
    let _dir_lock = Lock::acquire(
        &durable::lock_path_for_dir(&dir),
        &format!("directory {}", dir.display()),
    )?;
    let lock_path = durable::lock_path_for(path);
    let _lock = Lock::acquire(&lock_path, &format!("profile {}", path.display()))?;
    for note in durable::recover(&dir)? {
        eprintln!("{note}");
    }
    let (base, note) = profile_base(path, OnDisk::inspect(path), target)?;
    print_note(note);
    let (meta, entries, mut tables) = merge_profile(base, meta, entries);
    for t in verified {
        if !tables.contains(&t) {
            tables.push(t);
        }
    }
    let profile = Profile::with_pool(meta, entries, tables)?;
    let mut commit = Commit::new(&dir);
    commit.stage(path, profile.to_toml().as_bytes(), Some(&lock_path))?;
    commit.commit()?;
    Ok(profile)
}

/// The run directory and the profile of one tune, and the rules for writing them.
pub struct RunFiles {
    pub run_dir: PathBuf,
    pub profile: PathBuf,
    target: Target,
}

fn print_note(note: Option<String>) {
    if let Some(n) = note {
        eprintln!("{n}");
    }
}

impl RunFiles {
    /// Checks, before anything is written, that the run directory and the profile's
    /// directory are writable and that the rules allow replacing what is there; then creates
    /// the run directory, completes an interrupted commit in it, removes stale temporaries
    /// (run directory, profile directory, kernel cache) and returns the report already there
    /// (its measured shapes are skipped by a measured run unless `--force`).
    pub fn open(
        opts: &TuneOptions,
        target: Target,
        run_dir: PathBuf,
        profile: PathBuf,
    ) -> anyhow::Result<(RunFiles, Option<RunReport>)> {
        let profile_dir = parent_dir(&profile);
        durable::check_writable(&run_dir, "run directory").map_err(anyhow::Error::msg)?;
        durable::check_writable(&profile_dir, "profile directory").map_err(anyhow::Error::msg)?;
        profile_base(&profile, OnDisk::inspect(&profile), &target)?;
        report_base(&run_dir, read_report(&run_dir), &target)?;
        std::fs::create_dir_all(&run_dir)
            .with_context(|| format!("cannot create run directory {}", run_dir.display()))?;
        let files = RunFiles {
            run_dir,
            profile,
            target,
        };
        let _lock = files.lock_run_dir()?;
        for dir in [&files.run_dir, &profile_dir, &opts.cache_dir] {
            let removed = durable::clean_stale_temporaries(dir);
            if removed > 0 {
                eprintln!(
                    "removed {removed} temporary file(s) of interrupted runs from {}",
                    dir.display()
                );
            }
        }
        let (report, _) = report_base(&files.run_dir, read_report(&files.run_dir), &files.target)?;
        Ok((files, report))
    }

    /// Takes the run directory's lock and completes an interrupted commit found there.
    fn lock_run_dir(&self) -> anyhow::Result<Lock> {
        let lock = Lock::acquire(
            &durable::lock_path_for_dir(&self.run_dir),
            &format!("run directory {}", self.run_dir.display()),
        )?;
        for note in durable::recover(&self.run_dir)? {
            eprintln!("{note}");
        }
        Ok(lock)
    }

    /// Under the run directory's lock: merges this run's shapes into the report on disk and
    /// writes report.json and report.csv together. Returns the merged report.
    pub fn save_report(
        &self,
        provenance: &Provenance,
        mine: &[ShapeReport],
    ) -> anyhow::Result<RunReport> {
        let _lock = self.lock_run_dir()?;
        let (base, note) = report_base(&self.run_dir, read_report(&self.run_dir), &self.target)?;
        print_note(note);
        let merged = merge_report(base, provenance, mine);
        let mut commit = Commit::new(&self.run_dir);
        export::stage_report(&mut commit, &self.run_dir, &merged)?;
        commit.commit()?;
        Ok(merged)
    }

    /// The end of every tune, under both locks: merges this run's shapes into the report and
    /// the entries `entries_of(merged report)` into the profile, writes report and profile in
    /// one commit, then (unless `--no-plots`) the summary and plots. Returns the merged report.
    pub fn finish(
        &self,
        opts: &TuneOptions,
        provenance: &Provenance,
        mine: &[ShapeReport],
        meta: Metadata,
        entries_of: impl FnOnce(&RunReport) -> Vec<Entry>,
    ) -> anyhow::Result<RunReport> {
        let _run_lock = self.lock_run_dir()?;
        let (base, note) = report_base(&self.run_dir, read_report(&self.run_dir), &self.target)?;
        print_note(note);
        let report = merge_report(base, provenance, mine);
        let profile_dir = parent_dir(&self.profile);
        std::fs::create_dir_all(&profile_dir).with_context(|| {
            format!("cannot create profile directory {}", profile_dir.display())
        })?;
        let profile_lock_path = durable::lock_path_for(&self.profile);
        let profile_lock = Lock::acquire(
            &profile_lock_path,
            &format!("profile {}", self.profile.display()),
        )?;
        let (base, note) =
            profile_base(&self.profile, OnDisk::inspect(&self.profile), &self.target)?;
        print_note(note);
        let (meta, entries, verified) = merge_profile(base, meta, entries_of(&report));
        let profile = Profile::with_pool(meta, entries, verified)?;
        let mut commit = Commit::new(&self.run_dir);
        export::stage_report(&mut commit, &self.run_dir, &report)?;
        commit.stage(
            &self.profile,
            profile.to_toml().as_bytes(),
            Some(&profile_lock_path),
        )?;
        commit.commit()?;
        drop(profile_lock);
        if opts.plots {
            write_summary_and_plots(&self.run_dir, &report)?;
        }
        eprintln!(
            "wrote {}{} ({} entries) and {}",
            self.profile.display(),
            if profile.meta.measured {
                ""
            } else {
                " (measured = false)"
            },
            profile.entries.len(),
            self.run_dir.display()
        );
        Ok(report)
    }
}

/// Writes the plots and summary.md; a cost-model-only report gets the summary alone.
fn write_summary_and_plots(run_dir: &Path, report: &RunReport) -> anyhow::Result<()> {
    match crate::outputs::render_all(report, run_dir) {
        Ok(_) => {}
        Err(crate::plot::PlotError::NothingMeasured) => {
            let path = run_dir.join(crate::plot::SUMMARY_MD);
            let summary = crate::summary::summary_markdown(report);
            crate::util::write_atomically(&path, summary.as_bytes())
                .map_err(|e| durable::FsError::new("write", &path, e))?;
        }
        Err(e) => eprintln!("plots not drawn: {e}"),
    }
    Ok(())
}

/// Prints one shape's finalists and choice.
pub fn print_shape(s: &ShapeReport) {
    let shape = s.problem.shape;
    for f in &s.finalists {
        eprintln!(
            "{shape}: finalist {} ({}) own {:.1} µs, cuBLAS {:.1} µs, own/cuBLAS {:.3}x",
            f.schedule,
            f.launch,
            f.own.median_us,
            f.cublas.median_us,
            f.ratio()
        );
    }
    match s.parity() {
        Some((chosen, own, cublas)) => eprintln!(
            "{shape}: chosen {chosen} {:.1} µs {:.1} TFLOP/s | cuBLAS {:.1} µs {:.1} TFLOP/s | own/cuBLAS {:.3}x{}",
            own.median_us,
            own.tflops,
            cublas.median_us,
            cublas.tflops,
            cublas.median_us / own.median_us,
            match &s.head_to_head {
                Some(h) => format!(
                    " (head-to-head, {} launch, burst {})",
                    h.launch,
                    h.burst_ratio().map_or("-".into(), |r| format!("{r:.3}x"))
                ),
                None => " (screen)".into(),
            }
        ),
        None => eprintln!("{shape}: no gate-passing candidate was measured"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Measurement;
    use crate::schedule::{Dtype, Layout, Schedule};
    use crate::shape::Shape;

    fn problem(d: u32) -> Problem {
        Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(d, d, d))
    }

    fn predicted(d: u32) -> Entry {
        Entry::predicted(problem(d), &Schedule::canonical(Dtype::Tf32), 5.0)
    }

    fn measured(d: u32) -> Entry {
        let mut e = predicted(d);
        e.gate = Gate::Passed;
        for v in [
            &mut e.measured_us,
            &mut e.tflops,
            &mut e.cublas_us,
            &mut e.cublas_tflops,
            &mut e.ratio_vs_cublas,
        ] {
            *v = Some(1.0);
        }
        e
    }

    fn meta(measured: bool) -> Metadata {
        let mut m = Metadata::now("sm_90a", Dtype::Tf32, measured);
        m.device_name = if measured { "NVIDIA H200" } else { "none" }.into();
        m
    }

    #[test]
    fn merging_keeps_measured_entries_over_predicted_ones() {
        let old = Profile::new(meta(true), vec![measured(512), measured(1024)]).unwrap();
        let (m, entries, _) = merge_profile(
            Some(old),
            meta(false),
            vec![predicted(512), predicted(2048)],
        );
        assert!(m.measured);
        assert_eq!(m.device_name, "NVIDIA H200");
        assert_eq!(entries.len(), 3);
        assert!(entries.iter().find(|e| e.m == 512).unwrap().is_measured());
        assert!(!entries.iter().find(|e| e.m == 2048).unwrap().is_measured());
        Profile::new(m, entries).unwrap();
        // A measured entry replaces a predicted one, and a newer measurement an older one.
        let old = Profile::new(meta(false), vec![predicted(512)]).unwrap();
        let (m, entries, _) = merge_profile(Some(old), meta(true), vec![measured(512)]);
        assert!(m.measured && entries[0].is_measured());
        // Predictions only: measured stays false.
        let (m, entries, _) = merge_profile(None, meta(false), vec![predicted(64), predicted(64)]);
        assert!(!m.measured);
        assert_eq!(entries.len(), 1);
    }

    #[test]
    fn runners_up_are_other_kernels_one_launch_variant_each() {
        let m = |us: f64| Measurement {
            median_us: us,
            ci_low_us: us,
            ci_high_us: us,
            samples: 7,
            outliers: 0,
            tflops: 1.0,
        };
        let mut s = ShapeReport::new(problem(2048), 1);
        s.cublas = Some(m(100.0));
        // The chosen kernel's rasters are the next fastest, then B's two rasters, C, D.
        let timed = [
            ("wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1", 90.0),
            ("wgmma_tf32_128x256x32_s4_wg2_swz4_pers_c1_k1", 90.1),
            ("wgmma_tf32_128x256x32_s4_wg2_swz16c_np_c1_k1", 90.2),
            ("wgmma_tf32_128x192x32_s5_wg2_swz8_pers_c1_k1", 91.0),
            ("wgmma_tf32_128x192x32_s5_wg2_swz4_pers_c1_k1", 91.1),
            ("wgmma_tf32_128x224x32_s4_wg2_swz8_pers_c1_k1", 92.0),
            ("wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c2_k1", 93.0),
            ("wgmma_tf32_128x128x32_s6_wg2_swz8_pers_c1_k1", 94.0),
        ];
        for (name, us) in timed {
            let mut c = crate::tune::picks::candidate(
                0,
                &crate::cost_model::Ranked {
                    schedule: name.parse().unwrap(),
                    prediction: crate::cost_model::CostModel::shipped().predict(
                        &crate::arch::Arch::by_name("sm_90a").unwrap(),
                        &name.parse().unwrap(),
                        &Shape::new(2048, 2048, 2048),
                        Layout::Tn,
                    ),
                },
                crate::report::Status::Measured,
            );
            c.measured = Some(m(us));
            c.gate.verdict = Verdict::Pass;
            s.candidates.push(c);
        }
        s.chosen = Some(timed[0].0.parse().unwrap());
        let e = measured_entry(&s).unwrap();
        assert_eq!(e.schedule, timed[0].0);
        assert_eq!(
            e.runners_up,
            [timed[3].0, timed[5].0, timed[6].0].map(String::from)
        );
    }

    #[test]
    fn merging_reports_keeps_measured_shapes_and_their_provenance() {
        let mut timed = ShapeReport::new(problem(512), 1);
        timed.cublas = Some(Measurement {
            median_us: 1.0,
            ci_low_us: 1.0,
            ci_high_us: 1.0,
            samples: 1,
            outliers: 0,
            tflops: 1.0,
        });
        let measured_run = Provenance {
            measured: true,
            device_name: "NVIDIA H200".into(),
            ..Provenance::default()
        };
        let base = RunReport {
            provenance: measured_run.clone(),
            shapes: vec![timed.clone()],
        };
        let model_run = Provenance::default();
        let merged = merge_report(
            Some(base),
            &model_run,
            &[
                ShapeReport::new(problem(512), 1),
                ShapeReport::new(problem(64), 1),
            ],
        );
        assert_eq!(merged.shapes.len(), 2);
        assert!(merged.shapes[0].cublas.is_some());
        assert_eq!(merged.provenance, measured_run);
        let merged = merge_report(None, &model_run, &[timed.clone(), timed]);
        assert_eq!(merged.shapes.len(), 1);
    }

    #[test]
    fn the_rules_refuse_what_would_lose_data() {
        let dir = std::env::temp_dir().join(format!("forge-record-{}", std::process::id()));
        let model_only = Target {
            arch: "sm_90a".into(),
            contract: Contract::default(),
            measured: false,
            force: false,
        };
        let p = Profile::new(meta(true), vec![measured(512)]).unwrap();
        let err = profile_base(&dir, OnDisk::Valid(Box::new(p.clone())), &model_only)
            .unwrap_err()
            .to_string();
        assert!(err.contains("1 measured entries"), "{err}");
        let forced = Target {
            force: true,
            ..model_only.clone()
        };
        assert!(
            profile_base(&dir, OnDisk::Valid(Box::new(p.clone())), &forced)
                .unwrap()
                .0
                .is_some()
        );
        let other_arch = Target {
            arch: "sm_80".into(),
            contract: Contract::default(),
            measured: true,
            force: false,
        };
        assert!(profile_base(&dir, OnDisk::Valid(Box::new(p.clone())), &other_arch).is_err());
        // Results of the simulated device never merge with measured ones (this process is
        // not simulated: a measured run meets a simulated profile).
        let mut simulated = p.clone();
        simulated.meta.device_name = crate::device::simulated::NAME.into();
        let measuring = Target {
            measured: true,
            ..model_only.clone()
        };
        let err = profile_base(&dir, OnDisk::Valid(Box::new(simulated.clone())), &measuring)
            .unwrap_err()
            .to_string();
        assert!(err.contains("refusing to mix simulated"), "{err}");
        let (base, note) = profile_base(
            &dir,
            OnDisk::Valid(Box::new(simulated)),
            &Target {
                force: true,
                ..measuring.clone()
            },
        )
        .unwrap();
        assert!(base.is_none() && note.unwrap().contains("replacing"));
        assert!(profile_base(&dir, OnDisk::Valid(Box::new(p)), &measuring).is_ok());
        for t in [&model_only, &forced] {
            let err = profile_base(&dir, OnDisk::Foreign("x".into()), t)
                .unwrap_err()
                .to_string();
            assert!(err.contains("not even with --force"), "{err}");
        }
    }
}
