"""rmcp.torch without its C++ operator: the pure-Python fallback and how the backend is chosen.

The fallback (python/rmcp/torch/_fallback.py) must give what torch.nn.functional gives,
forward and backward, on the same cases as the operator's own tests; the choice of backend
must fall back when no compiler is there, say why in stats(), and use only a library built
for the running torch (python/rmcp/torch/_build.py).
"""
from torch_support import INSTALLED, REPO_PYTHON, assert_close  # first: it puts the checkout's python/ on sys.path
import os
import subprocess
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import profile

import rmcp.torch as rt
from rmcp.torch import _build, _fallback
from test_torch_conv_op import GRADCHECK_CASES, HAND_CASES, catalogue_cases, run_case


@pytest.fixture(autouse=True)
def python_backend(monkeypatch):
    """Every test here runs with the fallback chosen afresh, and leaves no choice behind."""
    monkeypatch.setenv(rt.BACKEND_VARIABLE, "python")
    monkeypatch.setattr(rt, "_backend", None)
    yield
    rt.disable()


@pytest.mark.parametrize("case", HAND_CASES + catalogue_cases(), ids=lambda c: "x".join(map(str, c[0])))
def test_matches_native_float32(case):
    run_case(*case, dtype=torch.float32)
    assert rt.backend()[0] == "python"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", [HAND_CASES[i] for i in (0, 2, 4, 7, 14, 16)])
def test_matches_native_reduced_precision(case, dtype):
    run_case(*case, dtype=dtype)


@pytest.mark.parametrize("case", [c for c in HAND_CASES if len(c[0]) == 4][:4])
def test_channels_last_input(case):
    run_case(*case, dtype=torch.float32, channels_last=True)


@pytest.mark.parametrize("case", GRADCHECK_CASES)
def test_gradcheck_float64(case):
    input_shape, weight_shape, stride, padding, dilation, groups, bias = case
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(input_shape, generator=generator, dtype=torch.float64, requires_grad=True)
    w = torch.randn(weight_shape, generator=generator, dtype=torch.float64, requires_grad=True)
    b = torch.randn(weight_shape[0], generator=generator, dtype=torch.float64, requires_grad=True) if bias else None
    inputs = (x, w, b) if bias else (x, w)
    assert torch.autograd.gradcheck(lambda x, w, b=None: rt.conv(x, w, b, stride, padding, dilation, groups), inputs)


def test_autocast_like_native():
    results = []
    for conv in (F.conv2d, rt.conv):
        torch.manual_seed(3)
        x = torch.randn(2, 4, 9, 9, requires_grad=True)
        w = torch.randn(6, 2, 3, 3, requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = conv(x, w, None, 1, 1, 1, 2)
        out.float().square().sum().backward()
        results.append((out, x.grad, w.grad))
    (native, *native_grads), (ours, *our_grads) = results
    assert ours.dtype == native.dtype == torch.bfloat16
    assert_close(ours, native, torch.bfloat16, "output")
    for a, b in zip(our_grads, native_grads):
        assert a.dtype == b.dtype == torch.float32
        assert_close(a, b, torch.bfloat16, "grad", factor=4.0)


def test_rejects_what_the_operator_rejects():
    with pytest.raises(RuntimeError, match="do not fit"):
        _fallback.conv(torch.randn(1, 4, 5, 5), torch.randn(2, 3, 3, 3), None, [1], [0], [1], 1)
    with pytest.raises(RuntimeError, match="strided"):
        _fallback.conv_padding_mode(torch.randn(1, 3, 5, 5), torch.randn(2, 3, 3, 3), None, [2], "same", [1], 1)
    with pytest.raises(RuntimeError, match="smaller than the dilated kernel"):
        _fallback.conv(torch.randn(1, 2, 8), torch.randn(2, 2, 5), None, [2], [0], [2], 1)
    with pytest.raises(RuntimeError, match="'same', 'valid' or integers"):
        _fallback.conv_padding_mode(torch.randn(1, 3, 5, 5), torch.randn(2, 3, 3, 3), None, [1], "full", [1], 1)


def test_no_native_convolution_is_called():
    x = torch.randn(2, 4, 9, 9, requires_grad=True)
    w = torch.randn(6, 2, 3, 3, requires_grad=True)
    with profile() as prof:
        rt.conv(x, w, None, 1, 1, 1, 2).square().sum().backward()
    names = {event.name for event in prof.events()}
    assert "aten::im2col" in names and "aten::col2im" in names, sorted(names)
    assert not any("convolution" in name or "conv2d" in name for name in names), sorted(names)


def test_forward_workspace_bound_chunks_the_batch():
    x, w = torch.randn(32, 4, 16, 16), torch.randn(8, 4, 3, 3)
    with torch.no_grad(), profile() as prof:
        out = rt.conv(x, w, None, 1, 1, workspace_mb=1)
    # 36 columns x 256 positions x 4 bytes, counted twice, per sample: 13 samples per MiB.
    assert sum(1 for e in prof.events() if e.name == "aten::im2col") == -(-32 // 13)
    assert_close(out, F.conv2d(x, w, None, 1, 1), torch.float32)


def test_stats_name_the_backend():
    rt.enable(profile=None, policy="always")
    rt.conv(torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3))
    stats = rt.stats()
    assert stats["backend"] == "python"
    assert rt.BACKEND_VARIABLE in stats["backend_detail"]


def test_unknown_backend_is_refused(monkeypatch):
    monkeypatch.setenv(rt.BACKEND_VARIABLE, "fast")
    with pytest.raises(ValueError, match="RMCP_TORCH_BACKEND"):
        rt.backend()


# --- choosing the library ---------------------------------------------------------------

def _without_compiler(tmp_path, **extra):
    """An environment with no C++ compiler on PATH, an empty cache and no prebuilt operator."""
    env = {k: v for k, v in os.environ.items() if k not in ("CXX", "RMCP_TORCH_OPS", rt.BACKEND_VARIABLE)}
    env.update(PATH=str(tmp_path / "empty-path"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               RMCP_BUILD_DIR=str(tmp_path / "no-build"), **extra)
    if not INSTALLED:  # else the interpreter's own (installed) rmcp
        env["PYTHONPATH"] = str(REPO_PYTHON)
    return env


def test_no_compiler_falls_back_with_a_warning(tmp_path):
    script = (
        "import warnings, torch, rmcp.torch as rt\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    rt.enable(profile=None, policy='always')\n"
        "x, w = torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3)\n"
        "assert (torch.nn.functional.conv2d(x, w, None, 1, 1) - rt.conv(x, w, None, 1, 1)).abs().max() < 1e-4\n"
        "print(rt.stats()['backend'])\n"
        "print(rt.stats()['backend_detail'])\n"
        "print([str(w.message) for w in caught])\n")
    proc = subprocess.run([sys.executable, "-c", script], env=_without_compiler(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    backend, detail, warned = proc.stdout.splitlines()
    assert backend == "python"
    assert "no C++ compiler found" in detail and "apt install g++" in detail
    assert "pure-Python im2col+GEMM fallback" in warned
    assert not (tmp_path / "cache" / "rmcp" / "torch-ops").exists() or not any(
        (tmp_path / "cache" / "rmcp" / "torch-ops").rglob("*.so"))


def test_compiled_backend_demanded_without_compiler_is_an_error(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import rmcp.torch as rt; rt.enable(profile=None, policy='always')"],
                          env=_without_compiler(tmp_path, RMCP_TORCH_BACKEND="compiled"), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "rmcp: error: building torch.ops.rmcp.conv: no C++ compiler found" in proc.stderr


def test_missing_headers_are_named(tmp_path):
    fake = types.SimpleNamespace(__file__=str(tmp_path / "torch" / "__init__.py"), __version__="9.9.9")
    with pytest.raises(_build.ExtensionUnavailable, match=r"C\+\+ headers are missing .*ATen\.h"):
        _build._torch_paths(fake)


def test_prebuilt_library_needs_the_running_torchs_stamp(tmp_path, monkeypatch):
    build = tmp_path / "build"
    (build / "python").mkdir(parents=True)
    library = build / "python" / _build.OPS_LIBRARY_NAME
    library.write_bytes(b"not loaded here")
    monkeypatch.setenv("RMCP_BUILD_DIR", str(build))
    monkeypatch.delenv("RMCP_TORCH_OPS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (build / "python" / _build.STAMP_NAME).write_text("0.0.1-another-torch\n")
    with pytest.raises(_build.ExtensionUnavailable, match="no operator built for PyTorch"):
        _build.find_library(torch, compile_missing=False)
    (build / "python" / _build.STAMP_NAME).write_text(f"{torch.__version__}\n")
    assert _build.find_library(torch, compile_missing=False) == library


def test_cached_library_is_rebuilt_when_the_source_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("RMCP_BUILD_DIR", str(tmp_path / "no-build"))
    monkeypatch.delenv("RMCP_TORCH_OPS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cached = _build.cache_dir(torch.__version__) / _build.OPS_LIBRARY_NAME
    assert cached == tmp_path / "cache" / "rmcp" / "torch-ops" / str(torch.__version__) / "librmcp_torch_ops.so"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"an older build")
    (cached.parent / _build.SOURCE_STAMP_NAME).write_text("0" * 64 + "\n")
    with pytest.raises(_build.ExtensionUnavailable):  # stale: would be compiled again
        _build.find_library(torch, compile_missing=False)
    (cached.parent / _build.SOURCE_STAMP_NAME).write_text(_build._source_digest() + "\n")
    assert _build.find_library(torch, compile_missing=False) == cached
