"""`promtool check metrics` on what the shipped units' ExecStart writes for every fixture root
(issue 32: metrics named by Prometheus' conventions), and NFD's label syntax on the feature
file. The commands are read from packaging/systemd/*.service (conftest.exec_start_for_test)."""
import concurrent.futures
import re
import subprocess

import pytest

from conftest import exec_start_for_test, fixture_roots, rmcp_env, tool

ROOTS = fixture_roots()
# NFD feature-file lines: a label name (a DNS-style prefix is optional) and a value of at most
# 63 characters from [A-Za-z0-9._-] (Kubernetes label syntax).
NFD_LINE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?=([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


def run_all(unit, tmp_path, check):
    """Runs the unit's command on every root (4 at a time) and applies `check` to each output."""
    def one(root):
        argv, _ = exec_start_for_test(unit, root, None)
        proc = subprocess.run(argv, env=rmcp_env(tmp_path), capture_output=True, timeout=60)
        assert proc.returncode == 0, (root.name, proc.stderr.decode()[-2000:])
        return root.name, check(root.name, proc.stdout.decode())

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, ROOTS))


def test_every_fixture_passes_promtool_check_metrics(tmp_path):
    promtool = tool("promtool", "prometheus")
    assert len(ROOTS) > 40

    def check(name, text):
        lint = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True, timeout=30)
        # promtool prints its complaints (naming, HELP, counters) and exits 1 on any.
        assert lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(), (
            name, lint.stdout.decode(), lint.stderr.decode())
        families = {line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE ")}
        assert all(f.startswith("rmcp_") for f in families), (name, families)
        assert families["rmcp_run_incidents_total"] == "counter", name
        return families

    seen = run_all("rmcp-doctor.service", tmp_path, check)
    # The per-node families are there for every root (no GPU: an empty rmcp_gpu_info family).
    for name, families in seen.items():
        for family in ("rmcp_finding", "rmcp_open_findings", "rmcp_gpu_info", "rmcp_build_info",
                       "rmcp_probe_result_present", "rmcp_last_run_timestamp_seconds", "rmcp_check_duration_seconds"):
            assert family in families, (name, family)


def test_every_fixture_writes_valid_nfd_labels(tmp_path):
    def check(name, text):
        lines = text.splitlines()
        bad = [line for line in lines if not NFD_LINE.match(line)]
        assert not bad, (name, bad)
        labels = dict(line.split("=", 1) for line in lines)
        assert labels["rmcp.healthy"] in ("true", "false") and labels["rmcp.probe_passed"] in ("true", "false"), name
        return labels

    seen = run_all("rmcp-nfd.service", tmp_path, check)
    # The healthy zoo is healthy; a fixture with a critical finding is not.
    assert all(v["rmcp.healthy"] == "true" for k, v in seen.items() if k in
               {p.name for p in ROOTS if p.parent.name == "healthy"}), seen
    assert seen["rx6700xt-gfx1031"]["rmcp.healthy"] == "false"
    # No fixture has a saved probe result.
    assert {v["rmcp.probe_passed"] for v in seen.values()} == {"false"}


@pytest.mark.parametrize("unit", ["rmcp-doctor.service", "rmcp-nfd.service"])
def test_exit_code_is_0_with_critical_findings(unit, tmp_path):
    """A node with a critical finding still gets its file (the metrics say it, not the exit)."""
    argv, _ = exec_start_for_test(unit, __import__("conftest").FIXTURES / "rx6700xt-gfx1031", tmp_path / "x")
    proc = subprocess.run(argv, env=rmcp_env(tmp_path), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    written = list(tmp_path.glob("*"))
    assert [p.name for p in written if p.is_file()] in (["rmcp.prom"], ["rmcp"]), written
