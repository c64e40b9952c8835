//! `forge tune --gpus all|0,1,…`: which devices a measured tune spreads its problems over.
//!
//! Every GPU of a run must be the same model: the profile names one device, and bits (and
//! speed) are per device. Each GPU gets its own worker processes; problems are handed out
//! one at a time to whichever GPU is free, so a slow shape does not hold up the rest.

use crate::device::simulated::{self, open_info};
use crate::device::{DeviceError, DeviceInfo};
use std::fmt;
use std::str::FromStr;

/// The `--gpus` value: every device the driver sees, or a list of ordinals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuSet {
    All,
    List(Vec<usize>),
}

impl Default for GpuSet {
    /// Device 0 alone: a tune without `--gpus`.
    fn default() -> GpuSet {
        GpuSet::List(vec![0])
    }
}

impl FromStr for GpuSet {
    type Err = String;
    fn from_str(s: &str) -> Result<GpuSet, String> {
        if s == "all" {
            return Ok(GpuSet::All);
        }
        let mut list = vec![];
        for part in s.split(',') {
            let ordinal = part.trim().parse::<usize>().map_err(|_| {
                format!("{part:?} is not a device ordinal (expected all, or e.g. 0,1,2)")
            })?;
            if list.contains(&ordinal) {
                return Err(format!("device {ordinal} is listed twice"));
            }
            list.push(ordinal);
        }
        Ok(GpuSet::List(list))
    }
}

impl fmt::Display for GpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuSet::All => f.write_str("all"),
            GpuSet::List(l) => {
                let names: Vec<String> = l.iter().map(usize::to_string).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

impl GpuSet {
    /// Opens each device of the set once and returns (ordinal, description) in order.
    pub fn open(&self) -> Result<Vec<(usize, DeviceInfo)>, DeviceError> {
        let ordinals = match self {
            GpuSet::List(l) => l.clone(),
            GpuSet::All => {
                // Opening device 0 says why there is no device at all, if there is none.
                open_info(0)?;
                if simulated::enabled() {
                    (0..simulated::count()).collect()
                } else {
                    (0..crate::device::device_count()?).collect()
                }
            }
        };
        ordinals
            .into_iter()
            .map(|o| open_info(o).map(|info| (o, info)))
            .collect()
    }
}

/// Refuses a set of GPUs that are not all the same model (one profile names one device).
pub fn require_one_model(devices: &[(usize, DeviceInfo)]) -> Result<(), String> {
    let Some((first_ordinal, first)) = devices.first() else {
        return Err("no GPU was selected".into());
    };
    for (ordinal, info) in &devices[1..] {
        if info.name != first.name || info.arch != first.arch {
            return Err(format!(
                "GPU {ordinal} is a {} ({}) but GPU {first_ordinal} is a {} ({}): GPUs of \
                 different models cannot share a profile; pass --gpus with one model's \
                 ordinals and tune the other model into its own profile",
                info.name, info.arch, first.name, first.arch
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_and_lists_and_refuses_the_rest() {
        assert_eq!("all".parse::<GpuSet>(), Ok(GpuSet::All));
        assert_eq!("0".parse::<GpuSet>(), Ok(GpuSet::List(vec![0])));
        assert_eq!("3, 1".parse::<GpuSet>(), Ok(GpuSet::List(vec![3, 1])));
        assert_eq!(GpuSet::default().to_string(), "0");
        assert!("0,0".parse::<GpuSet>().unwrap_err().contains("twice"));
        assert!(
            "one"
                .parse::<GpuSet>()
                .unwrap_err()
                .contains("not a device ordinal")
        );
        assert!("".parse::<GpuSet>().is_err());
    }

    fn info(name: &str, arch: &str) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            compute_capability: (9, 0),
            arch: arch.into(),
            sm_count: 132,
            l2_bytes: 60 << 20,
            smem_per_block_optin: 232448,
            smem_per_sm: 233472,
            sm_clock_mhz: 1980.0,
            memory_bandwidth_gbs: 4800.0,
            driver_version: "13.0".into(),
            nvrtc_version: "13.0".into(),
            total_memory: 140 << 30,
        }
    }

    #[test]
    fn gpus_of_different_models_refuse_to_share_a_profile() {
        let h200 = info("NVIDIA H200", "sm_90a");
        let h100 = info("NVIDIA H100 80GB HBM3", "sm_90a");
        assert!(require_one_model(&[(0, h200.clone()), (1, h200.clone())]).is_ok());
        let e = require_one_model(&[(0, h200), (1, h100)]).unwrap_err();
        assert!(
            e.contains("GPU 1 is a NVIDIA H100") && e.contains("cannot share"),
            "{e}"
        );
        assert!(require_one_model(&[]).is_err());
    }
}
