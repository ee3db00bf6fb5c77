"""Bounded capture and private temporary files (docs/security.md, "Bounded capture" and
"Private temporary files"; review 2026-11-28, D6 and D7).

D7: `explain --kernel-log` appended a flooding journalctl's output to memory without bound
(2.9 GB in 7 s). D6: `run --trace-alloc` used `$TMPDIR/rmcp-alloc-<pid>-<n>.json`; a FIFO
planted there blocked rmcp in open(), deaf to SIGTERM, and a link had its target read into
the report.
"""
import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from conftest import BUILD, REPO


def tool(bindir, name, body):
    """A TEST DOUBLE for a host tool (journalctl, dmesg) on PATH."""
    bindir.mkdir(exist_ok=True)
    path = bindir / name
    path.write_text("#!/bin/sh\n# test double\n" + body + "\n")
    path.chmod(0o755)
    return path


def run_measured(args, env, tmp_path, timeout=60):
    """(returncode, stdout, stderr, seconds, max RSS in KiB) of one process (wait4's rusage)."""
    out_path, err_path = tmp_path / "measured.out", tmp_path / "measured.err"
    began = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=err, start_new_session=True)
    status, usage = 0, None
    while time.monotonic() - began < timeout:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        time.sleep(0.05)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        os.wait4(proc.pid, 0)
        pytest.fail(f"{args} did not end within {timeout} s")
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (proc.returncode, out_path.read_bytes(), err_path.read_text(errors="replace"),
            time.monotonic() - began, usage.ru_maxrss)


def base_env(tmp_path, bindir):
    return {"PATH": f"{bindir}:/usr/bin:/bin", "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO), "HOME": str(tmp_path),
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}


def test_a_flooding_journalctl_is_stopped_and_cut(rmcp, tmp_path):
    """The newest part is kept (a crash is at the end of a log), the flood is stopped at the
    read limit and the cut is said."""
    bindir = tmp_path / "bin"
    tool(bindir, "journalctl", 'exec yes "amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:1 pasid:32770)"')
    rc, out, err, seconds, rss_kib = run_measured(
        [str(rmcp.binary), "explain", "--kernel-log", "--no-facts"], base_env(tmp_path, bindir), tmp_path)
    assert rc in (0, 1), (rc, err)
    assert seconds < 20, seconds
    # 2.9 GB before; the kept part is 8 MiB, the buffer twice that. ASan's shadow memory and
    # quarantine of freed reads multiply the process's RSS (575 MB measured), hence its own bound.
    sanitized = "asan" in str(rmcp.binary)
    assert rss_kib < (1024 if sanitized else 400) * 1024, rss_kib
    assert "journalctl was stopped at the 32 MiB read limit" in err, err
    assert "kept the last" in err, err
    assert b"page fault" in out or b"gpu" in out.lower(), out[:2000]


def test_a_journalctl_leaving_a_holder_does_not_wait_for_the_timeout(rmcp, tmp_path):
    """It exited but a background child kept the pipe open: reported as "did not finish
    within 60000 ms" after a minute, and the orphan left running."""
    bindir = tmp_path / "bin"
    pid_file = tmp_path / "holder.pid"
    tool(bindir, "journalctl", f'sh -c \'echo $$ > {pid_file}; exec sleep 300\' &\n'
                               'echo "amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:1 pasid:32770)"')
    rc, out, err, seconds, _ = run_measured(
        [str(rmcp.binary), "explain", "--kernel-log", "--no-facts"], base_env(tmp_path, bindir), tmp_path)
    try:
        assert seconds < 10, (seconds, err)
        assert "left a process holding its output" in err, err
        holder = int(pid_file.read_text())
        deadline = time.monotonic() + 2
        while running(holder) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(holder)  # its group was ended with it
    finally:
        try:
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def running(pid):
    """Alive and not a zombie (a killed orphan stays one until its new parent reaps it)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def shared_tmp(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o1777)
    tmp.chmod(0o1777)
    return tmp


def test_trace_alloc_uses_a_private_directory_and_cleans_it(rmcp, tmp_path):
    """No predictable name in the shared TMPDIR: a directory of its own, mode 0700, gone after."""
    tmp = shared_tmp(tmp_path)
    env = {**base_env(tmp_path, tmp_path / "bin"), "TMPDIR": str(tmp)}
    seen = tmp_path / "seen"
    script = f'd=$(dirname "$RMCP_ALLOC_LOG"); stat -c "%a %U" "$d" > {seen}; echo "$RMCP_ALLOC_LOG" >> {seen}'
    proc = subprocess.run([str(rmcp.binary), "run", "--trace-alloc", "--", "sh", "-c", script], env=env,
                          capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    mode_owner, log_path = seen.read_text().splitlines()
    assert mode_owner.split()[0] == "700", mode_owner
    assert log_path.startswith(str(tmp) + "/rmcp-run-") and log_path.endswith("/alloc.json"), log_path
    assert "rmcp-alloc-" not in log_path
    assert list(tmp.iterdir()) == [], list(tmp.iterdir())  # removed after reading


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_what_is_planted_at_the_summary_path_neither_blocks_nor_leaks(rmcp, tmp_path, plant):
    """The run itself (the only one who can write there) puts a FIFO, or a link to a secret,
    where the summary goes: rmcp does not block (a FIFO made it deaf to SIGTERM) and does
    not read the link's target into the report."""
    tmp = shared_tmp(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("TOP-SECRET-TOKEN\n")
    report = tmp_path / "report.json"
    env = {**base_env(tmp_path, tmp_path / "bin"), "TMPDIR": str(tmp)}
    make = 'mkfifo "$RMCP_ALLOC_LOG"' if plant == "fifo" else f'ln -s {secret} "$RMCP_ALLOC_LOG"'
    began = time.monotonic()
    proc = subprocess.run([str(rmcp.binary), "run", "--trace-alloc", "--report", str(report), "--", "sh", "-c", make],
                          env=env, capture_output=True, timeout=30)
    assert time.monotonic() - began < 10
    assert proc.returncode == 0, proc.stderr
    assert b"allocation summary ignored" in proc.stderr, proc.stderr
    text = report.read_text()
    assert "TOP-SECRET-TOKEN" not in text
    assert json.loads(text)["attempts"][0].get("allocations") is None
    assert list(tmp.iterdir()) == []


def test_the_shim_writes_no_file_through_a_link(tmp_path):
    """src/preload opens the summary with O_NOFOLLOW, mode 0600: a link at RMCP_ALLOC_LOG is
    not written through (the summary goes to stderr instead)."""
    shim, driver = BUILD / "librmcp_preload.so", BUILD / "tests" / "preload" / "alloc_driver"
    if not shim.exists() or not driver.exists():
        pytest.fail(f"{shim} or {driver} is missing: build first")
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    link = tmp_path / "alloc.json"
    link.symlink_to(victim)
    env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(shim), "RMCP_ALLOC": "trace", "RMCP_ALLOC_LOG": str(link)}
    proc = subprocess.run([str(driver), "basic"], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "keep me\n"
    assert "librmcp_preload" in proc.stderr  # the summary, on stderr
    plain = tmp_path / "plain.json"
    env["RMCP_ALLOC_LOG"] = str(plain)
    subprocess.run([str(driver), "basic"], env=env, capture_output=True, timeout=30, check=True)
    assert plain.stat().st_mode & 0o777 == 0o600
