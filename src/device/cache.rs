//! Content-addressed on-disk cache of compiled kernels. The key hashes the full source,
//! the target architecture, NVRTC's version and the compile options, so any change to any of
//! them is a miss. Writes are atomic (temporary file, then rename), so concurrent compilers
//! and crashed runs never leave a torn entry.

use super::nvrtc::{self, Compiled, NvrtcError};
use crate::kernel_source::sha256_hex;
use crate::util::write_atomically;
use std::path::{Path, PathBuf};

/// Environment variable overriding the cache directory.
pub const CACHE_ENV: &str = "FORGE_CACHE";

/// The cache directory: `$FORGE_CACHE`, else `$XDG_CACHE_HOME/forge`, else `~/.cache/forge`,
/// else a directory under the system temp dir.
pub fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(CACHE_ENV) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("forge");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("forge");
    }
    std::env::temp_dir().join("forge-cache")
}

/// A kernel cache rooted at one directory.
#[derive(Clone, Debug)]
pub struct KernelCache {
    dir: PathBuf,
    nvrtc_version: String,
}

impl KernelCache {
    pub fn new(dir: &Path) -> Result<KernelCache, NvrtcError> {
        Ok(KernelCache {
            dir: dir.to_path_buf(),
            nvrtc_version: nvrtc::version()?,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache key of a translation unit for an architecture.
    pub fn key(&self, source: &str, arch: &str) -> String {
        let opts = nvrtc::options(arch).join(" ");
        sha256_hex(&[
            source.as_bytes(),
            arch.as_bytes(),
            self.nvrtc_version.as_bytes(),
            opts.as_bytes(),
        ])
    }

    /// The compiled kernel for `source`, from disk or freshly compiled (and then stored).
    pub fn get_or_compile(
        &self,
        label: &str,
        source: &str,
        arch: &str,
    ) -> Result<Compiled, NvrtcError> {
        let key = self.key(source, arch);
        let cubin_path = self.dir.join(format!("{key}.cubin"));
        let log_path = self.dir.join(format!("{key}.log"));
        if let (Ok(cubin), Ok(log)) = (
            std::fs::read(&cubin_path),
            std::fs::read_to_string(&log_path),
        ) {
            return Ok(Compiled { cubin, log });
        }
        let compiled = nvrtc::compile(label, source, arch)?;
        // A failed cache write only costs a recompile next time.
        let _ = write_atomically(&log_path, compiled.log.as_bytes())
            .and_then(|_| write_atomically(&cubin_path, &compiled.cubin));
        Ok(compiled)
    }
}
