"""torch.ops.rmcp.conv against torch.nn.functional.conv1d/conv2d.

Forward and backward over a matrix of shapes (the probe catalogue's scenarios scaled down,
odd sizes, groups, depthwise, dilation, padding modes, strides, bias or not, channels-last),
within dtype tolerances; gradcheck in float64; the workspace bound (chunks counted with the
profiler, and the size of each chunk's im2col allocation checked against the bound).
"""
from torch_support import assert_close, count_events, load_ops  # first: it puts the checkout's python/ on sys.path
import pathlib
import tomllib

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import profile

import rmcp.torch as rt

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def ops():
    return load_ops()


# (input shape, weight shape, stride, padding, dilation, groups, bias)
HAND_CASES = [
    ((2, 3, 7, 9), (4, 3, 3, 3), 1, 1, 1, 1, True),
    ((3, 5, 11, 6), (7, 5, 2, 3), (2, 1), (0, 1), (1, 2), 1, False),
    ((2, 6, 8, 8), (9, 2, 3, 3), 1, 1, 1, 3, True),
    ((2, 6, 9, 7), (6, 1, 3, 3), 1, 1, 1, 6, True),  # depthwise
    ((2, 4, 9, 7), (8, 1, 3, 5), 2, (1, 2), (2, 1), 4, False),  # depthwise, multiplier 2
    ((2, 8, 9, 9), (5, 8, 1, 1), 2, 0, 1, 1, True),
    ((1, 3, 15, 13), (4, 3, 3, 3), 1, 3, 3, 1, True),
    ((2, 3, 8, 8), (4, 3, 4, 4), 1, "same", 1, 1, True),  # even kernel: asymmetric padding
    ((2, 4, 9, 9), (4, 2, 3, 3), 1, "same", 2, 2, False),
    ((2, 3, 8, 8), (4, 3, 3, 3), 2, "valid", 1, 1, True),
    ((2, 3, 10, 10), (4, 3, 2, 2), 3, 0, 1, 1, True),  # stride > kernel
    ((2, 8, 19, 50), (16, 1, 19, 1), 1, 0, 1, 8, True),  # EEG spatial (19, 1)
    ((2, 1, 19, 60), (8, 1, 1, 9), 1, (0, 4), 1, 1, True),  # EEG temporal (1, k)
    ((1, 2, 1, 1), (3, 2, 1, 1), 1, 0, 1, 1, True),  # 1x1 image
    ((2, 19, 100), (8, 19, 7), 1, 3, 1, 1, True),  # conv1d
    ((3, 4, 37), (6, 4, 4), 2, 0, 3, 1, False),
    ((2, 6, 31), (6, 1, 5), 1, "same", 2, 6, True),  # depthwise conv1d
    ((2, 4, 20), (4, 2, 3), 1, "valid", 1, 2, True),
    ((2, 4, 21), (4, 4, 2), 1, "same", 1, 1, True),
]


def _scaled(sizes, limit, factor):
    return [s // factor if s > limit else s for s in sizes]


def catalogue_cases():
    """Every probe scenario family (probe/catalogue.toml), scaled down to test size."""
    path = REPO / "probe" / "catalogue.toml"
    if not path.exists():
        return []
    cases = []
    for family in tomllib.loads(path.read_text())["family"]:
        rank = 1 if family["op"] == "conv1d" else 2
        channels, *spatial = family["input"]
        out_channels, in_per_group, *kernel = family["weight"]
        groups = family.get("groups", 1)
        if channels > 19:  # channels / 4, keeping the grouping
            channels, out_channels = channels // 4, max(1, out_channels // 4)
            groups = max(1, groups // 4) if groups > 1 else 1
            in_per_group = channels // groups
        spatial = [max(s // 8, k) if s >= 64 else s for s, k in zip(spatial, kernel)]
        cases.append(pytest.param(
            ((2, channels, *spatial), (out_channels, in_per_group, *kernel),
             family.get("stride", [1] * rank), family.get("padding", [0] * rank),
             family.get("dilation", [1] * rank), groups, True), id=family["name"]))
    return cases


def _reference_grads(fn, inputs, grad_out):
    out = fn(*inputs)
    grads = torch.autograd.grad(out, [t for t in inputs if t is not None and t.requires_grad], grad_out)
    return out, grads


def _functional(weight):
    return F.conv1d if weight.dim() == 3 else F.conv2d


def run_case(input_shape, weight_shape, stride, padding, dilation, groups, bias, dtype,
             channels_last=False, workspace_mb=None):
    generator = torch.Generator().manual_seed(hash((input_shape, weight_shape)) % 2**31)
    x64 = torch.randn(input_shape, generator=generator, dtype=torch.float64)
    w64 = torch.randn(weight_shape, generator=generator, dtype=torch.float64)
    b64 = torch.randn(weight_shape[0], generator=generator, dtype=torch.float64) if bias else None

    def leaf(t, dt):
        if t is None:
            return None
        t = t.to(dt)
        if channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        return t.requires_grad_()

    # The reference: native convolution in float32 for float32, else float64 on the same
    # (rounded) values, since PyTorch 1.13 has no float16 CPU convolution.
    ref_dtype = torch.float32 if dtype == torch.float32 else torch.float64
    rounded = [t.to(dtype).to(torch.float64) if t is not None else None for t in (x64, w64, b64)]
    ref_inputs = [leaf(t, ref_dtype) for t in rounded]
    our_inputs = [leaf(t, dtype) for t in (x64, w64, b64)]
    functional = _functional(w64)

    ref_out = functional(ref_inputs[0], ref_inputs[1], ref_inputs[2], stride, padding, dilation, groups)
    grad_out = torch.randn(ref_out.shape, generator=generator, dtype=torch.float64)
    ref_out, ref_grads = _reference_grads(
        lambda x, w, b: functional(x, w, b, stride, padding, dilation, groups), ref_inputs, grad_out.to(ref_dtype))
    our_out, our_grads = _reference_grads(
        lambda x, w, b: rt.conv(x, w, b, stride, padding, dilation, groups, workspace_mb=workspace_mb),
        our_inputs, grad_out.to(dtype))

    assert our_out.dtype == dtype
    if channels_last and x64.dim() == 4:
        assert our_out.is_contiguous(memory_format=torch.channels_last)
    assert_close(our_out, ref_out, dtype, "output")
    for name, ours, ref in zip(("grad_input", "grad_weight", "grad_bias"), our_grads, ref_grads):
        # Gradients sum over batch and space: allow a few more roundings in low precision.
        assert_close(ours, ref, dtype, name, factor=1.0 if dtype == torch.float32 else 4.0)


@pytest.mark.parametrize("case", HAND_CASES + catalogue_cases(),
                         ids=lambda c: "x".join(map(str, c[0])))
def test_matches_native_float32(case):
    run_case(*case, dtype=torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", [HAND_CASES[i] for i in (0, 2, 4, 7, 11, 14, 16)])
def test_matches_native_reduced_precision(case, dtype):
    run_case(*case, dtype=dtype)


@pytest.mark.parametrize("case", [c for c in HAND_CASES if len(c[0]) == 4][:9])
def test_channels_last_input(case):
    run_case(*case, dtype=torch.float32, channels_last=True)


GRADCHECK_CASES = [
    ((2, 4, 6, 5), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2, True),
    ((2, 4, 6, 6), (4, 1, 3, 3), 1, "same", 2, 4, True),  # depthwise
    ((1, 3, 5, 5), (2, 3, 2, 2), 1, "same", 1, 1, False),  # asymmetric padding
    ((2, 3, 11), (4, 3, 3), 2, 2, 2, 1, True),  # conv1d
    ((2, 4, 9), (8, 1, 4), 1, "same", 1, 4, False),  # depthwise conv1d, multiplier 2
]


@pytest.mark.parametrize("case", GRADCHECK_CASES)
def test_gradcheck_float64(case):
    input_shape, weight_shape, stride, padding, dilation, groups, bias = case
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(input_shape, generator=generator, dtype=torch.float64, requires_grad=True)
    w = torch.randn(weight_shape, generator=generator, dtype=torch.float64, requires_grad=True)
    b = torch.randn(weight_shape[0], generator=generator, dtype=torch.float64, requires_grad=True) if bias else None
    inputs = (x, w, b) if bias else (x, w)
    assert torch.autograd.gradcheck(
        lambda x, w, b=None: rt.conv(x, w, b, stride, padding, dilation, groups), inputs)


@pytest.mark.parametrize("groups, weight_shape", [(1, (6, 4, 3, 3)), (4, (4, 1, 3, 3))], ids=["gemm", "depthwise"])
def test_autocast_like_native(groups, weight_shape):
    """Under torch.autocast both run in the autocast dtype (bfloat16 on the CPU), forward and backward."""
    results = []
    for conv in (F.conv2d, rt.conv):
        torch.manual_seed(3)
        x = torch.randn(2, 4, 9, 9, requires_grad=True)
        w = torch.randn(weight_shape, requires_grad=True)
        b = torch.randn(weight_shape[0], requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = conv(x, w, b, 1, 1, 1, groups)
        out.float().square().sum().backward()
        results.append((out, x.grad, w.grad, b.grad))
    (native, *native_grads), (ours, *our_grads) = results
    assert ours.dtype == native.dtype == torch.bfloat16
    assert_close(ours, native, torch.bfloat16, "output")
    for name, a, b in zip(("input", "weight", "bias"), our_grads, native_grads):
        assert a.dtype == b.dtype == torch.float32
        assert_close(a, b, torch.bfloat16, f"grad {name}", factor=4.0)


def test_unbatched_input_like_torch():
    x, w = torch.randn(3, 9, 8), torch.randn(4, 3, 3, 3)
    assert_close(rt.conv(x, w, None, 1, 1), F.conv2d(x, w, None, 1, 1), torch.float32)


def test_rejects_what_torch_rejects():
    with pytest.raises(RuntimeError, match="do not fit"):
        torch.ops.rmcp.conv(torch.randn(1, 4, 5, 5), torch.randn(2, 3, 3, 3), None, [1], [0], [1], 1)
    with pytest.raises(RuntimeError, match="strided"):
        torch.ops.rmcp.conv.padding(torch.randn(1, 3, 5, 5), torch.randn(2, 3, 3, 3), None, [2], "same", [1], 1)
    with pytest.raises(RuntimeError, match="smaller than the dilated kernel"):
        torch.ops.rmcp.conv(torch.randn(1, 3, 2, 2), torch.randn(2, 3, 3, 3), None, [1], [0], [1], 1)
    with pytest.raises(RuntimeError, match="smaller than the dilated kernel"):  # 8 < 9, stride 2
        torch.ops.rmcp.conv(torch.randn(1, 2, 8), torch.randn(2, 2, 5), None, [2], [0], [2], 1)


def test_no_native_convolution_is_called():
    """The operator never reaches aten::convolution (where MIOpen/cuDNN live), forward or backward."""
    x = torch.randn(2, 4, 9, 9, requires_grad=True)
    for w, groups in ((torch.randn(6, 2, 3, 3, requires_grad=True), 2), (torch.randn(4, 1, 3, 3, requires_grad=True), 4)):
        with profile() as prof:
            rt.conv(x, w, None, 1, 1, 1, groups).square().sum().backward()
        names = {event.name for event in prof.events()}
        assert "rmcp::conv" in names
        assert not any("convolution" in name or "conv2d" in name for name in names), sorted(names)


# --- the workspace bound ----------------------------------------------------------------

def _columns_profile(x, w, workspace_mb, backward=False):
    with profile(profile_memory=True) as prof:
        out = torch.ops.rmcp.conv(x, w, None, [1], [1], [1], 1, workspace_mb)
        if backward:
            out.square().sum().backward()
    events = [e for e in prof.events() if e.name == "rmcp::columns"]
    return out, events


def test_workspace_bound_chunks_the_batch():
    # 1 MiB bound, about 90 KiB of workspace per sample: several samples per chunk.
    x, w = torch.randn(32, 4, 16, 16), torch.randn(8, 4, 3, 3)
    out, events = _columns_profile(x, w, 1)
    per_sample = (3 * 4 * 9 + 8) * 16 * 16 * 4 + 8 * 4 * 9 * 4
    samples_per_chunk = (1 << 20) // per_sample
    assert len(events) == -(-32 // samples_per_chunk)
    assert all(0 < e.cpu_memory_usage <= 1 << 20 for e in events)
    assert_close(out, F.conv2d(x, w, None, 1, 1), torch.float32)


def test_workspace_bound_splits_rows_of_a_large_sample():
    # One sample needs ~5.7 MiB of workspace against a 1 MiB bound: bands of output rows.
    x, w = torch.randn(2, 16, 40, 40, dtype=torch.float64, requires_grad=True), torch.randn(
        12, 16, 3, 3, dtype=torch.float64, requires_grad=True)
    out, events = _columns_profile(x, w, 1, backward=True)
    assert len(events) > 2 * 2 * 4  # forward and backward, several bands per sample
    assert all(0 < e.cpu_memory_usage <= 1 << 20 for e in events)
    chunked_grads = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    reference = F.conv2d(x, w, None, 1, 1)
    reference.square().sum().backward()
    assert_close(out, reference, torch.float64, "output")
    assert_close(chunked_grads[0], x.grad, torch.float64, "grad_input")
    assert_close(chunked_grads[1], w.grad, torch.float64, "grad_weight")


@pytest.mark.parametrize("input_shape, weight_shape, stride, padding, dilation, groups", [
    ((2, 16, 8000), (8, 8, 7), 2, 5, 3, 2),            # conv1d: bands along the time axis
    ((1, 8, 121, 45), (6, 4, 3, 5), (3, 2), (2, 1), (2, 3), 2),  # strided, dilated, grouped rows
], ids=["conv1d-long", "conv2d-strided"])
def test_banded_chunks_match_native(input_shape, weight_shape, stride, padding, dilation, groups):
    generator = torch.Generator().manual_seed(11)
    x = torch.randn(input_shape, generator=generator, dtype=torch.float64, requires_grad=True)
    w = torch.randn(weight_shape, generator=generator, dtype=torch.float64, requires_grad=True)
    functional = F.conv1d if len(input_shape) == 3 else F.conv2d
    reference = functional(x, w, None, stride, padding, dilation, groups)
    grad_out = torch.randn(reference.shape, generator=generator, dtype=torch.float64)
    ref_grads = torch.autograd.grad(reference, (x, w), grad_out)
    with profile(profile_memory=True) as prof:
        ours = rt.conv(x, w, None, stride, padding, dilation, groups, workspace_mb=1)
        our_grads = torch.autograd.grad(ours, (x, w), grad_out)
    chunks = [e for e in prof.events() if e.name == "rmcp::columns"]
    assert len(chunks) >= 6 and all(0 < e.cpu_memory_usage <= 1 << 20 for e in chunks)  # >= 3 bands, both passes
    assert_close(ours, reference, torch.float64, "output")
    assert_close(our_grads[0], ref_grads[0], torch.float64, "grad_input")
    assert_close(our_grads[1], ref_grads[1], torch.float64, "grad_weight")


def test_workspace_default_and_environment(monkeypatch):
    x, w = torch.randn(8, 16, 40, 40), torch.randn(12, 16, 3, 3)
    monkeypatch.delenv("RMCP_CONV_WORKSPACE_MB", raising=False)
    _, default_events = _columns_profile(x, w, -1)
    assert len(default_events) == 1  # ~23 MiB fits the 256 MiB default in one chunk
    monkeypatch.setenv("RMCP_CONV_WORKSPACE_MB", "2")
    _, env_events = _columns_profile(x, w, -1)
    assert len(env_events) > 1
    assert all(e.cpu_memory_usage <= 2 << 20 for e in env_events)
    _, explicit_events = _columns_profile(x, w, 64)  # the argument wins over the environment
    assert len(explicit_events) == 1


def test_depthwise_path_materialises_no_im2col():
    x, w = torch.randn(2, 64, 32, 32, requires_grad=True), torch.randn(64, 1, 5, 5, requires_grad=True)
    with profile(profile_memory=True) as prof:
        out = rt.conv(x, w, None, 1, 2, 1, 64)
        out.sum().backward()
    assert count_events(prof, "rmcp::columns") == 0
    # An event's self_cpu_memory_usage is the sum of what that op allocated and did not free
    # inside a child op. For the depthwise backward node that sum varies from run to run
    # (0.7 to 8.4 MB measured here: per-thread partial buffers of the weight gradient and
    # frees the profiler attributes elsewhere), so a quarter of the im2col was a flaky bound.
    # The im2col it must not build is one buffer of 25 values per output element (13.1 MB);
    # every op here must stay below it.
    largest = max(e.self_cpu_memory_usage for e in prof.events())
    im2col_bytes = 2 * 64 * 25 * 32 * 32 * 4
    assert largest < im2col_bytes
    assert_close(out, F.conv2d(x, w, None, 1, 2, 1, 64), torch.float32)

