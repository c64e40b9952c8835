//! The calibration data set: per shape, every timed schedule with the model's prediction at
//! collection time, its measured median and its gate verdict. Stored as `calibration.json`
//! (everything, read back by the fit) and `calibration.csv` (one row per timed schedule).

use super::sample::Origin;
use crate::arch::Arch;
use crate::contract::Contract;
use crate::device::timing::TimingConfig;
use crate::problem::Problem;
use crate::report::{Measurement, Verdict};
use crate::schedule::{self, Schedule};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One schedule on one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    #[serde(with = "schedule::by_name")]
    pub schedule: Schedule,
    pub origin: Origin,
    /// The shipped model's prediction when the data was collected, µs.
    pub predicted_us: f64,
    /// `measured`, or why not (compile_failed: …, faulted: …).
    pub status: String,
    pub measured: Option<Measurement>,
    /// Bits against the canonical output (every timing's: a repeat that fails makes it fail).
    pub gate: Verdict,
    /// Medians of the later timings of `calibrate --repeat` (its confirmation rounds), µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats_us: Vec<f64>,
}

impl Point {
    /// The median of the point's timings (the first one and its repeats) when the schedule
    /// ran and passed the gate.
    pub fn time_us(&self) -> Option<f64> {
        match (&self.measured, self.gate) {
            (Some(m), Verdict::Pass) if m.median_us.is_finite() && m.median_us > 0.0 => {
                super::noise::decided_us(self)
            }
            _ => None,
        }
    }
}

/// One shape's points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeData {
    #[serde(flatten)]
    pub problem: Problem,
    /// cuBLAS on the same buffers, timed once in the same worker.
    pub cublas: Option<Measurement>,
    /// The canonical output passed the FP64 reference check (and the bit model, where run).
    pub reference_passed: bool,
    pub points: Vec<Point>,
}

impl ShapeData {
    /// (schedule, measured µs) of every gate-passing timed point.
    pub fn timed(&self) -> impl Iterator<Item = (&Point, f64)> {
        self.points
            .iter()
            .filter_map(|p| p.time_us().map(|t| (p, t)))
    }
}

/// A whole calibration run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationData {
    /// The architecture as measured (the table with the device's own clock, L2, bandwidth…):
    /// the fit predicts with exactly this.
    pub arch: Arch,
    pub device_name: String,
    pub cublas_version: String,
    pub contract: Contract,
    pub timing: TimingConfig,
    pub top: usize,
    pub sample: usize,
    pub seed: u64,
    pub forge_version: String,
    pub git_revision: String,
    pub date: String,
    pub command: String,
    pub shapes: Vec<ShapeData>,
}

pub const JSON_NAME: &str = "calibration.json";
/// The same data gzip-compressed: how stored sets are archived in reports/ (a tenth of the size).
pub const JSON_GZ_NAME: &str = "calibration.json.gz";
pub const CSV_NAME: &str = "calibration.csv";

impl CalibrationData {
    /// Reads a data set: a directory holding `calibration.json` (else `calibration.json.gz`),
    /// or such a file itself (gzip is recognised by its content, not its name).
    pub fn load(path: &Path) -> anyhow::Result<CalibrationData> {
        let file = if path.is_dir() {
            let plain = path.join(JSON_NAME);
            let packed = path.join(JSON_GZ_NAME);
            if !plain.exists() && packed.exists() {
                packed
            } else {
                plain
            }
        } else {
            path.to_path_buf()
        };
        let bytes = crate::util::read_maybe_gzip(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a calibration data set", file.display()))
    }

    /// Reads several data sets and pools their shapes (the first one's metadata and arch
    /// table). Refused: sets from different architectures or devices, and a shape measured
    /// in two sets (which one would be judged?).
    pub fn load_all(paths: &[std::path::PathBuf]) -> anyhow::Result<CalibrationData> {
        let mut sets = paths.iter().map(|p| CalibrationData::load(p));
        let mut all = sets
            .next()
            .ok_or_else(|| anyhow::anyhow!("no calibration data given"))??;
        for (path, set) in paths[1..].iter().zip(sets) {
            let set = set?;
            if set.arch.name != all.arch.name || set.device_name != all.device_name {
                anyhow::bail!(
                    "{} was measured on {} ({}), {} on {} ({}): one device per fit",
                    path.display(),
                    set.device_name,
                    set.arch.name,
                    paths[0].display(),
                    all.device_name,
                    all.arch.name
                );
            }
            for s in set.shapes {
                if all.shapes.iter().any(|t| t.problem == s.problem) {
                    anyhow::bail!(
                        "{} measures {} again (already in an earlier data set)",
                        path.display(),
                        s.problem
                    );
                }
                all.shapes.push(s);
            }
        }
        Ok(all)
    }

    /// Writes `calibration.json` and `calibration.csv` into `dir` (each atomically).
    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let json = serde_json::to_vec_pretty(self)?;
        crate::util::write_atomically(&dir.join(JSON_NAME), &json)
            .with_context(|| format!("writing {}", dir.join(JSON_NAME).display()))?;
        crate::util::write_atomically(&dir.join(CSV_NAME), self.to_csv()?.as_bytes())
            .with_context(|| format!("writing {}", dir.join(CSV_NAME).display()))?;
        Ok(())
    }

    /// One row per point.
    pub fn to_csv(&self) -> anyhow::Result<String> {
        let mut w = csv::Writer::from_writer(vec![]);
        w.write_record([
            "m",
            "n",
            "k",
            "schedule",
            "origin",
            "predicted_us",
            "measured_us",
            "ci_low_us",
            "ci_high_us",
            "gate",
            "status",
            "cublas_us",
            "repeats_us",
        ])?;
        let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
        for s in &self.shapes {
            let shape = s.problem.shape;
            for p in &s.points {
                w.write_record([
                    shape.m.to_string(),
                    shape.n.to_string(),
                    shape.k.to_string(),
                    p.schedule.name(),
                    p.origin.as_str().to_string(),
                    format!("{:.3}", p.predicted_us),
                    f(p.measured.as_ref().map(|m| m.median_us)),
                    f(p.measured.as_ref().map(|m| m.ci_low_us)),
                    f(p.measured.as_ref().map(|m| m.ci_high_us)),
                    format!("{:?}", p.gate).to_lowercase(),
                    p.status.clone(),
                    f(s.cublas.as_ref().map(|m| m.median_us)),
                    p.repeats_us
                        .iter()
                        .map(|t| format!("{t:.3}"))
                        .collect::<Vec<_>>()
                        .join(";"),
                ])?;
            }
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_gzipped_data_set_loads_as_the_plain_one_and_the_plain_file_wins() {
        let stored = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("reports/2026-12-04-h200-calibration-4");
        let data = CalibrationData::load(&stored).unwrap();
        let dir = std::env::temp_dir().join(format!("forge-calibration-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&serde_json::to_vec(&data).unwrap()).unwrap();
        std::fs::write(dir.join(JSON_GZ_NAME), gz.finish().unwrap()).unwrap();
        let json = |d: &CalibrationData| serde_json::to_value(d).unwrap();
        assert_eq!(json(&CalibrationData::load(&dir).unwrap()), json(&data));
        assert_eq!(
            json(&CalibrationData::load(&dir.join(JSON_GZ_NAME)).unwrap()),
            json(&data)
        );
        let mut one_shape = data.clone();
        one_shape.shapes.truncate(1);
        one_shape.save(&dir).unwrap();
        assert_eq!(CalibrationData::load(&dir).unwrap().shapes.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
