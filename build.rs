// Records the git revision the binary was built from (profiles and reports carry it) as
// FORGE_GIT_REVISION: `git rev-parse --short=12 HEAD`, with `-dirty` when tracked files
// differ from HEAD, or `unknown` outside a git checkout.
//
// When this script reruns: only when HEAD moves (a commit, checkout, reset or rebase), when a
// source of the binary changes (which rebuilds the crate anyway), or when this file changes.
// It does not watch `.git/index`, which every `git add`, `git status` or `git diff` may
// rewrite and which used to force a full rebuild of the crate each time.
//
// `-dirty` is decided when this script runs, so it can be stale: an edit to a tracked file
// outside the watched sources (README, tests, reports) or its revert is seen only at the
// next rerun. Watching every tracked file would make it exact at the price of rebuilding the
// crate after any edit anywhere.
use std::path::{Path, PathBuf};
use std::process::Command;

/// Sources compiled into the binary (directly or through `include_str!`/`include_bytes!`):
/// a change to any of them rebuilds the crate anyway, so rerunning this script for them
/// costs nothing and keeps `-dirty` right for what the binary is made of.
const SOURCES: [&str; 6] = [
    "src",
    "kernels",
    "cost_model",
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
];

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The files that change when HEAD moves. `git rev-parse --git-path` resolves them in a
/// linked worktree too (where `.git` is a file `gitdir: …`): HEAD lives in the worktree's own
/// git directory, branch refs and `packed-refs` in the common one.
fn head_files() -> Vec<PathBuf> {
    let path = |p: &str| git(&["rev-parse", "--git-path", p]).map(PathBuf::from);
    let mut files: Vec<PathBuf> = path("HEAD").into_iter().collect();
    // On a branch, HEAD is `ref: refs/heads/NAME` and a commit changes that ref instead.
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        files.extend(path(&branch).map(|loose| nearest_existing(&loose)));
        files.extend(path("packed-refs").filter(|p| p.exists()));
    }
    files
}

/// `path` if it exists, else its nearest existing ancestor: a branch that lives only in
/// `packed-refs` gets its loose ref file created by the next commit, which changes that
/// directory. (A watched path that does not exist would rerun this script on every build.)
fn nearest_existing(path: &Path) -> PathBuf {
    path.ancestors()
        .find(|p| p.exists())
        .unwrap_or(path)
        .to_path_buf()
}

fn main() {
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|status| !status.is_empty());
    let rev = if dirty { format!("{rev}-dirty") } else { rev };
    println!("cargo:rustc-env=FORGE_GIT_REVISION={rev}");
    for path in head_files() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    for path in SOURCES.iter().filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
