//! The C ABI (`src/capi/forge.h`): profiles and dispatchers behind opaque handles, status codes
//! plus a thread-local message, and no unwinding across the boundary (every entry point runs
//! under `catch_unwind`). Built into `libforge.so` (the crate's `cdylib`).
//!
//! The header is the reference for callers; this module mirrors it. Every argument check that
//! the kernels impose lives in [`check_gemm`], which the Python package uses too.

use crate::device::cache;
use crate::device::{DeviceError, Gpu};
use crate::dispatch::Dispatcher;
use crate::problem::Problem;
use crate::profile::{Profile, ProfileError, ProfileSource, Rule, Selection};
use crate::schedule::{Dtype, Layout};
use crate::shape::{MAX_DIM, Shape};
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// `forge_status` values (forge.h).
pub const FORGE_OK: c_int = 0;
pub const FORGE_ERROR_INVALID_ARGUMENT: c_int = 1;
pub const FORGE_ERROR_UNSUPPORTED: c_int = 2;
pub const FORGE_ERROR_PROFILE: c_int = 3;
pub const FORGE_ERROR_NO_DEVICE: c_int = 4;
pub const FORGE_ERROR_DEVICE: c_int = 5;
pub const FORGE_ERROR_INTERNAL: c_int = 6;

/// `forge_layout` values (forge.h), in [`Layout::ALL`] order.
pub const FORGE_LAYOUT_TN: c_int = 0;
pub const FORGE_LAYOUT_NN: c_int = 1;
pub const FORGE_LAYOUT_TT: c_int = 2;
pub const FORGE_LAYOUT_NT: c_int = 3;

/// `FORGE_RULE_*` values (forge.h).
pub const FORGE_RULE_EXACT: i32 = 0;
pub const FORGE_RULE_NEAREST: i32 = 1;
pub const FORGE_RULE_CANONICAL: i32 = 2;
pub const FORGE_RULE_MODEL: i32 = 3;

/// Device pointers must be aligned to this many bytes (TMA base addresses and the vectorized
/// loads of `kernels/ABI.md`).
pub const POINTER_ALIGN: u64 = 16;

/// A failed call: its status code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub status: c_int,
    pub message: String,
}

impl Failure {
    pub fn new(status: c_int, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }
    fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(FORGE_ERROR_INVALID_ARGUMENT, message)
    }
    fn unsupported(message: impl Into<String>) -> Failure {
        Failure::new(FORGE_ERROR_UNSUPPORTED, message)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<ProfileError> for Failure {
    fn from(e: ProfileError) -> Failure {
        Failure::new(FORGE_ERROR_PROFILE, e.to_string())
    }
}

impl From<DeviceError> for Failure {
    fn from(e: DeviceError) -> Failure {
        let status = match e {
            DeviceError::NoDevice(_) => FORGE_ERROR_NO_DEVICE,
            _ => FORGE_ERROR_DEVICE,
        };
        Failure::new(status, e.to_string())
    }
}

/// The name of a status code.
pub fn status_name(status: c_int) -> &'static str {
    status_cstr(status).to_str().expect("ASCII")
}

fn status_cstr(status: c_int) -> &'static CStr {
    match status {
        FORGE_OK => c"FORGE_OK",
        FORGE_ERROR_INVALID_ARGUMENT => c"FORGE_ERROR_INVALID_ARGUMENT",
        FORGE_ERROR_UNSUPPORTED => c"FORGE_ERROR_UNSUPPORTED",
        FORGE_ERROR_PROFILE => c"FORGE_ERROR_PROFILE",
        FORGE_ERROR_NO_DEVICE => c"FORGE_ERROR_NO_DEVICE",
        FORGE_ERROR_DEVICE => c"FORGE_ERROR_DEVICE",
        FORGE_ERROR_INTERNAL => c"FORGE_ERROR_INTERNAL",
        _ => c"unknown status",
    }
}

/// The C value of a layout.
pub fn layout_from_c(layout: c_int) -> Result<Layout, Failure> {
    match layout {
        FORGE_LAYOUT_TN => Ok(Layout::Tn),
        FORGE_LAYOUT_NN => Ok(Layout::Nn),
        FORGE_LAYOUT_TT => Ok(Layout::Tt),
        FORGE_LAYOUT_NT => Ok(Layout::Nt),
        other => Err(Failure::invalid(format!(
            "layout = {other} is not a forge_layout (FORGE_LAYOUT_TN = 0, NN = 1, TT = 2, NT = 3)"
        ))),
    }
}

/// One dimension, in [1, 2^31 − 1].
pub fn dim(name: &str, value: i64) -> Result<u32, Failure> {
    if value < 1 || value as u64 > MAX_DIM {
        return Err(Failure::invalid(format!(
            "{name} = {value} is out of range: every dimension must be in [1, 2^31 - 1]"
        )));
    }
    Ok(value as u32)
}

/// The shape of a problem from C dimensions.
pub fn shape(m: i64, n: i64, k: i64) -> Result<Shape, Failure> {
    Ok(Shape::new(dim("m", m)?, dim("n", n)?, dim("k", k)?))
}

fn leading_dim(name: &str, value: i64, want: u32, what: &str, dim: &str) -> Result<(), Failure> {
    if value == want as i64 {
        return Ok(());
    }
    let because = format!("{what} is row-major, so {name} must equal {dim} = {want} (packed)");
    if value < want as i64 {
        Err(Failure::invalid(format!(
            "{name} = {value} is invalid: {because}"
        )))
    } else {
        Err(Failure::unsupported(format!(
            "{name} = {value} is not supported yet: {because}; padded rows come later"
        )))
    }
}

fn pointer(name: &str, value: u64) -> Result<(), Failure> {
    if value == 0 {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    if !value.is_multiple_of(POINTER_ALIGN) {
        return Err(Failure::unsupported(format!(
            "{name} = {value:#x} is not supported: device pointers must be \
             {POINTER_ALIGN}-byte aligned"
        )));
    }
    Ok(())
}

/// Every check of a GEMM's arguments that does not need the device: the layout, dimensions,
/// packed leading dimensions (of each operand as the layout stores it) and aligned non-null
/// pointers. Returns the layout and the shape.
#[allow(clippy::too_many_arguments)]
pub fn check_gemm(
    layout: c_int,
    m: i64,
    n: i64,
    k: i64,
    a: u64,
    lda: i64,
    b: u64,
    ldb: i64,
    c: u64,
    ldc: i64,
) -> Result<(Layout, Shape), Failure> {
    let layout = layout_from_c(layout)?;
    let shape = shape(m, n, k)?;
    let name = layout.as_str().to_uppercase();
    let (a_transposed, b_transposed) = layout.transposes();
    if a_transposed {
        leading_dim(
            "lda",
            lda,
            shape.m,
            &format!("with layout {name}, A (K×M)"),
            "m",
        )?;
    } else {
        leading_dim(
            "lda",
            lda,
            shape.k,
            &format!("with layout {name}, A (M×K)"),
            "k",
        )?;
    }
    if b_transposed {
        leading_dim(
            "ldb",
            ldb,
            shape.n,
            &format!("with layout {name}, B (K×N)"),
            "n",
        )?;
    } else {
        leading_dim(
            "ldb",
            ldb,
            shape.k,
            &format!("with layout {name}, B (N×K)"),
            "k",
        )?;
    }
    leading_dim("ldc", ldc, shape.n, "C (M×N)", "n")?;
    pointer("a", a)?;
    pointer("b", b)?;
    pointer("c", c)?;
    Ok((layout, shape))
}

/// Opens a dispatcher: a profile file first (so a missing profile is reported on any
/// machine), then the device, then the architecture check and the kernel cache. A directory
/// of profiles (profiles/) gives the measured one tuned on this device
/// ([`Profile::load_for_device`]), once the device is open.
pub fn open_dispatcher(
    profile_path: &Path,
    device: i64,
    cache_dir: Option<&Path>,
) -> Result<Dispatcher, Failure> {
    open_dispatcher_from(
        Profile::source(profile_path)?,
        profile_path,
        device,
        cache_dir,
    )
}

/// [`open_dispatcher`] with the profile already read from `profile_path` (the Python
/// binding reads it first, for its own exceptions).
pub fn open_dispatcher_from(
    source: ProfileSource,
    profile_path: &Path,
    device: i64,
    cache_dir: Option<&Path>,
) -> Result<Dispatcher, Failure> {
    if device < 0 {
        return Err(Failure::invalid(format!(
            "device = {device} is invalid: a device ordinal is at least 0"
        )));
    }
    let gpu = Gpu::open(device as usize)?;
    let profile = source.for_device(&gpu.info.arch, &gpu.info.name)?;
    if profile.meta.arch != gpu.info.arch {
        return Err(Failure::new(
            FORGE_ERROR_PROFILE,
            format!(
                "profile {} was tuned for {}, but device {device} ({}) is {}",
                profile_path.display(),
                profile.meta.arch,
                gpu.info.name,
                gpu.info.arch
            ),
        ));
    }
    let cache_dir = cache_dir.map_or_else(cache::default_dir, Path::to_path_buf);
    Ok(Dispatcher::new(profile, &gpu, &cache_dir)?)
}

/// The rule of a selection as (`FORGE_RULE_*`, entry, distance).
pub fn rule_parts(rule: &Rule) -> (i32, i32, f64) {
    match *rule {
        Rule::Exact { entry } => (FORGE_RULE_EXACT, entry as i32, 0.0),
        Rule::Nearest { entry, distance } => (FORGE_RULE_NEAREST, entry as i32, distance),
        Rule::Model { .. } => (FORGE_RULE_MODEL, -1, 0.0),
        Rule::Canonical => (FORGE_RULE_CANONICAL, -1, 0.0),
    }
}

/// The name of a `FORGE_RULE_*` value.
pub fn rule_name(rule: i32) -> &'static str {
    rule_cstr(rule).to_str().expect("ASCII")
}

fn rule_cstr(rule: i32) -> &'static CStr {
    match rule {
        FORGE_RULE_EXACT => c"exact",
        FORGE_RULE_NEAREST => c"nearest",
        FORGE_RULE_CANONICAL => c"canonical",
        FORGE_RULE_MODEL => c"model",
        _ => c"unknown rule",
    }
}

// ---------------------------------------------------------------------------------------------
// The extern "C" surface.

/// `struct forge_profile` (opaque to C).
pub struct ForgeProfile {
    profile: Profile,
}

/// `struct forge_dispatcher` (opaque to C).
pub struct ForgeDispatcher {
    dispatcher: Dispatcher,
}

/// `forge_selection` (forge.h).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ForgeSelection {
    pub schedule: [c_char; 128],
    pub rule: i32,
    pub entry: i32,
    pub distance: f64,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).expect("NULs were replaced");
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs one entry point: catches panics, records the message, returns the status.
fn run(func: &str, body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            set_last_error("");
            FORGE_OK
        }
        Ok(Err(f)) => {
            set_last_error(&format!("{func}: {}", f.message));
            f.status
        }
        Err(payload) => {
            set_last_error(&format!(
                "{func}: internal error (a bug in forge): {}",
                panic_text(payload.as_ref())
            ));
            FORGE_ERROR_INTERNAL
        }
    }
}

/// A `const char*` argument as a path; NULL and non-UTF-8 are invalid.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn str_arg<'a>(name: &str, p: *const c_char) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Failure::invalid(format!("{name} is not UTF-8")))
}

fn write_selection(sel: &Selection, out: &mut ForgeSelection) -> Result<(), Failure> {
    let name = sel.schedule.name();
    if name.len() >= out.schedule.len() {
        return Err(Failure::new(
            FORGE_ERROR_INTERNAL,
            format!("schedule name {name} does not fit forge_selection.schedule"),
        ));
    }
    out.schedule = [0; 128];
    for (dst, src) in out.schedule.iter_mut().zip(name.bytes()) {
        *dst = src as c_char;
    }
    (out.rule, out.entry, out.distance) = rule_parts(&sel.rule);
    Ok(())
}

/// The message of this thread's last failed call.
#[unsafe(no_mangle)]
pub extern "C" fn forge_last_error() -> *const c_char {
    // The buffer lives in this thread's storage until the next call replaces it.
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn forge_status_name(status: c_int) -> *const c_char {
    status_cstr(status).as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn forge_rule_name(rule: i32) -> *const c_char {
    rule_cstr(rule).as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn forge_version() -> *const c_char {
    static VERSION: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            let text = format!(
                "{} ({})",
                env!("CARGO_PKG_VERSION"),
                crate::util::git_revision()
            );
            CString::new(text).unwrap_or_default()
        })
        .as_ptr()
}

/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or points to writable storage
/// for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn forge_profile_open(
    path: *const c_char,
    out: *mut *mut ForgeProfile,
) -> c_int {
    run("forge_profile_open", || {
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        unsafe { *out = std::ptr::null_mut() };
        let path = unsafe { str_arg("path", path) }?;
        let profile = Profile::load(Path::new(path))?;
        unsafe { *out = Box::into_raw(Box::new(ForgeProfile { profile })) };
        Ok(())
    })
}

/// # Safety
/// `profile` is NULL or a live handle from `forge_profile_open`; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn forge_profile_select(
    profile: *const ForgeProfile,
    layout: c_int,
    m: i64,
    n: i64,
    k: i64,
    out: *mut ForgeSelection,
) -> c_int {
    run("forge_profile_select", || {
        let profile = unsafe { profile.as_ref() }.ok_or(Failure::invalid("profile is NULL"))?;
        let out = unsafe { out.as_mut() }.ok_or(Failure::invalid("out is NULL"))?;
        let layout = layout_from_c(layout)?;
        let shape = shape(m, n, k)?;
        let sel = profile
            .profile
            .select(&Problem::new(Dtype::Tf32, layout, shape));
        write_selection(&sel, out)
    })
}

/// # Safety
/// `profile` is NULL or a live handle from `forge_profile_open`, closed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn forge_profile_close(profile: *mut ForgeProfile) {
    run("forge_profile_close", || {
        if !profile.is_null() {
            drop(unsafe { Box::from_raw(profile) });
        }
        Ok(())
    });
}

/// # Safety
/// The strings are NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn forge_dispatcher_open(
    profile_path: *const c_char,
    device: c_int,
    cache_dir: *const c_char,
    out: *mut *mut ForgeDispatcher,
) -> c_int {
    run("forge_dispatcher_open", || {
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        unsafe { *out = std::ptr::null_mut() };
        let path = unsafe { str_arg("profile_path", profile_path) }?;
        let cache_dir = match cache_dir.is_null() {
            true => None,
            false => Some(PathBuf::from(unsafe { str_arg("cache_dir", cache_dir) }?)),
        };
        let dispatcher = open_dispatcher(Path::new(path), device as i64, cache_dir.as_deref())?;
        unsafe { *out = Box::into_raw(Box::new(ForgeDispatcher { dispatcher })) };
        Ok(())
    })
}

/// # Safety
/// `dispatcher` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn forge_dispatcher_select(
    dispatcher: *const ForgeDispatcher,
    layout: c_int,
    m: i64,
    n: i64,
    k: i64,
    out: *mut ForgeSelection,
) -> c_int {
    run("forge_dispatcher_select", || {
        let d = unsafe { dispatcher.as_ref() }.ok_or(Failure::invalid("dispatcher is NULL"))?;
        let out = unsafe { out.as_mut() }.ok_or(Failure::invalid("out is NULL"))?;
        let layout = layout_from_c(layout)?;
        let problem = Problem::new(Dtype::Tf32, layout, shape(m, n, k)?);
        write_selection(&d.dispatcher.selection_for(&problem), out)
    })
}

/// # Safety
/// `dispatcher` is NULL or a live handle; `a`, `b`, `c` are device allocations of the sizes
/// the header gives, in the device's primary context; `stream` is NULL or a live stream of
/// that context.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn forge_gemm(
    dispatcher: *mut ForgeDispatcher,
    layout: c_int,
    m: i64,
    n: i64,
    k: i64,
    a: *const f32,
    lda: i64,
    b: *const f32,
    ldb: i64,
    c: *mut f32,
    ldc: i64,
    stream: *mut c_void,
) -> c_int {
    run("forge_gemm", || {
        let d = unsafe { dispatcher.as_ref() }.ok_or(Failure::invalid("dispatcher is NULL"))?;
        let (a, b, c) = (a as u64, b as u64, c as u64);
        let (layout, s) = check_gemm(layout, m, n, k, a, lda, b, ldb, c, ldc)?;
        // Safety: the caller's guarantees on the pointers and the stream (the header).
        unsafe {
            d.dispatcher.gemm_layout_raw(
                stream as cudarc::driver::sys::CUstream,
                layout,
                s.m,
                s.n,
                s.k,
                a,
                b,
                c,
            )
        }?;
        Ok(())
    })
}

/// # Safety
/// `dispatcher` is NULL or a live handle, closed once, with no call on it in flight.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn forge_dispatcher_close(dispatcher: *mut ForgeDispatcher) {
    run("forge_dispatcher_close", || {
        if !dispatcher.is_null() {
            drop(unsafe { Box::from_raw(dispatcher) });
        }
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        unsafe { CStr::from_ptr(forge_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    const K: i64 = 256;
    const P: u64 = 0x7f00_0000_0000;

    fn tn(m: i64, n: i64, k: i64) -> Result<Shape, Failure> {
        check_gemm(FORGE_LAYOUT_TN, m, n, k, P, k, P + 4096, k, P + 8192, n).map(|(_, s)| s)
    }

    #[test]
    fn gemm_checks_name_the_argument() {
        assert_eq!(tn(128, 64, K), Ok(Shape::new(128, 64, 256)));
        // Each layout's leading dimensions are its stored operands' row lengths.
        let (m, n) = (128, 64);
        for (layout, lda, ldb) in [
            (FORGE_LAYOUT_NN, K, n),
            (FORGE_LAYOUT_TT, m, K),
            (FORGE_LAYOUT_NT, m, n),
        ] {
            let ok = check_gemm(layout, m, n, K, P, lda, P, ldb, P, n).unwrap();
            assert_eq!(
                ok,
                (layout_from_c(layout).unwrap(), Shape::new(128, 64, 256))
            );
        }
        let f = check_gemm(FORGE_LAYOUT_NT, m, n, K, P, K, P, n, P, n).unwrap_err();
        assert_eq!(f.status, FORGE_ERROR_UNSUPPORTED);
        assert!(
            f.message
                .starts_with("lda = 256 is not supported yet: with layout NT, A (K×M)"),
            "{f}"
        );
        let f = check_gemm(7, 1, 1, 1, P, 1, P, 1, P, 1).unwrap_err();
        assert_eq!(f.status, FORGE_ERROR_INVALID_ARGUMENT);
        assert!(f.message.starts_with("layout = 7"), "{f}");
        let f = tn(0, 1, 1).unwrap_err();
        assert_eq!(
            (f.status, f.message.starts_with("m = 0 is out of range")),
            (FORGE_ERROR_INVALID_ARGUMENT, true)
        );
        let f = tn(1, 1 << 31, 1).unwrap_err();
        assert!(
            f.message.starts_with("n = 2147483648 is out of range"),
            "{f}"
        );
        let f = tn(1, 1, -3).unwrap_err();
        assert!(f.message.starts_with("k = -3 is out of range"), "{f}");
        let f = check_gemm(FORGE_LAYOUT_TN, 8, 8, K, P, K + 4, P, K, P, 8).unwrap_err();
        assert_eq!(f.status, FORGE_ERROR_UNSUPPORTED);
        assert!(
            f.message.starts_with("lda = 260 is not supported yet"),
            "{f}"
        );
        let f = check_gemm(FORGE_LAYOUT_TN, 8, 8, K, P, K, P, K - 1, P, 8).unwrap_err();
        assert_eq!(f.status, FORGE_ERROR_INVALID_ARGUMENT);
        assert!(f.message.starts_with("ldb = 255 is invalid"), "{f}");
        let f = check_gemm(FORGE_LAYOUT_TN, 8, 8, K, P, K, P, K, P, 16).unwrap_err();
        assert!(
            f.message.starts_with("ldc = 16 is not supported yet"),
            "{f}"
        );
        let f = check_gemm(FORGE_LAYOUT_TN, 8, 8, K, 0, K, P, K, P, 8).unwrap_err();
        assert_eq!((f.status, f.message.as_str()), (1, "a is NULL"));
        let f = check_gemm(FORGE_LAYOUT_TN, 8, 8, K, P, K, P + 4, K, P, 8).unwrap_err();
        assert_eq!(f.status, FORGE_ERROR_UNSUPPORTED);
        assert!(
            f.message.starts_with("b = 0x7f0000000004 is not supported"),
            "{f}"
        );
    }

    #[test]
    fn entry_points_set_and_clear_the_thread_local_error() {
        let mut out: *mut ForgeProfile = std::ptr::null_mut();
        let status = unsafe { forge_profile_open(c"/nonexistent/p.toml".as_ptr(), &mut out) };
        assert_eq!(status, FORGE_ERROR_PROFILE);
        assert!(out.is_null());
        let msg = last_error();
        assert!(
            msg.starts_with("forge_profile_open: cannot read profile /nonexistent/p.toml"),
            "{msg}"
        );
        // Another thread has its own message.
        std::thread::spawn(|| assert_eq!(last_error(), ""))
            .join()
            .unwrap();
        let status = unsafe { forge_profile_open(std::ptr::null(), &mut out) };
        assert_eq!(status, FORGE_ERROR_INVALID_ARGUMENT);
        assert_eq!(last_error(), "forge_profile_open: path is NULL");
        let shipped = CString::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/sm_90a-h200.toml"
        ))
        .unwrap();
        assert_eq!(
            unsafe { forge_profile_open(shipped.as_ptr(), &mut out) },
            FORGE_OK
        );
        assert_eq!(last_error(), "");
        let mut sel = ForgeSelection {
            schedule: [0; 128],
            rule: -5,
            entry: -5,
            distance: -1.0,
        };
        let status =
            unsafe { forge_profile_select(out, FORGE_LAYOUT_TN, 2048, 2048, 2048, &mut sel) };
        assert_eq!(status, FORGE_OK);
        let name = unsafe { CStr::from_ptr(sel.schedule.as_ptr()) };
        let expected =
            crate::profile::Profile::load(std::path::Path::new(shipped.to_str().unwrap()))
                .unwrap()
                .select(&crate::problem::Problem::new(
                    crate::schedule::Dtype::Tf32,
                    crate::schedule::Layout::Tn,
                    crate::shape::Shape::new(2048, 2048, 2048),
                ))
                .schedule
                .name();
        assert_eq!(name.to_str().unwrap(), expected);
        assert_eq!(sel.rule, FORGE_RULE_EXACT);
        let status = unsafe { forge_profile_select(out, FORGE_LAYOUT_TN, 0, 1, 1, &mut sel) };
        assert_eq!(status, FORGE_ERROR_INVALID_ARGUMENT);
        assert!(last_error().contains("m = 0 is out of range"));
        unsafe { forge_profile_close(out) };
        unsafe { forge_profile_close(std::ptr::null_mut()) };
    }

    #[test]
    fn panics_become_internal_errors() {
        let status = run("forge_test", || panic!("boom"));
        assert_eq!(status, FORGE_ERROR_INTERNAL);
        assert_eq!(
            last_error(),
            "forge_test: internal error (a bug in forge): boom"
        );
    }

    #[test]
    fn status_and_rule_names_match_the_header() {
        let header = include_str!("forge.h");
        for status in 0..=FORGE_ERROR_INTERNAL {
            let name = unsafe { CStr::from_ptr(forge_status_name(status)) };
            let name = name.to_str().unwrap();
            assert_eq!(name, status_name(status));
            assert!(
                header.contains(&format!("{name} = {status}")),
                "{name} = {status} not in forge.h"
            );
        }
        for (name, value) in [
            ("FORGE_LAYOUT_TN", FORGE_LAYOUT_TN),
            ("FORGE_LAYOUT_NN", FORGE_LAYOUT_NN),
            ("FORGE_LAYOUT_TT", FORGE_LAYOUT_TT),
            ("FORGE_LAYOUT_NT", FORGE_LAYOUT_NT),
            ("FORGE_RULE_EXACT", FORGE_RULE_EXACT),
            ("FORGE_RULE_NEAREST", FORGE_RULE_NEAREST),
            ("FORGE_RULE_CANONICAL", FORGE_RULE_CANONICAL),
            ("FORGE_RULE_MODEL", FORGE_RULE_MODEL),
        ] {
            assert!(header.contains(&format!("{name} = {value}")), "{name}");
        }
        for (i, layout) in Layout::ALL.iter().enumerate() {
            assert_eq!(layout_from_c(i as c_int), Ok(*layout));
        }
        for rule in 0..4 {
            let name = unsafe { CStr::from_ptr(forge_rule_name(rule)) };
            assert_eq!(name.to_str().unwrap(), rule_name(rule));
        }
        assert!(header.contains("char schedule[128];"));
        assert_eq!(std::mem::size_of::<ForgeSelection>(), 128 + 4 + 4 + 8);
    }
}
