"""torch.ops.rmcp.conv without the C++ operator: the same im2col + GEMM maths in Python.

Used when the operator cannot be built for the running torch (no C++ compiler, no headers:
docs/torch.md). The columns come from F.unfold (ATen's im2col) after explicit zero padding,
the product is a batched matmul per group, and autograd differentiates all of it (unfold's
backward is col2im), so no convolution kernel (MIOpen, cuDNN) is reached in either pass.
Correct, and slower than the C++ operator; its workspace bound holds for the forward pass
(the batch is processed in chunks) but not in training, where autograd keeps each chunk's
columns for the backward pass. Arguments and errors follow csrc/conv.cpp.
"""
import torch
import torch.nn.functional as F

_DEFAULT_WORKSPACE_MB = 256


def _workspace_bytes(workspace_mb):
    import os
    if workspace_mb is None or workspace_mb <= 0:
        workspace_mb = _DEFAULT_WORKSPACE_MB
        try:
            value = int(os.environ.get("RMCP_CONV_WORKSPACE_MB", ""))
            if value > 0:
                workspace_mb = value
        except ValueError:
            pass
    return int(workspace_mb) * 1024 * 1024


def _per_dim(values, dims, what):
    values = [int(values)] if isinstance(values, int) else [int(v) for v in values]
    if len(values) not in (1, dims):
        raise RuntimeError(f"rmcp::conv: {what} needs 1 or {dims} values, got {values}")
    return values * dims if len(values) == 1 else values


def _check(input, weight, groups):
    dims = input.dim() - 2
    if dims not in (1, 2):
        raise RuntimeError(f"rmcp::conv: expected a 3-D (N,C,L) or 4-D (N,C,H,W) input, got {list(input.shape)}")
    if weight.dim() != input.dim():
        raise RuntimeError(f"rmcp::conv: weight {list(weight.shape)} does not match input {list(input.shape)}")
    if not (groups > 0 and input.shape[1] == weight.shape[1] * groups and weight.shape[0] % groups == 0):
        raise RuntimeError(f"rmcp::conv: input channels {input.shape[1]}, weight {list(weight.shape)} and groups "
                           f"{groups} do not fit together")
    if input.dtype != weight.dtype:
        raise RuntimeError("rmcp::conv: input and weight dtypes differ")
    return dims


def _autocast_dtype(device_type):
    if device_type == "cpu":
        return torch.get_autocast_cpu_dtype() if torch.is_autocast_cpu_enabled() else None
    return torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else None


def conv_padded(input, weight, bias, stride, pad_before, pad_after, dilation, groups, workspace_mb):
    dims = _check(input, weight, groups)
    stride, dilation = _per_dim(stride, dims, "stride"), _per_dim(dilation, dims, "dilation")
    if min(stride + dilation) <= 0:
        raise RuntimeError("rmcp::conv: stride and dilation must be positive")
    if min(pad_before + pad_after) < 0:
        raise RuntimeError("rmcp::conv: padding must be non-negative")

    # Under autocast, run in the autocast dtype like the native convolution (and the C++ operator).
    cast_to = _autocast_dtype(input.device.type)
    if cast_to is not None:
        input, weight = input.to(cast_to), weight.to(cast_to)
        bias = bias.to(cast_to) if bias is not None else None
        with torch.autocast(input.device.type, enabled=False):
            return conv_padded(input, weight, bias, stride, pad_before, pad_after, dilation, groups, workspace_mb)

    # Conv1d runs as a Conv2d over [N, C, L, 1].
    x = input.unsqueeze(-1) if dims == 1 else input
    w = weight.unsqueeze(-1) if dims == 1 else weight
    b = bias
    sh, sw = stride[0], (1 if dims == 1 else stride[1])
    dh, dw = dilation[0], (1 if dims == 1 else dilation[1])
    ph0, ph1 = pad_before[0], pad_after[0]
    pw0, pw1 = (0, 0) if dims == 1 else (pad_before[1], pad_after[1])

    # PyTorch 1.13 has no float16 GEMM on the CPU: compute in float32 there and round.
    upcast = x.device.type == "cpu" and x.dtype == torch.float16
    if upcast:
        x, w = x.float(), w.float()
        b = b.float() if b is not None else None
    if ph0 or ph1 or pw0 or pw1:
        x = F.pad(x, (pw0, pw1, ph0, ph1))

    n, c, h, wd = x.shape
    out_c, _, kh, kw = w.shape
    reach_h, reach_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    if h < reach_h or wd < reach_w:
        raise RuntimeError(f"rmcp::conv: the (padded) input {list(x.shape)} is smaller than the dilated kernel "
                           f"{list(w.shape)}")
    out_h, out_w = (h - reach_h) // sh + 1, (wd - reach_w) // sw + 1

    w_groups = w.reshape(groups, out_c // groups, -1)  # [g, Og, K]
    column_bytes = c * kh * kw * out_h * out_w * x.element_size()
    per_chunk = max(1, min(n, _workspace_bytes(workspace_mb) // max(1, 2 * column_bytes)))
    outputs = []
    for start in range(0, n, per_chunk):
        chunk = x[start:start + per_chunk]
        cols = F.unfold(chunk, (kh, kw), dilation=(dh, dw), stride=(sh, sw))  # [nb, C*kh*kw, L]
        cols = cols.reshape(chunk.shape[0], groups, -1, out_h * out_w)
        outputs.append(torch.matmul(w_groups, cols).reshape(chunk.shape[0], out_c, out_h, out_w))
    out = outputs[0] if len(outputs) == 1 else torch.cat(outputs)
    if b is not None:
        out = out + b.reshape(1, -1, 1, 1)
    if upcast:
        out = out.half()
    if dims == 1:
        return out.squeeze(-1)
    if input.dim() == 4 and input.is_contiguous(memory_format=torch.channels_last) and not input.is_contiguous():
        return out.contiguous(memory_format=torch.channels_last)
    return out.contiguous()


def conv(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1, workspace_mb=-1):
    """torch.ops.rmcp.conv's signature: padding is integers."""
    pad = _per_dim(padding, input.dim() - 2, "padding")
    return conv_padded(input, weight, bias, stride, pad, pad, dilation, groups, workspace_mb)


def conv_padding_mode(input, weight, bias, stride, padding, dilation=(1,), groups=1, workspace_mb=-1):
    """torch.ops.rmcp.conv.padding's signature: padding is "same" or "valid"."""
    dims = _check(input, weight, groups)
    before, after = [0] * dims, [0] * dims
    if padding == "same":
        if any(s != 1 for s in _per_dim(stride, dims, "stride")):
            raise RuntimeError("rmcp::conv: padding='same' is not supported for strided convolutions")
        dil = _per_dim(dilation, dims, "dilation")
        for d in range(dims):
            # Same split as PyTorch's _convolution_same: the odd element goes after.
            total = dil[d] * (weight.shape[2 + d] - 1)
            before[d], after[d] = total // 2, total - total // 2
    elif padding != "valid":
        raise RuntimeError(f"rmcp::conv: padding must be 'same', 'valid' or integers, got '{padding}'")
    return conv_padded(input, weight, bias, stride, before, after, dilation, groups, workspace_mb)
