//! The tuner's progress bars (stderr).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps labelled `what` ("compile", "bench").
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}
