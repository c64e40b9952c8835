//! Worker supervision: each job runs in a `forge worker` subprocess whose JSON lines are read
//! under a watchdog. A candidate that faults (the worker dies) or hangs (no line for
//! `--watchdog` seconds) is recorded as such and a new worker continues with the rest.

use super::TuneOptions;
use super::protocol::{Event, Job};
use crate::device::DeviceInfo;
use crate::problem::Problem;
use crate::report::{
    BitModelCheck, CublasAccuracy, GateResult, HeadToHead, Measurement, ReferenceCheck, Status,
};
use crate::schedule::{LaunchOrder, Schedule};
use anyhow::{Context, bail};
use indicatif::ProgressBar;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What the workers of one screen reported.
#[derive(Default)]
pub struct ScreenResults {
    /// The device, the cuBLAS version and the number of rotated input sets.
    pub info: Option<(DeviceInfo, String, u32)>,
    pub reference: Option<ReferenceCheck>,
    pub bitmodel: Option<BitModelCheck>,
    pub cublas: Option<Measurement>,
    /// cuBLAS's output: bits against the canonical output, and against FP64.
    pub cublas_accuracy: Option<CublasAccuracy>,
    pub outcomes: HashMap<Schedule, (Status, Option<Measurement>, GateResult)>,
}

/// A running worker: the process, its stdout lines, a thread collecting its stderr, and the
/// job directory it reads (removed when the worker is finished).
struct Worker {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: JoinHandle<String>,
    job_dir: PathBuf,
}

impl Worker {
    fn start(job: &Job) -> anyhow::Result<Worker> {
        let exe = worker_executable()?;
        let job_dir = std::env::temp_dir().join(format!(
            "forge-jobs-{}-gpu{}-{}-{}",
            std::process::id(),
            job.device,
            job.problem.layout.as_str(),
            job.problem.shape
        ));
        std::fs::create_dir_all(&job_dir)
            .with_context(|| format!("creating {}", job_dir.display()))?;
        let job_path = job_dir.join("job.json");
        std::fs::write(&job_path, serde_json::to_vec(job)?)
            .with_context(|| format!("writing {}", job_path.display()))?;
        let mut child = Command::new(&exe)
            .arg("worker")
            .arg("--job")
            .arg(&job_path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting a worker process ({})", exe.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                text.push_str(&line);
                text.push('\n');
            }
            text
        });
        Ok(Worker {
            child,
            lines,
            stderr,
            job_dir,
        })
    }

    /// The next event, `Ok(None)` at the end of the output, `Err(())` when the watchdog fired.
    fn next(&self, watchdog: Duration) -> Result<Option<Result<Event, String>>, ()> {
        match self.lines.recv_timeout(watchdog) {
            Ok(line) => Ok(Some(serde_json::from_str::<Event>(&line).map_err(|_| line))),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(None),
        }
    }

    /// Stops the worker (if still running) and returns its exit status and stderr.
    fn finish(mut self, kill: bool) -> anyhow::Result<(ExitStatus, String)> {
        if kill {
            let _ = self.child.kill();
        }
        let status = self.child.wait()?;
        let stderr = self.stderr.join().unwrap_or_default();
        let _ = std::fs::remove_dir_all(&self.job_dir);
        Ok((status, stderr))
    }
}

/// The executable a worker runs: this process's own image. On Linux that is
/// `/proc/self/exe`, which a forked child resolves to the parent's binary even after the file
/// was replaced or deleted (a rebuild or an upgrade during a long tune), so the workers always
/// speak the supervisor's protocol version; elsewhere the path it was started from.
fn worker_executable() -> anyhow::Result<PathBuf> {
    let own_image = Path::new("/proc/self/exe");
    if cfg!(target_os = "linux") && own_image.exists() {
        return Ok(own_image.to_path_buf());
    }
    std::env::current_exe().context("locating the forge executable")
}

fn job(opts: &TuneOptions, problem: &Problem) -> Job {
    Job::new(
        *problem,
        opts.contract,
        opts.seed,
        &opts.cache_dir,
        &opts.timing,
        opts.device,
    )
}

/// Runs `schedules` through worker processes until each has an outcome.
pub fn screen(
    opts: &TuneOptions,
    problem: &Problem,
    schedules: &[Schedule],
    pb: &ProgressBar,
) -> anyhow::Result<ScreenResults> {
    let mut res = ScreenResults::default();
    screen_more(opts, problem, schedules, pb, &mut res)?;
    Ok(res)
}

/// [`screen`] adding to earlier results of the same problem: schedules with an outcome there
/// are not timed again, nor is cuBLAS where it was timed (each worker still gates every
/// schedule against its own canonical output). On an error `res` keeps every outcome
/// reported before it.
pub fn screen_more(
    opts: &TuneOptions,
    problem: &Problem,
    schedules: &[Schedule],
    pb: &ProgressBar,
    res: &mut ScreenResults,
) -> anyhow::Result<()> {
    let watchdog = Duration::from_secs(opts.watchdog_s);
    let mut restarts = 0;
    loop {
        let pending: Vec<Schedule> = schedules
            .iter()
            .filter(|s| !res.outcomes.contains_key(*s))
            .copied()
            .collect();
        if pending.is_empty() && res.cublas.is_some() {
            return Ok(());
        }
        let worker = Worker::start(&job(opts, problem).screen(pending, res.cublas.is_none()))?;
        let mut in_flight: Option<Schedule> = None;
        let mut hung = false;
        let mut done = false;
        loop {
            match worker.next(watchdog) {
                Ok(Some(Ok(event))) => match event {
                    Event::Device {
                        info,
                        cublas_version,
                        input_sets,
                    } => res.info = Some((info, cublas_version, input_sets)),
                    Event::Reference { check } => res.reference = Some(check),
                    Event::BitModel { check } => res.bitmodel = Some(check),
                    Event::Cublas {
                        measurement,
                        gate,
                        reference,
                    } => {
                        pb.set_message(format!("cuBLAS {:.1} µs", measurement.median_us));
                        res.cublas = Some(measurement);
                        res.cublas_accuracy = Some(CublasAccuracy {
                            bits: gate,
                            reference,
                        });
                    }
                    Event::Start { schedule } => {
                        pb.set_message(schedule.name());
                        in_flight = Some(schedule);
                    }
                    Event::Result {
                        schedule,
                        status,
                        measured,
                        gate,
                    } => {
                        pb.inc(1);
                        in_flight = None;
                        res.outcomes.insert(schedule, (status, measured, gate));
                    }
                    Event::Done => done = true,
                    Event::HeadToHead { .. } | Event::Prep { .. } => {}
                },
                Ok(Some(Err(line))) => eprintln!("worker: {line}"),
                Ok(None) => break,
                Err(()) => {
                    hung = true;
                    break;
                }
            }
        }
        let (status, stderr) = worker.finish(hung)?;
        if done && status.success() {
            continue;
        }
        let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        match in_flight {
            Some(schedule) => {
                pb.inc(1);
                let status = if hung {
                    Status::TimedOut(format!("no progress for {} s (watchdog)", opts.watchdog_s))
                } else {
                    Status::Faulted(format!("worker exited with {status}: {tail}"))
                };
                res.outcomes
                    .insert(schedule, (status, None, GateResult::not_run()));
            }
            None => {
                // The failure came before any candidate: the setup itself is broken.
                restarts += 1;
                if restarts >= 2 {
                    bail!(
                        "the worker for {} failed before any candidate ({status}): {tail}",
                        problem.shape
                    );
                }
            }
        }
    }
}

/// Times `schedule`, launched in `launch` order, against cuBLAS in alternating rounds in a
/// fresh worker (own and cuBLAS pooled over the rounds).
pub fn head_to_head(
    opts: &TuneOptions,
    problem: &Problem,
    schedule: Schedule,
    launch: LaunchOrder,
) -> anyhow::Result<HeadToHead> {
    let worker = Worker::start(&job(opts, problem).head_to_head(schedule, launch))?;
    let mut result = None;
    while let Ok(Some(event)) = worker.next(Duration::from_secs(opts.watchdog_s)) {
        match event {
            Ok(Event::HeadToHead {
                schedule,
                launch,
                own,
                cublas,
                rounds,
                burst,
            }) => {
                result = Some(HeadToHead {
                    schedule,
                    launch,
                    own,
                    cublas,
                    rounds,
                    burst,
                });
            }
            Ok(Event::Prep {
                schedule,
                measurement,
                passes,
                bytes,
            }) => print_prep(opts, problem, &schedule, &measurement, passes, bytes),
            _ => {}
        }
    }
    let (_, stderr) = worker.finish(true)?;
    result.with_context(|| {
        format!(
            "head-to-head of {schedule} on {} failed: {stderr}",
            problem.shape
        )
    })
}

/// One line for the operand preparation a head-to-head timed: its measured time and
/// bandwidth beside the cost model's transpose term for the schedule.
fn print_prep(
    opts: &TuneOptions,
    problem: &Problem,
    schedule: &Schedule,
    measured: &crate::report::Measurement,
    passes: u32,
    bytes: u64,
) {
    let predicted = crate::cost_model::CostModel::shipped_ref()
        .predict(&opts.arch, schedule, &problem.shape, problem.layout)
        .terms
        .transpose_us;
    eprintln!(
        "{problem}: operand preparation for {schedule}: {passes} pass(es), {:.1} MB in {:.2} µs \
         ({:.0} GB/s); cost model {predicted:.2} µs",
        bytes as f64 / 1e6,
        measured.median_us,
        bytes as f64 / (measured.median_us * 1e-6) / 1e9
    );
}
