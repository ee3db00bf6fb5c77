"""`rmcp probe` against a worker that lies in every field of every message (docs/security.md,
"Untrusted child replies"; review 2026-11-28, D9 and D12).

The worker is the user's own interpreter, and whatever it imported runs in it: its messages
are untrusted structured data. A message of the wrong type or out of range was an uncaught
exception (exit 134, D12), and the "pid" of a reply was signalled as a process group,
truncated to int (2^32+N became N, "pid": 0 killed rmcp's own group, D9). Now every message
is parsed against one schema (src/core/probe/worker_protocol.cpp): a violation is exit 3
with a message naming the field, and no pid from a message is ever signalled. Every case
runs rmcp in a session of its own next to an unrelated sleeping process group, and checks
that the group survives and that rmcp ended by itself, quickly.
"""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import REPO

CATALOGUE = """[[family]]
name = "tiny"
op = "conv2d"
input = [4, 8, 8]
weight = [4, 4, 3, 3]
padding = [1, 1]
batch = [1]
directions = ["forward"]
dtypes = ["float32"]
"""

# A fake fork server (a TEST DOUBLE for python/rmcp/zygote.py): it sends the start-up messages
# of SPEC, then answers each request with SPEC's replies ("$ID" is the request's id). Entries
# given as {"raw": HEX} are sent as those bytes. It keeps the child's pipes open, as a lying
# server could, and ignores "signal" requests unless SPEC says to answer them.
WORKER = r'''#!/usr/bin/python3
import array, json, socket, time
SPEC = json.loads(%r)
s = socket.socket(fileno=3)
def send(m, rid=None):
    if isinstance(m, dict) and "raw" in m:
        s.send(bytes.fromhex(m["raw"]))
        return
    text = json.dumps(m)
    if rid is not None:
        text = text.replace('"$ID"', str(rid))
    s.send(text.encode())
for m in SPEC["startup"]:
    send(m)
kept = []
while True:
    fds = array.array("i")
    try:
        data, anc, _, _ = s.recvmsg(1 << 20, socket.CMSG_LEN(8 * fds.itemsize))
    except OSError:
        break
    if not data:
        break
    for _level, _kind, payload in anc:
        fds.frombytes(payload[:len(payload) - len(payload) %% fds.itemsize])
    kept.extend(fds)
    request = json.loads(data)
    if request.get("op") == "signal":
        for m in SPEC.get("on_signal", []):
            send(m, request["id"])
        continue
    for m in SPEC.get("replies", []):
        send(m, request["id"])
'''

HELLO = {"event": "hello", "protocol": 1, "python": "3.11.2", "executable": "/usr/bin/python3", "pid": 4242,
         "torch": {"found": True, "origin": "/x/torch/__init__.py", "version": "2.3.0"}}
READY = {"event": "ready", "torch_version": "2.3.0", "gpu_build": None, "hip_version": None, "cuda_version": None,
         "cuda_initialized": False, "threads": 1, "device_calls": []}


def with_(message, **changes):
    out = dict(message)
    for key, value in changes.items():
        if value is KeyError:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def started(**changes):
    return with_({"event": "started", "id": "$ID", "pid": 4343, "zygote_threads": 1}, **changes)


def exited(**changes):
    return with_({"event": "exited", "id": "$ID", "pid": 4343, "wait_status": 0}, **changes)


@pytest.fixture
def victim():
    """An unrelated process group (its own session) that must outlive every probe."""
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield proc.pid
    alive = proc.poll() is None
    if alive:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert alive, "rmcp killed a process group it did not create"


def probe(rmcp, tmp_path, spec, *extra, timeout_s="1", fmt=None):
    worker = tmp_path / "python3"
    worker.write_text(WORKER % json.dumps(spec))
    worker.chmod(0o755)
    catalogue = tmp_path / "cat.toml"
    catalogue.write_text(CATALOGUE)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    args = [str(rmcp.binary)] + (["--format", fmt] if fmt else []) + [
        "probe", "--python", str(worker), "--catalogue", str(catalogue), "--device", "cpu", "--timeout", timeout_s,
        *extra]
    began = time.monotonic()
    # A session of its own: had rmcp signalled group 0 or -1, it would have hit itself, not pytest.
    proc = subprocess.run(args, env=env, capture_output=True, timeout=60, start_new_session=True)
    return proc, time.monotonic() - began


BIG = "3" * 100_000  # far over any field's limit: an "endless line"

STARTUP_LIES = {
    "python is a number (D12)": ([with_(HELLO, python=3)], '"python"'),
    "torch is a string": ([with_(HELLO, torch="yes")], '"torch"'),
    "torch.found is a string": ([with_(HELLO, torch={"found": "yes"})], '"found"'),
    "torch is missing": ([with_(HELLO, torch=KeyError)], '"torch"'),
    "another protocol": ([with_(HELLO, protocol=2)], '"protocol"'),
    "protocol is a float": ([with_(HELLO, protocol=1.0)], '"protocol"'),
    "an extra key": ([with_(HELLO, evil=1)], '"evil"'),
    "an endless python version": ([with_(HELLO, python=BIG)], '"python"'),
    "hello pid is 0": ([with_(HELLO, pid=0)], '"pid"'),
    "hello pid is 2^32+1": ([with_(HELLO, pid=(1 << 32) + 1)], '"pid"'),
    "not UTF-8": ([{"raw": (b'{"event": "hello", "python": "\xff\xfe"}').hex()}], "not UTF-8"),
    "not JSON": ([{"raw": b"hello there".hex()}], "not JSON"),
    "an array": ([[1, 2, 3]], "not a JSON object"),
    "event is a number": ([{"event": 5}], '"event"'),
    "an unknown event": ([{"event": "hullo"}], '"hullo"'),
    "threads is a string (D12)": ([HELLO, with_(READY, threads="x")], '"threads"'),
    "threads is negative": ([HELLO, with_(READY, threads=-1)], '"threads"'),
    "threads is huge": ([HELLO, with_(READY, threads=1e300)], '"threads"'),
    "threads is 2^64": ([HELLO, with_(READY, threads=1 << 64)], '"threads"'),
    "device_calls holds a number": ([HELLO, with_(READY, device_calls=[1])], '"device_calls"'),
    "gpu_build is unknown": ([HELLO, with_(READY, gpu_build="metal")], '"gpu_build"'),
    "cuda_initialized is a string": ([HELLO, with_(READY, cuda_initialized="no")], '"cuda_initialized"'),
    "ready lacks threads": ([HELLO, with_(READY, threads=KeyError)], '"threads"'),
    "no_torch message is a list": ([HELLO, {"event": "no_torch", "message": ["x"]}], '"message"'),
}


@pytest.mark.parametrize("case", list(STARTUP_LIES))
def test_a_lying_handshake_is_a_clear_error(rmcp, tmp_path, victim, case):
    startup, field = STARTUP_LIES[case]
    proc, elapsed = probe(rmcp, tmp_path, {"startup": startup})
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 3, (proc.returncode, err)
    assert "rmcp: error:" in err and "Traceback" not in err and "terminate called" not in err, err
    assert field in err, err
    assert elapsed < 10, elapsed


REPLY_LIES = {
    "pid 0 (D9: killed rmcp's own group)": [started(pid=0)],
    "pid -1": [started(pid=-1)],
    "pid 2^32+1 (D9: kill(-1))": [started(pid=(1 << 32) + 1)],
    "pid a string (D12)": [started(pid="x")],
    "pid a float (UB in the old code)": [started(pid=1e300)],
    "pid missing": [started(pid=KeyError)],
    "id a string (D12)": [started(id="1")],
    "id 2^64": [started(id=1 << 64)],
    "wait_status a string": [started(), exited(wait_status="x")],
    "wait_status out of range": [started(), exited(wait_status=70000)],
    "wait_status negative": [started(), exited(wait_status=-1)],
    "an extra key": [started(), exited(extra=True)],
    "a start-up message mid-run": [HELLO],
    "not UTF-8": [{"raw": (b'{"event": "started", "id": 1, "pid": "\xff"}').hex()}],
    "an endless message": [started(pid=BIG)],
}


@pytest.mark.parametrize("case", list(REPLY_LIES))
def test_a_lying_reply_is_a_clear_error_and_kills_nothing(rmcp, tmp_path, victim, case):
    proc, elapsed = probe(rmcp, tmp_path, {"startup": [HELLO, READY], "replies": REPLY_LIES[case]})
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 3, (proc.returncode, err)
    assert "rmcp: error:" in err and "broke the protocol" in err, err
    assert elapsed < 15, elapsed


def test_a_lying_reply_gives_a_json_error(rmcp, tmp_path, victim):
    """D12's repro asked for --format json: the error is one JSON object, exit 3."""
    proc, _ = probe(rmcp, tmp_path, {"startup": [HELLO, READY], "replies": [started(pid="x")]}, fmt="json")
    assert proc.returncode == 3, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["exit_code"] == 3 and '"pid"' in error["cause"], error


def test_a_valid_pid_of_another_group_is_never_signalled(rmcp, tmp_path, victim):
    """D9 with a well-formed lie: the worker names the victim's group as its child and
    exits it when asked to signal. rmcp asks the worker to signal its child (it made the
    group) and never signals the pid itself: the victim lives."""
    spec = {"startup": [HELLO, READY], "replies": [started(pid=victim)],
            "on_signal": [exited(pid=victim, wait_status=signal.SIGKILL)]}
    proc, elapsed = probe(rmcp, tmp_path, spec)
    assert proc.returncode not in (134, 137, -9), proc.stderr
    assert elapsed < 20, elapsed


def test_a_worker_that_never_reaps_is_ended_with_its_session_only(rmcp, tmp_path, victim):
    """The worker names the victim and ignores every signal request: rmcp gives up on it and
    ends the session it started (the worker and all it forked), twice (one restart), then
    reports the worker: the victim, in another session, lives."""
    spec = {"startup": [HELLO, READY], "replies": [started(pid=victim)]}
    proc, elapsed = probe(rmcp, tmp_path, spec)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 3, (proc.returncode, err)
    assert "died a second time" in err, err
    assert elapsed < 30, elapsed
