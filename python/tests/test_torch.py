"""The PyTorch half on a machine without a GPU: argument checks, the custom op and its fake
implementation. Skipped where PyTorch is not installed (CI installs it only on GPU machines:
tests/device/python_check.sh runs the real thing)."""

import pytest

torch = pytest.importorskip("torch")

import forge  # noqa: E402


def test_argument_checks_name_the_argument():
    x = torch.zeros(4, 8)
    with pytest.raises(TypeError, match=r"forge.linear: x must be a torch.Tensor, got builtins.list"):
        forge.linear([1.0], x)
    with pytest.raises(TypeError, match=r"forge.linear: x has dtype torch.float16"):
        forge.linear(torch.zeros(4, 8, dtype=torch.float16), x)
    with pytest.raises(ValueError, match=r"forge.linear: x is on cpu; forge runs CUDA tensors"):
        forge.linear(x, x)
    with pytest.raises(TypeError, match=r"forge.mm: a has dtype torch.float64"):
        forge.mm(torch.zeros(8, 4, dtype=torch.float64), x)


def test_shape_and_stride_checks_on_fake_cuda_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(64, 32, device="cuda")
        w = torch.empty(16, 32, device="cuda")
        forge._check_linear("linear", x, w)
        forge._check_linear("linear", torch.empty(2, 3, 32, device="cuda"), w)
        with pytest.raises(ValueError, match=r"x has K = 32 \(its last dimension\) but w has K = 16"):
            forge._check_linear("linear", x, torch.empty(32, 16, device="cuda"))
        with pytest.raises(ValueError, match=r"w \(shape \(16, 32\), strides \(1, 16\)\) must be contiguous"):
            forge._check_linear("linear", x, torch.empty(32, 16, device="cuda").t())
        with pytest.raises(ValueError, match=r"w must be 2-D \(N, K\)"):
            forge._check_linear("linear", x, torch.empty(32, device="cuda"))
        with pytest.raises(ValueError, match=r"x must have at least 2 dimensions"):
            forge._check_linear("linear", torch.empty(32, device="cuda"), w)
        with pytest.raises(ValueError, match=r"x \(shape \(32, 64\), strides \(1, 32\)\) must be contiguous"):
            forge._check_linear("linear", x.t(), torch.empty(16, 64, device="cuda"))
        forge._check_mm("mm", x, torch.empty(32, 16, device="cuda"))
        forge._check_mm("mm", x, w.t())  # b non-contiguous is fine: mm copies b.T
        with pytest.raises(ValueError, match=r"a is M x K = \(64, 32\) but b is \(16, 32\)"):
            forge._check_mm("mm", x, w)


def test_the_custom_op_has_a_fake_implementation():
    op = forge._register_op()
    assert op is forge._register_op()
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(5, 7, 32, device="cuda")
        w = torch.empty(48, 32, device="cuda")
        y = torch.ops.forge.linear(x, w)
        assert tuple(y.shape) == (5, 7, 48) and y.dtype == torch.float32
        assert y.device.type == "cuda"


def test_without_a_dispatcher_the_op_says_what_to_do():
    with pytest.raises(forge.ForgeError, match=r"no forge.Dispatcher is open for cuda:7"):
        forge._registered(torch.device("cuda", 7))
