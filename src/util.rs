//! Small shared utilities with no domain knowledge, used by the profile, the run report, the
//! kernel cache and the tuner:
//!
//! * [`write_atomically`]: write a file through a temporary sibling and a rename;
//! * [`git_revision`]: the git revision this build was made from (recorded by `build.rs`);
//! * [`now_rfc3339`]: the current UTC time, as profiles and reports record it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a temporary sibling and a rename, so readers never see
/// a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "profile".into());
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// This build's git revision (`-dirty` when built from a modified tree; see `build.rs` for
/// when that is decided).
pub fn git_revision() -> &'static str {
    option_env!("FORGE_GIT_REVISION").unwrap_or("unknown")
}

/// The current UTC time, RFC 3339 to the second.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
