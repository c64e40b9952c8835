//! NVRTC: CUDA C++ → CUBIN for a target architecture, with ptxas's resource report.
//! Needs only libnvrtc (no GPU), so CI checks every kernel variant on a CPU machine.

use cudarc::nvrtc::sys;
use std::ffi::{CStr, CString, c_char};

#[derive(Debug, thiserror::Error)]
pub enum NvrtcError {
    #[error("libnvrtc.so could not be loaded (install CUDA's NVRTC or put it on LD_LIBRARY_PATH)")]
    Missing,
    #[error("NVRTC {call} failed: {message}")]
    Call { call: &'static str, message: String },
    #[error("NVRTC could not compile {label} for {arch}:\n{log}")]
    Compile {
        label: String,
        arch: String,
        log: String,
    },
}

/// A compiled kernel binary and the compiler's log (ptxas -v output included).
#[derive(Clone, Debug)]
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub log: String,
}

/// Whether libnvrtc can be loaded (never panics).
pub fn available() -> bool {
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

fn check(call: &'static str, r: sys::nvrtcResult) -> Result<(), NvrtcError> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    let message = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(r)) }
        .to_string_lossy()
        .into_owned();
    Err(NvrtcError::Call { call, message })
}

/// NVRTC's version as "major.minor".
pub fn version() -> Result<String, NvrtcError> {
    if !available() {
        return Err(NvrtcError::Missing);
    }
    let (mut major, mut minor) = (0, 0);
    check("nvrtcVersion", unsafe {
        sys::nvrtcVersion(&mut major, &mut minor)
    })?;
    Ok(format!("{major}.{minor}"))
}

/// The options forge compiles every kernel with, for `arch` (e.g. `sm_90a`).
pub fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "--ptxas-options=-v".into(),
        "--ptxas-options=--warn-on-spills".into(),
    ]
}

/// Compiles one translation unit to CUBIN.
pub fn compile(label: &str, source: &str, arch: &str) -> Result<Compiled, NvrtcError> {
    if !available() {
        return Err(NvrtcError::Missing);
    }
    let src = CString::new(source).expect("kernel source has no NUL");
    let name = CString::new(format!("{label}.cu")).expect("label has no NUL");
    let opts: Vec<CString> = options(arch)
        .into_iter()
        .map(|o| CString::new(o).expect("option has no NUL"))
        .collect();
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    unsafe {
        check(
            "nvrtcCreateProgram",
            sys::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            ),
        )?;
        let compiled = sys::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
        let log = program_log(prog);
        let result = if compiled == sys::nvrtcResult::NVRTC_SUCCESS {
            cubin(prog).map(|cubin| Compiled {
                cubin,
                log: log.clone(),
            })
        } else {
            Err(NvrtcError::Compile {
                label: label.to_string(),
                arch: arch.to_string(),
                log,
            })
        };
        sys::nvrtcDestroyProgram(&mut prog);
        result
    }
}

unsafe fn program_log(prog: sys::nvrtcProgram) -> String {
    let mut size = 0usize;
    if unsafe { sys::nvrtcGetProgramLogSize(prog, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS {
        return String::new();
    }
    let mut buf = vec![0u8; size.max(1)];
    unsafe { sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) };
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .trim()
        .to_string()
}

unsafe fn cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, NvrtcError> {
    let mut size = 0usize;
    check("nvrtcGetCUBINSize", unsafe {
        sys::nvrtcGetCUBINSize(prog, &mut size)
    })?;
    let mut buf = vec![0u8; size];
    check("nvrtcGetCUBIN", unsafe {
        sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char)
    })?;
    Ok(buf)
}

/// What ptxas reported for one kernel entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasReport {
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_frame: u32,
    /// Warning lines (spills, serialized wgmma C7510/C7515, ignored setmaxnreg C7508, …).
    pub warnings: Vec<String>,
}

impl PtxasReport {
    /// One line: registers, spills, stack and any warnings.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{} regs, {} B spill stores, {} B spill loads, {} B stack",
            self.registers, self.spill_stores, self.spill_loads, self.stack_frame
        );
        if !self.warnings.is_empty() {
            line += &format!("; {}", self.warnings.join("; "));
        }
        line
    }

    /// Parses the `ptxas info`/`warning` lines of a log for `entry`'s function.
    pub fn parse(log: &str, entry: &str) -> PtxasReport {
        let mut r = PtxasReport::default();
        let mut in_entry = false;
        for line in log.lines() {
            // ptxas 13 reports serialized wgmma (C7515) as an `info` line, not a warning.
            if line.contains("warning") || line.contains("Potential Performance Loss") {
                r.warnings.push(line.trim().to_string());
            }
            if line.contains("Compiling entry function") {
                in_entry = line.contains(&format!("'{entry}'"));
            } else if let Some((_, name)) = line.split_once("Function properties for ") {
                in_entry = name.trim() == entry;
            }
            if !in_entry {
                continue;
            }
            let number_before = |text: &str, unit: &str| -> Option<u32> {
                let pos = text.find(unit)?;
                text[..pos].split_whitespace().last()?.parse().ok()
            };
            if line.contains("Used") && line.contains("registers") {
                r.registers = number_before(line, "registers").unwrap_or(0);
            }
            if line.contains("bytes stack frame") {
                r.stack_frame = number_before(line, "bytes stack frame").unwrap_or(0);
                r.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                r.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            }
        }
        r
    }

    /// Whether the kernel is free of spills, local stack and compiler warnings.
    pub fn clean(&self) -> bool {
        self.spill_stores == 0 && self.spill_loads == 0 && self.warnings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_ptxas_log() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'forge_gemm' for 'sm_90a'\n\
ptxas info    : Function properties for forge_gemm\n\
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
ptxas info    : Used 168 registers, used 1 barriers, 400 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'forge_splitk_reduce' for 'sm_90a'\n\
ptxas info    : Function properties for forge_splitk_reduce\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 12 registers\n";
        let r = PtxasReport::parse(log, "forge_gemm");
        assert_eq!(
            (r.registers, r.stack_frame, r.spill_stores, r.spill_loads),
            (168, 8, 4, 4)
        );
        assert!(!r.clean());
        let r = PtxasReport::parse(log, "forge_splitk_reduce");
        assert_eq!(r.registers, 12);
        assert!(r.clean());
        let w = "ptxas warning : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized";
        assert!(!PtxasReport::parse(w, "forge_gemm").clean());
        let info = "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in the function 'forge_gemm'";
        assert!(!PtxasReport::parse(info, "forge_gemm").clean());
    }
}
