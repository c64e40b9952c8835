//! The tuner's progress bars (stderr). All bars of a run share one `MultiProgress`, so the
//! bars of problems measured at the same time on several GPUs do not overwrite each other.

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::sync::OnceLock;

fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(MultiProgress::new)
}

/// A bar of `len` steps labelled `what` ("compile", "bench").
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = bars().add(ProgressBar::new(len));
    pb.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}
