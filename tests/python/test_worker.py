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
    x, w = case._x[0].double(), case._w[k].double()
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


def run_worker(*args, inject=None, timeout=60, extra_env=None):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), RMCP_DATA_DIR=str(REPO))
    env.pop("RMCP_PROBE_INJECT", None)
    env.pop(worker.INLINE_REFERENCE_VARIABLE, None)
    env.update(extra_env or {})
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


# ---------------------------------------------------------------- the reference helper
# ReferenceProcess shares the float64 reference with a forked process that starts on it while
# the worker times the operation. On the CPU it needs a core the device leaves free: the worker
# command's torch runs torch.get_num_threads() threads, and a helper is used only if the process
# may run on more.

def helper_possible():
    return len(os.sched_getaffinity(0)) > torch.get_num_threads()


needs_spare_core = pytest.mark.skipif(not helper_possible(),
                                      reason="torch uses every core here: the worker computes the reference itself")


def worker_report(scenario, inline, inject=None):
    proc = run_worker(scenario, "--repeat", "2", "--warmup", "1", inject=inject,
                      extra_env={worker.INLINE_REFERENCE_VARIABLE: "1"} if inline else None)
    assert proc.stderr == b"", proc.stderr
    return json.loads(proc.stdout), proc.returncode


@needs_spare_core
@pytest.mark.parametrize("scenario_id", [
    "conv2d-3x3-b16-fwd-fp32",
    "conv2d-3x3-b16-bwd-data-fp32",
    "conv2d-3x3-b16-bwd-weight-fp32",
    "eeg-conv1d-b16-bwd-weight-fp32",
])
def test_reference_helper_gives_the_inline_reference_bit_for_bit(scenario_id):
    helped, code = worker_report(scenario_id, inline=False)
    inline, _ = worker_report(scenario_id, inline=True)
    assert code == 0 and helped["status"] == inline["status"] == "ok"
    assert helped["reference_helper"] is True and inline["reference_helper"] is False
    assert helped["error"] == inline["error"] and helped["reference_rows"] == inline["reference_rows"]
    assert helped["error"] > 0  # a real comparison, not an empty one


@needs_spare_core
def test_wrong_result_found_with_the_helper_and_reported_without_times():
    report, code = worker_report("conv2d-3x3-b16-fwd-fp32", inline=False, inject={"faults": [{"failure": "wrong"}]})
    assert code == 1 and report["status"] == "wrong" and report["reference_helper"] is True
    assert "median_ms" not in report and "times_ms" not in report


@needs_spare_core
def test_a_stuck_helper_is_killed_and_the_reference_computed_here():
    """TEST-ONLY fault: a helper that never finishes must not turn a passing scenario into a
    hang; the worker stops waiting (after HELPER_WAIT_FLOOR_S here), kills it and computes the
    reference itself."""
    import time
    started = time.monotonic()
    report, code = worker_report("conv2d-3x3-b16-fwd-fp32", inline=False,
                                 inject={"faults": [{"failure": "hang-reference"}]})
    assert code == 0 and report["status"] == "ok" and report["reference_helper"] is False
    assert report["error"] > 0
    assert time.monotonic() - started < 60


@needs_spare_core
def test_small_reference_is_computed_without_a_helper():
    """A fork costs more than a reference of a few million multiply-adds."""
    s = spec("conv2d-3x3-b1-fwd-fp32")
    assert worker.reference_multiply_adds(worker.validate(dict(s)), 8) < worker.HELPER_MIN_MULTIPLY_ADDS
    report, code = worker_report("conv2d-3x3-b1-fwd-fp32", inline=False)
    assert code == 0 and report["status"] == "ok" and report["reference_helper"] is False


def test_reference_multiply_adds_counts_the_checked_rows():
    fwd = worker.validate(dict(spec("conv2d-3x3-b64-fwd-fp32")))
    wrw = worker.validate(dict(spec("conv2d-3x3-b64-bwd-weight-fp32")))
    # 64 output channels over 32x32 positions, 64 input channels times 9 taps each:
    assert worker.reference_multiply_adds(fwd, 8) == 8 * 64 * 32 * 32 * 64 * 9
    assert worker.reference_multiply_adds(wrw, 8) == 64 * 64 * 32 * 32 * 64 * 9


def test_reference_plan_matches_what_the_reference_returns():
    for scenario_id in ("conv2d-7x7s2-b16-fwd-fp32", "conv2d-7x7s2-b16-bwd-data-fp32",
                        "conv2d-7x7s2-b16-bwd-weight-fp32", "eeg-conv1d-b1-fwd-fp32"):
        s = worker.validate(spec(scenario_id))
        reference, rows = worker.Case(torch, s, "cpu", 0).reference(8)
        shape, plan_rows, pieces = worker.reference_plan(s, 8)
        assert (shape, plan_rows) == (list(reference.shape), rows) and 1 <= len(pieces) <= worker.MAX_PIECES


@pytest.mark.parametrize("scenario_id, axis", [
    ("conv2d-7x7s2-b16-fwd-fp32", "rows"),
    ("conv2d-3x3-b16-bwd-data-fp32", "rows"),
    ("conv2d-3x3-b16-bwd-weight-fp32", "inputs"),
    ("conv2d-1x1-b16-bwd-weight-fp32", "inputs"),
    ("conv2d-depthwise-b16-bwd-weight-fp32", "groups"),
    ("eeg-spatial-19x1-b16-bwd-weight-fp32", "groups"),
    ("eeg-temporal-1xk-b16-bwd-weight-fp32", "outputs"),
])
def test_reference_in_pieces_equals_the_reference_in_one_call(scenario_id, axis):
    """The helper and the child each compute some pieces; together they must give what one
    call over the whole tensors gives. (Bit for bit with Debian's reference BLAS: every
    value is the same sum in the same order; 1e-14 here so that a blocked BLAS passes too.)"""
    s = worker.validate(dict(spec(scenario_id)))
    case = worker.Case(torch, s, "cpu", 0)
    shape, rows, pieces = worker.reference_plan(s, 8)
    assert len(pieces) > 1 and {p[0] for p in pieces} == {axis}
    assert [p[1] for p in pieces[1:]] == [p[2] for p in pieces[:-1]]  # contiguous, no gap or overlap
    pieced, _ = case.reference(8)
    x, w, g = case._operands64(rows)
    if axis in ("inputs", "outputs") and math.prod(s["weight"][2:]) > 1:
        whole = case._weight_gradient_as_convolution(x, g.transpose(0, 1).contiguous())
    else:
        whole = case._reference_of(x, w, g, s["groups"])
    assert whole.shape == pieced.shape
    assert float((whole - pieced).abs().max()) <= 1e-14 * float(whole.abs().max())


@pytest.mark.parametrize("shape", [
    # (op, input, weight, stride, padding, dilation): the catalogue's shapes, and strides,
    # dilations and paddings it lacks, with sizes that leave a remainder at the far edge.
    ("conv2d", [3, 4, 17, 15], [5, 4, 3, 3], [1, 1], [1, 1], [1, 1]),
    ("conv2d", [3, 4, 17, 15], [5, 4, 3, 2], [2, 3], [1, 0], [1, 1]),
    ("conv2d", [3, 4, 17, 15], [5, 4, 3, 3], [1, 2], [2, 1], [2, 3]),
    ("conv2d", [2, 3, 30, 30], [6, 3, 7, 7], [2, 2], [3, 3], [1, 1]),
    ("conv1d", [3, 19, 101], [8, 19, 7], [3], [2], [2]),
    ("conv2d", [2, 1, 19, 70], [8, 1, 1, 16], [1, 1], [0, 8], [1, 1]),
])
def test_weight_gradient_as_a_convolution_matches_the_backward_operator(shape):
    op, input_shape, weight, stride, padding, dilation = shape
    s = worker.validate({"id": "t", "op": op, "direction": "backward_weight", "dtype": "float32",
                         "input": input_shape, "weight": weight, "stride": stride, "padding": padding,
                         "dilation": dilation})
    case = worker.Case(torch, s, "cpu", 0)
    x, w, g = case._operands64(input_shape[0])
    expected = case._reference_of(x, w, g, 1)
    got = case._weight_gradient_as_convolution(x, g.transpose(0, 1).contiguous())
    assert got.shape == expected.shape == torch.Size(weight)
    assert float((got - expected).abs().max()) <= 1e-12 * float(expected.abs().max())


HELPER_SCRIPT = """
import json, os, signal, sys, torch
sys.path.insert(0, sys.argv[1])
from rmcp import worker
spec = worker.validate(json.loads(sys.argv[2]))
how = sys.argv[3]
# "early": forked before the device (what a GPU scenario gets); "late": forked by release().
helper = worker.ReferenceProcess.prepare(torch, spec, "cuda" if how.startswith("early") else "cpu", 0, 8)
if how.startswith("late"):
    helper.release(worker.Case(torch, spec, "cpu", 0))
print(helper.pid, flush=True)
if how.endswith("die"):
    os.kill(os.getpid(), signal.SIGKILL)
helper.cancel()
print("cancelled", flush=True)
"""


def process_gone(pid, within):
    import time
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@needs_spare_core
@pytest.mark.parametrize("how", ["early-die", "early-cancel", "late-die", "late-cancel"])
def test_reference_helper_never_outlives_the_child(how):
    """A child that crashes (here: SIGKILL) or returns early (unsupported, error) must not
    leave its helper waiting or computing. The late helpers are busy with a reference that
    takes seconds alone, so gone within one second means killed."""
    scenario = json.dumps(spec("conv2d-5x5-wrw-miopen3540-b64-bwd-weight-fp32"))
    proc = subprocess.run([sys.executable, "-c", HELPER_SCRIPT, str(REPO / "python"), scenario, how],
                          capture_output=True, timeout=120)
    lines = proc.stdout.decode().split()
    pid = int(lines[0])
    assert pid > 0, proc.stderr
    if how.endswith("die"):
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 0 and lines[1:] == ["cancelled"], proc.stderr
    assert process_gone(pid, within=1.0), f"helper {pid} still running after its parent {how}"


@needs_spare_core
def test_unsupported_scenario_reports_no_reference_with_a_helper():
    report, code = worker_report("conv2d-3x3-b16-fwd-fp16", inline=False)
    assert code == 0 and report["status"] == "unsupported"
    assert "reference_helper" not in report and "error" not in report
