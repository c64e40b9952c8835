"""CPU tests of the forge Python package: no GPU and no PyTorch needed."""

import os
import pathlib
import subprocess
import sys

import pytest

import forge

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "profiles" / "sm_90a-h200.toml"
# The 17-entry H200 profile of 2026-12-02 (TMA schedules only), frozen for the rule tests.
FROZEN = ROOT / "tests" / "fixtures" / "profile_h200_trunc_17.toml"
D2048_SCHEDULE = "wgmma_tf32_128x256x32_s4_wg2_swz16_np_c1_k1"


def test_the_compiled_module_is_the_installed_one():
    assert callable(forge._forge.rank)
    assert forge.__version__ == "0.1.0"
    assert forge._forge.forge_version.startswith("0.1.0 (")
    assert "sm_90a" in forge.known_archs


def test_importing_forge_does_not_import_torch():
    code = "import sys, forge; assert 'torch' not in sys.modules, 'torch imported'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_rank_lists_the_fastest_schedules_first():
    ranked = forge.rank("sm_90a", "D4096", top=5)
    assert len(ranked) == 5
    assert set(ranked[0]) == {"schedule", "predicted_us", "tflops", "peak_fraction", "dominant"}
    times = [r["predicted_us"] for r in ranked]
    assert times == sorted(times)
    for r in ranked:
        assert r["tflops"] > 0 and 0 < r["peak_fraction"] <= 1
        # flops / time, in TFLOP/s
        assert r["tflops"] == pytest.approx(2 * 4096**3 / (r["predicted_us"] * 1e-6) / 1e12)
    # A tuple and a string name the same shape; the default top is 10.
    assert forge.rank("sm_90a", (4096, 4096, 4096)) [:5] == ranked
    assert len(forge.rank("sm_90a", "4096x4096x4096")) == 10


def test_rank_on_another_arch_and_layout():
    ranked = forge.rank("sm_80", "128x5376x7168", top=3, layout="nn")
    assert len(ranked) == 3
    # No wgmma on Ampere.
    assert all(r["schedule"].startswith("mma_sync_") for r in ranked)


def test_rank_errors_carry_forge_messages():
    with pytest.raises(ValueError, match=r"unknown architecture `sm_99`; known: .*sm_90a"):
        forge.rank("sm_99", "D2048")
    with pytest.raises(ValueError, match=r"shape `12x34` is not of the form D<size> or MxNxK"):
        forge.rank("sm_90a", "12x34")
    with pytest.raises(ValueError, match=r"shape `D0`: dimension D must be at least 1"):
        forge.rank("sm_90a", "D0")
    with pytest.raises(ValueError, match=r"shape: m = 0 is out of range"):
        forge.rank("sm_90a", (0, 8, 8))
    with pytest.raises(ValueError, match=r"k = 2147483648 is out of range"):
        forge.rank("sm_90a", (8, 8, 2**31))
    with pytest.raises(TypeError, match=r"shape must be a string .* or a tuple \(M, N, K\)"):
        forge.rank("sm_90a", [8, 8])
    with pytest.raises(ValueError, match=r"top = 0: must be at least 1"):
        forge.rank("sm_90a", "D2048", top=0)
    with pytest.raises(ValueError, match=r"unknown dtype `f64`"):
        forge.rank("sm_90a", "D2048", dtype="f64")
    with pytest.raises(ValueError, match=r"unknown layout `xx`"):
        forge.rank("sm_90a", "D2048", layout="xx")


def test_select_on_the_frozen_profile():
    assert forge.select(str(FROZEN), "D2048") == (D2048_SCHEDULE, "exact")
    assert forge.select(FROZEN, (2048, 2048, 2048)) == (D2048_SCHEDULE, "exact")
    # Near 2048^3: the calibrated cost model's best of the profile's gated schedules.
    schedule, rule = forge.select(FROZEN, "2000x2048x2048")
    assert rule == "model"
    assert schedule in FROZEN.read_text()
    # K % 4 != 0: the same rule (a TMA schedule reads a padded copy).
    schedule, rule = forge.select(FROZEN, "1000x1000x999")
    assert rule == "model"
    assert schedule in FROZEN.read_text()
    canonical = "mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1"
    # The profile has no NN entries.
    assert forge.select(FROZEN, "D2048", layout="nn") == (canonical, "canonical")
    assert forge.select(FROZEN, "D2048", layout="TN")[1] == "exact"


def test_select_matches_the_profile_for_every_tuned_shape():
    text = SHIPPED.read_text()
    shapes = []
    for block in text.split("[[entry]]")[1:]:
        fields = dict(
            line.split(" = ", 1) for line in block.strip().splitlines() if " = " in line
        )
        shapes.append((int(fields["m"]), int(fields["n"]), int(fields["k"]), fields["schedule"]))
    assert len(shapes) >= 10
    for m, n, k, schedule in shapes:
        assert forge.select(SHIPPED, (m, n, k)) == (schedule.strip('"'), "exact")


def test_select_errors():
    with pytest.raises(FileNotFoundError, match=r"cannot read profile /nonexistent/p\.toml"):
        forge.select("/nonexistent/p.toml", "D2048")
    with pytest.raises(ValueError, match=r"unknown dtype `int8`"):
        forge.select(SHIPPED, "D2048", dtype="int8")
    with pytest.raises(ValueError, match=r"is not of the form"):
        forge.select(SHIPPED, "2048")


def test_an_invalid_profile_is_a_profile_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[meta\nschema_version = 1\n")
    with pytest.raises(forge.ProfileError, match=r"is not a valid profile") as e:
        forge.select(bad, "D2048")
    assert isinstance(e.value, ValueError)
    other = tmp_path / "v2.toml"
    other.write_text(SHIPPED.read_text().replace("schema_version = 3", "schema_version = 7"))
    with pytest.raises(forge.ProfileError, match=r"has schema version 7"):
        forge.select(other, "D2048")


def test_a_dispatcher_reads_the_profile_before_the_device():
    with pytest.raises(FileNotFoundError, match=r"cannot read profile /nonexistent/p\.toml"):
        forge.Dispatcher("/nonexistent/p.toml")
    with pytest.raises(ValueError, match=r"device = -1"):
        forge.Dispatcher(SHIPPED, device=-1)
    with pytest.raises(ValueError, match=r"expected an int, 'cuda' or 'cuda:N'"):
        forge.Dispatcher(SHIPPED, device="gpu0")


@pytest.mark.skipif(
    os.path.exists("/dev/nvidiactl"), reason="this machine has an NVIDIA driver"
)
def test_without_a_device_a_dispatcher_says_so():
    with pytest.raises(forge.NoDeviceError, match=r"forge|no CUDA device") as e:
        forge.Dispatcher(SHIPPED, device="cuda:0")
    assert isinstance(e.value, forge.ForgeError) and isinstance(e.value, RuntimeError)
    assert forge.dispatcher_for(0) is None
    # A directory of profiles is chosen from once the device is open: without one, that is
    # what fails.
    with pytest.raises(forge.NoDeviceError, match=r"forge|no CUDA device"):
        forge.Dispatcher(SHIPPED.parent, device=0)


def test_the_device_index_forms():
    assert forge._device_index(3) == 3
    assert forge._device_index("cuda") == 0
    assert forge._device_index("cuda:2") == 2
    with pytest.raises(TypeError):
        forge._device_index(1.5)
    with pytest.raises(TypeError):
        forge._device_index(True)


def test_nvrtc_is_found_or_reported():
    forge._preload_nvrtc()
    try:
        version = forge.nvrtc_version()
    except forge.ForgeError as e:
        assert "libnvrtc.so could not be loaded" in str(e)
    else:
        assert version.split(".")[0].isdigit()
