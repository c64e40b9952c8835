//! A simulated device, for tests of the measuring commands on machines without a GPU.
//!
//! With `FORGE_TEST_SIMULATED_DEVICE=N`, `forge tune` and `forge calibrate` see N devices
//! described by [`info`], and their worker processes answer jobs from the cost model
//! (`crate::tune::simulated`) instead of running kernels: every orchestration path (candidate
//! picks, the second screen, worker restarts after a fault, the watchdog, confirmation rounds,
//! records, profiles, reports) runs as on a GPU, in CI. Nothing it produces is a measurement:
//! the device's name says so in every profile, report and data set it reaches, and the
//! commands refuse to write to their default (shipped) locations under it.

use super::DeviceInfo;

/// The environment variable that turns the simulated devices on: its value is how many
/// (`1`, or more for the multi-GPU paths).
pub const ENV: &str = "FORGE_TEST_SIMULATED_DEVICE";

/// The simulated device's name: what profiles and reports record as the device.
pub const NAME: &str =
    "simulated H200 (FORGE_TEST_SIMULATED_DEVICE: cost-model times, not measurements)";

/// One timing's relative scatter on the simulated device: a timing is the true time × (1 +
/// scatter · u), u uniform in [−1, 1) (standard deviation scatter / √3).
pub const SCATTER_ENV: &str = "FORGE_TEST_SIMULATED_SCATTER";

/// The default scatter, 0.006 (sd 0.35%); the H200's quick timings measured 0.45–0.8% sd,
/// i.e. a scatter of 0.008–0.014.
pub const SCATTER: f64 = 0.006;

/// How many simulated devices replace the real ones in this process (0: none; a value that
/// is not a count is refused by [`check_env`] before any command runs).
pub fn count() -> usize {
    std::env::var(ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0)
}

/// The scatter in use ([`SCATTER_ENV`], else [`SCATTER`]).
pub fn scatter() -> f64 {
    std::env::var(SCATTER_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|w| (0.0..=0.5).contains(w))
        .unwrap_or(SCATTER)
}

/// Refuses values of the two variables that are not what they must be (a count; a fraction
/// in [0, 0.5]) instead of silently running on the real devices or the default scatter.
pub fn check_env() -> Result<(), String> {
    if let Ok(v) = std::env::var(ENV)
        && v.trim().parse::<usize>().is_err()
    {
        return Err(format!(
            "{ENV}={v:?}: must be a number of simulated devices (0 turns them off)"
        ));
    }
    if let Ok(v) = std::env::var(SCATTER_ENV)
        && !v
            .trim()
            .parse::<f64>()
            .is_ok_and(|w| (0.0..=0.5).contains(&w))
    {
        return Err(format!(
            "{SCATTER_ENV}={v:?}: must be a fraction in [0, 0.5]"
        ));
    }
    Ok(())
}

/// A line on stderr saying that this run is simulated (printed by the measuring commands).
pub fn banner(command: &str) {
    if enabled() {
        eprintln!(
            "{ENV}={}: forge {command} runs on {} simulated device(s); every time it prints \
             is the cost model's with a {:.1}% scatter, not a measurement",
            count(),
            count(),
            scatter() * 100.0
        );
    }
}

/// Whether simulated devices replace the real ones in this process.
pub fn enabled() -> bool {
    count() > 0
}

/// The simulated device: an H200 as the shipped profile recorded it (132 SMs, 1980 MHz,
/// 60 MiB L2, 4.81 TB/s).
pub fn info() -> DeviceInfo {
    DeviceInfo {
        name: NAME.to_string(),
        compute_capability: (9, 0),
        arch: "sm_90a".to_string(),
        sm_count: 132,
        l2_bytes: 62_914_560,
        smem_per_block_optin: 232_448,
        smem_per_sm: 233_472,
        sm_clock_mhz: 1980.0,
        memory_bandwidth_gbs: 4814.304,
        driver_version: "simulated".to_string(),
        nvrtc_version: super::nvrtc::version().unwrap_or_else(|e| e.to_string()),
        total_memory: 150_754_820_096,
    }
}

/// The description of device `ordinal`: a simulated one when [`enabled`], else what the
/// driver reports.
pub fn open_info(ordinal: usize) -> Result<DeviceInfo, super::DeviceError> {
    let n = count();
    if n > 0 {
        return if ordinal < n {
            Ok(info())
        } else {
            Err(super::DeviceError::NoDevice(format!(
                "{ENV}={n}: the simulated machine has {n} device(s), no device {ordinal}"
            )))
        };
    }
    super::Gpu::open(ordinal).map(|g| g.info)
}

/// Refuses a simulated run that would write where real results live (`what`: the option
/// that must be given, e.g. `--profile`).
pub fn require_explicit(given: bool, what: &str) -> anyhow::Result<()> {
    if enabled() && !given {
        anyhow::bail!(
            "{ENV}={}: give {what} explicitly (a simulated run never writes to the default \
             profiles/ or reports/ locations)",
            count()
        );
    }
    Ok(())
}
