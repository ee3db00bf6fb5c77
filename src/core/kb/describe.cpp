#include "kb/describe.hpp"

#include "util/text.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace rmcp::kb {

namespace {
using nlohmann::json;

// What the most used fact paths mean (docs/kb-format.md "Fact paths"); a path not listed
// here is shown as it is.
constexpr std::array<std::pair<std::string_view, std::string_view>, 35> k_glossary{{
    {"gpu.gfx_target", "the GPU's chip target"},
    {"gpu.effective_gfx_target", "the target the runtime uses, after overrides"},
    {"gpu.family", "the GPU's architecture family"},
    {"gpu.officially_supported", "the chip is on AMD's ROCm support list"},
    {"gpu.override", "an HSA_OVERRIDE_GFX_VERSION that applies to this GPU"},
    {"gpu.override.relation", "how the override's target relates to the chip"},
    {"gpu.override.target", "the override's target"},
    {"gpu.override.valid", "the override parses"},
    {"gpu.integrated", "the GPU is integrated (APU)"},
    {"gpu.visible", "the GPU's KFD node is readable"},
    {"gpu.hidden_by", "the variable that hides the GPU from ROCm programs"},
    {"gpu.rocm_index", "ROCm's device index of the GPU"},
    {"gpu.torch_index", "PyTorch's cuda:N for the GPU"},
    {"gpu.pcie_atomics", "the GPU's PCIe link has 64-bit atomics"},
    {"gpu.generic_target", "the GPU's LLVM generic target"},
    {"gpu.node", "the GPU's KFD node"},
    {"gpu.coverage", "coverage facts for this GPU (rmcp scan)"},
    {"gpu.coverage_missing", "libraries without code for this GPU"},
    {"gpu.coverage.torch_hip.covered", "PyTorch has code for the effective target"},
    {"gpu.coverage.torch_hip.chip_covered", "PyTorch has code for the chip itself"},
    {"gpu.coverage.torch_hip.nearest", "the closest target of the chip's family PyTorch has"},
    {"gpus.gfx_target", "the chip targets of all GPUs"},
    {"gpus.integrated", "whether each GPU is integrated"},
    {"driver.loaded", "the amdgpu driver is loaded"},
    {"driver.initstate", "/sys/module/amdgpu/initstate"},
    {"driver.dkms_version", "the amdgpu-dkms version"},
    {"driver.kernel_release", "the running kernel"},
    {"kfd.present", "/dev/kfd exists"},
    {"kfd.accessible", "this user can open /dev/kfd read-write"},
    {"rocm", "the ROCm installations found"},
    {"rocm.version", "an installed ROCm's version"},
    {"torch", "the PyTorch installations found"},
    {"torch.hip_version", "a PyTorch's torch.version.hip"},
    {"torch.version", "a PyTorch's version"},
    {"torch.origin", "where a PyTorch was installed from"},
}};

std::string named(const std::string& path) {
    for (const auto& [p, gloss] : k_glossary)
        if (p == path) return fmt::format("`{}` ({})", path, gloss);
    return fmt::format("`{}`", path);
}

std::string scalar(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    return json_text(v);
}

std::string list(const json& v) {
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : ", ") + scalar(e);
    return out;
}

std::string count_words(const Leaf& leaf) {
    if (leaf.value.is_number_integer()) return fmt::format("== {}", leaf.value.get<long long>());
    return leaf.value.is_string() ? leaf.value.get<std::string>() : json_text(leaf.value);
}

void walk(const Predicate& p, unsigned depth, std::vector<DescribedLine>& out) {
    switch (p.kind) {
    case Predicate::Kind::leaf: out.push_back({depth, describe_leaf(p.leaf)}); return;
    case Predicate::Kind::all:
    case Predicate::Kind::any:
        out.push_back({depth, p.kind == Predicate::Kind::all ? "all of:" : "any of:"});
        for (const auto& c : p.children) walk(c, depth + 1, out);
        return;
    case Predicate::Kind::negation: {
        const auto& child = p.children.front();
        if (child.kind == Predicate::Kind::leaf) {
            out.push_back({depth, "not: " + describe_leaf(child.leaf)});
        } else if (child.kind == Predicate::Kind::any) {
            out.push_back({depth, "none of:"});
            for (const auto& c : child.children) walk(c, depth + 1, out);
        } else {
            out.push_back({depth, "not:"});
            walk(child, depth + 1, out);
        }
        return;
    }
    }
}

}  // namespace

std::string_view fact_gloss(std::string_view path) {
    for (const auto& [p, gloss] : k_glossary)
        if (p == path) return gloss;
    return {};
}

std::string describe_leaf(const Leaf& leaf) {
    const auto path = named(leaf.path);
    switch (leaf.op) {
    case LeafOp::equals: return fmt::format("{} is {}", path, scalar(leaf.value));
    case LeafOp::not_equals: return fmt::format("{} is known and is not {}", path, scalar(leaf.value));
    case LeafOp::in: return fmt::format("{} is one of {}", path, list(leaf.value));
    case LeafOp::not_in: return fmt::format("{} is known and is none of {}", path, list(leaf.value));
    case LeafOp::matches: return fmt::format("{} matches the regular expression {}", path, scalar(leaf.value));
    case LeafOp::version: return fmt::format("{} is a version {}", path, scalar(leaf.value));
    case LeafOp::exists:
        return leaf.value.is_boolean() && leaf.value.get<bool>() ? fmt::format("{} is known", path)
                                                                 : fmt::format("{} is absent", path);
    case LeafOp::gt: return fmt::format("{} > {}", path, scalar(leaf.value));
    case LeafOp::ge: return fmt::format("{} >= {}", path, scalar(leaf.value));
    case LeafOp::lt: return fmt::format("{} < {}", path, scalar(leaf.value));
    case LeafOp::le: return fmt::format("{} <= {}", path, scalar(leaf.value));
    case LeafOp::count: return fmt::format("the number of values of {} is {}", path, count_words(leaf));
    case LeafOp::distinct: return fmt::format("the number of distinct values of {} is {}", path, count_words(leaf));
    case LeafOp::bits_set:
        return fmt::format("{} has the bits of 0x{:x} set", path,
                           leaf.value.is_number() ? leaf.value.get<long long>() : 0);
    case LeafOp::major_minor_differs:
        return fmt::format("the major.minor version of {} differs from that of {}", path, named(scalar(leaf.value)));
    }
    return path;
}

std::vector<DescribedLine> describe_predicate(const Predicate& p) {
    std::vector<DescribedLine> out;
    walk(p, 0, out);
    return out;
}

}  // namespace rmcp::kb
