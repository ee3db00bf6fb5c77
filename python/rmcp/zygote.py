"""The probe's fork server ("zygote"): imports torch once, then forks one child per request.

    python -m rmcp.worker --serve --control-fd FD

`rmcp probe` starts it with FD a SOCK_SEQPACKET Unix socket (docs/probe.md, "The fork
server"). Every message is one JSON object per packet. The zygote sends first, before it
imports anything heavy, so that the orchestrator can tell within a second whether the
interpreter is Python at all and whether torch is there:

    {"event": "hello", "protocol": 1, "python": "3.11.2", "executable": ..., "pid": ...,
     "torch": {"found": true, "origin": ".../torch/__init__.py", "version": "2.3.0"}}
    {"event": "ready", "torch_version": ..., "gpu_build": "hip"|"cuda"|null, ...}   after import torch
    {"event": "no_torch", "message": ...}                                             instead, then exit 3

Requests (orchestrator -> zygote); a "run" or "device" request carries two file
descriptors (SCM_RIGHTS), the write ends of the child's stdout and stderr pipes:

    {"op": "run", "id": N, "scenario": {...}, "env": {"VAR": "value"}, "device": "cpu",
     "repeat": 5, "warmup": 2, "report_env": ["VAR", ...]}
    {"op": "device", "id": N}        a child that reports what torch sees (--device auto)
    {"op": "status", "id": N}        the zygote's own state (tests)
    {"op": "signal", "id": N, "signal": "SIGTERM"|"SIGKILL"}
                                     signal the process group of request N's child (no reply)

Replies: {"event": "started", "id", "pid"} once the child exists in its own process group,
{"event": "exited", "id", "pid", "wait_status"} when it has been reaped, and
{"event": "status", ...}. End of file on the socket ends the zygote: it kills the process
groups of children still running, reaps them and exits.

Who signals what (docs/security.md, "Untrusted child replies"): the orchestrator never uses
a pid from these messages. It signals only what it started itself, the zygote's session (it
starts the zygote with setsid); a child's group is signalled by the zygote, which made it,
on a "signal" request. When a child ends, the zygote kills what the child left in its group
before it reaps the child: until then the zombie holds the pid, so the group id cannot have
been reused by anyone else.

What the zygote must never do is touch a GPU: a process that initialised the HIP or CUDA
runtime cannot hand it to a forked child (the child's runtime calls fail, "Cannot
re-initialize CUDA in forked subprocess"), and the runtime reads HSA_* and similar
variables when it starts, which must happen under each child's configuration. So the
zygote only imports torch; torch.cuda's entry points are wrapped with tripwires that record
any call made in the zygote (reported by "status"), and the number of threads is checked
before every fork (an OpenMP pool started before fork leaves children with a broken pool).
"""

import array
import gc
import json
import os
import platform
import select
import signal
import socket
import sys
import traceback

from rmcp.worker import thread_count

PROTOCOL = 1
MAX_MESSAGE = 1 << 20

# torch.cuda / torch._C entry points that initialise or query the device runtime.
_TRIPWIRED_CUDA = ("is_available", "device_count", "init", "_lazy_init", "current_device", "set_device",
                   "get_device_name", "get_device_properties", "get_device_capability", "synchronize",
                   "mem_get_info", "get_arch_list")
_TRIPWIRED_C = ("_cuda_init", "_cuda_getDeviceCount", "_cuda_getDevice", "_cuda_setDevice", "_cuda_synchronize")


def _send(sock, message, fds=()):
    data = json.dumps(message, sort_keys=True).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())])
    else:
        sock.send(data)


def _receive(sock):
    """One message and the descriptors that came with it; (None, []) at end of file."""
    fds = array.array("i")
    data, ancillary, flags, _addr = sock.recvmsg(MAX_MESSAGE, socket.CMSG_LEN(8 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    received = list(fds)
    if not data:
        for fd in received:
            os.close(fd)
        return None, []
    if flags & (getattr(socket, "MSG_TRUNC", 0) | getattr(socket, "MSG_CTRUNC", 0)):
        for fd in received:
            os.close(fd)
        raise ValueError("truncated request")
    return json.loads(data), received


def torch_spec():
    """Where torch is and its version, without importing it (the handshake must be quick)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError) as exc:
        return {"found": False, "message": str(exc)}
    if spec is None:
        return {"found": False, "message": "No module named 'torch'"}
    info = {"found": True, "origin": spec.origin or ""}
    try:
        from importlib import metadata
        info["version"] = metadata.version("torch")
    except Exception:  # no distribution metadata (a source checkout): read torch/version.py
        try:
            path = os.path.join(os.path.dirname(spec.origin or ""), "version.py")
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("__version__"):
                        info["version"] = line.split("=", 1)[1].strip().strip("'\"")
                        break
        except OSError:
            pass
    return info


class _Tripwires:
    """Records every call of a device entry point made in the zygote itself."""

    def __init__(self, torch):
        self.calls = []
        self.originals = []
        zygote = os.getpid()
        for owner, names in ((getattr(torch, "cuda", None), _TRIPWIRED_CUDA), (getattr(torch, "_C", None), _TRIPWIRED_C)):
            if owner is None:
                continue
            for name in names:
                original = getattr(owner, name, None)
                if not callable(original):
                    continue

                def wrapper(*args, _name=name, _original=original, **kwargs):
                    if os.getpid() == zygote:
                        self.calls.append(_name)
                    return _original(*args, **kwargs)

                try:
                    setattr(owner, name, wrapper)
                except (AttributeError, TypeError):
                    continue
                self.originals.append((owner, name, original))

    def restore(self):
        for owner, name, original in self.originals:
            setattr(owner, name, original)


class Zygote:
    def __init__(self, sock):
        self.sock = sock
        self.torch = None
        self.tripwires = None
        self.children = {}  # pid -> request id
        self.wake_r = self.wake_w = -1

    # ----------------------------------------------------------------- start-up

    def start(self):
        spec = torch_spec()
        _send(self.sock, {"event": "hello", "protocol": PROTOCOL, "python": platform.python_version(),
                          "executable": sys.executable, "pid": os.getpid(), "torch": spec})
        if not spec["found"]:
            _send(self.sock, {"event": "no_torch", "message": f"import torch failed: {spec.get('message', '')}"})
            return False
        try:
            import torch
        except Exception as exc:  # a broken install raises anything from OSError to AttributeError
            _send(self.sock, {"event": "no_torch", "message": f"import torch failed: {type(exc).__name__}: {exc}"})
            return False
        # Everything a child needs, imported here once; none of it starts a thread.
        from rmcp import worker  # noqa: F401
        import statistics  # noqa: F401
        self.torch = torch
        self.tripwires = _Tripwires(torch)
        # Children are short-lived copies: a collection in one would touch (and so copy) pages
        # of every object the import made. Frozen objects are left alone by the collector.
        gc.collect()
        if hasattr(gc, "freeze"):
            gc.freeze()
        gpu_build = "hip" if getattr(torch.version, "hip", None) else "cuda" if getattr(torch.version, "cuda", None) else None
        _send(self.sock, dict(self.state(), event="ready", torch_version=torch.__version__, gpu_build=gpu_build,
                              hip_version=getattr(torch.version, "hip", None),
                              cuda_version=getattr(torch.version, "cuda", None)))
        return True

    def state(self):
        cuda = getattr(self.torch, "cuda", None)
        initialized = bool(cuda.is_initialized()) if cuda is not None and hasattr(cuda, "is_initialized") else False
        return {"cuda_initialized": initialized, "threads": thread_count(),
                "device_calls": list(self.tripwires.calls) if self.tripwires else []}

    # ----------------------------------------------------------------- loop

    def serve(self):
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        try:
            while True:
                readable, _, _ = select.select([self.sock, self.wake_r], [], [])
                if self.wake_r in readable:
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    self.reap()
                if self.sock in readable:
                    try:
                        request, fds = _receive(self.sock)
                    except (ValueError, OSError) as exc:
                        print(f"rmcp.zygote: bad request: {exc}", file=sys.stderr, flush=True)
                        continue
                    if request is None:
                        return
                    self.handle(request, fds)
        finally:
            self.shutdown()

    def handle(self, request, fds):
        op = request.get("op")
        if op == "signal":
            for fd in fds:
                os.close(fd)
            self.signal_child(request.get("id"), request.get("signal"))
            return
        if op == "status":
            for fd in fds:
                os.close(fd)
            _send(self.sock, dict(self.state(), event="status", id=request.get("id")))
            return
        if op not in ("run", "device") or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            _send(self.sock, {"event": "rejected", "id": request.get("id"),
                              "message": f"unknown op {op!r} or missing descriptors"})
            return
        threads = thread_count()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.child(request, fds)  # never returns
        try:
            os.setpgid(pid, pid)  # also done by the child: whichever runs first
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        self.children[pid] = request.get("id")
        _send(self.sock, {"event": "started", "id": request.get("id"), "pid": pid, "zygote_threads": threads})

    def signal_child(self, rid, name):
        """Signals the group of request rid's child while it is ours and not reaped."""
        sig = {"SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}.get(name)
        if sig is None:
            return
        for pid, child_rid in self.children.items():
            if child_rid == rid:
                try:
                    os.killpg(pid, sig)
                except OSError:
                    pass
                return

    def reap(self):
        while True:
            try:
                # WNOWAIT: seen, not reaped; the zombie keeps its pid (and so its group id) ours.
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or info.si_pid == 0:
                return
            pid = info.si_pid
            if pid in self.children:
                try:
                    os.killpg(pid, signal.SIGKILL)  # what the child left running in its group
                except OSError:
                    pass
            try:
                pid, status = os.waitpid(pid, 0)
            except ChildProcessError:
                continue
            rid = self.children.pop(pid, None)
            _send(self.sock, {"event": "exited", "id": rid, "pid": pid, "wait_status": status})

    def shutdown(self):
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        self.children.clear()

    # ----------------------------------------------------------------- child

    def child(self, request, fds):
        code = 1
        try:
            os.setpgid(0, 0)
            gc.disable()
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            for fd in (*fds, self.wake_r, self.wake_w):
                os.close(fd)
            self.sock.close()  # the orchestrator must see the zygote's end only in the zygote
            self.tripwires.restore()
            # What the fork server itself had (its start-up environment: import-time
            # variables), before the configuration's own variables, read by the runtime
            # libraries when the device starts and by MIOpen when it first looks them up:
            # both happen after this.
            inherited = {name: os.environ[name] for name in request.get("report_env") or [] if name in os.environ}
            for name, value in (request.get("env") or {}).items():
                os.environ[name] = str(value)
            code = run_request(self.torch, request, inherited)
        except BaseException:  # noqa: B036 - anything the child raises ends it with a traceback
            traceback.print_exc()
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)


def run_request(torch, request, inherited=None):
    from rmcp import worker
    if request["op"] == "device":
        report = device_report(torch)
        print(json.dumps(report, sort_keys=True), flush=True)
        return 0
    injector_fault = worker.zygote_fault(os.environ.get("RMCP_PROBE_INJECT", ""), request["scenario"].get("id", ""))
    if injector_fault == "kill-zygote":
        os.kill(os.getppid(), signal.SIGKILL)
    try:
        report = worker.run_scenario(request["scenario"], request.get("device", "cpu"),
                                     int(request.get("repeat", 5)), int(request.get("warmup", 2)))
    except (worker.UsageError, KeyError, TypeError, ValueError) as exc:
        print(f"rmcp.worker: error: {exc}", file=sys.stderr, flush=True)
        return 2  # as the worker command: the orchestrator stops on a rejected request
    seen = {}
    for name in request.get("report_env") or []:
        if name in os.environ:
            seen[name] = os.environ[name]
    report["env_seen"] = seen
    report["env_inherited"] = inherited or {}
    print(json.dumps(report, sort_keys=True), flush=True)
    return worker.EXIT_FOR_STATUS.get(report["status"], 1)


def device_report(torch):
    """What torch sees, asked in a child: the first device call of this process."""
    report = {"status": "device", "torch_version": torch.__version__,
              "hip_version": getattr(torch.version, "hip", None), "cuda_version": getattr(torch.version, "cuda", None),
              "available": False, "count": 0, "name": "", "gfx_target": ""}
    if not (report["hip_version"] or report["cuda_version"]):
        report["message"] = "this torch is a CPU-only build"
        return report
    try:
        report["available"] = bool(torch.cuda.is_available())
        if report["available"]:
            report["count"] = int(torch.cuda.device_count())
            props = torch.cuda.get_device_properties(0)
            report["name"] = props.name
            report["gfx_target"] = getattr(props, "gcnArchName", "").split(":")[0]
        else:
            report["message"] = "torch.cuda.is_available() is False"
    except Exception as exc:  # a runtime that fails to start is an answer too
        report["available"] = False
        report["message"] = f"{type(exc).__name__}: {exc}".strip()[:2000]
    return report


def main(control_fd):
    sock = socket.socket(fileno=control_fd)
    zygote = Zygote(sock)
    try:
        if not zygote.start():
            return 3
        zygote.serve()
    except BrokenPipeError:
        pass  # the orchestrator went away
    return 0
