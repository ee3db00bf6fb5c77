"""`rmcp probe` end to end on the CPU with Debian's PyTorch (/usr/bin/python3).

GPU failures are reproduced by the worker's TEST-ONLY fault injector (RMCP_PROBE_INJECT,
docs/probe.md), conditioned on the configuration's environment like the real ones. The
scenarios here are tiny so that a child costs about the interpreter's start-up.
"""
import json
import math
import os
import pathlib
import sys
import tomllib

import pytest

from conftest import REPO

PYTHON = "/usr/bin/python3"

# Ten switches, as in the issue: the culprits are planted among them.
SWITCHES = [
    ("miopen-no-gemm", "MIOPEN_DEBUG_CONV_GEMM", "0"),
    ("miopen-no-winograd", "MIOPEN_DEBUG_CONV_WINOGRAD", "0"),
    ("miopen-no-implicit-gemm", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM", "0"),
    ("miopen-no-direct", "MIOPEN_DEBUG_CONV_DIRECT", "0"),
    ("miopen-no-fft", "MIOPEN_DEBUG_CONV_FFT", "0"),
    ("miopen-find-normal", "MIOPEN_FIND_MODE", "1"),
    ("alloc-gc-split", "PYTORCH_HIP_ALLOC_CONF", "garbage_collection_threshold:0.6,max_split_size_mb:128"),
    ("alloc-no-caching", "PYTORCH_NO_HIP_MEMORY_CACHING", "1"),
    ("hsa-no-sdma", "HSA_ENABLE_SDMA", "0"),
    ("miopen-off", "RMCP_DISABLE_MIOPEN", "1"),
]

CATALOGUE = """
[[family]]
name = "tiny"
op = "conv2d"
input = [4, 8, 8]
weight = [4, 4, 3, 3]
padding = [1, 1]
batch = [2]
directions = ["forward", "backward_data"]
dtypes = ["float32"]
quick = { batch = [2], directions = ["forward"], dtypes = ["float32"] }

[[family]]
name = "tiny1d"
op = "conv1d"
input = [3, 50]
weight = [4, 3, 5]
batch = [1]
directions = ["backward_weight"]
dtypes = ["float32"]
"""


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe") / "catalogue.toml"
    text = CATALOGUE
    for ident, var, value in SWITCHES:
        text += f'\n[[switch]]\nid = "{ident}"\nenv = {{ {var} = "{value}" }}\ncost = "test cost of {ident}"\n'
    path.write_text(text)
    return path


def probe(rmcp, catalogue, *args, inject=None, check=None, timeout=120):
    env = {"RMCP_PROBE_INJECT": json.dumps(inject)} if inject is not None else None
    return rmcp("probe", "--python", PYTHON, "--catalogue", catalogue, "--repeat", "2", "--warmup", "1",
                *args, env=env, check=check, timeout=timeout)


def bound(k, n=len(SWITCHES)):
    return 2 * k * math.log2(n) + 4


def test_quick_run_passes_and_reports_json(rmcp, catalogue):
    proc = probe(rmcp, catalogue, "--quick", "--format", "json", check=0)
    out = json.loads(proc.stdout)
    assert out["schema_version"] == 1
    assert [s["id"] for s in out["scenarios"]] == ["tiny-b2-fwd-fp32"]
    (default,) = out["configurations"]
    assert default["name"] == "default" and default["env"] == {}
    (result,) = default["results"]
    assert result["outcome"] == "ok" and result["median_ms"] > 0
    assert result["error"] <= result["tolerance"]
    assert out["torch_version"].startswith("1.13") and out["device"] == "cpu"
    assert out["fault_map"]["faults"] == [] and out["passed"] is True
    assert out["child_runs"] == 1
    assert "[1/1] tiny-b2-fwd-fp32 fwd fp32 conv2d … ok" in proc.stderr.decode()


def test_shipped_catalogue_scenarios_run_and_half_is_unsupported_on_cpu(rmcp):
    proc = rmcp("probe", "--python", PYTHON, "--scenario", "eeg-spatial-19x1-b1-bwd-data-fp32",
                "--scenario", "conv2d-1x1-b1-fwd-fp16", "--repeat", "2", "--format", "json", check=0)
    results = {r["scenario"]: r for r in json.loads(proc.stdout)["configurations"][0]["results"]}
    assert results["eeg-spatial-19x1-b1-bwd-data-fp32"]["outcome"] == "ok"
    assert results["conv2d-1x1-b1-fwd-fp16"]["outcome"] == "unsupported"


def test_unknown_scenario_is_a_usage_error(rmcp, catalogue):
    proc = probe(rmcp, catalogue, "--scenario", "no-such-thing", check=2)
    assert proc.stderr.decode().startswith("rmcp: error: selecting scenario no-such-thing: no such scenario")


def test_missing_python_exits_3(rmcp, catalogue):
    proc = rmcp("probe", "--python", "/nonexistent/python3", "--catalogue", catalogue, check=3)
    assert proc.stderr.decode() == ("rmcp: error: starting the probe worker with /nonexistent/python3: "
                                    "No such file or directory\n")
    assert proc.stdout == b""


def test_python_without_torch_exits_3(rmcp, catalogue, tmp_path):
    # -S drops site-packages, so `import torch` fails while the worker itself is found.
    fake = tmp_path / "python-without-torch"
    fake.write_text(f"#!/bin/sh\nexec {PYTHON} -S \"$@\"\n")
    fake.chmod(0o755)
    proc = rmcp("probe", "--python", fake, "--catalogue", catalogue, "--quick", check=3)
    assert proc.stderr.decode() == (f"rmcp: error: checking the interpreter {fake}: Python "
                                    f"{'.'.join(map(str, sys.version_info[:3]))}: import torch failed: "
                                    "No module named 'torch'\n")
    assert proc.stdout == b""


def test_corrupted_result_is_a_failure(rmcp, catalogue, tmp_path):
    save = tmp_path / "probed.toml"
    proc = probe(rmcp, catalogue, "--quick", "--format", "json", "--save", save,
                 inject={"faults": [{"failure": "wrong"}]}, check=1)
    out = json.loads(proc.stdout)
    (result,) = out["configurations"][0]["results"]
    assert result["outcome"] == "wrong" and result["error"] > result["tolerance"]
    assert out["passed"] is False
    fault_map = json.loads((tmp_path / "probed.faultmap.json").read_text())
    assert [f["failure"] for f in fault_map["faults"]] == ["wrong"]


def test_hang_is_cut_by_the_timeout(rmcp, catalogue):
    proc = probe(rmcp, catalogue, "--quick", "--timeout", "5", "--format", "json",
                 inject={"faults": [{"failure": "hang"}]}, check=1, timeout=60)
    (result,) = json.loads(proc.stdout)["configurations"][0]["results"]
    assert result["outcome"] == "hang"
    assert result["detail"] == "timed out after 5 s"
    assert 5 <= result["wall_s"] < 15


def test_bisect_finds_one_culprit_and_saves_profile_and_fault_map(rmcp, catalogue, tmp_path):
    # The MIOpen issue 3540 pattern: the 5x5-style backward-data call aborts with ROCr's
    # memory-fault text unless the GEMM solvers are off.
    inject = {"faults": [{"failure": "crash", "scenarios": ["tiny-*-bwd-data-*"],
                          "unless": {"MIOPEN_DEBUG_CONV_GEMM": "0"}}]}
    save = tmp_path / "probed.toml"
    proc = probe(rmcp, catalogue, "--bisect", "--format", "json", "--save", save, inject=inject, check=0)
    out = json.loads(proc.stdout)
    baseline = {r["scenario"]: r for r in out["configurations"][0]["results"]}
    crash = baseline["tiny-b2-bwd-data-fp32"]
    assert crash["outcome"] == "crash" and crash["detail"] == "SIGABRT"
    assert crash["message"].startswith("Memory access fault by GPU node-1 (Agent handle: 0x")
    assert crash["kb_entry"] == "memory-access-fault"  # the explain matcher over the child's stderr
    assert baseline["tiny-b2-fwd-fp32"]["outcome"] == "ok"

    b = out["bisect"]
    assert b["found"] is True
    assert b["minimal"] == ["miopen-no-gemm"]
    assert b["fastest_env"] == {"MIOPEN_DEBUG_CONV_GEMM": "0"}
    assert b["child_runs"] <= bound(1), b
    assert b["child_runs"] == len(b["steps"])
    stderr = proc.stderr.decode()
    assert "search {miopen-no-gemm} tiny-b2-bwd-data-fp32" in stderr

    # The profile is in the patch manager's format (profiles/*.toml, docs/patches.md).
    profile = tomllib.loads(save.read_text())
    assert set(profile) == {"name", "rank", "description", "cost", "set"}
    assert profile["name"] == "probed" and isinstance(profile["rank"], int)
    map_path = tmp_path / "probed.faultmap.json"
    assert profile["set"] == {"MIOPEN_DEBUG_CONV_GEMM": "0", "RMCP_FAULT_MAP": str(map_path)}
    assert "test cost of miopen-no-gemm" in profile["cost"]

    fault_map = json.loads(map_path.read_text())
    assert fault_map["schema_version"] == 1
    assert fault_map["configuration"] == {}
    assert fault_map["torch_version"].startswith("1.13") and fault_map["device"] == "cpu"
    assert fault_map["gfx_target"] == ""
    assert fault_map["faults"] == [{
        "scenario": "tiny-b2-bwd-data-fp32", "op": "conv2d", "direction": "backward_data", "dtype": "float32",
        "input": [2, 4, 8, 8], "weight": [4, 4, 3, 3], "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1],
        "groups": 1, "failure": "crash"}]


def test_bisect_finds_two_culprits(rmcp, catalogue):
    # Two field failures with separate fixes: a crash that needs the GEMM solvers off and a
    # wrong answer that needs SDMA off; both switches are needed, nothing else.
    inject = {"faults": [
        {"failure": "crash", "scenarios": ["tiny1d-*"], "unless": {"MIOPEN_DEBUG_CONV_GEMM": "0"}},
        {"failure": "wrong", "scenarios": ["tiny-*-fwd-*"], "unless": {"HSA_ENABLE_SDMA": "0"}},
    ]}
    proc = probe(rmcp, catalogue, "--bisect", "--format", "json", inject=inject, check=0)
    b = json.loads(proc.stdout)["bisect"]
    assert b["found"] is True
    assert b["minimal"] == ["miopen-no-gemm", "hsa-no-sdma"]
    assert b["child_runs"] <= bound(2), b


def test_bisect_reports_when_no_configuration_passes(rmcp, catalogue):
    inject = {"faults": [{"failure": "error", "scenarios": ["tiny-*-fwd-*"]}]}
    proc = probe(rmcp, catalogue, "--bisect", "--quick", "--format", "json", inject=inject, check=1)
    b = json.loads(proc.stdout)["bisect"]
    assert b["found"] is False and b["child_runs"] == 1
    assert "no combination of the 10 switches" in b["note"]


def test_bisect_uses_the_isa_family_override_from_the_profiles(rmcp):
    # The shipped switches on a gfx1031 machine (fixture): the override switch takes its value
    # from profiles/10-isa-override.toml. The planted fault needs the card run as gfx1030.
    inject = {"faults": [{"failure": "crash", "unless": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}}]}
    proc = rmcp("--root", REPO / "tests" / "fixtures" / "rx6700xt-gfx1031", "probe", "--python", PYTHON,
                "--scenario", "conv2d-depthwise-b1-fwd-fp32", "--bisect", "--repeat", "1", "--warmup", "0",
                "--format", "json", env={"RMCP_PROBE_INJECT": json.dumps(inject)}, check=0)
    b = json.loads(proc.stdout)["bisect"]
    assert b["minimal"] == ["override-family"]
    assert b["fastest_env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert b["child_runs"] <= bound(1, n=11)
