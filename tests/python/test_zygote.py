"""The probe's fork server (python/rmcp/zygote.py), driven over its control socket the way
`rmcp probe` drives it: it imports torch once and never touches a device itself, each child
gets its own configuration and nothing of another's, and a child's death is its own."""
import array
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
torch = pytest.importorskip("torch")

TINY = {"id": "tiny-fwd", "op": "conv2d", "direction": "forward", "dtype": "float32",
        "input": [1, 2, 6, 6], "weight": [2, 2, 3, 3], "padding": [1, 1]}
TINY_BWD = dict(TINY, id="tiny-bwd-data", direction="backward_data")


class Zygote:
    def __init__(self, env=None):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        full_env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
        full_env.pop("RMCP_PROBE_INJECT", None)
        full_env.update(env or {})
        self.proc = subprocess.Popen([sys.executable, "-m", "rmcp.worker", "--serve", "--control-fd",
                                      str(theirs.fileno())], pass_fds=[theirs.fileno()], env=full_env,
                                     stderr=subprocess.PIPE, start_new_session=True)
        theirs.close()
        self.next_id = 0
        self.sock.settimeout(60)
        self.hello = self.receive()
        self.ready = self.receive()

    def receive(self):
        data = self.sock.recv(1 << 20)
        assert data, "the zygote closed its socket"
        return json.loads(data)

    def request(self, message):
        self.next_id += 1
        message = dict(message, id=self.next_id)
        if message["op"] == "status":
            self.sock.send(json.dumps(message).encode())
            return self.receive()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.sock.sendmsg([json.dumps(message).encode()],
                          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [out_w, err_w]).tobytes())])
        os.close(out_w)
        os.close(err_w)
        started = self.receive()
        assert started["event"] == "started" and started["id"] == self.next_id, started
        with os.fdopen(out_r, "rb") as fh:
            out = fh.read()
        with os.fdopen(err_r, "rb") as fh:
            err = fh.read()
        exited = self.receive()
        assert exited["event"] == "exited" and exited["pid"] == started["pid"], exited
        return started, exited, out.decode(), err.decode()

    def run(self, scenario, env=None, report_env=()):
        started, exited, out, err = self.request({"op": "run", "scenario": scenario, "env": env or {},
                                                  "device": "cpu", "repeat": 1, "warmup": 0,
                                                  "report_env": list(report_env)})
        report = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
        return report, exited["wait_status"], err

    def close(self):
        self.sock.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def zygote():
    z = Zygote()
    yield z
    z.close()


def test_handshake_precedes_the_import_and_names_python_and_torch(zygote):
    hello, ready = zygote.hello, zygote.ready
    assert hello["event"] == "hello" and hello["protocol"] == 1
    assert hello["python"] == ".".join(map(str, sys.version_info[:3]))
    assert hello["torch"]["found"] is True and hello["torch"]["version"]
    assert ready["event"] == "ready" and ready["torch_version"] == torch.__version__


def test_zygote_never_initialises_a_device_nor_starts_threads(zygote):
    # Children run scenarios and ask for the device (which calls torch.cuda.is_available()
    # in the child); the zygote's own state must stay untouched throughout.
    assert zygote.ready["cuda_initialized"] is False and zygote.ready["device_calls"] == []
    assert zygote.ready["threads"] == 1
    report, status, _ = zygote.run(TINY)
    assert report["status"] == "ok"
    started, exited, out, _ = zygote.request({"op": "device"})
    device = json.loads(out)
    assert device["status"] == "device" and device["torch_version"] == torch.__version__
    assert started["zygote_threads"] == 1
    state = zygote.request({"op": "status"})
    assert state["cuda_initialized"] is False
    assert state["device_calls"] == [], state
    assert state["threads"] == 1


def test_tripwire_records_a_device_call_made_in_the_zygote():
    # The check above proves something only if the tripwires catch a call: a zygote whose
    # own code asks torch for the device must show it.
    script = ("import sys, socket, json; sys.path.insert(0, %r); from rmcp import zygote; "
              "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); z = zygote.Zygote(b); "
              "assert z.start(); import torch; torch.cuda.is_available(); "
              "print(json.dumps(z.state()))") % str(REPO / "python")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True, timeout=120).stdout
    state = json.loads(out.decode().splitlines()[-1])
    assert "is_available" in state["device_calls"]


def test_environments_do_not_leak_between_children(zygote):
    names = ["MIOPEN_DEBUG_CONV_GEMM", "HSA_ENABLE_SDMA", "RMCP_TEST_ONLY"]
    first, _, _ = zygote.run(TINY, env={"MIOPEN_DEBUG_CONV_GEMM": "0", "RMCP_TEST_ONLY": "a"}, report_env=names)
    second, _, _ = zygote.run(TINY, env={"HSA_ENABLE_SDMA": "0"}, report_env=names)
    third, _, _ = zygote.run(TINY, report_env=names)
    assert first["env_seen"] == {"MIOPEN_DEBUG_CONV_GEMM": "0", "RMCP_TEST_ONLY": "a"}
    assert second["env_seen"] == {"HSA_ENABLE_SDMA": "0"}
    assert third["env_seen"] == {}


def test_a_crashing_child_leaves_the_zygote_serving(tmp_path):
    inject = {"faults": [{"failure": "crash", "scenarios": ["tiny-bwd-*"]}]}
    z = Zygote(env={"RMCP_PROBE_INJECT": json.dumps(inject)})
    try:
        report, status, err = z.run(TINY_BWD)
        assert report is None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT
        assert "Memory access fault by GPU node-1" in err
        report, status, _ = z.run(TINY)
        assert report["status"] == "ok" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        z.close()


def test_a_hung_child_is_its_own_process_group_and_killing_it_spares_the_zygote():
    inject = {"faults": [{"failure": "hang", "scenarios": ["tiny-bwd-*"]}]}
    z = Zygote(env={"RMCP_PROBE_INJECT": json.dumps(inject)})
    try:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        z.sock.sendmsg([json.dumps({"op": "run", "id": 1, "scenario": TINY_BWD, "device": "cpu", "repeat": 1,
                                    "warmup": 0}).encode()],
                       [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [out_w, err_w]).tobytes())])
        os.close(out_w)
        os.close(err_w)
        child = z.receive()["pid"]
        assert os.getpgid(child) == child != os.getpgid(z.proc.pid)
        # What the orchestrator's timeout does: it asks the zygote, which made the group
        # (the orchestrator never signals a pid from a reply: docs/security.md).
        z.sock.send(json.dumps({"op": "signal", "id": 1, "signal": "SIGKILL"}).encode())
        exited = z.receive()
        assert exited["pid"] == child and os.WTERMSIG(exited["wait_status"]) == signal.SIGKILL
        os.close(out_r)
        os.close(err_r)
        report, _, _ = z.run(TINY)
        assert report["status"] == "ok"
    finally:
        z.close()


def test_end_of_file_stops_the_zygote_and_its_children():
    inject = {"faults": [{"failure": "hang"}]}
    z = Zygote(env={"RMCP_PROBE_INJECT": json.dumps(inject)})
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    z.sock.sendmsg([json.dumps({"op": "run", "id": 1, "scenario": TINY, "device": "cpu", "repeat": 1,
                                "warmup": 0}).encode()],
                   [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [out_w, err_w]).tobytes())])
    os.close(out_w)
    os.close(err_w)
    child = z.receive()["pid"]
    time.sleep(0.5)
    z.sock.close()
    assert z.proc.wait(timeout=30) == 0
    with os.fdopen(out_r, "rb") as fh:  # end of file: the hung child is gone too
        fh.read()
    os.close(err_r)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_missing_torch_is_reported_after_the_hello(tmp_path):
    sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.Popen([sys.executable, "-S", "-m", "rmcp.worker", "--serve", "--control-fd",
                             str(theirs.fileno())], pass_fds=[theirs.fileno()], env=env)
    theirs.close()
    sock.settimeout(30)
    hello = json.loads(sock.recv(1 << 16))
    assert hello["event"] == "hello" and hello["torch"]["found"] is False
    no_torch = json.loads(sock.recv(1 << 16))
    assert no_torch["event"] == "no_torch" and "No module named 'torch'" in no_torch["message"]
    assert proc.wait(timeout=30) == 3
