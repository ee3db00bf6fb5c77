"""The probe worker: runs ONE convolution scenario and prints ONE JSON line.

    python -m rmcp.worker SCENARIO [--device cpu|cuda] [--repeat N] [--warmup N]
    python -m rmcp.worker --serve --control-fd FD        (the fork server, rmcp/zygote.py)

SCENARIO is a JSON object (what `rmcp probe` passes) or a scenario id from the catalogue
(probe/catalogue.toml, or --catalogue FILE; reading TOML needs Python 3.11's tomllib).

The worker runs in the user's interpreter (`rmcp probe --python PY`), so it uses only the
standard library and torch. `rmcp probe` runs every (scenario, configuration) in its own
process: a GPU memory fault aborts the process, a hung kernel never returns, and neither
may take the probe down with it. Those processes are forked from one fork server that has
imported torch once (rmcp/zygote.py); run as a command, the worker does the same work for
one scenario in its own interpreter. What it does:

1. builds the tensors from a fixed seed on the CPU (drawn in float32, which torch's CPU
   generator fills several times faster than float64, and the scenarios' dtypes are at
   most 32-bit) and casts them to the scenario's dtype and device;
2. runs the operation once (this is where MIOpen searches solvers and where field
   failures happen) and compares the result with a float64 CPU reference computed from
   the same (already rounded) inputs; a wrong answer is a failure like a crash;
3. times it: warm-up calls, device synchronisation around every call, the median of
   --repeat calls.

Where a core is free, a helper process starts on step 2's reference while step 3 runs and
the child takes its share after (ReferenceProcess); the comparison follows the timed calls.

Exit status: 0 the scenario passed or is unsupported on this device (status says which),
1 it failed (wrong answer or an exception), 2 usage error, 3 environment (no torch, no GPU).

TEST ONLY: RMCP_PROBE_INJECT (a JSON fault list, see `_Injector`) makes the worker
reproduce field failure modes (abort with ROCr's memory-fault text, hang, corrupt the
result, raise a HIP error), each conditioned on the configuration's environment. It exists
so that the probe's control paths can be tested without an AMD GPU; never set it otherwise.
"""

import argparse
import fnmatch
import json
import math
import mmap
import os
import random
import select
import signal
import statistics
import sys
import time

SCHEMA_VERSION = 1

# Largest normalised error (max |result - reference| / max |reference|) still accepted.
# float32 allows TF32 (10-bit mantissa inputs), which PyTorch enables for convolutions on
# NVIDIA GPUs, and Winograd's extra rounding; float16 allows half-precision rounding of
# inputs and outputs with fp32 accumulation. Corrupted results land orders of magnitude above.
TOLERANCES = {"float32": 2e-3, "float16": 2e-2}


# The dtype inputs are drawn in: float32 covers every scenario dtype (TOLERANCES), and torch's
# CPU normal generator fills float32 about 5x faster than float64 (16x256x32x32: 18 ms vs
# 88 ms with PyTorch 1.13 here). Inputs are still rounded to the scenario's dtype before the
# float64 reference sees them, so what is checked is unchanged.
DRAW_DTYPE = "float32"

DIRECTION_TAGS = {"forward": "fwd", "backward_data": "bwd-data", "backward_weight": "bwd-weight"}
DTYPE_TAGS = {"float32": "fp32", "float16": "fp16"}

# Errors that mean "this build cannot run this op on this device", not "the op is broken":
# PyTorch 1.13's CPU build has no half-precision slow_conv2d, for example.
UNSUPPORTED_MARKERS = ("not implemented for 'Half'", "not implemented for \"Half\"",
                       "\"slow_conv2d_cpu\" not implemented", "not supported on CPUTensorId")


class UsageError(Exception):
    pass


# --------------------------------------------------------------------------- catalogue

def default_catalogue():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("RMCP_PROBE_CATALOGUE", ""),
                  os.path.join(os.environ.get("RMCP_DATA_DIR", ""), "probe", "catalogue.toml"),
                  os.path.join(here, "..", "..", "probe", "catalogue.toml"),
                  os.path.join(here, "probe", "catalogue.toml")]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    return None


def scenario_id(name, batch, direction, dtype):
    return f"{name}-b{batch}-{DIRECTION_TAGS[direction]}-{DTYPE_TAGS[dtype]}"


def expand_family(family):
    """The scenarios of one [[family]] table, as the orchestrator expands them."""
    rank = 1 if family["op"] == "conv1d" else 2
    out = []
    for batch in family["batch"]:
        for direction in family["directions"]:
            for dtype in family["dtypes"]:
                out.append({
                    "id": scenario_id(family["name"], batch, direction, dtype),
                    "op": family["op"], "direction": direction, "dtype": dtype,
                    "input": [batch, *family["input"]], "weight": list(family["weight"]),
                    "stride": list(family.get("stride", [1] * rank)),
                    "padding": list(family.get("padding", [0] * rank)),
                    "dilation": list(family.get("dilation", [1] * rank)),
                    "groups": int(family.get("groups", 1)),
                })
    return out


def load_scenario_from_catalogue(wanted, path):
    if path is None:
        raise UsageError("no catalogue found: pass --catalogue FILE or a JSON scenario")
    try:
        import tomllib
    except ImportError as exc:  # Python < 3.11
        raise UsageError("reading the catalogue needs Python 3.11 (tomllib); pass a JSON scenario") from exc
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    for family in data.get("family", []):
        for spec in expand_family(family):
            if spec["id"] == wanted:
                return spec
    raise UsageError(f"no scenario {wanted!r} in {path}")


def validate(spec):
    for key in ("id", "op", "direction", "dtype", "input", "weight"):
        if key not in spec:
            raise UsageError(f"scenario lacks {key!r}")
    if spec["op"] not in ("conv1d", "conv2d"):
        raise UsageError(f"unknown op {spec['op']!r}")
    if spec["direction"] not in DIRECTION_TAGS:
        raise UsageError(f"unknown direction {spec['direction']!r}")
    if spec["dtype"] not in TOLERANCES:
        raise UsageError(f"unknown dtype {spec['dtype']!r}")
    rank = 1 if spec["op"] == "conv1d" else 2
    if len(spec["input"]) != rank + 2 or len(spec["weight"]) != rank + 2:
        raise UsageError(f"{spec['op']} needs input and weight of rank {rank + 2}")
    spec.setdefault("stride", [1] * rank)
    spec.setdefault("padding", [0] * rank)
    spec.setdefault("dilation", [1] * rank)
    spec.setdefault("groups", 1)
    return spec


# --------------------------------------------------------------------------- injector

# Faults that act on the fork server rather than on the scenario (python/rmcp/zygote.py).
_ZYGOTE_FAULTS = ("kill-zygote",)
# Faults that act on the reference helper (ReferenceProcess).
_HELPER_FAULTS = ("hang-reference",)


def zygote_fault(text, scenario):
    """TEST ONLY: the fork-server fault planted for this scenario, if any."""
    return _Injector(text, scenario, kinds=_ZYGOTE_FAULTS).failure


def helper_fault(text, scenario):
    """TEST ONLY: the reference-helper fault planted for this scenario, if any."""
    return _Injector(text, scenario, kinds=_HELPER_FAULTS).failure


class _Injector:
    """TEST ONLY. RMCP_PROBE_INJECT='{"faults": [FAULT, ...]}' (or a bare list), where
    FAULT = {"failure": "crash"|"hang"|"wrong"|"error"|"kill-zygote"|"hang-reference",
             "scenarios": ["glob", ...],      # scenario ids it applies to (default: all)
             "when": {"VAR": "value", ...},   # fires only if all of these hold
             "unless": {"VAR": "value", ...}, # suppressed if all of these hold
             "once": "/path/marker"}          # fires only where it creates this file
    An empty value in "when"/"unless" means "unset or empty". "kill-zygote" makes the
    child SIGKILL the fork server that forked it, then run the scenario normally;
    "hang-reference" makes the reference helper (ReferenceProcess) hang once it is released,
    while the scenario itself runs normally."""

    def __init__(self, text, scenario, kinds=None):
        self.failure = None
        if not text:
            return
        data = json.loads(text)
        faults = data.get("faults", []) if isinstance(data, dict) else data
        for fault in faults:
            if kinds is not None and fault["failure"] not in kinds:
                continue
            if kinds is None and fault["failure"] in (*_ZYGOTE_FAULTS, *_HELPER_FAULTS):
                continue
            patterns = fault.get("scenarios", ["*"])
            if not any(fnmatch.fnmatchcase(scenario, p) for p in patterns):
                continue
            if not self._holds(fault.get("when", {})):
                continue
            unless = fault.get("unless", {})
            if unless and self._holds(unless):
                continue
            if fault.get("once") and not self._first_time(fault["once"]):
                continue
            self.failure = fault["failure"]
            return

    @staticmethod
    def _first_time(marker):
        """"once": a marker file; the fault fires only for the child that creates it."""
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return True
        except FileExistsError:
            return False

    @staticmethod
    def _holds(conditions):
        return all(os.environ.get(k, "") == str(v) for k, v in conditions.items())

    def before_result(self):
        """Called right after the operation ran, where field failures surface."""
        if self.failure == "crash":
            # ROCr's message (docs/domain.md, "Crash signatures"), then abort() like ROCr does.
            rng = random.Random()
            sys.stderr.write(
                f"Memory access fault by GPU node-1 (Agent handle: 0x{rng.getrandbits(44):x}) on address "
                f"0x{rng.getrandbits(40) << 12:x}. Reason: Page not present or supervisor privilege.\n")
            sys.stderr.flush()
            try:
                import resource
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            except (ImportError, ValueError, OSError):
                pass
            os.abort()
        if self.failure == "hang":
            while True:  # a GPU hang: the call never returns
                time.sleep(3600)
        if self.failure == "error":
            raise RuntimeError("HIP error: invalid device function\nHIP kernel errors might be asynchronously "
                               "reported at some other API call")

    def corrupt(self, result):
        if self.failure != "wrong":
            return result
        import torch
        bad = result.clone()
        flat = bad.view(-1)
        flat[::7] = 0  # a solver that skips work: every 7th element left at zero
        flat[1::7] += 1.0 + flat[1::7].abs()
        return bad if result.numel() > 1 else torch.full_like(result, float("nan"))


# --------------------------------------------------------------------------- running

def _functional(torch, op):
    return torch.nn.functional.conv1d if op == "conv1d" else torch.nn.functional.conv2d


def _output_shape(spec):
    n, _c, *spatial = spec["input"]
    out_c, _, *kernel = spec["weight"]
    dims = []
    for size, k, s, p, d in zip(spatial, kernel, spec["stride"], spec["padding"], spec["dilation"]):
        dims.append((size + 2 * p - d * (k - 1) - 1) // s + 1)
    return [n, out_c, *dims]


class Case:
    """Tensors and the operation of one scenario on one device.

    Inputs come from one generator in a fixed order (input, weight, then the output
    gradient), so a tensor drawn late never changes the ones drawn before it: the output
    gradient is drawn only when a backward direction needs it, and float64 copies only of
    the rows the reference uses. A half-precision scenario that this build cannot run
    fails before the expensive part."""

    def __init__(self, torch, spec, device, seed):
        self.torch, self.spec, self.device = torch, spec, device
        self.dtype = getattr(torch, spec["dtype"])
        self.conv = _functional(torch, spec["op"])
        self._gen = torch.Generator().manual_seed(seed)
        fan_in = math.prod(spec["weight"][1:])
        # Inputs are rounded to the scenario's dtype first, so the float64 reference sees
        # exactly what the device sees and only the computation's error is measured.
        self._x = torch.randn(spec["input"], generator=self._gen, dtype=getattr(torch, DRAW_DTYPE)).to(self.dtype)
        self._w = (torch.randn(spec["weight"], generator=self._gen, dtype=getattr(torch, DRAW_DTYPE))
                   / math.sqrt(fan_in)).to(self.dtype)
        self._g = None
        self.x, self.w = self._x.to(device), self._w.to(device)
        self.args = dict(stride=spec["stride"], padding=spec["padding"], dilation=spec["dilation"],
                         groups=spec["groups"])
        self._graph = None
        self._g_device = None
        self._operands = None  # float64 copies for the reference (_operands64)
        self._g_by_channel = None

    def _grad_output(self):
        if self._g is None:
            self._g = torch_randn_like_output(self.torch, self.spec, self._gen).to(self.dtype)
        return self._g

    def prepare(self):
        """Forward pass whose graph the backward directions reuse on every timed call."""
        direction = self.spec["direction"]
        if direction == "forward":
            return
        x = self.x.detach().requires_grad_(direction == "backward_data")
        w = self.w.detach().requires_grad_(direction == "backward_weight")
        y = self.conv(x, w, **self.args)
        self._graph = (y, x if direction == "backward_data" else w)
        self._g_device = self._grad_output().to(self.device)

    def run(self):
        if self.spec["direction"] == "forward":
            with self.torch.no_grad():
                return self.conv(self.x, self.w, **self.args)
        y, wrt = self._graph
        (grad,) = self.torch.autograd.grad(y, wrt, self._g_device, retain_graph=True)
        return grad

    def reference(self, ref_batch):
        """The float64 CPU reference, (values, rows): computed piece by piece
        (reference_plan), exactly as the reference helper and the child share the work."""
        shape, rows, pieces = reference_plan(self.spec, ref_batch)
        values = self.torch.empty(shape, dtype=self.torch.float64)
        for piece in pieces:
            where, part = self.reference_piece(piece, rows)
            values[where] = part
        return values, rows

    def reference_piece(self, piece, rows):
        """One piece of the reference over the first `rows` batch items: (where it goes in
        the whole, its values).

        Forward and backward-data rows depend only on their own batch item; a weight
        gradient's input channels (or its groups, or its output channels) only on their
        own slices of the weight, the input and the output gradient. Every value is the
        same sum, in the same order, as computing the whole at once. Backward directions
        call the convolution's backward directly (the kernel autograd would call, without
        the forward pass autograd needs first), weight gradients of kernels with more than
        one tap a forward convolution that gives them faster
        (_weight_gradient_as_convolution)."""
        axis, lo, hi = piece
        x, w, g = self._operands64(rows)
        groups, filters = self.spec["groups"], None  # filters: output channels of a one-group weight gradient
        if axis == "rows":
            x, g, where = x[lo:hi], None if g is None else g[lo:hi], (slice(lo, hi),)
        elif axis == "groups":
            inputs, outputs = x.shape[1] // groups, w.shape[0] // groups
            x, w, g = x[:, lo * inputs:hi * inputs], w[lo * outputs:hi * outputs], g[:, lo * outputs:hi * outputs]
            groups, where = hi - lo, (slice(lo * outputs, hi * outputs),)
        elif axis == "inputs":
            x, w, where, filters = x[:, lo:hi], w[:, lo:hi], (slice(None), slice(lo, hi)), slice(None)
        else:  # "outputs"
            w, g, where, filters = w[lo:hi], g[:, lo:hi], (slice(lo, hi),), slice(lo, hi)
        if filters is not None and math.prod(self.spec["weight"][2:]) > 1:
            return where, self._weight_gradient_as_convolution(x, self._grad_by_channel()[filters])
        return where, self._reference_of(x, w, g, groups)

    def _operands64(self, rows):
        """float64 copies of the input, weight and output-gradient rows the reference reads,
        made once (the pieces slice them)."""
        if self._operands is None:
            g = None if self.spec["direction"] == "forward" else self._grad_output()[:rows].double()
            self._operands = (self._x[:rows].double(), self._w.double(), g)
        return self._operands

    def _grad_by_channel(self):
        """The float64 output gradient with batch and channels swapped, contiguous, made once:
        the kernel of _weight_gradient_as_convolution."""
        if self._g_by_channel is None:
            self._g_by_channel = self._operands[2].transpose(0, 1).contiguous()
        return self._g_by_channel

    def _reference_of(self, x, w, g, groups):
        torch, direction = self.torch, self.spec["direction"]
        args = dict(self.args, groups=groups)
        if direction == "forward":
            with torch.no_grad():
                return self.conv(x, w, **args)
        backward = getattr(getattr(torch.ops, "aten", None), "convolution_backward", None)
        if backward is not None:
            rank = len(self.spec["stride"])
            mask = [direction == "backward_data", direction == "backward_weight", False]
            grads = backward(g, x, w, None, self.spec["stride"], self.spec["padding"], self.spec["dilation"],
                             False, [0] * rank, groups, mask)
            return grads[0] if direction == "backward_data" else grads[1]
        # PyTorch before 1.11 has no convolution_backward operator: autograd.
        x = x.requires_grad_(direction == "backward_data")
        w = w.requires_grad_(direction == "backward_weight")
        y = self.conv(x, w, **args)
        (grad,) = torch.autograd.grad(y, x if direction == "backward_data" else w, g)
        return grad

    def _weight_gradient_as_convolution(self, x, g_by_channel):
        """dW[o, c, k] = sum over n and output positions p of g[n, o, p] x[n, c, p*stride + k*dilation]:
        a forward convolution of the input with batch and channels swapped (each input
        channel an item) by the output gradient with batch and channels swapped (each output
        channel a filter over the batch), stride and dilation exchanged, cropped to the
        kernel's size. On the reference BLAS the CPU's float64 kernels run it in 0.5-0.75 of
        the backward operator's time (its GEMM takes BLAS's fast untransposed path); with a
        kernel of one tap it would be a matrix-vector product (4x slower), so 1x1 kernels
        keep the backward operator. Same sums, in another order: 1e-13 apart at most over
        the catalogue."""
        kernel = self.spec["weight"][2:]
        with self.torch.no_grad():
            grad = self.conv(x.transpose(0, 1), g_by_channel, stride=self.spec["dilation"],
                             padding=self.spec["padding"], dilation=self.spec["stride"])
        return grad[(Ellipsis, *(slice(0, k) for k in kernel))].transpose(0, 1)

    def synchronize(self):
        if self.device.startswith("cuda"):
            self.torch.cuda.synchronize()


def torch_randn_like_output(torch, spec, generator):
    return torch.randn(_output_shape(spec), generator=generator, dtype=getattr(torch, DRAW_DTYPE))


def normalised_error(torch, result, reference):
    result = result.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(result).all()):
        return math.inf
    scale = float(reference.abs().max()) if reference.numel() else 0.0
    diff = float((result - reference).abs().max()) if reference.numel() else 0.0
    return diff / scale if scale > 0 else diff


# --------------------------------------------------------------------------- reference helper

# Set to 1 to compute the float64 reference in the probe child itself, between the first call
# and the timed ones, as without a helper: one process, no core shared with the timed calls.
INLINE_REFERENCE_VARIABLE = "RMCP_PROBE_INLINE_REFERENCE"


def thread_count():
    """Threads of this process (a fork copies only the calling one)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading
        return threading.active_count()


# Most pieces a reference is cut into (reference_plan): enough for two processes to share the
# work (neither waits for more than a quarter of it), few enough that what each piece repeats
# stays small (over the catalogue's fp32 scenarios, 8 pieces cost about 0.4 s more than 4).
MAX_PIECES = 4


def reference_plan(spec, ref_batch):
    """(shape, rows, pieces) of the float64 reference: its shape, how many batch rows of a
    forward or backward-data result it checks (a weight gradient's: all), and the pieces it
    is computed in, as (axis, lo, hi): batch rows ("rows"), or for a weight gradient
    groups, else input channels, else output channels (these last repeat the im2col of the
    input in every piece, so only two)."""
    batch, direction = spec["input"][0], spec["direction"]
    if direction == "backward_weight":
        rows, shape = batch, list(spec["weight"])
        if spec["groups"] > 1:
            axis, units, most = "groups", spec["groups"], MAX_PIECES
        elif spec["weight"][1] > 1:
            axis, units, most = "inputs", spec["weight"][1], MAX_PIECES
        else:
            axis, units, most = "outputs", spec["weight"][0], 2
    else:
        rows = min(ref_batch, batch)
        shape = [rows, *(_output_shape(spec) if direction == "forward" else spec["input"])[1:]]
        axis, units, most = "rows", rows, MAX_PIECES
    count = max(1, min(units, most))
    bounds = [units * k // count for k in range(count + 1)]
    return shape, rows, [(axis, lo, hi) for lo, hi in zip(bounds, bounds[1:])]


# A helper costs a fork, a second process's page faults and its exit: 15-20 ms a scenario on
# the build VM (`--quick`, ten batch-1 scenarios, took 1.76 s with helpers and 1.56 s without).
# Below about 50 million multiply-adds (tens of ms of float64 on the reference BLAS) the
# reference is cheaper than sharing it.
HELPER_MIN_MULTIPLY_ADDS = 50_000_000


def reference_multiply_adds(spec, ref_batch):
    """Multiply-adds of the reference: a convolution over the batch rows it checks."""
    _shape, rows, _pieces = reference_plan(spec, ref_batch)
    out = _output_shape(spec)
    return rows * out[1] * math.prod(out[2:]) * spec["weight"][1] * math.prod(spec["weight"][2:])


# The least time collect() waits for a helper with an empty queue before it counts as stuck.
HELPER_WAIT_FLOOR_S = 5.0


def _wait_at_most(pid, seconds):
    """The child's wait status once it has exited, or None if it is still running after
    `seconds` (it is not reaped then)."""
    deadline = time.monotonic() + seconds
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else -1
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if pidfd >= 0:
                select.select([pidfd], [], [], left)  # readable when the child exits
            else:
                time.sleep(min(left, 0.005))
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _exit_code(wait_status):
    return os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else -1


class ReferenceProcess:
    """Shares the float64 reference with a process forked from this one, which starts on
    it while this one still times the operation.

    Computed in turn, the reference is about as much work as the timed calls (a float64
    convolution on the CPU's BLAS): on a GPU, time the GPU sits idle; on the CPU, a core
    left idle when torch runs fewer threads than there are cores. When the first call has
    run, `release(case)` puts the reference's pieces (reference_plan) in a queue (a pipe
    holding one byte per piece) that the helper drains while this process runs the timed
    calls and that `collect()` then drains too, so that the two finish together, both
    writing into a shared anonymous mapping. A scenario whose first call fails or is
    unsupported never pays for its reference.

    When it is forked: a copy of a process that has started a GPU runtime or an OpenMP
    pool inherits a runtime or a pool it cannot use. For a GPU device the helper is forked
    by `prepare`, before this process touches the device, and waits; it draws the same
    inputs from the same seed itself. On the CPU it is forked by `release`, after the first
    call, from this process and its already drawn inputs, if the process still runs one
    thread (otherwise there is no helper); so a CPU scenario that fails costs no fork. Both
    compute each piece with the same code (Case.reference_piece), so the values are those
    of Case.reference, bit for bit. The helper stays in this process's group (the
    orchestrator's kill of the group reaches it), dies with this process
    (PR_SET_PDEATHSIG), and writes nothing to stdout or stderr; if it fails, collect() says
    so and the caller computes the reference itself.

    `prepare` returns None, and the reference is computed here as before, where a helper
    cannot help or is not safe: the reference is small (HELPER_MIN_MULTIPLY_ADDS), this
    process already runs more than one thread, the scenario runs on the CPU with a thread
    for every core this process may use, torch has no frombuffer (before 1.10), or
    RMCP_PROBE_INLINE_REFERENCE=1."""

    def __init__(self, torch, spec, seed, ref_batch, threads):
        self._torch, self._spec, self._seed, self._threads = torch, spec, seed, threads
        self.shape, self.rows, self.pieces = reference_plan(spec, ref_batch)
        self.pid, self._queue_r, self._queue_w, self._mapping = 0, -1, -1, None
        self._released_at = 0.0

    @classmethod
    def prepare(cls, torch, spec, device, seed, ref_batch):
        if os.environ.get(INLINE_REFERENCE_VARIABLE, "") not in ("", "0"):
            return None
        if not hasattr(torch, "frombuffer") or thread_count() != 1:
            return None
        if reference_multiply_adds(spec, ref_batch) < HELPER_MIN_MULTIPLY_ADDS:
            return None
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        spare = cores - (torch.get_num_threads() if device == "cpu" else 0)
        if spare < 1:
            return None
        helper = cls(torch, spec, seed, ref_batch, spare)
        if device != "cpu":
            helper._fork(None)
        return helper

    def release(self, case):
        """The first call ran: the pieces go into the queue, and the helper starts on them.
        False when there is no helper after all (on the CPU: this process is no longer
        single-threaded) and the caller computes the reference itself."""
        if not self.pid:
            if thread_count() != 1:
                return False
            self._fork(case)
        self._released_at = time.monotonic()
        try:
            os.write(self._queue_w, bytes(range(len(self.pieces))))
        except OSError:
            pass  # the helper is gone and its end with it; collect() does the pieces here
        self._close_queue_w()
        return True

    def _fork(self, case):
        self._mapping = mmap.mmap(-1, math.prod(self.shape) * 8)
        self._queue_r, self._queue_w = os.pipe()
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._queue_w)
            make_case = (lambda: case) if case is not None else (
                lambda: Case(self._torch, self._spec, "cpu", self._seed))
            _reference_child(self._torch, make_case, self._spec["id"], parent, self._queue_r, self._mapping,
                             (self.shape, self.rows, self.pieces), self._threads)  # never returns

    def collect(self, case):
        """Takes pieces from the queue until it is empty, then waits for the helper:
        (reference, rows), or None if the helper failed."""
        shared = self._torch.frombuffer(self._mapping, dtype=self._torch.float64,
                                        count=math.prod(self.shape)).view(self.shape)
        for piece in _drain(self._queue_r, self.pieces):
            where, part = case.reference_piece(piece, self.rows)
            shared[where] = part
        # The queue is empty: the helper has at most the piece in its hands left. It has had
        # the time since release() for all of its pieces; one that needs four times that
        # again (at least HELPER_WAIT_FLOOR_S) is stuck, and must not turn the scenario into a
        # hang that the operation never had: it is killed, and the reference computed here.
        waited = time.monotonic() - self._released_at
        status = _wait_at_most(self.pid, max(HELPER_WAIT_FLOOR_S, 4 * waited))
        if status is None:
            self.cancel()
            return None
        self.pid = 0
        values = shared.clone() if _exit_code(status) == 0 else None
        del shared
        return None if values is None else (values, self.rows)

    def cancel(self):
        """Ends the helper if it still runs, and frees the queue and the mapping (idempotent)."""
        self._close_queue_w()
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = 0
        if self._queue_r >= 0:
            os.close(self._queue_r)
            self._queue_r = -1
        if self._mapping is not None:
            try:
                self._mapping.close()
            except BufferError:
                pass  # a tensor still views it; it goes with this process
            self._mapping = None

    def _close_queue_w(self):
        if self._queue_w >= 0:
            os.close(self._queue_w)
            self._queue_w = -1


def _drain(queue, pieces):
    """The pieces whose bytes this process takes from the queue, until it is empty and closed."""
    while True:
        token = os.read(queue, 1)
        if not token:
            return
        yield pieces[token[0]]


def _die_with(parent):
    """PR_SET_PDEATHSIG(SIGKILL), then make sure the parent did not die before it was set."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def _reference_child(torch, make_case, spec_id, parent, queue, mapping, plan, threads):
    code = 1
    try:
        _die_with(parent)
        quiet = os.open(os.devnull, os.O_RDWR)
        os.dup2(quiet, 1)  # the orchestrator reads this group's stdout and stderr as the scenario's
        os.dup2(quiet, 2)
        os.close(quiet)
        shape, rows, pieces = plan
        pending = _drain(queue, pieces)
        first = next(pending, None)  # blocks until release(); none if the first call failed
        if first is not None and helper_fault(os.environ.get("RMCP_PROBE_INJECT", ""), spec_id) == "hang-reference":
            while True:  # TEST ONLY: a helper that never finishes
                time.sleep(3600)
        if first is not None:
            torch.set_num_threads(threads)
            case = make_case()
            shared = torch.frombuffer(mapping, dtype=torch.float64, count=math.prod(shape)).view(shape)
            for piece in (first, *pending):
                where, part = case.reference_piece(piece, rows)
                shared[where] = part
        code = 0
    except BaseException:  # noqa: B036 - any failure means "compute it yourself"
        code = 1
    finally:
        os._exit(code)


def device_facts(torch, device):
    facts = {"torch_version": torch.__version__, "hip_version": getattr(torch.version, "hip", None),
             "cuda_version": getattr(torch.version, "cuda", None), "device_name": "cpu", "gfx_target": ""}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        facts["device_name"] = props.name
        # ROCm builds report the (possibly overridden) target, e.g. "gfx1030:sramecc-:xnack-".
        facts["gfx_target"] = getattr(props, "gcnArchName", "").split(":")[0]
    return facts


def run_scenario(spec, device="cpu", repeat=5, warmup=2, seed=0, ref_batch=8, inject=None):
    """Runs one scenario; returns the report dict (what the worker prints)."""
    spec = validate(dict(spec))
    report = {"schema_version": SCHEMA_VERSION, "scenario": spec["id"], "device": device,
              "dtype": spec["dtype"], "direction": spec["direction"]}
    try:
        import torch
    except ImportError as exc:
        report.update(status="no_torch", message=f"import torch failed: {exc}")
        return report
    # For a GPU, forked here: before this process touches the device (ReferenceProcess).
    helper = ReferenceProcess.prepare(torch, spec, device, seed, ref_batch)
    try:
        return _run_case(torch, spec, device, repeat, warmup, seed, ref_batch, inject, report, helper)
    finally:
        if helper is not None:
            helper.cancel()


def _run_case(torch, spec, device, repeat, warmup, seed, ref_batch, inject, report, helper):
    report.update(device_facts(torch, device) if not device.startswith("cuda") or torch.cuda.is_available()
                  else {"torch_version": torch.__version__})
    if device.startswith("cuda") and not torch.cuda.is_available():
        report.update(status="no_device", message="torch.cuda.is_available() is False")
        return report
    if os.environ.get("RMCP_DISABLE_MIOPEN", "") not in ("", "0"):
        torch.backends.cudnn.enabled = False  # the "MIOpen off" switch (docs/probe.md)
    report["miopen_enabled"] = bool(torch.backends.cudnn.enabled)
    injector = _Injector(os.environ.get("RMCP_PROBE_INJECT", "") if inject is None else inject, spec["id"])

    try:
        case = Case(torch, spec, device, seed)
        case.prepare()
        result = case.run()
        case.synchronize()
        injector.before_result()
        result = injector.corrupt(result)
    except RuntimeError as exc:
        text = str(exc)
        if any(marker in text for marker in UNSUPPORTED_MARKERS):
            report.update(status="unsupported", message=f"unsupported on this device: {text.splitlines()[0]}")
        else:
            report.update(status="error", message=text.strip()[:2000])
        return report

    if helper is not None and helper.release(case):
        # The helper starts on the reference while this process times the operation, and
        # this one takes its share after; a wrong result is still reported as wrong (its
        # times are dropped).
        times = _timed_calls(case, repeat, warmup)
        reference = helper.collect(case)
        report["reference_helper"] = reference is not None
        if reference is None:  # the helper failed: compute it here, as without one
            reference = case.reference(ref_batch)
        if not _check(torch, spec, report, result, *reference):
            return report
    else:
        report["reference_helper"] = False
        if not _check(torch, spec, report, result, *case.reference(ref_batch)):
            return report
        times = _timed_calls(case, repeat, warmup)
    report.update(status="ok", median_ms=statistics.median(times), min_ms=min(times),
                  times_ms=[round(t, 4) for t in times])
    return report


def _check(torch, spec, report, result, reference, rows):
    """Compares the first call's result with the float64 reference; False (and status
    "wrong" in report) when it is off by more than the dtype's tolerance."""
    tolerance = TOLERANCES[spec["dtype"]]
    checked = result if spec["direction"] == "backward_weight" else result[:rows]
    error = normalised_error(torch, checked, reference)
    report.update(error=error if math.isfinite(error) else "inf", tolerance=tolerance, reference_rows=rows)
    if not error <= tolerance:
        report.update(status="wrong",
                      message=f"result differs from the float64 reference: error {error:.3g} > {tolerance:g}")
        return False
    return True


def _timed_calls(case, repeat, warmup):
    """Milliseconds of each of `repeat` calls after `warmup` untimed ones, each call between
    device synchronisations."""
    for _ in range(warmup):
        case.run()
    times = []
    for _ in range(max(1, repeat)):
        case.synchronize()
        start = time.perf_counter()
        case.run()
        case.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return times


EXIT_FOR_STATUS = {"ok": 0, "unsupported": 0, "wrong": 1, "error": 1, "no_torch": 3, "no_device": 3}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        # The fork server (python/rmcp/zygote.py): `--serve --control-fd FD`.
        serve = argparse.ArgumentParser(prog="python -m rmcp.worker --serve")
        serve.add_argument("--serve", action="store_true")
        serve.add_argument("--control-fd", type=int, required=True)
        args = serve.parse_args(argv)
        from rmcp import zygote
        return zygote.main(args.control_fd)
    parser = argparse.ArgumentParser(prog="python -m rmcp.worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", help="scenario id from the catalogue, or a JSON scenario object")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (ROCm builds call the GPU cuda too)")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls; the median is reported")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls before timing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ref-batch", type=int, default=8,
                        help="batch items checked for forward and backward-data (weights: all)")
    parser.add_argument("--catalogue", default=None, help="catalogue TOML for scenario ids")
    args = parser.parse_args(argv)
    if not (args.device == "cpu" or args.device.startswith("cuda")):
        parser.error(f"--device must be cpu or cuda, not {args.device!r}")
    try:
        text = args.scenario.strip()
        if text.startswith("{"):
            spec = json.loads(text)
        else:
            spec = load_scenario_from_catalogue(text, args.catalogue or default_catalogue())
        report = run_scenario(spec, args.device, args.repeat, args.warmup, args.seed, args.ref_batch)
    except (UsageError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        print(f"rmcp.worker: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, sort_keys=True), flush=True)
    return EXIT_FOR_STATUS.get(report["status"], 1)


if __name__ == "__main__":
    sys.exit(main())
