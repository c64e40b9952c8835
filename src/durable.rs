//! Files that survive concurrent writers and `kill -9`:
//!
//! * [`Lock`]: an exclusive advisory lock (`flock`) on a lock file beside what it guards
//!   (`<dir>/.<name>.lock` for a file, `<dir>/.forge.lock` for a run directory). Lock files
//!   are never deleted (deleting one while another process waits on it would let two holders
//!   in). The operating system drops a lock when its process dies, however it dies.
//! * [`Commit`]: several files replaced together. Each new file is written in full to a
//!   temporary sibling and flushed; then a journal listing the renames is written (atomically);
//!   then the renames run; then the journal is removed. A process killed before the journal
//!   exists leaves every file old; one killed after leaves a journal that [`recover`] (run by
//!   the next writer) completes, so every file is new. A rename is skipped when its target
//!   changed after the journal was written (another process wrote it since).
//! * [`clean_stale_temporaries`]: removes `.<name>.tmp.<pid>` files of processes that no
//!   longer run.
//! * [`check_writable`]: whether files can be created in a directory (or the directory
//!   created), tested before a run writes anything.

use crate::util::{parent_dir, temporary_for, write_atomically, write_synced};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// An I/O failure on one path: `cannot <what> <path>: <cause>` (the cause printed once, in
/// this message: it is not also a `source`).
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {path}: {cause}")]
pub struct FsError {
    pub what: &'static str,
    pub path: String,
    pub cause: String,
}

impl FsError {
    pub fn new(what: &'static str, path: &Path, cause: impl std::fmt::Display) -> FsError {
        FsError {
            what,
            path: path.display().to_string(),
            cause: cause.to_string(),
        }
    }
}

/// The lock file guarding `file`: `.<name>.lock` beside it.
pub fn lock_path_for(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    parent_dir(file).join(format!(".{name}.lock"))
}

/// The lock file guarding a run directory.
pub fn lock_path_for_dir(dir: &Path) -> PathBuf {
    dir.join(".forge.lock")
}

/// A held exclusive lock; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    path: PathBuf,
}

impl Lock {
    /// Takes the lock in `path` (created if missing; its directory must exist), waiting for
    /// another holder to finish; says on stderr that it waits, and for what.
    pub fn acquire(path: &Path, what: &str) -> Result<Lock, FsError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| FsError::new("open the lock file", path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                eprintln!(
                    "waiting for {what}: another forge process holds {}",
                    path.display()
                );
                file.lock().map_err(|e| FsError::new("lock", path, e))?;
            }
            Err(TryLockError::Error(e)) => return Err(FsError::new("lock", path, e)),
        }
        Ok(Lock {
            _file: file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Test hook: `FORGE_TEST_CRASH=<point>` ends the process (exit code [`CRASH_EXIT`], no
/// destructors, no clean-up: what `kill -9` leaves) at a point of [`Commit::commit`]:
/// `staged` (temporaries written, no journal), `journaled` (journal written, nothing renamed)
/// or `renamed:<n>` (after the n-th rename).
pub const CRASH_ENV: &str = "FORGE_TEST_CRASH";
/// Exit code of a process ended by [`CRASH_ENV`].
pub const CRASH_EXIT: i32 = 86;

fn crash_point(point: &str) {
    if std::env::var(CRASH_ENV).is_ok_and(|p| p == point) {
        std::process::exit(CRASH_EXIT);
    }
}

/// File name of the journal of an unfinished commit, in the directory given to [`Commit`].
pub const JOURNAL: &str = ".forge-commit.json";

/// The content of a file as the journal remembers it: a SHA-256, or `absent`.
fn fingerprint(path: &Path) -> Result<String, FsError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(hex::encode(Sha256::digest(&bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok("absent".into()),
        Err(e) => Err(FsError::new("read", path, e)),
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
    /// The target's content when it was staged (see [`fingerprint`]).
    before: String,
    /// A lock to take while completing this rename in [`recover`] (files outside the
    /// journal's directory, which the caller's lock does not guard).
    lock: Option<PathBuf>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    pid: u32,
    files: Vec<Staged>,
}

/// Files replaced together (see the module docs). The caller holds the locks of every target
/// from [`Commit::stage`] to [`Commit::commit`].
#[derive(Debug)]
pub struct Commit {
    journal: PathBuf,
    files: Vec<Staged>,
}

impl Commit {
    /// A commit whose journal lives in `dir` (which must exist).
    pub fn new(dir: &Path) -> Commit {
        Commit {
            journal: dir.join(JOURNAL),
            files: vec![],
        }
    }

    /// Writes `bytes` to a flushed temporary beside `dest`; `lock` names the lock file that
    /// guards `dest` when the journal's directory lock does not.
    pub fn stage(&mut self, dest: &Path, bytes: &[u8], lock: Option<&Path>) -> Result<(), FsError> {
        let tmp = temporary_for(dest);
        let before = fingerprint(dest)?;
        if let Err(e) = write_synced(&tmp, bytes) {
            let _ = std::fs::remove_file(&tmp);
            return Err(FsError::new("write", dest, e));
        }
        self.files.push(Staged {
            tmp,
            dest: dest.to_path_buf(),
            before,
            lock: lock.map(Path::to_path_buf),
        });
        Ok(())
    }

    /// Journal, renames, journal removed. On an error the temporaries not yet renamed are
    /// removed and the journal too, unless a rename already happened (then [`recover`]
    /// completes it).
    pub fn commit(mut self) -> Result<(), FsError> {
        crash_point("staged");
        let journal = Journal {
            pid: std::process::id(),
            files: std::mem::take(&mut self.files),
        };
        let text = serde_json::to_vec_pretty(&journal).expect("a journal serializes");
        if let Err(e) = write_atomically(&self.journal, &text) {
            for f in &journal.files {
                let _ = std::fs::remove_file(&f.tmp);
            }
            return Err(FsError::new("write", &self.journal, e));
        }
        crash_point("journaled");
        for (i, f) in journal.files.iter().enumerate() {
            if let Err(e) = std::fs::rename(&f.tmp, &f.dest) {
                if i == 0 {
                    for g in &journal.files {
                        let _ = std::fs::remove_file(&g.tmp);
                    }
                    let _ = std::fs::remove_file(&self.journal);
                }
                return Err(FsError::new("write", &f.dest, e));
            }
            crash_point(&format!("renamed:{}", i + 1));
        }
        std::fs::remove_file(&self.journal)
            .map_err(|e| FsError::new("remove the journal", &self.journal, e))
    }
}

impl Drop for Commit {
    /// A commit dropped before [`Commit::commit`] (a later file failed to stage) removes its
    /// temporaries.
    fn drop(&mut self) {
        for f in &self.files {
            let _ = std::fs::remove_file(&f.tmp);
        }
    }
}

/// Completes the commit an interrupted process left in `dir` (the caller holds the lock that
/// guards `dir`); returns one line per file it could not complete. No journal: nothing to do.
pub fn recover(dir: &Path) -> Result<Vec<String>, FsError> {
    let path = dir.join(JOURNAL);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(FsError::new("read", &path, e)),
    };
    let mut notes = vec![];
    match serde_json::from_slice::<Journal>(&text) {
        Err(e) => notes.push(format!(
            "{}: unreadable journal of an interrupted commit removed ({e})",
            path.display()
        )),
        Ok(journal) => {
            for f in journal.files {
                let _lock = match &f.lock {
                    Some(l) => Some(Lock::acquire(l, "a lock to finish an interrupted write")?),
                    None => None,
                };
                if !f.tmp.exists() {
                    continue; // renamed before the interruption, or cleaned up
                }
                if fingerprint(&f.dest)? != f.before {
                    let _ = std::fs::remove_file(&f.tmp);
                    notes.push(format!(
                        "{} changed after an interrupted run (pid {}) staged a new version; \
                         that version was dropped",
                        f.dest.display(),
                        journal.pid
                    ));
                    continue;
                }
                std::fs::rename(&f.tmp, &f.dest).map_err(|e| FsError::new("write", &f.dest, e))?;
            }
        }
    }
    std::fs::remove_file(&path).map_err(|e| FsError::new("remove", &path, e))?;
    Ok(notes)
}

/// Whether process `pid` runs (false only when `/proc` says so; unknown counts as running).
fn process_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

/// The pid in a temporary's name `.<name>.tmp.<pid>`.
fn temporary_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, pid) = rest.rsplit_once(".tmp.")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the temporaries (`.<name>.tmp.<pid>`) of processes that no longer run from `dir`;
/// returns how many. A missing or unreadable directory has none.
pub fn clean_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temporary_pid) else {
            continue;
        };
        if pid != std::process::id()
            && !process_alive(pid)
            && entry.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Checks that files can be written in `dir`: in it when it exists, else in its nearest
/// existing ancestor (where it would be created). Creates and removes one probe file; writes
/// nothing else. `what` names the directory's role in the error.
pub fn check_writable(dir: &Path, what: &str) -> Result<(), String> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut existing = dir;
    loop {
        match std::fs::metadata(existing) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(format!(
                    "{what} {} cannot be created: {} is not a directory",
                    dir.display(),
                    existing.display()
                ));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                match existing.parent() {
                    Some(p) if !p.as_os_str().is_empty() => existing = p,
                    _ => {
                        existing = Path::new(".");
                        break;
                    }
                }
            }
            Err(e) => {
                return Err(format!(
                    "cannot use {what} {}: {}: {e}",
                    dir.display(),
                    existing.display()
                ));
            }
        }
    }
    let probe = existing.join(format!(".forge-write-probe.{}", std::process::id()));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if existing == dir => Err(format!("cannot write in {what} {}: {e}", dir.display())),
        Err(e) => Err(format!(
            "cannot create {what} {}: cannot write in {}: {e}",
            dir.display(),
            existing.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("forge-durable-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn temporary_names_carry_the_pid() {
        assert_eq!(temporary_pid(".report.json.tmp.1234"), Some(1234));
        assert_eq!(temporary_pid(".report.json.17.tmp.1234"), Some(1234));
        // Two writers of one file in one process get different temporaries.
        let p = Path::new("/d/report.json");
        let (t1, t2) = (temporary_for(p), temporary_for(p));
        assert_ne!(t1, t2);
        let pid = std::process::id();
        assert_eq!(
            temporary_pid(&t1.file_name().unwrap().to_string_lossy()),
            Some(pid)
        );
        assert_eq!(temporary_pid(".a.tmp.b.tmp.7"), Some(7));
        assert_eq!(temporary_pid("report.json.tmp.1234"), None);
        assert_eq!(temporary_pid(".report.json.tmp."), None);
        assert_eq!(temporary_pid(".x.tmp.12a"), None);
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed() {
        let d = tmp("stale");
        // Pid 4194304 is above Linux's maximum: never a running process.
        std::fs::write(d.join(".p.toml.tmp.4194304"), "x").unwrap();
        let mine = d.join(format!(".p.toml.tmp.{}", std::process::id()));
        std::fs::write(&mine, "x").unwrap();
        std::fs::write(d.join("p.toml"), "x").unwrap();
        assert_eq!(clean_stale_temporaries(&d), 1);
        assert!(mine.exists() && d.join("p.toml").exists());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_commit_replaces_every_file_and_leaves_no_journal() {
        let d = tmp("commit");
        std::fs::write(d.join("a"), "old a").unwrap();
        let mut c = Commit::new(&d);
        c.stage(&d.join("a"), b"new a", None).unwrap();
        c.stage(&d.join("b"), b"new b", None).unwrap();
        c.commit().unwrap();
        assert_eq!(std::fs::read_to_string(d.join("a")).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(d.join("b")).unwrap(), "new b");
        assert!(!d.join(JOURNAL).exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// The journal a process killed after writing it leaves: the next writer's recovery
    /// finishes the renames, unless a target changed since.
    #[test]
    fn recovery_finishes_an_interrupted_commit() {
        let d = tmp("recover");
        std::fs::write(d.join("a"), "old a").unwrap();
        std::fs::write(d.join("b"), "old b").unwrap();
        let mut c = Commit::new(&d);
        c.stage(&d.join("a"), b"new a", None).unwrap();
        c.stage(&d.join("b"), b"new b", None).unwrap();
        // What `commit` writes before its first rename, then the first rename only.
        let journal = Journal {
            pid: 4194304,
            files: std::mem::take(&mut c.files),
        };
        std::fs::write(d.join(JOURNAL), serde_json::to_vec(&journal).unwrap()).unwrap();
        std::fs::rename(&journal.files[0].tmp, &journal.files[0].dest).unwrap();
        assert_eq!(recover(&d).unwrap(), Vec::<String>::new());
        assert_eq!(std::fs::read_to_string(d.join("a")).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(d.join("b")).unwrap(), "new b");
        assert!(!d.join(JOURNAL).exists());
        // A target written by someone else after staging keeps its content.
        let mut c = Commit::new(&d);
        c.stage(&d.join("a"), b"newer a", None).unwrap();
        let journal = Journal {
            pid: 4194304,
            files: std::mem::take(&mut c.files),
        };
        std::fs::write(d.join(JOURNAL), serde_json::to_vec(&journal).unwrap()).unwrap();
        std::fs::write(d.join("a"), "someone else's a").unwrap();
        let notes = recover(&d).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            std::fs::read_to_string(d.join("a")).unwrap(),
            "someone else's a"
        );
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn locks_exclude_each_other() {
        let d = tmp("lock");
        let path = d.join(".x.lock");
        let held = Lock::acquire(&path, "x").unwrap();
        let other = File::open(&path).unwrap();
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop(held);
        other.try_lock().unwrap();
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn writability_is_checked_where_files_would_go() {
        let d = tmp("writable");
        assert!(check_writable(&d.join("a/b/c"), "run directory").is_ok());
        assert!(!d.join("a").exists(), "the check creates nothing");
        std::fs::write(d.join("file"), "x").unwrap();
        let err = check_writable(&d.join("file/sub"), "run directory").unwrap_err();
        assert!(err.contains("is not a directory"), "{err}");
        std::fs::remove_dir_all(d).unwrap();
    }
}
