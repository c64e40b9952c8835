//! Small shared utilities with no domain knowledge, used by the profile, the run report, the
//! kernel cache and the tuner:
//!
//! * [`write_atomically`]: write a file through a temporary sibling and a rename;
//! * [`read_capped`]: read a file, refusing more than a size limit;
//! * [`read_maybe_gzip`]: read a file, decompressing it if it is gzip;
//! * [`clip`]: quote text from a file in a one-line message, at most so many characters;
//! * [`error_line`]: an error and its causes as one line, each cause once;
//! * [`git_revision`]: the git revision this build was made from (recorded by `build.rs`);
//! * [`now_rfc3339`]: the current UTC time, as profiles and reports record it.
//!
//! Locks, journaled commits of several files and the clean-up of stale temporaries are in
//! [`crate::durable`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most characters of text from a file that a message quotes ([`clip`]).
pub const MAX_QUOTED: usize = 200;

/// The directory a path's file lives in (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The temporary sibling a write of `path` goes through: `.<name>.<n>.tmp.<pid>` in the same
/// directory, `n` counting this process's temporaries, so that threads writing the same file
/// at once (two GPUs' tunes compiling one kernel variant into the cache) never share one
/// ([`crate::durable::clean_stale_temporaries`] removes those of dead processes).
pub fn temporary_for(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    parent_dir(path).join(format!(".{name}.{n}.tmp.{}", std::process::id()))
}

/// Writes `bytes` to a new file at `tmp` and flushes it to the disk.
pub(crate) fn write_synced(tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(tmp)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes `bytes` to `path` through a temporary sibling and a rename, so readers never see
/// a half-written file. The error is the bare I/O error: callers name the path.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(parent_dir(path))?;
    let tmp = temporary_for(path);
    let result = write_synced(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Why [`read_capped`] returned no bytes.
#[derive(Debug)]
pub enum ReadCapped {
    Io(std::io::Error),
    /// The file holds more than the limit (or never ends, like `/dev/zero`).
    TooLarge {
        limit: u64,
    },
}

/// Reads a whole file, but never more than `limit` bytes: a larger file (or a device that
/// never ends) is refused after `limit + 1` bytes.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadCapped> {
    let file = std::fs::File::open(path).map_err(ReadCapped::Io)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadCapped::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadCapped::TooLarge { limit });
    }
    Ok(bytes)
}

/// The bytes of `path`, decompressed when the file is gzip (its first two bytes 1f 8b).
pub fn read_maybe_gzip(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes.as_slice()).read_to_end(&mut out)?;
    Ok(out)
}

/// `text` as one line of at most `max` characters: control characters become spaces and a
/// longer text ends in `…`.
pub fn clip(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

/// Line and column (both from 1, the column in characters) of byte `offset` in `bytes`, of
/// which at least the part before `offset` is UTF-8.
pub fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// An error with its chain of causes as one line: each cause is appended once, and not at all
/// when the text so far already says it (errors that print their cause in their own message).
/// The line is capped at a few thousand characters.
pub fn error_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    clip(&line, 4000)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_caps_and_flattens() {
        assert_eq!(clip("ab\ncd", 10), "ab cd");
        assert_eq!(clip(&"x".repeat(300), 200).chars().count(), 201);
        assert!(clip(&"x".repeat(300), 200).ends_with('…'));
    }

    #[test]
    fn line_column_counts_characters() {
        let text = "ab\ncdé\nx".as_bytes();
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 7), (2, 4));
        assert_eq!(line_column(text, 8), (3, 1));
    }

    #[test]
    fn error_line_says_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot read x: {source}")]
        struct Doubled {
            source: std::io::Error,
        }
        let e = Doubled {
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        let line = error_line(&e);
        assert_eq!(line.matches("not found").count(), 1, "{line}");
    }

    #[test]
    fn read_capped_refuses_endless_files() {
        if Path::new("/dev/zero").exists() {
            assert!(matches!(
                read_capped(Path::new("/dev/zero"), 1 << 10),
                Err(ReadCapped::TooLarge { .. })
            ));
        }
    }
}
