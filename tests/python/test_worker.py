"""The probe worker (python/rmcp/worker.py): correctness checks against the float64
reference, timing fields, the CPU's missing half-precision convolutions, and the
TEST-ONLY fault injector (RMCP_PROBE_INJECT) that reproduces field failures."""
import json
import math
import os
import pathlib
import signal
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from rmcp import worker  # noqa: E402

torch = pytest.importorskip("torch")

CATALOGUE = REPO / "probe" / "catalogue.toml"


def spec(scenario_id):
    return worker.load_scenario_from_catalogue(scenario_id, str(CATALOGUE))


@pytest.mark.parametrize("scenario_id", [
    "conv2d-3x3-b1-fwd-fp32",
    "conv2d-3x3-b1-bwd-data-fp32",
    "conv2d-3x3-b1-bwd-weight-fp32",
    "conv2d-depthwise-b1-fwd-fp32",
    "conv2d-7x7s2-b1-bwd-data-fp32",
    "eeg-conv1d-b1-bwd-weight-fp32",
    "eeg-temporal-1xk-b1-fwd-fp32",
    "eeg-spatial-19x1-b1-bwd-data-fp32",
])
def test_scenarios_match_the_float64_reference(scenario_id):
    report = worker.run_scenario(spec(scenario_id), repeat=2, warmup=1, inject="")
    assert report["status"] == "ok", report
    assert report["error"] <= report["tolerance"] == worker.TOLERANCES["float32"]
    assert report["error"] < 1e-5  # CPU float32 against float64: far inside the tolerance
    assert len(report["times_ms"]) == 2 and report["median_ms"] > 0
    assert report["schema_version"] == 1 and report["scenario"] == scenario_id


def test_reference_is_independent_of_the_checked_result():
    # Forward conv as an explicit sum, for one output element, against the worker's reference.
    s = worker.validate(dict(spec("eeg-conv1d-b1-fwd-fp32")))
    case = worker.Case(torch, s, "cpu", seed=0)
    reference, rows = case.reference(ref_batch=8)
    k, c, t = 5, 7, 100
    x, w = case.x64[0], case.w64[k]
    padded = torch.nn.functional.pad(x, (3, 3))
    expected = float((padded[:, t:t + 7] * w).sum())
    assert rows == 1 and math.isclose(float(reference[0, k, t]), expected, rel_tol=1e-12)


def test_backward_weight_uses_every_batch_item_and_forward_a_subset():
    fwd = worker.Case(torch, worker.validate(dict(spec("conv2d-1x1-b16-fwd-fp32"))), "cpu", seed=0)
    assert fwd.reference(ref_batch=4)[1] == 4
    wrw = worker.Case(torch, worker.validate(dict(spec("conv2d-1x1-b16-bwd-weight-fp32"))), "cpu", seed=0)
    assert wrw.reference(ref_batch=4)[1] == 16


def test_half_precision_on_cpu_is_marked_unsupported():
    report = worker.run_scenario(spec("conv2d-3x3-b1-fwd-fp16"), repeat=1, warmup=0, inject="")
    assert report["status"] == "unsupported"
    assert report["message"].startswith("unsupported on this device")


def test_injected_corruption_is_caught_by_the_reference_check():
    inject = json.dumps({"faults": [{"failure": "wrong"}]})
    report = worker.run_scenario(spec("conv2d-1x1-b1-fwd-fp32"), repeat=1, warmup=0, inject=inject)
    assert report["status"] == "wrong" and report["error"] > report["tolerance"]


def test_injector_is_conditioned_on_the_configuration(monkeypatch):
    inject = json.dumps({"faults": [{"failure": "wrong", "unless": {"MIOPEN_DEBUG_CONV_GEMM": "0"},
                                     "scenarios": ["conv2d-1x1-*"]}]})
    s = spec("conv2d-1x1-b1-fwd-fp32")
    monkeypatch.delenv("MIOPEN_DEBUG_CONV_GEMM", raising=False)
    assert worker.run_scenario(s, repeat=1, warmup=0, inject=inject)["status"] == "wrong"
    monkeypatch.setenv("MIOPEN_DEBUG_CONV_GEMM", "0")
    assert worker.run_scenario(s, repeat=1, warmup=0, inject=inject)["status"] == "ok"
    monkeypatch.delenv("MIOPEN_DEBUG_CONV_GEMM")
    other = spec("conv2d-3x3-b1-fwd-fp32")  # not matched by the scenario pattern
    assert worker.run_scenario(other, repeat=1, warmup=0, inject=inject)["status"] == "ok"


def test_injected_hip_error_is_reported_as_error():
    inject = json.dumps([{"failure": "error"}])
    report = worker.run_scenario(spec("conv2d-1x1-b1-fwd-fp32"), repeat=1, warmup=0, inject=inject)
    assert report["status"] == "error" and report["message"].startswith("HIP error: invalid device function")


def test_miopen_off_switch_turns_cudnn_off(monkeypatch):
    monkeypatch.setenv("RMCP_DISABLE_MIOPEN", "1")
    enabled = torch.backends.cudnn.enabled
    try:
        report = worker.run_scenario(spec("conv2d-1x1-b1-fwd-fp32"), repeat=1, warmup=0, inject="")
        assert report["status"] == "ok" and report["miopen_enabled"] is False
    finally:
        torch.backends.cudnn.enabled = enabled


def test_expansion_matches_the_catalogue_ids():
    import tomllib
    data = tomllib.loads(CATALOGUE.read_text())
    ids = [s["id"] for fam in data["family"] for s in worker.expand_family(fam)]
    assert len(ids) == len(set(ids))
    assert "conv2d-5x5-miopen3540-b64-bwd-data-fp16" in ids
    assert "eeg-conv1d-b16-bwd-weight-fp32" in ids


def run_worker(*args, inject=None, timeout=60):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), RMCP_DATA_DIR=str(REPO))
    env.pop("RMCP_PROBE_INJECT", None)
    if inject is not None:
        env["RMCP_PROBE_INJECT"] = json.dumps(inject)
    return subprocess.run([sys.executable, "-m", "rmcp.worker", *args], env=env, capture_output=True,
                          timeout=timeout)


def test_worker_prints_one_json_line():
    proc = run_worker("eeg-temporal-1xk-b1-fwd-fp32", "--repeat", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert report["status"] == "ok" and len(report["times_ms"]) == 3


def test_injected_crash_aborts_with_the_rocm_message():
    proc = run_worker('{"id": "t", "op": "conv2d", "direction": "forward", "dtype": "float32", '
                      '"input": [1, 2, 5, 5], "weight": [2, 2, 3, 3]}',
                      inject={"faults": [{"failure": "crash"}]})
    assert proc.returncode == -signal.SIGABRT
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert "Memory access fault by GPU node-1 (Agent handle: 0x" in err
    assert "Reason: Page not present or supervisor privilege." in err


def test_usage_errors_exit_2():
    assert run_worker("no-such-scenario").returncode == 2
    assert run_worker('{"id": "x", "op": "conv3d"}').returncode == 2
