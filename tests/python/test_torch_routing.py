"""rmcp.torch.enable/disable/stats/safeguard: routing by policy and fault map, the profile's
environment, spawn for DataLoaders, RMCP_DISABLE_MIOPEN, and the safeguard decision."""
from torch_support import count_events, load_ops  # first: it puts the checkout's python/ on sys.path
import json
import multiprocessing
import os
import pathlib
import stat
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data
from torch.profiler import profile

import rmcp.torch as rt
from rmcp.torch.faultmap import FaultMap, FaultMapError, call_key

REPO = pathlib.Path(__file__).resolve().parents[2]
REPO_BUILD = pathlib.Path(os.environ.get("RMCP_BUILD_DIR") or REPO / "build")
NATIVE_CONV1D, NATIVE_CONV2D = F.conv1d, F.conv2d
NATIVE_DATALOADER_INIT = torch.utils.data.DataLoader.__init__


@pytest.fixture(autouse=True)
def clean_state(monkeypatch):
    load_ops()
    monkeypatch.delenv("RMCP_FAULT_MAP", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent-rmcp-test")
    # Each test starts with no start method chosen, whatever other tests in the session did.
    chosen = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method(None, force=True)
    yield
    rt.disable()
    multiprocessing.set_start_method(chosen, force=True)
    assert F.conv2d is NATIVE_CONV2D and F.conv1d is NATIVE_CONV1D


def fault(op="conv2d", input=(16, 3, 12, 12), weight=(8, 3, 3, 3), **extra):
    entry = {"scenario": "test", "op": op, "direction": "backward_data", "dtype": "float32",
             "input": list(input), "weight": list(weight), "stride": [1, 1], "padding": [1, 1],
             "dilation": [1, 1], "groups": 1, "failure": "memory_access_fault"}
    entry.update(extra)
    return entry


def fault_map(*faults):
    return {"schema_version": 1, "faults": list(faults)}


class TwoConvs(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)    # the shape the test fault map marks
        self.b = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def test_nn_modules_call_the_functional_forms():
    """The routing relies on nn.Conv1d/Conv2d calling F.conv1d/F.conv2d at call time (torch 1.13)."""
    rt.enable(profile=None, policy="always")
    nn.Conv1d(2, 3, 3)(torch.randn(1, 2, 9))
    nn.Conv2d(2, 3, 3)(torch.randn(1, 2, 9, 9))
    nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(torch.randn(1, 2, 9, 9))
    counts = rt.stats()
    assert counts["conv1d"] == {"rmcp": 1, "native": 0}
    assert counts["conv2d"] == {"rmcp": 2, "native": 0}


def test_map_policy_routes_exactly_the_marked_shapes():
    model = TwoConvs()
    x = torch.randn(5, 3, 12, 12)  # batch 5; the map says 16: the batch does not matter
    expected = model(x)
    rt.enable(profile=None, fault_map=fault_map(fault()), policy="map", devices=("cpu",))
    with profile() as prof:
        out = model(x)
        out.sum().backward()
    assert rt.stats()["conv2d"] == {"rmcp": 1, "native": 1}
    assert count_events(prof, "rmcp::conv") == 1
    assert torch.allclose(out, expected, atol=1e-5)


@pytest.mark.parametrize("changed", [
    {"dtype": "float16"}, {"weight": [8, 3, 5, 5]}, {"input": [16, 3, 13, 12]}, {"stride": [2, 2]},
    {"padding": [0, 0]}, {"dilation": [2, 2]}, {"op": "conv1d", "weight": [8, 3, 3], "input": [16, 3, 12],
                                                   "stride": [1], "padding": [1], "dilation": [1]},
])
def test_map_policy_leaves_other_shapes_alone(changed):
    rt.enable(profile=None, fault_map=fault_map(fault(**changed)), policy="map", devices=("cpu",))
    TwoConvs()(torch.randn(2, 3, 12, 12))
    assert rt.stats()["rmcp"] == 0 and rt.stats()["native"] == 2


def test_map_policy_applies_to_gpu_devices_by_default():
    rt.enable(profile=None, fault_map=fault_map(fault()), policy="map")
    TwoConvs()(torch.randn(2, 3, 12, 12))
    assert rt.stats()["rmcp"] == 0  # the map describes GPU kernels; CPU tensors stay native


def test_map_from_file_and_environment(tmp_path, monkeypatch):
    path = tmp_path / "fault-map.json"
    path.write_text(json.dumps(fault_map(fault())))
    monkeypatch.setenv("RMCP_FAULT_MAP", str(path))
    rt.enable(profile=None, devices=("cpu",))
    TwoConvs()(torch.randn(1, 3, 12, 12))
    assert rt.stats()["conv2d"]["rmcp"] == 1
    assert rt.stats()["fault_map"] == str(path)


def test_map_named_by_the_profile(tmp_path):
    """A probed profile sets RMCP_FAULT_MAP; enable() reads the map the profile names."""
    path = tmp_path / "probed.faultmap.json"
    path.write_text(json.dumps({**fault_map(fault()), "device": "AMD Radeon RX 6700 XT", "gfx_target": "gfx1030"}))
    rt.enable(profile={"RMCP_FAULT_MAP": str(path), "MIOPEN_DEBUG_CONV_GEMM": "0"}, devices=("cpu",))
    TwoConvs()(torch.randn(1, 3, 12, 12))
    assert rt.stats()["conv2d"] == {"rmcp": 1, "native": 1}


def test_policies_always_and_never():
    model = TwoConvs()
    rt.enable(profile=None, policy="never")
    model(torch.randn(1, 3, 12, 12))
    assert rt.stats()["conv2d"] == {"rmcp": 0, "native": 2}
    rt.enable(profile=None, policy="always")
    model(torch.randn(1, 3, 12, 12))
    assert rt.stats()["conv2d"] == {"rmcp": 2, "native": 0}
    with pytest.raises(ValueError, match="policy"):
        rt.enable(profile=None, policy="sometimes")


def test_tensor_subclasses_go_to_torch():
    class Tagged(torch.Tensor):
        pass

    rt.enable(profile=None, policy="always")
    weight = nn.Parameter(torch.randn(3, 2, 3, 3))  # Parameters are routed like tensors
    F.conv2d(torch.randn(1, 2, 5, 5).as_subclass(Tagged), weight)
    F.conv2d(torch.randn(1, 2, 5, 5), weight)
    assert rt.stats()["conv2d"] == {"rmcp": 1, "native": 1}


def test_map_matching_rule():
    entries = FaultMap.load(fault_map(
        fault(padding="same", weight=(8, 3, 3, 3)),
        fault(op="conv1d", input=(1, 19, 400), weight=(32, 19, 7), stride=1, padding=[3], dilation=1, dtype="fp16"),
        {"op": "conv2d", "weight": [4, 1, 3, 3], "groups": 4},  # fields left out match anything
    ))
    assert len(entries) == 3
    key = call_key("conv2d", (99, 3, 12, 12), (8, 3, 3, 3), torch.float32, 1, 1, 1, 1)
    assert entries.match(key)["padding"] == "same"  # 'same' with a 3x3 kernel is padding 1
    assert entries.match(call_key("conv1d", (4, 19, 400), (32, 19, 7), torch.float16, (1,), 3, [1], 1))
    assert not entries.match(call_key("conv1d", (4, 19, 400), (32, 19, 7), torch.float32, 1, 3, 1, 1))
    assert entries.match(call_key("conv2d", (2, 4, 50, 9), (4, 1, 3, 3), torch.bfloat16, 2, 0, 1, 4))
    batch_free = FaultMap.load(fault_map(fault(input=(3, 12, 12))))  # an input given without its batch
    assert batch_free.match(call_key("conv2d", (7, 3, 12, 12), (8, 3, 3, 3), torch.float32, 1, 1, 1, 1))
    assert not entries.match(call_key("conv2d", (2, 4, 50, 9), (4, 1, 3, 3), torch.bfloat16, 2, 0, 1, 2))


@pytest.mark.parametrize("document, message", [
    ({"schema_version": 2, "faults": []}, "schema_version"),
    ({"faults": {}}, "faults"),
    ({"schema_version": 1, "faults": [{"op": "conv3d"}]}, r"faults\[0\]"),
    ({"schema_version": 1, "faults": [{"op": "conv2d", "weight": [1, 2, 3]}]}, "not a conv2d weight"),
    ({"schema_version": 1, "faults": [{"op": "conv1d", "input": [1, 2, 3, 4, 5]}]}, "not a 1-d convolution input"),
])
def test_malformed_fault_maps_are_refused(document, message):
    with pytest.raises(FaultMapError, match=message):
        rt.enable(profile=None, fault_map=document)
    assert not rt.enabled() and F.conv2d is NATIVE_CONV2D


def test_unreadable_fault_map_names_file_and_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"schema_version": 1,\n "faults": [\n')
    with pytest.raises(FaultMapError, match=rf"{path}:3"):
        FaultMap.load(path)


def test_disable_restores_everything(monkeypatch):
    monkeypatch.setenv("RMCP_DISABLE_MIOPEN", "1")
    was_cudnn = torch.backends.cudnn.enabled
    assert multiprocessing.get_start_method(allow_none=True) is None
    rt.enable(profile={"RMCP_TEST_ADDED": "1", "HOME_BACKUP_TEST": None}, policy="always")
    assert F.conv2d is not NATIVE_CONV2D and F.conv2d.__rmcp_native__ is NATIVE_CONV2D
    assert torch.utils.data.DataLoader.__init__ is not NATIVE_DATALOADER_INIT
    assert torch.backends.cudnn.enabled is False
    assert multiprocessing.get_start_method(allow_none=True) == "spawn"
    assert os.environ["RMCP_TEST_ADDED"] == "1"
    rt.disable()
    assert F.conv1d is NATIVE_CONV1D and F.conv2d is NATIVE_CONV2D
    assert torch.utils.data.DataLoader.__init__ is NATIVE_DATALOADER_INIT
    assert torch.backends.cudnn.enabled is was_cudnn
    assert multiprocessing.get_start_method(allow_none=True) is None
    assert "RMCP_TEST_ADDED" not in os.environ
    assert not rt.enabled()


def test_start_method_set_by_the_user_is_left_alone():
    multiprocessing.set_start_method("fork", force=True)
    rt.enable(profile=None, policy="never")
    assert multiprocessing.get_start_method() == "fork"
    rt.disable()
    assert multiprocessing.get_start_method() == "fork"


def test_dataloaders_with_workers_get_a_spawn_context():
    rt.enable(profile=None, policy="never")
    data = list(range(8))
    assert torch.utils.data.DataLoader(data, num_workers=2).multiprocessing_context.get_start_method() == "spawn"
    assert torch.utils.data.DataLoader(data, num_workers=0).multiprocessing_context is None
    forked = torch.utils.data.DataLoader(data, num_workers=1, multiprocessing_context="fork")
    assert forked.multiprocessing_context.get_start_method() == "fork"  # an explicit choice stays
    assert torch.utils.data.DataLoader(data, 4, False, None, None, 2).multiprocessing_context is not None
    positional_none = torch.utils.data.DataLoader(data, 4, False, None, None, 2, None, False, False, 0, None, None)
    assert positional_none.multiprocessing_context.get_start_method() == "spawn"


def fake_rmcp(tmp_path, script_body):
    """TEST ONLY: a stand-in rmcp binary that records its arguments and prints canned output."""
    path = tmp_path / "rmcp"
    path.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path}/calls\n{script_body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_profile_environment_from_rmcp_env(tmp_path, monkeypatch):
    binary = fake_rmcp(tmp_path, "cat <<'EOF'\n# profile miopen-off\nexport MIOPEN_DEBUG_CONV_GEMM='0'\n"
                                 "export RMCP_DISABLE_MIOPEN='1'\nexport ODD='it'\\''s'\nunset RMCP_TEST_UNSET\nEOF")
    monkeypatch.setenv("RMCP_BIN", str(binary))
    monkeypatch.setenv("RMCP_TEST_UNSET", "x")
    monkeypatch.delenv("MIOPEN_DEBUG_CONV_GEMM", raising=False)
    rt.enable(profile="auto", policy="never")
    assert (tmp_path / "calls").read_text().split() == ["env", "--profile", "auto", "--shell", "sh"]
    assert os.environ["MIOPEN_DEBUG_CONV_GEMM"] == "0" and os.environ["ODD"] == "it's"
    assert "RMCP_TEST_UNSET" not in os.environ
    assert torch.backends.cudnn.enabled is False
    rt.disable()
    assert "MIOPEN_DEBUG_CONV_GEMM" not in os.environ and os.environ["RMCP_TEST_UNSET"] == "x"
    assert torch.backends.cudnn.enabled is True


def test_profile_failures_warn_and_go_on(tmp_path, monkeypatch):
    monkeypatch.setenv("RMCP_BIN", str(fake_rmcp(tmp_path, "echo 'rmcp: error: no profile' >&2; exit 2")))
    with pytest.warns(RuntimeWarning, match="no profile"):
        rt.enable(profile="nonesuch", policy="never")
    assert rt.enabled()


def test_warns_when_the_gpu_runtime_already_started(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.warns(RuntimeWarning, match="only in new processes"):
        rt.enable(profile={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, policy="never")


# --- safeguard --------------------------------------------------------------------------

CRITICAL = [{"id": "rdna1-override-10.3.0", "title": "HSA_OVERRIDE_GFX_VERSION=10.3.0 on RDNA1",
             "severity": "critical"}, {"id": "x", "severity": "info"}]


@pytest.mark.parametrize("args, device, reason", [
    ((False, False, "hip 5.2", 1, []), "cpu", "asked for the CPU"),
    ((True, False, None, None, []), "cpu", "CPU-only build"),
    ((True, False, "hip 5.2", 0, []), "cpu", "sees no GPU"),
    ((True, False, "hip 5.2", None, CRITICAL), "cpu", "rdna1-override-10.3.0"),
    ((True, True, "hip 5.2", 1, CRITICAL), "cuda", "force_unsafe"),
    ((True, True, "hip 5.2", 0, CRITICAL), "cpu", "sees no GPU"),
    ((True, False, "hip 5.2", 1, CRITICAL[1:]), "cuda", "nothing critical"),
    ((True, False, "cuda 11.7", 1, None), "cuda", "doctor unavailable"),
])
def test_decide_device(args, device, reason):
    chosen, why = rt.decide_device(*args)
    assert chosen == device and reason in why


def test_safeguard_on_this_cpu_build():
    assert rt.safeguard(prefer_gpu=True) == ("cpu", "this PyTorch is a CPU-only build")


def test_safeguard_reads_rmcp_doctor(tmp_path, monkeypatch):
    report = json.dumps({"schema_version": 1, "findings": CRITICAL})
    monkeypatch.setenv("RMCP_BIN", str(fake_rmcp(tmp_path, f"echo '{report}'; exit 1")))
    monkeypatch.setattr(torch.version, "hip", "5.2.21151", raising=False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    device, why = rt.safeguard(prefer_gpu=True)
    assert device == "cpu" and "rdna1-override-10.3.0 (HSA_OVERRIDE_GFX_VERSION=10.3.0 on RDNA1)" in why
    assert (tmp_path / "calls").read_text().split() == ["doctor", "--format", "json"]
    assert rt.safeguard(prefer_gpu=True, force_unsafe=True)[0] == "cuda"
    monkeypatch.setenv("RMCP_BIN", str(tmp_path / "missing"))
    device, why = rt.safeguard(prefer_gpu=True)
    assert device == "cuda" and "not found" in why


def test_profile_from_the_real_rmcp_env(monkeypatch):
    """The contract with `rmcp env --shell sh` (src/cli/env.cpp): the miopen-off rung sets
    RMCP_DISABLE_MIOPEN=1 (profiles/50-miopen-off.toml), which turns cudnn/MIOpen off."""
    binary = REPO_BUILD / "rmcp"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run scripts/setup.sh first")
    monkeypatch.setenv("RMCP_BIN", str(binary))
    monkeypatch.setenv("RMCP_DATA_DIR", str(REPO))
    monkeypatch.delenv("RMCP_DISABLE_MIOPEN", raising=False)
    rt.enable(profile="miopen-off", policy="never")
    assert os.environ.get("RMCP_DISABLE_MIOPEN") == "1"
    assert torch.backends.cudnn.enabled is False
    rt.disable()
    assert "RMCP_DISABLE_MIOPEN" not in os.environ and torch.backends.cudnn.enabled is True


def test_enable_before_torch_is_imported():
    """`import rmcp.torch` does not import torch, so enable() sets the environment first."""
    script = (
        "import os, sys\n"
        "import rmcp.torch as rt\n"
        "assert 'torch' not in sys.modules\n"
        "seen = {}\n"
        "class Probe:\n"  # records the environment at the moment torch is imported
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' and not seen:\n"
        "            seen['HSA_OVERRIDE_GFX_VERSION'] = os.environ.get('HSA_OVERRIDE_GFX_VERSION')\n"
        "        return None\n"
        "sys.meta_path.insert(0, Probe())\n"
        "rt.enable(profile={'HSA_OVERRIDE_GFX_VERSION': '10.3.0'}, policy='always')\n"
        "import torch\n"
        "assert seen == {'HSA_OVERRIDE_GFX_VERSION': '10.3.0'}, seen\n"
        "torch.nn.Conv2d(2, 3, 3)(torch.randn(1, 2, 6, 6))\n"
        "assert rt.stats()['rmcp'] == 1\n"
        "print('ok')\n")
    env = {k: v for k, v in os.environ.items() if k != "HSA_OVERRIDE_GFX_VERSION"}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_warns_when_the_profile_hides_the_gpu(monkeypatch):
    monkeypatch.delenv("HIP_VISIBLE_DEVICES", raising=False)
    with pytest.warns(RuntimeWarning, match="hides every GPU"):
        rt.enable(profile={"HIP_VISIBLE_DEVICES": "", "CUDA_VISIBLE_DEVICES": ""}, policy="never")
    assert os.environ["HIP_VISIBLE_DEVICES"] == ""
    rt.disable()
    assert "HIP_VISIBLE_DEVICES" not in os.environ


@pytest.mark.parametrize("fixture, device, reason", [
    ("kfd-no-access", "cpu", "kfd-no-access"),          # a critical finding: stay off the GPU
    ("rx7900xtx-gfx1100", "cuda", "nothing critical"),  # an officially supported card
])
def test_safeguard_with_the_real_rmcp_doctor(fixture, device, reason, monkeypatch):
    """The contract with `rmcp doctor --format json` on fixture systems (RMCP_ROOT), with
    torch made to look like a ROCm build that sees one GPU (this machine has neither)."""
    binary = REPO_BUILD / "rmcp"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run scripts/setup.sh first")
    monkeypatch.setenv("RMCP_BIN", str(binary))
    monkeypatch.setenv("RMCP_DATA_DIR", str(REPO))
    monkeypatch.setenv("RMCP_ROOT", str(REPO / "tests" / "fixtures" / fixture))
    monkeypatch.setattr(torch.version, "hip", "6.1.40091", raising=False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    chosen, why = rt.safeguard(prefer_gpu=True)
    assert chosen == device and reason in why, why
