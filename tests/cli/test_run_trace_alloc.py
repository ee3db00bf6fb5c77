"""`rmcp run --trace-alloc`: the preload shim's summary lands in the report.

The child is tests/preload/alloc_driver over the malloc-backed TEST DOUBLE runtime; the
abort case prints the real ROCr memory-fault text and dies of SIGABRT, as after a GPU fault.
"""
import json

import pytest

from conftest import BUILD

DRIVER = BUILD / "tests" / "preload" / "alloc_driver"


@pytest.fixture(autouse=True)
def built():
    if not DRIVER.exists():
        pytest.fail(f"{DRIVER} is missing: run scripts/setup.sh")


def test_summary_of_a_clean_run_is_in_the_report(rmcp, tmp_path):
    report = tmp_path / "report.json"
    rmcp("run", "--trace-alloc", "--report", report, "--", DRIVER, "leak", 3, 100, check=0)
    alloc = json.loads(report.read_text())["attempts"][0]["allocations"]
    assert alloc["tool"] == "librmcp_preload" and alloc["reason"] == "exit"
    assert alloc["calls"]["hipMalloc"] == 3
    assert alloc["live_allocations"] == 3 and alloc["live_bytes"] == 300


def test_summary_survives_the_fatal_signal(rmcp, tmp_path):
    report = tmp_path / "report.json"
    proc = rmcp("run", "--trace-alloc", "--report", report, "--", DRIVER, "abort")
    assert proc.returncode == 134  # 128 + SIGABRT, the child's own status
    doc = json.loads(report.read_text())
    attempt = doc["attempts"][0]
    assert any(m["id"] == "memory-access-fault" for m in attempt["matches"])
    assert attempt["allocations"]["reason"] == "signal"
    assert attempt["allocations"]["live_bytes"] == 1 << 20


def test_without_the_flag_there_is_no_summary(rmcp, tmp_path):
    report = tmp_path / "report.json"
    rmcp("run", "--report", report, "--", DRIVER, "leak", 1, 10, check=0)
    assert json.loads(report.read_text())["attempts"][0].get("allocations") is None
