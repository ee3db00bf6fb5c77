"""Keep training on the GPU where the vendor convolution kernels fault (docs/torch.md).

    import rmcp.torch as rt
    rt.enable()                      # before or after `import torch`
    device, why = rt.safeguard(prefer_gpu=True)

A GPU memory fault kills the process; it cannot be caught with try/except. So the route of
each convolution is decided *before* the call: shapes that the probe's fault map marks (or
all of them, with policy="always") run through torch.ops.rmcp.conv, an im2col + GEMM
operator built from ATen operations on the tensor's own device, which never calls MIOpen.
docs/torch.md describes everything here, including what was verified where.

This module does not import torch at import time: enable() applies the profile's
environment first, then imports torch.
"""
import functools
import inspect
import json
import os
import shlex
import subprocess
import sys
import threading
import warnings

from . import _locate
from .faultmap import FaultMap, FaultMapError, call_key

__all__ = ["enable", "disable", "enabled", "stats", "safeguard", "decide_device", "conv",
           "load_extension", "backend", "FaultMap", "FaultMapError", "POLICIES", "BACKENDS"]

POLICIES = ("map", "always", "never")
# How routed convolutions are computed: the C++ operator or its pure-Python fallback
# ($RMCP_TORCH_BACKEND: auto, the default, takes the operator when it can be had).
BACKENDS = ("auto", "compiled", "python")
BACKEND_VARIABLE = "RMCP_TORCH_BACKEND"
DISABLE_MIOPEN_VARIABLE = "RMCP_DISABLE_MIOPEN"
_OPS = ("conv1d", "conv2d")
_DIMS = {"conv1d": 1, "conv2d": 2}


class _State:
    """Everything enable() changed, so that disable() can put it back."""

    def __init__(self):
        self.lock = threading.Lock()
        self.enabled = False
        self.policy = "never"
        self.fault_map = FaultMap()
        self.devices = frozenset()
        self.workspace_mb = -1
        self.counts = {op: {"rmcp": 0, "native": 0} for op in _OPS}
        self.decisions = {}
        self.saved_functions = {}
        self.saved_dataloader_init = None
        self.saved_environ = {}
        self.saved_cudnn_enabled = None
        self.set_start_method = False


_state = _State()
_extension_loaded = ""  # the path once loaded
_backend = None  # (name, detail) once chosen: ("compiled", library path) or ("python", why)


# --- the operator -------------------------------------------------------------------------

def load_extension():
    """Loads torch.ops.rmcp.conv, built for this torch, into torch; returns the library's path.

    The library is $RMCP_TORCH_OPS, else one prebuilt for this torch's version, else one
    compiled on first use into $XDG_CACHE_HOME/rmcp/torch-ops/<torch version>/ (a message says
    so while it compiles). Raises RuntimeError saying what is missing when there is none.
    """
    global _extension_loaded
    if _extension_loaded:
        return _extension_loaded
    import torch

    from . import _build
    try:
        path = _build.find_library(torch)
    except _build.ExtensionUnavailable as error:
        raise _build.ExtensionUnavailable(f"rmcp: error: building torch.ops.rmcp.conv: {error}") from error
    try:
        torch.ops.load_library(str(path))
    except OSError as error:
        raise RuntimeError(
            f"rmcp: error: loading the torch extension {path}: {error} (was it built against "
            f"this PyTorch, {torch.__version__}? unset RMCP_TORCH_OPS to have rmcp build one)") from error
    _extension_loaded = str(path)
    return _extension_loaded


def backend():
    """The backend routed convolutions use, chosen on first call: ("compiled", library path)
    or ("python", why the operator is not used). $RMCP_TORCH_BACKEND=python forces the
    fallback, =compiled makes a missing operator an error; auto falls back with a warning."""
    global _backend
    if _backend is not None:
        return _backend
    choice = os.environ.get(BACKEND_VARIABLE, "auto") or "auto"
    if choice not in BACKENDS:
        raise ValueError(f"rmcp.torch: {BACKEND_VARIABLE} must be one of {BACKENDS}, got {choice!r}")
    if choice == "python":
        _backend = ("python", f"{BACKEND_VARIABLE}=python")
        return _backend
    from . import _build
    try:
        _backend = ("compiled", load_extension())
    except _build.ExtensionUnavailable as error:
        if choice == "compiled":
            raise
        warnings.warn(f"{error}; rmcp.torch uses its pure-Python im2col+GEMM fallback instead (correct, slower)",
                      RuntimeWarning, stacklevel=3)
        _backend = ("python", str(error).removeprefix("rmcp: error: "))
    return _backend


def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, workspace_mb=None):
    """torch.nn.functional.conv1d/conv2d computed by torch.ops.rmcp.conv.

    Same arguments as the functional form (the op is chosen from weight.dim()); unbatched
    inputs are accepted like torch does. workspace_mb bounds the im2col workspace (default:
    enable()'s value, else $RMCP_CONV_WORKSPACE_MB, else 256).
    """
    import torch
    name, _ = backend()
    if name == "compiled":
        op, op_padding = torch.ops.rmcp.conv, torch.ops.rmcp.conv.padding
    else:
        from . import _fallback
        op, op_padding = _fallback.conv, _fallback.conv_padding_mode
    dims = weight.dim() - 2
    if dims not in (1, 2):
        raise ValueError(f"rmcp.torch.conv: expected a conv1d or conv2d weight, got {tuple(weight.shape)}")
    unbatched = input.dim() == dims + 1
    if unbatched:
        input = input.unsqueeze(0)
    if workspace_mb is None:
        workspace_mb = _state.workspace_mb
    stride, dilation = _as_list(stride, dims), _as_list(dilation, dims)
    if isinstance(padding, str):
        out = op_padding(input, weight, bias, stride, padding, dilation, groups, workspace_mb)
    else:
        out = op(input, weight, bias, stride, _as_list(padding, dims), dilation, groups, workspace_mb)
    return out.squeeze(0) if unbatched else out


def _as_list(value, dims):
    return [int(value)] * dims if isinstance(value, int) else [int(v) for v in value]


# --- routing ------------------------------------------------------------------------------

def _route_to_rmcp(op, input, weight, stride, padding, dilation, groups):
    policy = _state.policy
    if policy == "always":
        return True
    if policy == "never" or input.device.type not in _state.devices or not len(_state.fault_map):
        return False
    try:
        key = call_key(op, input.shape, weight.shape, input.dtype, stride, padding, dilation, groups)
    except (FaultMapError, TypeError, ValueError):
        return False  # arguments torch itself will reject; let it say so
    decision = _state.decisions.get(key)
    if decision is None:
        decision = _state.fault_map.match(key) is not None
        _state.decisions[key] = decision
    return decision


def _make_router(op, native):
    import torch
    dims = _DIMS[op]
    tensor = torch.Tensor
    has_torch_function = torch.overrides.has_torch_function  # False for plain tensors and Parameters

    @functools.wraps(native)
    def routed(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        # Anything unusual (a non-tensor argument, a tensor subclass with __torch_function__,
        # a wrong rank) goes to torch, which knows how to handle or reject it.
        plain = (isinstance(input, tensor) and isinstance(weight, tensor) and weight.dim() == dims + 2
                 and not has_torch_function((input, weight)))
        if plain and _route_to_rmcp(op, input, weight, stride, padding, dilation, groups):
            _state.counts[op]["rmcp"] += 1
            return conv(input, weight, bias, stride, padding, dilation, groups)
        _state.counts[op]["native"] += 1
        return native(input, weight, bias, stride, padding, dilation, groups)

    routed.__rmcp_native__ = native
    return routed


def _spawn_dataloader_init(original):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return original(self, *args, **kwargs)  # let DataLoader report the bad call
        arguments = bound.arguments
        if arguments.get("num_workers", 0) > 0 and arguments.get("multiprocessing_context") is None:
            # fork after the GPU runtime started fails ("Cannot re-initialize CUDA in forked
            # subprocess"); spawn starts clean workers (docs/domain.md, workarounds).
            arguments["multiprocessing_context"] = "spawn"
            return original(*bound.args, **bound.kwargs)
        return original(self, *args, **kwargs)

    __init__.__rmcp_native__ = original
    return __init__


# --- environment --------------------------------------------------------------------------

def _profile_environment(profile):
    """{name: value or None (unset)} for a profile name (via `rmcp env`) or a dict."""
    if profile is None:
        return {}
    if isinstance(profile, dict):
        return dict(profile)
    binary = _locate.rmcp_binary()
    if binary is None:
        warnings.warn("rmcp.torch: the rmcp program was not found (RMCP_BIN, PATH, build/rmcp): "
                      f"profile {profile!r} not applied", RuntimeWarning, stacklevel=3)
        return {}
    try:
        proc = subprocess.run([binary, "env", "--profile", str(profile), "--shell", "sh"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        warnings.warn(f"rmcp.torch: running {binary} env: {error}; profile {profile!r} not applied",
                      RuntimeWarning, stacklevel=3)
        return {}
    if proc.returncode != 0:
        warnings.warn(f"rmcp.torch: {binary} env --profile {profile} failed ({proc.returncode}): "
                      f"{proc.stderr.strip()[-500:]}; profile not applied", RuntimeWarning, stacklevel=3)
        return {}
    return parse_sh_environment(proc.stdout)


def parse_sh_environment(text):
    """Parses `export NAME='value'` / `unset NAME` lines (rmcp env --shell sh)."""
    changes = {}
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[0] == "export":
            for word in words[1:]:
                name, sep, value = word.partition("=")
                if sep:
                    changes[name] = value
        elif words[0] == "unset":
            for name in words[1:]:
                changes[name] = None
        elif "=" in words[0]:
            name, _, value = words[0].partition("=")
            changes[name] = value
    return changes


def _apply_environment(changes):
    if not changes:
        return
    torch = sys.modules.get("torch")
    started = False
    if torch is not None:
        try:
            started = bool(torch.cuda.is_initialized())
        except Exception:  # a broken or partial torch: assume the worst
            started = True
    if started:
        warnings.warn("rmcp.torch.enable(): torch already initialised its GPU runtime: "
                      + ", ".join(sorted(changes))
                      + " take effect only in new processes (call enable() before using the GPU, "
                        "or launch with `rmcp run`)", RuntimeWarning, stacklevel=3)
    for name, value in changes.items():
        _state.saved_environ.setdefault(name, os.environ.get(name))
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _default_fault_map_path(environ):
    explicit = environ.get("RMCP_FAULT_MAP")
    if explicit:
        return explicit
    config = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = os.path.join(config, "rmcp", "fault-map.json")
    return path if os.path.exists(path) else None


# --- enable / disable / stats -------------------------------------------------------------

def enable(profile="auto", fault_map=None, policy="map", *, devices=("cuda",), workspace_mb=None):
    """Applies rmcp's safeguards to this process. Returns None; see stats().

    profile: a profile name for `rmcp env` ("auto" lets rmcp choose), a dict of variables
        (None unsets), or None for no environment changes.
    fault_map: a path, a parsed dict, a FaultMap, or None for $RMCP_FAULT_MAP, else
        $XDG_CONFIG_HOME/rmcp/fault-map.json when it exists.
    policy: "map" routes the convolutions the fault map marks, "always" routes all of them,
        "never" routes none (the other safeguards still apply).
    devices: device types on which policy "map" applies (the map describes GPU kernels;
        the CPU's own convolutions are not the faulting ones).
    workspace_mb: im2col workspace bound for routed convolutions (default: $RMCP_CONV_WORKSPACE_MB or 256).
    """
    if policy not in POLICIES:
        raise ValueError(f"rmcp.torch.enable: policy must be one of {POLICIES}, got {policy!r}")
    changes = _profile_environment(profile)
    if fault_map is None and policy == "map":
        # A probed profile names its fault map in RMCP_FAULT_MAP (docs/probe.md).
        fault_map = _default_fault_map_path({**os.environ, **{k: v for k, v in changes.items() if v is not None}})
    loaded_map = FaultMap.load(fault_map)  # fails before anything is changed
    if _state.enabled:
        disable()

    if any(changes.get(name) == "" for name in ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")):
        warnings.warn(f"rmcp.torch.enable(profile={profile!r}): the profile hides every GPU (rmcp's cpu rung, "
                      "chosen by `auto` when detect finds no usable AMD GPU); pass profile=None to leave "
                      "the environment alone", RuntimeWarning, stacklevel=2)
    _apply_environment(changes)

    import multiprocessing

    import torch
    import torch.nn.functional as F
    import torch.utils.data

    if policy != "never":
        backend()  # choose (build, or fall back) now, not at the first convolution

    _state.policy = policy
    _state.fault_map = loaded_map
    _state.devices = frozenset(devices)
    _state.workspace_mb = -1 if workspace_mb is None else int(workspace_mb)
    _state.decisions = {}
    _state.counts = {op: {"rmcp": 0, "native": 0} for op in _OPS}
    if policy == "map" and not len(loaded_map):
        warnings.warn("rmcp.torch.enable(policy='map'): no fault map (run `rmcp probe --bisect --save`, "
                      "or pass fault_map=): no convolution is routed", RuntimeWarning, stacklevel=2)

    if os.environ.get(DISABLE_MIOPEN_VARIABLE) == "1":
        _state.saved_cudnn_enabled = torch.backends.cudnn.enabled
        torch.backends.cudnn.enabled = False

    if multiprocessing.get_start_method(allow_none=True) is None:
        multiprocessing.set_start_method("spawn")
        _state.set_start_method = True

    DataLoader = torch.utils.data.DataLoader
    _state.saved_dataloader_init = DataLoader.__init__
    DataLoader.__init__ = _spawn_dataloader_init(DataLoader.__init__)

    for op in _OPS:
        native = getattr(F, op)
        _state.saved_functions[op] = native
        setattr(F, op, _make_router(op, native))
    _state.enabled = True


def disable():
    """Undoes enable(): functions, DataLoader, cudnn flag, start method (if enable set it), environment."""
    if not _state.enabled:
        return
    import multiprocessing

    import torch
    import torch.nn.functional as F
    import torch.utils.data

    for op, native in _state.saved_functions.items():
        setattr(F, op, native)
    _state.saved_functions = {}
    if _state.saved_dataloader_init is not None:
        torch.utils.data.DataLoader.__init__ = _state.saved_dataloader_init
        _state.saved_dataloader_init = None
    if _state.saved_cudnn_enabled is not None:
        torch.backends.cudnn.enabled = _state.saved_cudnn_enabled
        _state.saved_cudnn_enabled = None
    if _state.set_start_method:
        multiprocessing.set_start_method(None, force=True)
        _state.set_start_method = False
    for name, value in _state.saved_environ.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _state.saved_environ = {}
    _state.policy = "never"
    _state.enabled = False


def enabled():
    return _state.enabled


def stats():
    """Calls per route since enable(): {"rmcp": n, "native": n, "conv1d": {...}, "conv2d": {...}, ...};
    "backend" says how routed calls are computed ("compiled", "python", or None before the
    first choice) and "backend_detail" the library's path or why the fallback is used."""
    per_op = {op: dict(counts) for op, counts in _state.counts.items()}
    return {
        "rmcp": sum(c["rmcp"] for c in per_op.values()),
        "native": sum(c["native"] for c in per_op.values()),
        **per_op,
        "policy": _state.policy,
        "fault_map_entries": len(_state.fault_map),
        "fault_map": _state.fault_map.source if len(_state.fault_map) else None,
        "backend": _backend[0] if _backend else None,
        "backend_detail": _backend[1] if _backend else None,
    }


# --- safeguard ----------------------------------------------------------------------------

def decide_device(prefer_gpu, force_unsafe, gpu_build, gpu_count, findings, doctor_note=None):
    """The pure decision behind safeguard(): (device, reason).

    gpu_build: torch's GPU flavour ("hip 5.2", "cuda 11.7") or None for a CPU-only build;
    gpu_count: GPUs torch sees (None: not asked); findings: rmcp doctor's findings (dicts
    with id and severity) or None when doctor could not run (doctor_note says why).
    """
    if not prefer_gpu:
        return "cpu", "the caller asked for the CPU"
    if not gpu_build:
        return "cpu", "this PyTorch is a CPU-only build"
    critical = [f for f in findings or () if str(f.get("severity", "")).lower() == "critical"]
    if critical:
        ids = ", ".join(f"{f.get('id', '?')} ({f['title']})" if f.get("title") else str(f.get("id", "?"))
                        for f in critical)
        if not force_unsafe:
            return "cpu", (f"rmcp doctor reports critical findings ({ids}): see `rmcp doctor`; "
                           "force_unsafe=True uses the GPU anyway")
    if gpu_count is not None and gpu_count < 1:
        return "cpu", f"PyTorch ({gpu_build}) sees no GPU"
    if critical:
        return "cuda", f"force_unsafe=True: using the GPU despite critical findings ({ids})"
    if findings is None:
        return "cuda", f"PyTorch ({gpu_build}) sees a GPU; rmcp doctor unavailable ({doctor_note})"
    return "cuda", f"PyTorch ({gpu_build}) sees a GPU and rmcp doctor reports nothing critical"


def _doctor_findings():
    """(findings, note): findings is None when `rmcp doctor --format json` could not run."""
    binary = _locate.rmcp_binary()
    if binary is None:
        return None, "the rmcp program was not found (RMCP_BIN, PATH, build/rmcp)"
    try:
        proc = subprocess.run([binary, "doctor", "--format", "json"], capture_output=True, text=True,
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"running {binary} doctor: {error}"
    if proc.returncode not in (0, 1):  # 1 = findings at or above --fail-on
        return None, f"{binary} doctor exited {proc.returncode}: {proc.stderr.strip()[-300:]}"
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as error:
        return None, f"{binary} doctor printed no JSON: {error}"
    findings = report.get("findings") if isinstance(report, dict) else report
    if not isinstance(findings, list):
        return None, f"{binary} doctor JSON has no findings list"
    return [f for f in findings if isinstance(f, dict)], None


def safeguard(prefer_gpu=True, force_unsafe=False):
    """Which device to train on, and why: ("cuda" | "cpu", reason).

    "cuda" is torch's name for HIP devices too. CPU when the GPU is not wanted, when torch
    is a CPU-only build or sees no GPU, or when rmcp doctor reports a critical finding for
    this machine (unless force_unsafe). Doctor runs first, before torch touches the GPU.
    """
    import torch
    gpu_build = (f"hip {torch.version.hip}" if getattr(torch.version, "hip", None) else
                 f"cuda {torch.version.cuda}" if getattr(torch.version, "cuda", None) else None)
    if not prefer_gpu or not gpu_build:
        return decide_device(prefer_gpu, force_unsafe, gpu_build, None, [])
    findings, note = _doctor_findings()
    critical = any(str(f.get("severity", "")).lower() == "critical" for f in findings or ())
    gpu_count = None if critical and not force_unsafe else torch.cuda.device_count()
    return decide_device(prefer_gpu, force_unsafe, gpu_build, gpu_count, findings, note)
