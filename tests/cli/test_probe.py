"""`rmcp probe` end to end on the CPU with Debian's PyTorch (/usr/bin/python3).

GPU failures are reproduced by the worker's TEST-ONLY fault injector (RMCP_PROBE_INJECT,
docs/probe.md), conditioned on the configuration's environment like the real ones. The
scenarios here are tiny so that a child costs about the interpreter's start-up.
"""
import json
import re
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
import_time = ["PYTORCH_HIP_ALLOC_CONF"]

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


DEBIAN_TORCH = pathlib.Path("/usr/lib/python3/dist-packages/torch")


def detect_hint():
    """What a failed interpreter's error adds on a machine where detect finds Debian's PyTorch
    (newcomer review, finding 6); this machine's facts decide, as they decide for the user."""
    if not (DEBIAN_TORCH / "version.py").exists():
        return ""
    version = re.search(r"__version__ = '([^']+)'", (DEBIAN_TORCH / "version.py").read_text()).group(1)
    return f"; detect found PyTorch {version} for /usr/bin/python3: try --python /usr/bin/python3"


def test_missing_python_exits_3(rmcp, catalogue):
    proc = rmcp("probe", "--python", "/nonexistent/python3", "--catalogue", catalogue, check=3)
    assert proc.stderr.decode() == ("rmcp: error: starting the probe worker with /nonexistent/python3: "
                                    f"No such file or directory{detect_hint()}\n")
    assert proc.stdout == b""


def test_python_without_torch_exits_3(rmcp, catalogue, tmp_path):
    # -S drops site-packages, so `import torch` fails while the worker itself is found.
    fake = tmp_path / "python-without-torch"
    fake.write_text(f"#!/bin/sh\nexec {PYTHON} -S \"$@\"\n")
    fake.chmod(0o755)
    proc = rmcp("probe", "--python", fake, "--catalogue", catalogue, "--quick", check=3)
    assert proc.stderr.decode() == (f"rmcp: error: checking the interpreter {fake}: Python "
                                    f"{'.'.join(map(str, sys.version_info[:3]))}: import torch failed: "
                                    f"No module named 'torch'{detect_hint()}\n")
    assert proc.stdout == b""


def test_corrupted_result_is_a_failure(rmcp, catalogue, tmp_path):
    save = tmp_path / "probed.toml"
    proc = probe(rmcp, catalogue, "--quick", "--format", "json", "--save", save, "--allow-cpu",
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
    proc = probe(rmcp, catalogue, "--bisect", "--format", "json", "--save", save, "--allow-cpu", inject=inject,
                 check=0)
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
    assert_environments_isolated(out)
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


def assert_environments_isolated(out):
    """Every child saw exactly its configuration's switch variables, whatever ran before it
    in the same fork server; import-time ones came from a fork server started with them."""
    switch_vars = {var for _, var, _ in SWITCHES}
    import_time = {"PYTORCH_HIP_ALLOC_CONF"}
    seen_import_time = False
    for config in out["configurations"]:
        expected = {k: v for k, v in config["env"].items() if k in switch_vars}
        for result in config["results"]:
            if result["outcome"] in ("crash", "hang"):
                continue  # died before reporting
            assert result["env_seen"] == expected, (config["name"], result)
            inherited = {k: v for k, v in expected.items() if k in import_time}
            assert result.get("env_inherited", {}) == inherited, (config["name"], result)
            seen_import_time = seen_import_time or bool(inherited)
    assert seen_import_time, "no configuration set an import-time variable: the check above saw nothing"


def test_bisect_finds_two_culprits(rmcp, catalogue):
    # Two field failures with separate fixes: a crash that needs the GEMM solvers off and a
    # wrong answer that needs SDMA off; both switches are needed, nothing else.
    inject = {"faults": [
        {"failure": "crash", "scenarios": ["tiny1d-*"], "unless": {"MIOPEN_DEBUG_CONV_GEMM": "0"}},
        {"failure": "wrong", "scenarios": ["tiny-*-fwd-*"], "unless": {"HSA_ENABLE_SDMA": "0"}},
    ]}
    proc = probe(rmcp, catalogue, "--bisect", "--format", "json", inject=inject, check=0)
    out = json.loads(proc.stdout)
    b = out["bisect"]
    assert b["found"] is True
    assert b["minimal"] == ["miopen-no-gemm", "hsa-no-sdma"]
    assert b["child_runs"] <= bound(2), b
    assert_environments_isolated(out)


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


# ---------------------------------------------------------------- the interpreter comes first
# Regression tests (docs/security.md, defects found by the adversarial pass): a non-Python or hanging interpreter was reported
# as one GPU crash or hang per scenario (up to 10 x the 300 s timeout), --save into a
# missing directory failed after the whole suite, and a profile was written although no
# configuration passed.

def test_non_python_interpreter_exits_3_up_front_and_saves_nothing(rmcp, tmp_path):
    save = tmp_path / "p.toml"
    proc = rmcp("probe", "--python", "/bin/sleep", "--quick", "--bisect", "--save", save, check=3, timeout=30)
    err = proc.stderr.decode()
    assert err.startswith("rmcp: error: checking the interpreter /bin/sleep: it ended without answering "
                          "(exit status 1: "), err
    assert err.count("\n") == 1 and proc.stdout == b""
    assert list(tmp_path.iterdir()) == []


def test_hanging_interpreter_exits_3_after_the_handshake_limit(rmcp, catalogue, tmp_path):
    hung = tmp_path / "hung-python"
    hung.write_text("#!/bin/sh\nexec sleep 120\n")
    hung.chmod(0o755)
    proc = rmcp("probe", "--python", hung, "--catalogue", catalogue, "--timeout", "300", check=3, timeout=60)
    assert proc.stderr.decode() == (f"rmcp: error: checking the interpreter {hung}: no answer within 5 s: "
                                    f"is it a Python 3 interpreter?{detect_hint()}\n")


def test_save_into_a_missing_directory_fails_before_the_suite(rmcp, catalogue, tmp_path):
    # The interpreter is a script that leaves a mark: it must never be started.
    marker = tmp_path / "started"
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\ntouch {marker}\nexec {PYTHON} \"$@\"\n")
    python.chmod(0o755)
    missing = tmp_path / "no-such-dir" / "p.toml"
    proc = rmcp("probe", "--python", python, "--catalogue", catalogue, "--save", missing, check=2)
    assert proc.stderr.decode() == (f"rmcp: error: checking --save {missing}: directory {missing.parent} "
                                    "does not exist\n")
    assert not marker.exists()
    proc = rmcp("probe", "--python", python, "--catalogue", catalogue, "--save", tmp_path, check=2)
    assert proc.stderr.decode() == f"rmcp: error: checking --save {tmp_path}: is a directory; name a file\n"
    assert not marker.exists()


def test_no_profile_when_no_configuration_passed(rmcp, catalogue, tmp_path):
    save = tmp_path / "probed.toml"
    inject = {"faults": [{"failure": "error", "scenarios": ["tiny-*-fwd-*"]}]}
    proc = probe(rmcp, catalogue, "--bisect", "--quick", "--save", save, "--allow-cpu", inject=inject, check=1)
    map_path = tmp_path / "probed.faultmap.json"
    assert not save.exists()
    assert (f"rmcp: error: saving profile {save}: no configuration passed every scenario; no profile written "
            f"(the default configuration's failures are in {map_path})\n") in proc.stderr.decode()
    assert [f["scenario"] for f in json.loads(map_path.read_text())["faults"]] == ["tiny-b2-fwd-fp32"]


# ---------------------------------------------------------------- the CPU (newcomer review, findings 5, 6, 23)

def test_save_on_the_cpu_needs_allow_cpu(rmcp, catalogue, tmp_path):
    save = tmp_path / "probed.toml"
    proc = probe(rmcp, catalogue, "--quick", "--save", save, check=2)
    assert proc.stderr.decode().endswith(
        f"rmcp: error: saving a profile to {save}: the probe runs on the CPU, which says nothing about your GPU; "
        "pass --allow-cpu to save it anyway\n")
    assert proc.stdout == b"" and not save.exists() and not (tmp_path / "probed.faultmap.json").exists()


def test_a_cpu_probe_says_so_first_and_the_page_is_stamped(rmcp, catalogue, tmp_path):
    page = tmp_path / "p.html"
    proc = probe(rmcp, catalogue, "--quick", "--html", page, check=0)
    text = proc.stdout.decode()
    assert text.startswith("Probed the CPU; this says nothing about your GPU\n"), text
    assert "all 2 scenarios pass" in text or "the 1 scenario passes" in text, text
    assert "scenarios fail" not in text
    html = page.read_text()
    assert 'class="verdict cpu" id="verdict">Probed the CPU; this says nothing about your GPU (' in html
    assert re.search(r'<p class="stamp">rmcp [^,<]+, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ</p>', html), html[:2000]
    assert "1 configuration," in html and "1 configurations" not in html


def test_bisect_names_its_configuration_and_what_to_do_next(rmcp, catalogue, tmp_path):
    inject = {"faults": [{"failure": "crash", "scenarios": ["tiny-*-fwd-*"], "unless": {"MIOPEN_DEBUG_CONV_GEMM": "0"}}]}
    page = tmp_path / "b.html"
    save = tmp_path / "probed.toml"
    proc = probe(rmcp, catalogue, "--bisect", "--quick", "--device", "cpu", "--html", page, "--save", save,
                 "--allow-cpu", inject=inject, check=0)
    assert "  next: rmcp run --profile probed -- python train.py\n" in proc.stdout.decode(), proc.stdout
    assert "every scenario passes: miopen-no-gemm" in page.read_text()
    # Bisect progress counts within the configuration under test (the search's length is open).
    search = [l for l in proc.stderr.decode().splitlines() if " search {" in l or " verify {" in l]
    assert search and all(re.match(r"\[\d+, \d+/\d+ of this configuration(, ETA \d+:\d\d)?\] ", l) for l in search), search
    unsaved = probe(rmcp, catalogue, "--bisect", "--quick", "--device", "cpu", inject=inject, check=0)
    # On the CPU nothing is worth saving, so no --save advice either.
    assert "next:" not in unsaved.stdout.decode()


def test_probe_without_python_uses_the_interpreter_detect_found(rmcp, catalogue, tmp_path):
    """`python3` on PATH without torch (the reviewer's pyenv shim): probe takes the interpreter
    detect found PyTorch for, and says which."""
    if not (DEBIAN_TORCH / "version.py").exists():
        pytest.skip("detect finds no Debian PyTorch on this machine")
    shims = tmp_path / "shims"
    shims.mkdir()
    fake = shims / "python3"
    fake.write_text(f"#!/bin/sh\nexec {PYTHON} -S \"$@\"\n")
    fake.chmod(0o755)
    proc = rmcp("probe", "--catalogue", catalogue, "--quick", "--repeat", "1", "--warmup", "0",
                env={"PATH": f"{shims}:/usr/bin:/bin"}, check=0, timeout=120)
    err = proc.stderr.decode()
    assert "rmcp: note: probing /usr/bin/python3: detect found PyTorch " in err, err
    assert f"for it in {DEBIAN_TORCH} (--python chooses another)" in err, err


# ---------------------------------------------------------------- --device auto

def test_device_auto_falls_back_to_the_cpu_with_a_warning(rmcp, catalogue):
    proc = probe(rmcp, catalogue, "--quick", "--format", "json", check=0)
    err = proc.stderr.decode().splitlines()
    assert err[0].startswith(f"rmcp: note: probing {PYTHON}: Python 3.") and err[0].endswith("(CPU-only build)")
    assert err[1].startswith("rmcp: warning: torch ") and err[1].endswith(
        "sees no GPU (a CPU-only build): probing the CPU, so the fault map will be empty")
    assert json.loads(proc.stdout)["torch_device"] == "cpu"


def test_device_cuda_without_a_gpu_exits_3_before_the_suite(rmcp, catalogue):
    proc = probe(rmcp, catalogue, "--quick", "--device", "cuda", check=3)
    err = proc.stderr.decode()
    assert err.endswith(f"rmcp: error: probing cuda with {PYTHON}: torch {torch_version()} sees no GPU: "
                        "this torch is a CPU-only build\n"), err
    assert "[1/" not in err


def torch_version():
    import subprocess
    return subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                          check=True, text=True).stdout.strip()


FAKE_GPU_TORCH = """
# A test double at the GPU-backend seam: the real torch, made to look like a ROCm build
# that sees one GPU. It loads the real package under its own name, then patches it.
import importlib.util, sys, types
_real = "/usr/lib/python3/dist-packages/torch"
_spec = importlib.util.spec_from_file_location("torch", _real + "/__init__.py", submodule_search_locations=[_real])
_torch = importlib.util.module_from_spec(_spec)
sys.modules["torch"] = _torch
_spec.loader.exec_module(_torch)
_torch.version.hip = "6.0.0-fake"
_torch.cuda.is_available = lambda: True
_torch.cuda.device_count = lambda: 1
_torch.cuda.get_device_properties = lambda i: types.SimpleNamespace(name="Fake Radeon RX 6700 XT",
                                                                    gcnArchName="gfx1031:sramecc-:xnack-")
"""


def test_device_auto_probes_the_gpu_that_torch_sees(rmcp, catalogue, tmp_path):
    if not pathlib.Path("/usr/lib/python3/dist-packages/torch/__init__.py").exists():
        pytest.skip("needs Debian's python3-torch for the fake-GPU test double")
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(FAKE_GPU_TORCH)
    proc = rmcp("probe", "--python", PYTHON, "--catalogue", catalogue, "--quick", "--repeat", "1", "--format", "json",
                env={"PYTHONPATH": str(fake.parent)}, timeout=120)
    err = proc.stderr.decode()
    assert "(ROCm build)" in err.splitlines()[0]
    assert "rmcp: note: torch sees 1 GPU: Fake Radeon RX 6700 XT (gfx1031); probing cuda\n" in err
    assert json.loads(proc.stdout)["torch_device"] == "cuda"


# ---------------------------------------------------------------- fork server isolation

ISOLATION_CATALOGUE = """
[[family]]
name = "iso"
op = "conv1d"
input = [2, 12]
weight = [2, 2, 3]
batch = [1, 2, 3, 4]
directions = ["forward", "backward_data"]
dtypes = ["float32"]
"""


@pytest.fixture(scope="module")
def isolation_catalogue(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe-iso") / "catalogue.toml"
    path.write_text(ISOLATION_CATALOGUE)
    return path


def test_injected_faults_affect_only_their_scenarios(rmcp, isolation_catalogue):
    # One fork server serves all eight children: a crash, a hang and a wrong answer in three
    # of them leave the other five (before and after) untouched.
    inject = {"faults": [{"failure": "crash", "scenarios": ["iso-b1-bwd-data-*"]},
                         {"failure": "hang", "scenarios": ["iso-b2-fwd-*"]},
                         {"failure": "wrong", "scenarios": ["iso-b3-bwd-data-*"]}]}
    proc = probe(rmcp, isolation_catalogue, "--timeout", "3", "--format", "json", inject=inject, check=1, timeout=90)
    results = {r["scenario"]: r for r in json.loads(proc.stdout)["configurations"][0]["results"]}
    outcomes = {k: v["outcome"] for k, v in results.items()}
    assert outcomes == {"iso-b1-fwd-fp32": "ok", "iso-b1-bwd-data-fp32": "crash", "iso-b2-fwd-fp32": "hang",
                        "iso-b2-bwd-data-fp32": "ok", "iso-b3-fwd-fp32": "ok", "iso-b3-bwd-data-fp32": "wrong",
                        "iso-b4-fwd-fp32": "ok", "iso-b4-bwd-data-fp32": "ok"}
    crash = results["iso-b1-bwd-data-fp32"]
    assert crash["detail"] == "SIGABRT" and crash["signal"] == 6 and crash["kb_entry"] == "memory-access-fault"
    hang = results["iso-b2-fwd-fp32"]
    assert hang["detail"] == "timed out after 3 s" and 3 <= hang["wall_s"] < 10
    assert results["iso-b3-bwd-data-fp32"]["error"] > results["iso-b3-bwd-data-fp32"]["tolerance"]
    # Progress: done/total, and the time left from the children measured so far.
    lines = [line for line in proc.stderr.decode().splitlines() if line.startswith("[")]
    assert [line.split("]")[0].split(",")[0] for line in lines] == [f"[{i}/8" for i in range(1, 9)]
    assert all(", ETA " in line.split("]")[0] for line in lines[:-1]) and lines[-1].startswith("[8/8] ")


def test_fork_server_that_dies_is_restarted_once_and_the_run_goes_on(rmcp, isolation_catalogue, tmp_path):
    inject = {"faults": [{"failure": "kill-zygote", "scenarios": ["iso-b2-bwd-data-*"],
                          "once": str(tmp_path / "killed")}]}
    proc = probe(rmcp, isolation_catalogue, "--format", "json", inject=inject, check=0)
    out = json.loads(proc.stdout)
    assert [r["outcome"] for r in out["configurations"][0]["results"]] == ["ok"] * 8
    assert out["child_runs"] == 8
    assert ("rmcp: warning: the probe's fork server died (killed by SIGKILL) during iso-b2-bwd-data-fp32; "
            "restarted once, iso-b2-bwd-data-fp32 runs again\n") in proc.stderr.decode()


def test_fork_server_that_dies_twice_ends_the_probe(rmcp, isolation_catalogue):
    inject = {"faults": [{"failure": "kill-zygote", "scenarios": ["iso-b2-bwd-data-*"]}]}
    proc = probe(rmcp, isolation_catalogue, inject=inject, check=3)
    assert proc.stderr.decode().endswith(
        f"rmcp: error: running the probe's fork server with {PYTHON}: it died a second time (killed by SIGKILL), "
        "during iso-b2-bwd-data-fp32\n")


def test_save_without_a_file_writes_where_env_and_run_find_it(rmcp, catalogue, tmp_path):
    """`--save` alone writes $XDG_CONFIG_HOME/rmcp/profiles/probed.toml; `rmcp env` and
    `rmcp run` then take `--profile probed` by name (docs/patches.md, "User profiles")."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    rmcp("probe", "--python", PYTHON, "--catalogue", catalogue, "--repeat", "2", "--warmup", "1", "--quick",
         "--allow-cpu", "--save", env=env, check=0, timeout=120)
    saved = home / ".config/rmcp/profiles/probed.toml"
    assert tomllib.loads(saved.read_text())["name"] == "probed"
    out = rmcp("env", "--profile", "probed", env=env, check=0).stdout.decode()
    assert f"export RMCP_FAULT_MAP='{home}/.config/rmcp/profiles/probed.faultmap.json'\n" in out
    plan = json.loads(rmcp("run", "--profile", "probed", "--dry-run", "--format", "json", "--", "true",
                           env=env, check=0).stdout)
    assert plan["profile"] == "probed"
