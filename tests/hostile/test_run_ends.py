"""`rmcp run` always ends, whatever its child leaves behind or the user sends it, and its
time options are validated (docs/run.md, "Ending")."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import REPO


def run_env():
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
            "HOME": "/nonexistent", "XDG_STATE_HOME": "/nonexistent"}


def kill_group_of(pid_file):
    try:
        pid = int(pid_file.read_text())
        os.killpg(os.getpgid(pid), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def test_run_ends_while_a_background_process_keeps_writing(rmcp, tmp_path):
    """A background process that kept printing after the child exited kept run alive for
    ever. The drain after the child's exit is bounded (docs/run.md: 2 s) and the report
    names the writers left behind."""
    pid_file = tmp_path / "bg.pid"
    report = tmp_path / "report.json"
    script = f'(sh -c \'echo $$ > {pid_file}; while :; do echo t; sleep 0.2; done\') & echo done'
    started = time.monotonic()
    try:
        proc = rmcp("run", "--report", report, "--", "sh", "-c", script, timeout=20)
    finally:
        elapsed = time.monotonic() - started
        kill_group_of(pid_file)
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 8, elapsed
    assert b"done" in proc.stdout
    data = json.loads(report.read_text())
    bg = data["attempts"][0]["background_processes"]
    assert int(pid_file.read_text()) in bg, data["attempts"][0]
    assert b"still running" in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_terminate_and_hangup_end_run_after_the_kill_grace(rmcp, tmp_path, sig):
    """SIGTERM to rmcp was forwarded but rmcp waited for ever on a child that ignores it;
    it now ends itself (and the group) once --kill-grace has passed."""
    ready = tmp_path / "ready"
    child = f'trap "" TERM HUP; touch {ready}; while :; do sleep 0.1; done'
    p = subprocess.Popen([str(rmcp.binary), "run", "--kill-grace", "1", "--", "sh", "-c", child], env=run_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists()
        sent = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=10)
        assert time.monotonic() - sent < 6
        assert p.returncode == 128 + sig, (p.returncode, err)
        assert b"kill-grace" in err or b"killed" in err, err
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_terminate_after_the_child_exited_still_ends_run(rmcp, tmp_path):
    """With the child gone and a background writer holding the pipes, SIGTERM was dropped."""
    pid_file = tmp_path / "bg.pid"
    script = f'(sh -c \'trap "" TERM; echo $$ > {pid_file}; while :; do echo t; sleep 0.1; done\') & echo done'
    p = subprocess.Popen([str(rmcp.binary), "run", "--kill-grace", "0.5", "--", "sh", "-c", script], env=run_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)
        sent = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=10)
        assert time.monotonic() - sent < 4
    finally:
        kill_group_of(pid_file)
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGHUP])
def test_the_signal_that_ends_run_is_the_one_reported(rmcp, tmp_path, first):
    """D13 (review 2026-11-28): SIGINT (ignored by the child), then SIGTERM: rmcp ended after
    --kill-grace but exited 130 and named SIGINT in its note and in ended_by_signal. The last
    SIGTERM/SIGHUP is what ends rmcp, so 143 and SIGTERM (docs/run.md)."""
    ready = tmp_path / "ready"
    report = tmp_path / "r.json"
    child = f'trap "" INT TERM HUP; touch {ready}; while :; do sleep 0.1; done'
    p = subprocess.Popen([str(rmcp.binary), "run", "--kill-grace", "1", "--report", str(report), "--", "sh", "-c",
                          child], env=run_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists()
        p.send_signal(first)
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=15)
        assert p.returncode == 128 + signal.SIGTERM, (p.returncode, err)
        assert b"after SIGTERM" in err, err
        attempt = json.loads(report.read_text())["attempts"][0]
        assert attempt["ended_by_signal"] == "SIGTERM", attempt
        assert attempt["interrupted_by"] == first.name, attempt  # the first signal the user sent
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


BAD_SECONDS = ["1e10", "9.3e9", "1e18", "1e99", "inf", "-inf", "nan", "-1", "2592001", "abc", ""]


@pytest.mark.parametrize("option", ["--stall-timeout", "--kill-grace"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_time_options_out_of_range_are_usage_errors(rmcp, option, value):
    """--stall-timeout 1e10 killed a healthy child at once, nan was accepted and
    1e99 gave no grace: values must be finite seconds from 0 to 30 days."""
    proc = rmcp("run", option, value, "--", "true", timeout=20)
    assert proc.returncode == 2, (value, proc.returncode, proc.stderr)
    assert option.encode() in proc.stderr


@pytest.mark.parametrize("value", ["0", "0.001", "86400", "2592000"])
def test_time_options_in_range_leave_a_healthy_child_alone(rmcp, value):
    proc = rmcp("run", "--stall-timeout", value, "--kill-grace", value, "--", "sh", "-c",
                "sleep 0.3; echo healthy", timeout=20)
    if value == "0.001":
        return  # a one-millisecond stall timeout is the user's choice; only check it ends
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"healthy\n"
