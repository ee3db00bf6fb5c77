// torch.ops.rmcp.conv: Conv1d/Conv2d as im2col + batched GEMM, composed from ATen
// operations on the tensor's own device (CPU, ROCm, CUDA alike).
//
// Why: on several consumer AMD GPUs the vendor convolution kernels (MIOpen solvers) fault
// and kill the process (MIOpen issue 3540; docs/torch.md). This operator never calls
// at::convolution, MIOpen or cuDNN, in the forward nor in the backward pass: the backward
// of the GEMM path is written out below with im2col (a strided copy), col2im and matmul,
// and that of the depthwise path with strided slices, addcmul and sums.
//
// Memory: the GEMM path processes the batch (and, when one sample is too big, bands of
// output rows) in chunks so that its workspace (im2col columns, their gradient, the GEMM
// result) stays under a bound: the `workspace_mb` argument, else RMCP_CONV_WORKSPACE_MB,
// else 256 MiB. Only the input and the weight are saved for backward; the columns are
// recomputed chunk by chunk, so training is bounded too.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace rmcp::torch_ext {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t k_default_workspace_mb = 256;

int64_t workspace_bound_bytes(int64_t workspace_mb) {
    if (workspace_mb <= 0) {
        workspace_mb = k_default_workspace_mb;
        if (const char* env = std::getenv("RMCP_CONV_WORKSPACE_MB")) {
            char* end = nullptr;
            const long long value = std::strtoll(env, &end, 10);
            if (end != env && *end == '\0' && value > 0) workspace_mb = value;
        }
    }
    return workspace_mb * 1024 * 1024;
}

// 2-D geometry of a convolution whose input has already been padded.
struct Geometry {
    int64_t stride_h, stride_w, dilation_h, dilation_w, groups, workspace_bytes;

    std::vector<int64_t> pack() const { return {stride_h, stride_w, dilation_h, dilation_w, groups, workspace_bytes}; }
    static Geometry unpack(const std::vector<int64_t>& v) { return {v[0], v[1], v[2], v[3], v[4], v[5]}; }
};

// How the GEMM path walks the batch: `batch` samples at a time, and within a sample
// `rows` output rows at a time (rows < out_h only when one sample exceeds the bound).
struct Chunks {
    int64_t batch;
    int64_t rows;
};

struct Shape {
    int64_t n, c, h, w, out_c, kh, kw, out_h, out_w;
};

Shape shape_of(const at::Tensor& x, const at::Tensor& weight, const Geometry& g) {
    Shape s{x.size(0), x.size(1), x.size(2), x.size(3), weight.size(0), weight.size(2), weight.size(3), 0, 0};
    const int64_t reach_h = g.dilation_h * (s.kh - 1) + 1;
    const int64_t reach_w = g.dilation_w * (s.kw - 1) + 1;
    TORCH_CHECK(s.h >= reach_h && s.w >= reach_w, "rmcp::conv: the (padded) input ", x.sizes(),
                " is smaller than the dilated kernel ", weight.sizes());
    s.out_h = (s.h - reach_h) / g.stride_h + 1;
    s.out_w = (s.w - reach_w) / g.stride_w + 1;
    return s;
}

Chunks plan_chunks(const Shape& s, const Geometry& g, int64_t element_size) {
    const int64_t cols_per_row = s.c * s.kh * s.kw * s.out_w;
    // Per output row: the columns, their gradient (backward), a transposed copy the GEMM
    // may make, and the GEMM result.
    const int64_t row_bytes = (3 * cols_per_row + s.out_c * s.out_w) * element_size;
    // Per sample, independent of rows: the per-sample weight-gradient partial product.
    const int64_t sample_fixed = s.out_c * (s.c / g.groups) * s.kh * s.kw * element_size;
    const int64_t sample_bytes = row_bytes * s.out_h + sample_fixed;
    if (sample_bytes <= g.workspace_bytes) {
        return {std::clamp<int64_t>(g.workspace_bytes / sample_bytes, 1, s.n), s.out_h};
    }
    const int64_t rows = (g.workspace_bytes - sample_fixed) / row_bytes;
    return {1, std::clamp<int64_t>(rows, 1, s.out_h)};
}

// Input rows that output rows [row0, row0 + rows) read.
int64_t band_height(int64_t rows, const Shape& s, const Geometry& g) {
    return (rows - 1) * g.stride_h + g.dilation_h * (s.kh - 1) + 1;
}

// im2col of an (already padded) band as one strided view [n, C, kh, kw, out_rows, out_w]
// copied into [n, C*kh*kw, out_rows*out_w]: the same layout at::im2col produces, and on
// the CPU of PyTorch 1.13 about twice as fast (a plain strided copy instead of its loops).
// The profiler sees each chunk's columns as an "rmcp::columns" event (the tests count
// chunks and check each allocation against the bound with it).
at::Tensor columns(const at::Tensor& x_band, const Shape& s, const Geometry& g) {
    RECORD_FUNCTION("rmcp::columns", std::vector<c10::IValue>());
    const int64_t n = x_band.size(0);
    const int64_t rows = (x_band.size(2) - g.dilation_h * (s.kh - 1) - 1) / g.stride_h + 1;
    const auto st = x_band.strides();
    const at::Tensor windows = x_band.as_strided({n, s.c, s.kh, s.kw, rows, s.out_w},
                                                 {st[0], st[1], st[2] * g.dilation_h, st[3] * g.dilation_w,
                                                  st[2] * g.stride_h, st[3] * g.stride_w},
                                                 x_band.storage_offset());
    return windows.reshape({n, s.c * s.kh * s.kw, rows * s.out_w});
}

class Im2colGemmConv : public torch::autograd::Function<Im2colGemmConv> {
public:
    // x: padded input [N, C, H, W]; weight: [O, C/groups, kh, kw]; geometry: Geometry::pack().
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                              const std::vector<int64_t>& geometry) {
        const Geometry g = Geometry::unpack(geometry);
        const Shape s = shape_of(x, weight, g);
        const Chunks chunks = plan_chunks(s, g, x.element_size());
        const at::Tensor w_groups = weight.reshape({g.groups, s.out_c / g.groups, -1});  // [g, Og, K]

        at::Tensor out;
        const bool single_chunk = chunks.batch >= s.n && chunks.rows >= s.out_h;
        if (!single_chunk) out = at::empty({s.n, s.out_c, s.out_h, s.out_w}, x.options());
        for (int64_t b0 = 0; b0 < s.n; b0 += chunks.batch) {
            const int64_t nb = std::min(chunks.batch, s.n - b0);
            for (int64_t r0 = 0; r0 < s.out_h; r0 += chunks.rows) {
                const int64_t nr = std::min(chunks.rows, s.out_h - r0);
                const at::Tensor band = x.narrow(0, b0, nb).narrow(2, r0 * g.stride_h, band_height(nr, s, g));
                const at::Tensor cols = columns(band, s, g).view({nb, g.groups, -1, nr * s.out_w});
                const at::Tensor y = at::matmul(w_groups, cols).view({nb, s.out_c, nr, s.out_w});
                if (single_chunk) {
                    out = y;
                } else {
                    out.narrow(0, b0, nb).narrow(2, r0, nr).copy_(y);
                }
            }
        }
        ctx->save_for_backward({x, weight});
        ctx->saved_data["geometry"] = geometry;
        return out;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor& x = saved[0];
        const at::Tensor& weight = saved[1];
        const Geometry g = Geometry::unpack(ctx->saved_data["geometry"].toIntVector());
        const Shape s = shape_of(x, weight, g);
        const Chunks chunks = plan_chunks(s, g, x.element_size());
        const at::Tensor grad_out = grad_outputs[0];
        const bool need_x = ctx->needs_input_grad(0);
        const bool need_w = ctx->needs_input_grad(1);
        const int64_t out_per_group = s.out_c / g.groups;

        const at::Tensor w_groups_t = weight.reshape({g.groups, out_per_group, -1}).transpose(1, 2);  // [g, K, Og]
        at::Tensor grad_x = need_x ? at::zeros_like(x, at::MemoryFormat::Contiguous) : at::Tensor();
        at::Tensor grad_w;
        for (int64_t b0 = 0; b0 < s.n; b0 += chunks.batch) {
            const int64_t nb = std::min(chunks.batch, s.n - b0);
            for (int64_t r0 = 0; r0 < s.out_h; r0 += chunks.rows) {
                const int64_t nr = std::min(chunks.rows, s.out_h - r0);
                const int64_t bh = band_height(nr, s, g);
                const at::Tensor go =
                    grad_out.narrow(0, b0, nb).narrow(2, r0, nr).reshape({nb, g.groups, out_per_group, nr * s.out_w});
                if (need_w) {
                    const at::Tensor band = x.narrow(0, b0, nb).narrow(2, r0 * g.stride_h, bh);
                    const at::Tensor cols = columns(band, s, g).view({nb, g.groups, -1, nr * s.out_w});
                    const at::Tensor part = at::matmul(go, cols.transpose(2, 3)).sum(0);  // [g, Og, K]
                    grad_w = grad_w.defined() ? grad_w + part : part;
                }
                if (need_x) {
                    const at::Tensor grad_cols = at::matmul(w_groups_t, go).reshape({nb, -1, nr * s.out_w});
                    const at::Tensor grad_band =
                        at::col2im(grad_cols, {bh, s.w}, {s.kh, s.kw}, {g.dilation_h, g.dilation_w}, {0, 0},
                                   {g.stride_h, g.stride_w});
                    // Bands overlap when the kernel reaches past the stride: accumulate.
                    grad_x.narrow(0, b0, nb).narrow(2, r0 * g.stride_h, bh).add_(grad_band);
                }
            }
        }
        return {grad_x, need_w ? grad_w.reshape(weight.sizes()) : at::Tensor(), at::Tensor()};
    }
};

// Depthwise (groups == C, O a multiple of C): the sum over kernel offsets of strided
// slices of the padded input times per-channel weights. The workspace is an output-sized
// accumulator instead of a kh*kw-times-larger im2col, and the backward pass is written out
// the same way (autograd through the slices would zero-fill an input-sized gradient per
// kernel offset). Reduced-precision inputs accumulate in float32, as GEMMs do.
class DepthwiseConv : public torch::autograd::Function<DepthwiseConv> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                              const std::vector<int64_t>& geometry) {
        const Geometry g = Geometry::unpack(geometry);
        const Shape s = shape_of(x, weight, g);
        const at::Tensor xs = expand_channels(x, s);
        at::Tensor acc = at::zeros({s.n, s.out_c, s.out_h, s.out_w}, x.options().dtype(accumulator_type(x)));
        for (int64_t i = 0; i < s.kh; ++i) {
            for (int64_t j = 0; j < s.kw; ++j) acc.addcmul_(tap(xs, s, g, i, j), tap_weight(weight, s, i, j));
        }
        ctx->save_for_backward({x, weight});
        ctx->saved_data["geometry"] = geometry;
        return acc.scalar_type() == x.scalar_type() ? acc : acc.to(x.scalar_type());
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor& x = saved[0];
        const at::Tensor& weight = saved[1];
        const Geometry g = Geometry::unpack(ctx->saved_data["geometry"].toIntVector());
        const Shape s = shape_of(x, weight, g);
        const at::Tensor grad_out = grad_outputs[0];
        const at::ScalarType acc_type = accumulator_type(x);
        at::Tensor grad_x, grad_w;
        if (ctx->needs_input_grad(0)) {
            at::Tensor grad_xs = at::zeros({s.n, s.out_c, s.h, s.w}, x.options().dtype(acc_type));
            for (int64_t i = 0; i < s.kh; ++i) {
                for (int64_t j = 0; j < s.kw; ++j) {
                    tap(grad_xs, s, g, i, j).addcmul_(grad_out, tap_weight(weight, s, i, j));
                }
            }
            const int64_t multiplier = s.out_c / s.c;
            if (multiplier > 1) grad_xs = grad_xs.view({s.n, s.c, multiplier, s.h, s.w}).sum(2);
            grad_x = grad_xs.to(x.scalar_type());
        }
        if (ctx->needs_input_grad(1)) {
            const at::Tensor xs = expand_channels(x, s);
            std::vector<at::Tensor> per_tap;
            per_tap.reserve(static_cast<size_t>(s.kh * s.kw));
            for (int64_t i = 0; i < s.kh; ++i) {
                for (int64_t j = 0; j < s.kw; ++j) {
                    per_tap.push_back(at::mul(grad_out, tap(xs, s, g, i, j)).sum({0, 2, 3}, false, acc_type));
                }
            }
            grad_w = at::stack(per_tap, 1).reshape(weight.sizes()).to(weight.scalar_type());
        }
        return {grad_x, grad_w, at::Tensor()};
    }

private:
    static at::ScalarType accumulator_type(const at::Tensor& x) {
        const bool reduced = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
        return reduced ? at::kFloat : x.scalar_type();
    }
    // With a channel multiplier m, output channel o reads input channel o / m.
    static at::Tensor expand_channels(const at::Tensor& x, const Shape& s) {
        const int64_t multiplier = s.out_c / s.c;
        return multiplier == 1 ? x : x.repeat_interleave(multiplier, 1);
    }
    // The input positions that kernel offset (i, j) meets, as a strided view [N, O, out_h, out_w].
    static at::Tensor tap(const at::Tensor& xs, const Shape& s, const Geometry& g, int64_t i, int64_t j) {
        const int64_t h0 = i * g.dilation_h;
        const int64_t w0 = j * g.dilation_w;
        return xs.slice(2, h0, h0 + (s.out_h - 1) * g.stride_h + 1, g.stride_h)
            .slice(3, w0, w0 + (s.out_w - 1) * g.stride_w + 1, g.stride_w);
    }
    static at::Tensor tap_weight(const at::Tensor& weight, const Shape& s, int64_t i, int64_t j) {
        return weight.select(3, j).select(2, i).reshape({1, s.out_c, 1, 1});
    }
};

std::vector<int64_t> per_dim(at::IntArrayRef values, int64_t dims, const char* what) {
    TORCH_CHECK(values.size() == 1 || static_cast<int64_t>(values.size()) == dims, "rmcp::conv: ", what, " needs 1 or ",
                dims, " values, got ", values);
    std::vector<int64_t> out(static_cast<size_t>(dims));
    for (int64_t d = 0; d < dims; ++d)
        out[static_cast<size_t>(d)] = values[values.size() == 1 ? 0 : static_cast<size_t>(d)];
    return out;
}

// The common implementation. `pad_before`/`pad_after` give the zero padding per spatial
// dimension (they differ only for padding='same' with an even dilated kernel).
at::Tensor conv_padded(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                       at::IntArrayRef stride_arg, const std::vector<int64_t>& pad_before,
                       const std::vector<int64_t>& pad_after, at::IntArrayRef dilation_arg, int64_t groups,
                       int64_t workspace_mb) {
    const int64_t dims = input.dim() - 2;
    TORCH_CHECK(dims == 1 || dims == 2, "rmcp::conv: expected a 3-D (N,C,L) or 4-D (N,C,H,W) input, got ",
                input.sizes());
    TORCH_CHECK(weight.dim() == input.dim(), "rmcp::conv: weight ", weight.sizes(), " does not match input ",
                input.sizes());
    TORCH_CHECK(groups > 0 && input.size(1) == weight.size(1) * groups && weight.size(0) % groups == 0,
                "rmcp::conv: input channels ", input.size(1), ", weight ", weight.sizes(), " and groups ", groups,
                " do not fit together");
    TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "rmcp::conv: input and weight dtypes differ");
    const std::vector<int64_t> stride = per_dim(stride_arg, dims, "stride");
    const std::vector<int64_t> dilation = per_dim(dilation_arg, dims, "dilation");
    for (int64_t d = 0; d < dims; ++d) {
        TORCH_CHECK(stride[static_cast<size_t>(d)] > 0 && dilation[static_cast<size_t>(d)] > 0,
                    "rmcp::conv: stride and dilation must be positive");
        TORCH_CHECK(pad_before[static_cast<size_t>(d)] >= 0 && pad_after[static_cast<size_t>(d)] >= 0,
                    "rmcp::conv: padding must be non-negative");
    }

    // Conv1d runs as a Conv2d over [N, C, L, 1]: the long time axis becomes the row axis
    // the chunker can split.
    at::Tensor x = dims == 1 ? input.unsqueeze(-1) : input;
    at::Tensor w = dims == 1 ? weight.unsqueeze(-1) : weight;
    at::Tensor b = bias.has_value() ? *bias : at::Tensor();
    const Geometry g{stride[0], dims == 1 ? 1 : stride[1],          dilation[0], dims == 1 ? 1 : dilation[1],
                     groups,    workspace_bound_bytes(workspace_mb)};

    // PyTorch 1.13 has no float16 GEMM on the CPU (addmm_impl_cpu_ is not implemented for
    // Half): compute in float32 there and round the result. GPUs keep float16.
    const bool upcast = x.device().is_cpu() && x.scalar_type() == at::kHalf;
    if (upcast) {
        x = x.to(at::kFloat);
        w = w.to(at::kFloat);
        if (b.defined()) b = b.to(at::kFloat);
    }

    const int64_t ph0 = pad_before[0], ph1 = pad_after[0];
    const int64_t pw0 = dims == 1 ? 0 : pad_before[1], pw1 = dims == 1 ? 0 : pad_after[1];
    if (ph0 || ph1 || pw0 || pw1) x = at::constant_pad_nd(x, {pw0, pw1, ph0, ph1}, 0);

    const int64_t channels = x.size(1);
    const bool is_depthwise = groups > 1 && groups == channels && w.size(0) % channels == 0;
    at::Tensor out = is_depthwise ? DepthwiseConv::apply(x, w, g.pack()) : Im2colGemmConv::apply(x, w, g.pack());
    if (b.defined()) out = out + b.reshape({1, -1, 1, 1});
    if (upcast) out = out.to(at::kHalf);
    if (dims == 1) return out.squeeze(-1);
    if (input.suggest_memory_format() == at::MemoryFormat::ChannelsLast) {
        return out.contiguous(at::MemoryFormat::ChannelsLast);
    }
    return out.contiguous();
}

at::Tensor conv(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                int64_t workspace_mb) {
    const std::vector<int64_t> pad = per_dim(padding, input.dim() - 2, "padding");
    return conv_padded(input, weight, bias, stride, pad, pad, dilation, groups, workspace_mb);
}

// padding="same" | "valid", as torch.nn.functional.conv2d accepts them.
at::Tensor conv_padding_mode(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                             at::IntArrayRef stride, c10::string_view padding, at::IntArrayRef dilation, int64_t groups,
                             int64_t workspace_mb) {
    const int64_t dims = input.dim() - 2;
    TORCH_CHECK(dims == 1 || dims == 2, "rmcp::conv: expected a 3-D or 4-D input, got ", input.sizes());
    std::vector<int64_t> before(static_cast<size_t>(dims), 0), after(static_cast<size_t>(dims), 0);
    if (padding == "same") {
        for (int64_t s : per_dim(stride, dims, "stride")) {
            TORCH_CHECK(s == 1, "rmcp::conv: padding='same' is not supported for strided convolutions");
        }
        const std::vector<int64_t> dil = per_dim(dilation, dims, "dilation");
        for (int64_t d = 0; d < dims; ++d) {
            // Same split as PyTorch's _convolution_same: the odd element goes after.
            const int64_t total = dil[static_cast<size_t>(d)] * (weight.size(2 + d) - 1);
            before[static_cast<size_t>(d)] = total / 2;
            after[static_cast<size_t>(d)] = total - total / 2;
        }
    } else {
        TORCH_CHECK(padding == "valid", "rmcp::conv: padding must be 'same', 'valid' or integers, got '",
                    std::string(padding), "'");
    }
    return conv_padded(input, weight, bias, stride, before, after, dilation, groups, workspace_mb);
}

// Under torch.autocast the native convolution runs in the autocast dtype (float16 on GPUs,
// bfloat16 on the CPU); so does this one: cast the arguments, then run with autocast off so
// that the forward and the backward pass see one dtype.
template <c10::DeviceType k_device>
at::Tensor conv_autocast(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                         at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                         int64_t workspace_mb) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(at::autocast::get_autocast_dispatch_key_from_device_type(k_device));
    const at::ScalarType to = at::autocast::get_lower_precision_fp_from_device_type(k_device);
    return conv(at::autocast::cached_cast(to, input, k_device), at::autocast::cached_cast(to, weight, k_device),
                at::autocast::cached_cast(to, bias, k_device), stride, padding, dilation, groups, workspace_mb);
}

template <c10::DeviceType k_device>
at::Tensor conv_padding_mode_autocast(const at::Tensor& input, const at::Tensor& weight,
                                      const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                      c10::string_view padding, at::IntArrayRef dilation, int64_t groups,
                                      int64_t workspace_mb) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(at::autocast::get_autocast_dispatch_key_from_device_type(k_device));
    const at::ScalarType to = at::autocast::get_lower_precision_fp_from_device_type(k_device);
    return conv_padding_mode(at::autocast::cached_cast(to, input, k_device),
                             at::autocast::cached_cast(to, weight, k_device),
                             at::autocast::cached_cast(to, bias, k_device), stride, padding, dilation, groups,
                             workspace_mb);
}

}  // namespace
}  // namespace rmcp::torch_ext

// Registered as CompositeImplicitAutograd (m.def with a function): autograd sees the
// composed ATen operations and the Im2colGemmConv node, on whatever device the tensors live.
TORCH_LIBRARY(rmcp, m) {
    m.def("conv(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1], int[] padding=[0], "
          "int[] dilation=[1], int groups=1, int workspace_mb=-1) -> Tensor",
          &rmcp::torch_ext::conv);
    m.def("conv.padding(Tensor input, Tensor weight, Tensor? bias, int[] stride, str padding, "
          "int[] dilation=[1], int groups=1, int workspace_mb=-1) -> Tensor",
          &rmcp::torch_ext::conv_padding_mode);
}

// Autocast is CUDA's key, which ROCm builds of PyTorch use for HIP devices as well.
TORCH_LIBRARY_IMPL(rmcp, Autocast, m) {
    m.impl("conv", &rmcp::torch_ext::conv_autocast<c10::DeviceType::CUDA>);
    m.impl("conv.padding", &rmcp::torch_ext::conv_padding_mode_autocast<c10::DeviceType::CUDA>);
}

TORCH_LIBRARY_IMPL(rmcp, AutocastCPU, m) {
    m.impl("conv", &rmcp::torch_ext::conv_autocast<c10::DeviceType::CPU>);
    m.impl("conv.padding", &rmcp::torch_ext::conv_padding_mode_autocast<c10::DeviceType::CPU>);
}
