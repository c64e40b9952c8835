"""forge from Python: TF32 GEMMs on forge's own kernels, picked per shape by a tuned profile.

CPU functions (no GPU, no PyTorch needed)::

    forge.rank("sm_90a", "4096x4096x4096", top=5)   # the cost model's ranking
    forge.select("profiles/sm_90a-h200.toml", (2048, 2048, 2048))  # -> (schedule, rule)

With PyTorch on a CUDA device::

    forge.Dispatcher("profiles/sm_90a-h200.toml", device=0)  # opens cuda:0 for forge.*
    y = forge.linear(x, w)   # x @ w.T, w (N x K) as nn.Linear stores it: no copy
    z = forge.mm(a, b)       # a @ b (b is K x N: forge runs on b.T.contiguous())

forge.linear and forge.mm are the custom op ``torch.ops.forge.linear`` (with a fake
implementation, so they work under torch.compile). They run float32 tensors with TF32 tensor-core
math on the current CUDA stream, and every schedule forge picks gives the same bits (the
profile's "bitexact" contract). Backward, where autograd asks for it, uses torch.matmul.

PyTorch is imported only when a function needs it.
"""

import ctypes
import glob
import os
import sys
import threading

from . import _forge
from ._forge import (
    ForgeError,
    NoDeviceError,
    ProfileError,
    UnsupportedError,
    known_archs,
    nvrtc_version,
    rank,
    select,
)

__version__ = _forge.__version__

__all__ = [
    "Dispatcher",
    "ForgeError",
    "NoDeviceError",
    "ProfileError",
    "UnsupportedError",
    "dispatcher_for",
    "known_archs",
    "linear",
    "mm",
    "nvrtc_version",
    "rank",
    "select",
]

_lock = threading.Lock()
# device ordinal -> the Dispatcher forge.linear / forge.mm use there (the last one opened).
_dispatchers = {}
_op = None


# --------------------------------------------------------------------------------------------
# NVRTC: forge compiles its kernels at first use. PyTorch's CUDA wheels ship libnvrtc in the
# nvidia-* packages without putting it on the loader's path; load it from there when the
# loader cannot find it by name.

_NVRTC = "libnvrtc.so.13"


def _nvrtc_candidates():
    dirs = []
    env = os.environ.get("FORGE_NVRTC_DIR")
    if env:
        dirs.append(env)
    for entry in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"):
            dirs.append(os.path.join(entry or ".", sub))
    return [d for d in dirs if os.path.exists(os.path.join(d, _NVRTC))]


def _preload_nvrtc():
    """Makes libnvrtc.so.13 loadable by name (once loaded, the loader finds it by its soname)."""
    try:
        ctypes.CDLL(_NVRTC, mode=ctypes.RTLD_GLOBAL)
        return
    except OSError:
        pass
    for d in _nvrtc_candidates():
        try:
            # NVRTC loads its builtins library by name at its first compile.
            for builtins in sorted(glob.glob(os.path.join(d, "libnvrtc-builtins.so.13*"))):
                ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
            ctypes.CDLL(os.path.join(d, _NVRTC), mode=ctypes.RTLD_GLOBAL)
            return
        except OSError:
            continue


# --------------------------------------------------------------------------------------------
# Devices and dispatchers.


def _device_index(device):
    """An int, "cuda", "cuda:N" or a torch.device (of type cuda) -> the ordinal."""
    if isinstance(device, bool):
        raise TypeError("device must be an int, 'cuda:N' or a torch.device, got bool")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"device = {device}: a device ordinal is at least 0")
        return device
    kind = getattr(device, "type", None)
    if kind is not None:  # torch.device
        if kind != "cuda":
            raise ValueError(f"device = {device}: forge runs on CUDA devices only")
        index = device.index
        if index is None:
            index = _torch().cuda.current_device()
        return index
    if isinstance(device, str):
        text = device.strip()
        if text == "cuda":
            return 0
        if text.startswith("cuda:") and text[5:].isdigit():
            return int(text[5:])
        raise ValueError(f"device = {device!r}: expected an int, 'cuda' or 'cuda:N'")
    raise TypeError(
        f"device must be an int, 'cuda:N' or a torch.device, got {type(device).__name__}"
    )


class Dispatcher:
    """TF32 GEMMs on one CUDA device following a dispatch profile tuned for its architecture.

    ``Dispatcher(profile_path, device=0, cache_dir=None)`` opens the device (its primary
    context, which PyTorch shares) with the profile at ``profile_path`` (a file, or a directory
    such as profiles/: its measured profile tuned on this device) and becomes the dispatcher
    that forge.linear and forge.mm use for tensors on that device. Kernels are compiled by
    NVRTC at first use of a shape's schedule (seconds) and cached on disk in ``cache_dir``
    ($FORGE_CACHE, else $XDG_CACHE_HOME/forge or ~/.cache/forge).
    """

    def __init__(self, profile_path, device=0, cache_dir=None):
        device = _device_index(device)
        _preload_nvrtc()
        self._d = _forge.Dispatcher(profile_path, device, cache_dir)
        self.device = device
        with _lock:
            _dispatchers[device] = self
        if "torch" in sys.modules:
            _register_op()

    @property
    def arch(self):
        return self._d.arch

    @property
    def device_name(self):
        return self._d.device_name

    @property
    def profile_path(self):
        return self._d.profile_path

    def selection(self, shape):
        """(schedule, rule) this dispatcher launches for a shape ("MxNxK" or (M, N, K))."""
        return self._d.selection(shape)

    def linear(self, x, w):
        """x @ w.T on this dispatcher (eager; forge.linear is the torch.compile-able form)."""
        _check_linear("linear", x, w)
        return _run_linear(self, x, w)

    def mm(self, a, b):
        """a @ b on this dispatcher (eager; forge.mm is the torch.compile-able form)."""
        _check_mm("mm", a, b)
        return self.linear(a, b.t().contiguous())

    def __repr__(self):
        return repr(self._d)


def dispatcher_for(device):
    """The Dispatcher forge.linear and forge.mm use on a device, or None."""
    with _lock:
        return _dispatchers.get(_device_index(device))


# --------------------------------------------------------------------------------------------
# PyTorch.


_torch_module = None


def _torch():
    """PyTorch, imported at first need (forge.rank and forge.select never need it)."""
    global _torch_module
    if _torch_module is None:
        import torch

        _torch_module = torch
    return _torch_module


def _describe(t):
    return f"{type(t).__module__}.{type(t).__name__}"


def _check_tensor(fn, name, t, torch):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"forge.{fn}: {name} must be a torch.Tensor, got {_describe(t)}")
    if t.dtype != torch.float32:
        raise TypeError(
            f"forge.{fn}: {name} has dtype {t.dtype}; forge runs torch.float32 tensors "
            "(TF32 tensor-core math)"
        )
    if t.device.type != "cuda":
        raise ValueError(f"forge.{fn}: {name} is on {t.device}; forge runs CUDA tensors")


def _check_linear(fn, x, w):
    torch = _torch()
    _check_tensor(fn, "x", x, torch)
    _check_tensor(fn, "w", w, torch)
    if w.device != x.device:
        raise ValueError(f"forge.{fn}: w is on {w.device} but x is on {x.device}")
    if x.dim() < 2:
        raise ValueError(
            f"forge.{fn}: x must have at least 2 dimensions (..., K), got shape {tuple(x.shape)}"
        )
    if w.dim() != 2:
        raise ValueError(f"forge.{fn}: w must be 2-D (N, K), got shape {tuple(w.shape)}")
    if x.shape[-1] != w.shape[1]:
        raise ValueError(
            f"forge.{fn}: x has K = {x.shape[-1]} (its last dimension) but w has K = "
            f"{w.shape[1]} (w is N x K = {tuple(w.shape)})"
        )
    if not x.is_contiguous():
        raise ValueError(
            f"forge.{fn}: x (shape {tuple(x.shape)}, strides {x.stride()}) must be contiguous "
            "(row-major); pass x.contiguous()"
        )
    if not w.is_contiguous():
        raise ValueError(
            f"forge.{fn}: w (shape {tuple(w.shape)}, strides {w.stride()}) must be contiguous "
            "N x K (row-major, as nn.Linear stores its weight); forge.linear does not copy: "
            "pass w.contiguous()"
        )


def _check_mm(fn, a, b):
    torch = _torch()
    _check_tensor(fn, "a", a, torch)
    _check_tensor(fn, "b", b, torch)
    if b.device != a.device:
        raise ValueError(f"forge.{fn}: b is on {b.device} but a is on {a.device}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(
            f"forge.{fn}: a and b must be 2-D (M x K and K x N), got shapes {tuple(a.shape)} "
            f"and {tuple(b.shape)}"
        )
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"forge.{fn}: a is M x K = {tuple(a.shape)} but b is {tuple(b.shape)}, not K x N "
            f"with K = {a.shape[1]}"
        )
    if not a.is_contiguous():
        raise ValueError(
            f"forge.{fn}: a (shape {tuple(a.shape)}, strides {a.stride()}) must be contiguous "
            "(row-major); pass a.contiguous()"
        )


def _run_linear(dispatcher, x, w):
    """The real computation: out[..., N] = x[..., K] @ w.T on the current stream."""
    torch = _torch()
    x = x.contiguous()  # no-op on the checked paths; torch.compile may hand other strides
    w = w.contiguous()
    n, k = (int(d) for d in w.shape)
    batch = tuple(x.shape[:-1])
    m = 1
    for d in batch:
        m *= int(d)
    if m == 0 or n == 0:
        return x.new_empty((*batch, n))
    if k == 0:
        return x.new_zeros((*batch, n))
    for name, t in (("x", x), ("w", w)):
        if t.data_ptr() % 16:
            raise UnsupportedError(
                f"forge.linear: {name}'s data pointer {t.data_ptr():#x} is not 16-byte aligned "
                f"(a view at a storage offset); pass {name}.clone()"
            )
    out = torch.empty((*batch, n), dtype=torch.float32, device=x.device)
    with torch.cuda.device(x.device):
        stream = torch.cuda.current_stream(x.device).cuda_stream
        dispatcher._d.gemm_tn(m, n, k, x.data_ptr(), w.data_ptr(), out.data_ptr(), stream)
    return out


def _registered(device):
    index = device.index if device.index is not None else _torch().cuda.current_device()
    with _lock:
        d = _dispatchers.get(index)
    if d is None:
        raise ForgeError(
            f"forge: no forge.Dispatcher is open for cuda:{index}; open one first, e.g. "
            f"forge.Dispatcher('profiles/sm_90a-h200.toml', device={index})"
        )
    return d


def _register_op():
    """Registers torch.ops.forge.linear (once) and returns it."""
    global _op
    if _op is not None:
        return _op
    with _lock:
        if _op is not None:
            return _op
        torch = _torch()

        @torch.library.custom_op("forge::linear", mutates_args=())
        def forge_linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return _run_linear(_registered(x.device), x, w)

        @forge_linear.register_fake
        def _(x, w):
            torch._check(x.shape[-1] == w.shape[1])
            return x.new_empty((*x.shape[:-1], w.shape[0]))

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            grad_x = grad_w = None
            if ctx.needs_input_grad[0]:
                grad_x = torch.matmul(grad, w)
            if ctx.needs_input_grad[1]:
                grad_w = torch.matmul(
                    grad.reshape(-1, grad.shape[-1]).t(), x.reshape(-1, x.shape[-1])
                )
            return grad_x, grad_w

        forge_linear.register_autograd(backward, setup_context=setup_context)
        _op = forge_linear
        return _op


def linear(x, w):
    """x @ w.T for float32 CUDA tensors: x (..., K) contiguous, w (N, K) contiguous (as
    nn.Linear stores its weight; never copied). Returns a new (..., N) tensor. Runs on the
    current stream of x's device through the forge.Dispatcher opened for that device."""
    _check_linear("linear", x, w)
    return _register_op()(x, w)


def mm(a, b):
    """a @ b for float32 CUDA tensors a (M, K) contiguous and b (K, N): forge's kernels take b
    as N x K, so this runs forge.linear(a, b.t().contiguous()), which copies b unless b is
    already the transpose of a contiguous N x K tensor."""
    _check_mm("mm", a, b)
    return linear(a, b.t().contiguous())
