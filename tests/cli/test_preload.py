"""librmcp_preload.so: real programs run with LD_PRELOAD.

The success paths use a stand-in HIP runtime (tests/preload/fake_hip.cpp, a TEST DOUBLE);
the failure paths also run against Debian's real libamdhip64, which with no GPU fails
every allocation.
"""
import json
import os
import signal
import subprocess

import pytest

from conftest import BUILD

SHIM = BUILD / "librmcp_preload.so"
DIR = BUILD / "tests" / "preload"


def run(args, mode="trace", extra_env=None, log=None):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LD_PRELOAD": str(SHIM)}
    if mode is not None:
        env["RMCP_ALLOC"] = mode
    if log is not None:
        env["RMCP_ALLOC_LOG"] = str(log)
    env.update(extra_env or {})
    return subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True, timeout=60)


def summary(tmp_path, args, **kw):
    log = tmp_path / "alloc.json"
    proc = run(args, log=log, **kw)
    return proc, json.loads(log.read_text())


@pytest.fixture(autouse=True)
def built():
    if not SHIM.exists() or not (DIR / "alloc_driver").exists():
        pytest.fail(f"{SHIM} or the preload test programs are missing: run scripts/setup.sh")


def test_trace_counts_every_api(tmp_path):
    proc, s = summary(tmp_path, [DIR / "alloc_driver", "basic"])
    assert proc.returncode == 0
    assert s["schema_version"] == 1 and s["reason"] == "exit"
    assert s["calls"] == {"hipMalloc": 1, "hipFree": 3, "hipMallocManaged": 1, "hipExtMallocWithFlags": 1,
                          "hipMallocAsync": 1, "hipFreeAsync": 1, "hipHostMalloc": 1, "hipHostFree": 1}
    assert s["bytes_allocated"] == 1000 + 2000 + 3000 + 4000 + 5000
    assert s["live_bytes"] == 0 and s["live_allocations"] == 0
    assert s["peak_live_bytes"] == 5000
    assert s["largest_request"] == 5000
    assert s["failures"] == 0 and s["last_failure"] is None
    assert [e["api"] for e in s["events"]][:2] == ["hipMalloc", "hipFree"]


def test_results_pass_through_unchanged(tmp_path):
    plain = subprocess.run([DIR / "alloc_driver", "basic"], capture_output=True, text=True)
    traced = run([DIR / "alloc_driver", "basic"], log=tmp_path / "a.json")
    assert plain.stdout == traced.stdout


def test_live_and_peak_with_leaks(tmp_path):
    _, s = summary(tmp_path, [DIR / "alloc_driver", "leak", 7, 4096])
    assert s["live_allocations"] == 7
    assert s["live_bytes"] == 7 * 4096 == s["peak_live_bytes"]


def test_failed_allocation_is_counted_and_code_kept(tmp_path):
    proc, s = summary(tmp_path, [DIR / "alloc_driver", "fail", 1 << 30],
                      extra_env={"RMCP_FAKE_HIP_FAIL_ABOVE": str(1 << 20)})
    assert proc.stdout.strip() == "2"  # hipErrorOutOfMemory from the runtime, unchanged
    assert s["failures"] == 1
    assert s["last_failure"] == {"api": "hipMalloc", "size": 1 << 30, "error": 2}
    assert s["largest_request"] == 1 << 30


def test_many_threads_keep_exact_counts(tmp_path):
    proc, s = summary(tmp_path, [DIR / "alloc_driver", "threads", 8, 5000])
    assert proc.returncode == 0
    assert s["calls"]["hipMalloc"] == 40000 and s["calls"]["hipFree"] == 40000
    assert s["live_bytes"] == 0 and s["live_allocations"] == 0
    assert s["failures"] == 0


def test_summary_written_on_fatal_signal(tmp_path):
    proc, s = summary(tmp_path, [DIR / "alloc_driver", "abort"])
    assert proc.returncode == -signal.SIGABRT  # the program still dies of its own signal
    assert s["reason"] == "signal" and s["signal"] == signal.SIGABRT
    assert s["live_bytes"] == 1 << 20


def test_no_output_without_trace_mode(tmp_path):
    proc = run([DIR / "alloc_driver", "basic"], mode=None, log=tmp_path / "a.json")
    assert proc.returncode == 0 and not (tmp_path / "a.json").exists() and proc.stderr == ""


def test_program_without_hip_is_unaffected(tmp_path):
    log = tmp_path / "a.json"
    proc = run(["/bin/sh", "-c", "grep -c amdhip64 /proc/self/maps; echo done"], log=log)
    assert proc.stdout.split() == ["0", "done"]  # HIP never loaded by the shim
    assert not log.exists() and proc.stderr == ""


def test_summary_to_stderr_by_default():
    proc = run([DIR / "alloc_driver", "leak", 1, 10])
    assert json.loads(proc.stderr.strip().splitlines()[-1])["live_bytes"] == 10


def test_runtime_outside_global_scope_via_env(tmp_path):
    # The runtime is reachable only through a dlopen(RTLD_LOCAL)'d library; its name is not
    # libamdhip64, so the test points the shim at it explicitly.
    proc, s = summary(tmp_path, [DIR / "alloc_loader", DIR / "librmcp_fake_consumer.so", 100],
                      extra_env={"RMCP_ALLOC_HIP_LIBRARY": str(DIR / "librmcp_fake_hip.so")})
    assert proc.stdout.strip() == "0"
    assert s["calls"]["hipMalloc"] == 1 and s["calls"]["hipFree"] == 1 and s["failures"] == 0


def test_unresolvable_runtime_reports_symbol_not_found(tmp_path):
    proc, s = summary(tmp_path, [DIR / "alloc_loader", DIR / "librmcp_fake_consumer.so", 100])
    assert proc.stdout.strip() == "302"  # hipErrorSharedObjectSymbolNotFound
    assert s["last_failure"]["error"] == 302


REAL = DIR / "alloc_driver_real"


@pytest.mark.skipif(not REAL.exists(), reason="Debian's libamdhip64-dev was not found at build time")
def test_real_libamdhip64_errors_pass_through(tmp_path):
    plain = subprocess.run([REAL, "basic"], capture_output=True, text=True)
    proc, s = summary(tmp_path, [REAL, "basic"])
    assert proc.stdout == plain.stdout
    codes = {int(line.split()[1]) for line in plain.stdout.splitlines()}
    assert codes and 0 not in codes  # no GPU here: every call fails
    assert s["failures"] == 10 and s["bytes_allocated"] == 0
    assert s["last_failure"]["error"] == int(plain.stdout.splitlines()[-1].split()[1])


@pytest.mark.skipif(not (DIR / "librmcp_real_consumer.so").exists(), reason="no real libamdhip64 at build time")
def test_real_libamdhip64_found_by_name_when_loaded_locally(tmp_path):
    plain = subprocess.run([str(DIR / "alloc_loader"), str(DIR / "librmcp_real_consumer.so"), "100"], capture_output=True,
                           text=True)
    proc, s = summary(tmp_path, [DIR / "alloc_loader", DIR / "librmcp_real_consumer.so", 100])
    assert proc.stdout == plain.stdout and proc.stdout.strip() != "302"
    assert s["last_failure"]["error"] == int(plain.stdout)


def test_uncached_routes_hipmalloc_through_ext_malloc(tmp_path):
    _, s = summary(tmp_path, [DIR / "alloc_driver", "leak", 2, 100], mode="trace,uncached")
    assert s["mode"] == "trace,uncached"
    assert s["calls"]["hipMalloc"] == 0 and s["calls"]["hipExtMallocWithFlags"] == 2
