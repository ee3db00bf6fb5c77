#include "render/facts_text.hpp"

#include "facts/torch_python.hpp"

#include "facts/facts_json.hpp"
#include "root/root.hpp"

#include <fmt/format.h>

#include <cstring>
#include <set>

namespace rmcp {

namespace {
template <class T>
std::string show(const Fact<T>& f) {
    switch (f.state()) {
    case FactState::known:
        if constexpr (std::is_same_v<T, bool>) return *f ? "yes" : "no";
        else return fmt::format("{}", *f);
    case FactState::absent: return "unknown";
    case FactState::unreadable: return fmt::format("unreadable ({})", errno_name(f.error()));
    }
    return "?";
}

std::string show_bytes(const Fact<std::uint64_t>& f) { return f ? human_bytes(*f) : show(f); }

std::string access_line(const DeviceAccess& a) {
    if (!a.present) return fmt::format("{}: missing", a.path);
    return fmt::format("{}: {} (group {}, mode {}, user in group: {})", a.path,
                       a.accessible ? (*a.accessible ? "read-write" : "NOT accessible") : "access unknown",
                       show(a.group), a.mode ? fmt::format("{:04o}", *a.mode) : "?", show(a.user_in_group));
}
}  // namespace

std::string human_bytes(std::uint64_t bytes) {
    constexpr std::array<const char*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
    auto v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < units.size()) {
        v /= 1024.0;
        ++u;
    }
    return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string render_facts_text(const Facts& f, const Style& s) {
    std::string out;
    auto line = [&](std::string_view text) {
        out += text;
        out += '\n';
    };
    line(s.bold(fmt::format("GPUs ({})", f.gpus.size())));
    if (f.gpus.empty()) line("  no AMD GPU found in the KFD topology or DRM");
    for (const auto& g : f.gpus) {
        // One user-facing number, ROCm's device index; the other three numberings are shown
        // once here, so a KFD node in a kernel log or a cuda:N in a traceback can be matched.
        const auto label = g.rocm_index ? fmt::format("GPU {}", *g.rocm_index) : std::string("GPU -");
        if (!g.visible && g.node) {
            line(fmt::format("  {}  KFD node {} present, not visible (KFD properties unreadable: container device "
                             "cgroup?)",
                             label, *g.node));
            // The DRM side stays readable in sysfs; say which board it probably is.
            if (g.pci_id)
                line(fmt::format("      probably {} (PCI {} at {}, renderD{})",
                                 g.marketing_name ? *g.marketing_name : std::string("AMD GPU"), *g.pci_id,
                                 show(g.pci_address), show(g.drm_render_minor)));
            continue;
        }
        line(fmt::format("  {}  {} — {}{}", label, g.marketing_name ? *g.marketing_name : std::string("AMD GPU"),
                         g.gfx_target ? *g.gfx_target : std::string("target unknown"),
                         g.family ? fmt::format(" ({})", *g.family) : std::string()));
        std::string numbers = g.node ? fmt::format("KFD node {}", *g.node) : std::string("no KFD node");
        if (g.rocm_index) numbers += fmt::format(" = ROCm device {}", *g.rocm_index);
        if (g.torch_index) numbers += fmt::format(" = torch cuda:{} in this environment", *g.torch_index);
        else if (g.hidden_by) numbers += fmt::format("; hidden from ROCm programs by {}", *g.hidden_by);
        line("      " + numbers);
        if (!g.node) line("      " + s.yellow("DRM device without a KFD node: not usable for compute"));
        if (g.gfx_override) {
            const auto& o = *g.gfx_override;
            line(fmt::format("      override: {}={} → {} ({})", o.variable, o.value,
                             o.target ? *o.target : std::string("malformed"),
                             o.target ? std::string(override_relation_name(o.relation)) : "runtime init will fail"));
        }
        line(fmt::format("      effective target: {}   official ROCm support: {}", show(g.effective_gfx_target),
                         show(g.officially_supported)));
        line(fmt::format("      PCI {} rev {} at {}   {}", show(g.pci_id), show(g.revision), show(g.pci_address),
                         g.integrated ? (*g.integrated ? "integrated" : "discrete") : "integrated: unknown"));
        line(fmt::format("      VRAM {}   GTT {}   CUs {}   MEC fw {}   PCIe atomics {}", show_bytes(g.vram_bytes),
                         show_bytes(g.gtt_bytes), show(g.compute_units), show(g.mec_firmware), show(g.pcie_atomics)));
    }

    line(s.bold("Driver"));
    line(fmt::format("  amdgpu: {}   DKMS version: {}   kernel {}", f.driver.loaded ? "loaded" : "NOT loaded",
                     show(f.driver.dkms_version), show(f.driver.kernel_release)));
    line(fmt::format("  OS: {}", show(f.driver.os.pretty_name)));
    if (!f.driver.params.empty()) {
        std::string params;
        for (const auto& [k, v] : f.driver.params) params += fmt::format(" {}={}", k, show(v));
        line("  parameters:" + params);
    }

    line(s.bold("Access") + fmt::format(" (user {} uid {})", show(f.user.name), show(f.user.uid)));
    line("  " + access_line(f.kfd));
    for (const auto& r : f.render_nodes) line("  " + access_line(r));

    line(s.bold(fmt::format("ROCm ({})", f.rocm.size())));
    for (const auto& r : f.rocm)
        line(fmt::format("  {} {} [{}]{}", r.path, show(r.version), r.kind,
                         r.selected_by.empty() ? "" : " in use (" + r.selected_by + ")"));
    line(s.bold(fmt::format("PyTorch ({})", f.torch.size())));
    for (const auto& t : f.torch)
        line(fmt::format("  {} {} [{}] {}{}", t.path, show(t.version), t.origin,
                         t.hip_version    ? "HIP " + *t.hip_version
                         : t.cuda_version ? "CUDA " + *t.cuda_version
                         : t.hip_version.state() == FactState::absent && t.cuda_version.state() == FactState::absent
                             ? std::string("(CPU-only build)")
                             : fmt::format("HIP {} CUDA {}", show(t.hip_version), show(t.cuda_version)),
                         // Which interpreter imports it (findings 6 and 29): the one to run and probe with.
                         torch_python(t.path, t.origin).empty() ? "" : " for " + torch_python(t.path, t.origin)));
    if (!f.env.empty()) {
        line(s.bold("Environment"));
        for (const auto& [k, v] : f.env) line(fmt::format("  {}={}", k, v));
    }
    if (!f.unreadable.empty()) {
        line(s.bold("Unreadable"));
        for (const auto& u : f.unreadable)
            line(fmt::format("  {}: {} ({})", u.path, std::strerror(u.err), errno_name(u.err)));
    }
    return out;
}

std::string render_facts_nfd(const Facts& f) {
    std::string out;
    std::set<std::string> targets;
    unsigned usable = 0;
    for (const auto& g : f.gpus) {
        if (!g.node || !g.visible) continue;
        ++usable;
        const auto prefix = fmt::format("rmcp.gpu{}", *g.node);
        if (g.gfx_target) out += fmt::format("{}.gfx_target={}\n", prefix, *g.gfx_target);
        if (g.effective_gfx_target) {
            out += fmt::format("{}.effective_gfx_target={}\n", prefix, *g.effective_gfx_target);
            targets.insert(*g.effective_gfx_target);
        }
        if (g.family) out += fmt::format("{}.family={}\n", prefix, *g.family);
        if (g.integrated) out += fmt::format("{}.integrated={}\n", prefix, *g.integrated ? "true" : "false");
        if (g.vram_bytes) out += fmt::format("{}.vram_gib={}\n", prefix, *g.vram_bytes >> 30);
    }
    out += fmt::format("rmcp.gpu_count={}\n", usable);
    // The node-wide label schedulers select on: the effective target when all GPUs agree.
    if (targets.size() == 1) out += fmt::format("rmcp.gfx_target={}\n", *targets.begin());
    out += fmt::format("rmcp.amdgpu_loaded={}\n", f.driver.loaded ? "true" : "false");
    out += fmt::format("rmcp.kfd_accessible={}\n", f.kfd.accessible.value_or(false) ? "true" : "false");
    if (!f.rocm.empty() && f.rocm.front().version)
        out += fmt::format("rmcp.rocm_version={}\n", *f.rocm.front().version);
    return out;
}

}  // namespace rmcp
