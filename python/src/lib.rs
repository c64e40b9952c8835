//! `forge._forge`: the Rust half of the `forge` Python package. The Python half
//! (`python/forge/__init__.py`) adds the PyTorch functions on top of [`Dispatcher::gemm_tn`].
//!
//! Errors keep forge's messages: bad input becomes `ValueError` (or `TypeError` for a wrong
//! type), a missing profile `FileNotFoundError`, an invalid profile `forge.ProfileError`, a
//! request the kernels do not support yet `forge.UnsupportedError` (a `ValueError`), no device
//! `forge.NoDeviceError` and any other device-side failure `forge.ForgeError` (a
//! `RuntimeError`).

use forge::arch::Arch;
use forge::capi::{self, Failure};
use forge::cost_model::CostModel;
use forge::device::DeviceError;
use forge::dispatch;
use forge::problem::Problem;
use forge::profile::{self, Profile};
use forge::schedule::{Dtype, Layout};
use forge::shape::Shape;
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::path::PathBuf;

create_exception!(
    _forge,
    ForgeError,
    PyRuntimeError,
    "A device-side failure in forge: a CUDA driver call, NVRTC compiling a kernel, a launch."
);
create_exception!(
    _forge,
    NoDeviceError,
    ForgeError,
    "No CUDA driver, or no device with that ordinal."
);
create_exception!(
    _forge,
    ProfileError,
    PyValueError,
    "A dispatch profile that is not valid TOML, of another schema version or for another architecture."
);
create_exception!(
    _forge,
    UnsupportedError,
    PyValueError,
    "A well-formed request the kernels do not support yet (a layout other than TN, padded rows, unaligned pointers)."
);

fn failure_to_py(f: Failure) -> PyErr {
    match f.status {
        capi::FORGE_ERROR_INVALID_ARGUMENT => PyValueError::new_err(f.message),
        capi::FORGE_ERROR_UNSUPPORTED => UnsupportedError::new_err(f.message),
        capi::FORGE_ERROR_PROFILE => ProfileError::new_err(f.message),
        capi::FORGE_ERROR_NO_DEVICE => NoDeviceError::new_err(f.message),
        _ => ForgeError::new_err(f.message),
    }
}

fn profile_to_py(e: profile::ProfileError) -> PyErr {
    match &e {
        profile::ProfileError::Read { cause, .. }
            if cause.kind() == std::io::ErrorKind::NotFound =>
        {
            PyFileNotFoundError::new_err(e.to_string())
        }
        profile::ProfileError::Read { .. } => PyOSError::new_err(e.to_string()),
        _ => ProfileError::new_err(e.to_string()),
    }
}

fn device_to_py(e: DeviceError) -> PyErr {
    failure_to_py(Failure::from(e))
}

/// A shape argument: a string (`"D2048"`, `"128x5376x7168"`) or a sequence (M, N, K).
fn shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<Shape> {
    if shape.is_instance_of::<PyString>() {
        let text: String = shape.extract()?;
        return text
            .parse::<Shape>()
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    if let Ok((m, n, k)) = shape.extract::<(i64, i64, i64)>() {
        return capi::shape(m, n, k).map_err(|f| PyValueError::new_err(format!("shape: {f}")));
    }
    Err(PyTypeError::new_err(format!(
        "shape must be a string such as 'D2048' or '128x5376x7168', or a tuple (M, N, K) of \
         ints; got {}",
        shape.get_type().name()?
    )))
}

fn dtype_arg(dtype: &str) -> PyResult<Dtype> {
    dtype
        .parse()
        .map_err(|e: forge::schedule::ScheduleError| PyValueError::new_err(e.to_string()))
}

fn layout_arg(layout: &str) -> PyResult<Layout> {
    layout
        .to_ascii_lowercase()
        .parse()
        .map_err(|e: forge::schedule::ScheduleError| PyValueError::new_err(e.to_string()))
}

fn path_arg(path: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    // str or os.PathLike, as open() takes it.
    let fspath = path.py().import("os")?.getattr("fspath")?.call1((path,))?;
    fspath.extract::<PathBuf>()
}

fn selection_tuple<'py>(
    py: Python<'py>,
    sel: &forge::profile::Selection,
) -> PyResult<Bound<'py, PyTuple>> {
    let (rule, _, _) = capi::rule_parts(&sel.rule);
    PyTuple::new(py, [sel.schedule.name(), capi::rule_name(rule).to_string()])
}

/// rank(arch, shape, top=10, dtype="tf32", layout="tn")
/// --
///
/// The cost model's ranking of every valid schedule for one shape on an architecture, fastest
/// first (no GPU needed): a list of at most `top` dicts with `schedule`, `predicted_us`,
/// `tflops`, `peak_fraction` and `dominant` (the cost term that decides the time).
#[pyfunction]
#[pyo3(signature = (arch, shape, top = 10, dtype = "tf32", layout = "tn"))]
fn rank<'py>(
    py: Python<'py>,
    arch: &str,
    shape: &Bound<'py, PyAny>,
    top: i64,
    dtype: &str,
    layout: &str,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let arch = Arch::by_name(arch).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let shape = shape_arg(shape)?;
    if top < 1 {
        return Err(PyValueError::new_err(format!(
            "top = {top}: must be at least 1"
        )));
    }
    let (dtype, layout) = (dtype_arg(dtype)?, layout_arg(layout)?);
    let ranked = py.detach(|| CostModel::shipped().rank(&arch, dtype, layout, &shape));
    ranked
        .iter()
        .take(top as usize)
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("schedule", r.schedule.name())?;
            d.set_item("predicted_us", r.prediction.time_us)?;
            d.set_item("tflops", r.prediction.tflops)?;
            d.set_item("peak_fraction", r.prediction.peak_fraction)?;
            d.set_item("dominant", r.prediction.dominant.to_string())?;
            Ok(d)
        })
        .collect()
}

/// select(profile_path, shape, dtype="tf32", layout="tn")
/// --
///
/// The schedule a dispatch profile picks for a problem, and the rule that picked it
/// ("exact", "model" or "canonical"), as `forge select` prints them (no GPU needed).
#[pyfunction]
#[pyo3(signature = (profile_path, shape, dtype = "tf32", layout = "tn"))]
fn select<'py>(
    py: Python<'py>,
    profile_path: &Bound<'py, PyAny>,
    shape: &Bound<'py, PyAny>,
    dtype: &str,
    layout: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let path = path_arg(profile_path)?;
    let shape = shape_arg(shape)?;
    let (dtype, layout) = (dtype_arg(dtype)?, layout_arg(layout)?);
    let profile = Profile::load(&path).map_err(profile_to_py)?;
    selection_tuple(py, &profile.select(&Problem::new(dtype, layout, shape)))
}

/// The NVRTC version forge loads ("13.0"), or ForgeError when libnvrtc cannot be loaded.
#[pyfunction]
fn nvrtc_version() -> PyResult<String> {
    forge::device::nvrtc::version().map_err(|e| ForgeError::new_err(e.to_string()))
}

/// Dispatcher(profile_path, device=0, cache_dir=None)
/// --
///
/// TF32 GEMMs on CUDA device `device` following a dispatch profile tuned for its
/// architecture (a file, or a directory such as profiles/: its measured profile tuned on
/// this device). Kernels are compiled by NVRTC at first use and cached in `cache_dir`
/// (default: $FORGE_CACHE, else $XDG_CACHE_HOME/forge or ~/.cache/forge). Use
/// forge.Dispatcher (Python), which adds the PyTorch methods.
#[pyclass(frozen, module = "forge._forge")]
struct Dispatcher {
    inner: dispatch::Dispatcher,
    device: i64,
    profile_path: PathBuf,
}

#[pymethods]
impl Dispatcher {
    #[new]
    #[pyo3(signature = (profile_path, device = 0, cache_dir = None))]
    fn new(
        py: Python<'_>,
        profile_path: &Bound<'_, PyAny>,
        device: i64,
        cache_dir: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Dispatcher> {
        let path = path_arg(profile_path)?;
        let cache_dir = cache_dir.map(path_arg).transpose()?;
        // A profile file first, with the same exceptions as forge.select (a directory is
        // chosen from once the device is open).
        let source = Profile::source(&path).map_err(profile_to_py)?;
        let inner = py
            .detach(|| capi::open_dispatcher_from(source, &path, device, cache_dir.as_deref()))
            .map_err(failure_to_py)?;
        Ok(Dispatcher {
            inner,
            device,
            profile_path: path,
        })
    }

    /// The device ordinal.
    #[getter]
    fn device(&self) -> i64 {
        self.device
    }

    /// The device's NVRTC target, e.g. "sm_90a".
    #[getter]
    fn arch(&self) -> String {
        self.inner.gpu().info.arch.clone()
    }

    /// The device's name, e.g. "NVIDIA H200".
    #[getter]
    fn device_name(&self) -> String {
        self.inner.gpu().info.name.clone()
    }

    #[getter]
    fn profile_path(&self) -> String {
        self.profile_path.display().to_string()
    }

    /// (schedule, rule) the dispatcher launches for a TN shape.
    fn selection<'py>(
        &self,
        py: Python<'py>,
        shape: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let shape = shape_arg(shape)?;
        selection_tuple(py, &self.inner.selection(&shape))
    }

    /// gemm_tn(m, n, k, a, b, c, stream)
    /// --
    ///
    /// C (M×N) = A (M×K) · B (N×K)ᵀ on raw device pointers (ints), packed row-major f32,
    /// 16-byte aligned, enqueued on the raw CUDA stream `stream` (an int; 0 is the legacy
    /// default stream). The caller keeps A, B and C alive until the GEMM has run; the GIL is
    /// released meanwhile (the first call for a shape may compile a kernel).
    #[allow(clippy::too_many_arguments)]
    fn gemm_tn(
        &self,
        py: Python<'_>,
        m: i64,
        n: i64,
        k: i64,
        a: u64,
        b: u64,
        c: u64,
        stream: u64,
    ) -> PyResult<()> {
        let (_, s) = capi::check_gemm(capi::FORGE_LAYOUT_TN, m, n, k, a, k, b, k, c, n)
            .map_err(failure_to_py)?;
        let inner = &self.inner;
        py.detach(|| {
            // Safety: the caller hands over live device allocations of these sizes and a live
            // stream of the device's primary context (forge/__init__.py takes them from
            // PyTorch tensors and the current stream).
            unsafe { inner.gemm_raw(stream as usize as *mut _, s.m, s.n, s.k, a, b, c) }
        })
        .map_err(device_to_py)
    }

    fn __repr__(&self) -> String {
        format!(
            "Dispatcher({:?}, device={}) on {} ({})",
            self.profile_path.display().to_string(),
            self.device,
            self.inner.gpu().info.name,
            self.inner.gpu().info.arch
        )
    }
}

/// forge's Rust core: the cost model, profiles and the dispatcher.
#[pymodule]
fn _forge(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "forge_version",
        unsafe { std::ffi::CStr::from_ptr(capi::forge_version()) }
            .to_string_lossy()
            .into_owned(),
    )?;
    m.add_function(wrap_pyfunction!(rank, m)?)?;
    m.add_function(wrap_pyfunction!(select, m)?)?;
    m.add_function(wrap_pyfunction!(nvrtc_version, m)?)?;
    m.add_class::<Dispatcher>()?;
    m.add("ForgeError", py.get_type::<ForgeError>())?;
    m.add("NoDeviceError", py.get_type::<NoDeviceError>())?;
    m.add("ProfileError", py.get_type::<ProfileError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add(
        "known_archs",
        Arch::known()
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}
