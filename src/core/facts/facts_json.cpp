#include "facts/facts_json.hpp"

#include "facts/torch_python.hpp"

#include "root/root.hpp"

#include <cstring>
#include <fmt/format.h>

namespace rmcp {

namespace {
using nlohmann::json;

// Absent and unreadable both project to null; unreadable reads are listed in "unreadable".
template <class T>
json value(const Fact<T>& f) {
    if (!f.is_known()) return nullptr;
    return f.value();
}

json access_json(const DeviceAccess& a) {
    return json{
        {"path", a.path},
        {"present", a.present},
        {"mode", a.mode ? json(fmt::format("{:04o}", *a.mode)) : json(nullptr)},
        {"group", value(a.group)},
        {"accessible", value(a.accessible)},
        {"user_in_group", value(a.user_in_group)},
        {"user_listed_in_group", value(a.user_listed_in_group)},
    };
}

json gpu_json(const Gpu& g) {
    json o = nullptr;
    if (g.gfx_override) {
        o = json{{"variable", g.gfx_override->variable},
                 {"value", g.gfx_override->value},
                 {"valid", g.gfx_override->target.has_value()},
                 {"target", g.gfx_override->target ? json(*g.gfx_override->target) : json(nullptr)},
                 {"relation", override_relation_name(g.gfx_override->relation)}};
    }
    return json{
        {"node", g.node ? json(*g.node) : json(nullptr)},
        {"visible", g.visible},
        {"rocm_index", g.rocm_index ? json(*g.rocm_index) : json(nullptr)},
        {"hidden_by", g.hidden_by ? json(*g.hidden_by) : json(nullptr)},
        {"torch_index", g.torch_index ? json(*g.torch_index) : json(nullptr)},
        {"gpu_id", value(g.gpu_id)},
        {"gfx_target_version", value(g.gfx_target_version)},
        {"gfx_target", value(g.gfx_target)},
        {"effective_gfx_target", value(g.effective_gfx_target)},
        {"override", o},
        {"family", value(g.family)},
        {"generic_target", value(g.generic_target)},
        {"officially_supported", value(g.officially_supported)},
        {"asic_name", value(g.asic_name)},
        {"pci_id", value(g.pci_id)},
        {"revision", value(g.revision)},
        {"subsystem_id", value(g.subsystem_id)},
        {"pci_address", value(g.pci_address)},
        {"marketing_name", value(g.marketing_name)},
        {"vram_bytes", value(g.vram_bytes)},
        {"gtt_bytes", value(g.gtt_bytes)},
        {"integrated", value(g.integrated)},
        {"compute_units", value(g.compute_units)},
        {"mec_firmware", value(g.mec_firmware)},
        {"max_engine_clock_mhz", value(g.max_engine_clock_mhz)},
        {"pcie_atomics", value(g.pcie_atomics)},
        {"drm_render_minor", value(g.drm_render_minor)},
    };
}
}  // namespace

std::string_view override_relation_name(OverrideRelation r) {
    switch (r) {
    case OverrideRelation::identical: return "identical";
    case OverrideRelation::same_family: return "same_family";
    case OverrideRelation::cross_family: return "cross_family";
    case OverrideRelation::unknown: return "unknown";
    }
    return "unknown";
}

nlohmann::json facts_to_json(const Facts& f) {
    json gpus = json::array();
    for (const auto& g : f.gpus) gpus.push_back(gpu_json(g));

    json params = json::object();
    for (const auto& [k, v] : f.driver.params) params[k] = value(v);

    json render = json::array();
    for (const auto& r : f.render_nodes) render.push_back(access_json(r));

    json rocm = json::array();
    for (const auto& r : f.rocm)
        rocm.push_back(json{{"path", r.path},
                            {"version", value(r.version)},
                            {"version_source", r.version_source},
                            {"kind", r.kind},
                            {"selected_by", r.selected_by.empty() ? json(nullptr) : json(r.selected_by)}});

    json torch = json::array();
    for (const auto& t : f.torch)
        torch.push_back(json{{"path", t.path},
                             {"origin", t.origin},
                             {"python", torch_python(t.path, t.origin).empty() ? json(nullptr)
                                                                               : json(torch_python(t.path, t.origin))},
                             {"version", value(t.version)},
                             {"hip_version", value(t.hip_version)},
                             {"cuda_version", value(t.cuda_version)},
                             {"has_libtorch_hip", t.has_libtorch_hip}});

    json unreadable = json::array();
    for (const auto& u : f.unreadable)
        unreadable.push_back(json{{"path", u.path}, {"errno", errno_name(u.err)}, {"error", std::strerror(u.err)}});

    return json{
        {"schema_version", k_facts_schema_version},
        {"gpus", gpus},
        {"driver", json{{"loaded", f.driver.loaded},
                        {"builtin", f.driver.builtin},
                        {"initstate", value(f.driver.initstate)},
                        {"dkms_version", value(f.driver.dkms_version)},
                        {"params", params},
                        {"kernel_release", value(f.driver.kernel_release)},
                        {"os", json{{"id", value(f.driver.os.id)},
                                    {"version_id", value(f.driver.os.version_id)},
                                    {"pretty_name", value(f.driver.os.pretty_name)}}}}},
        {"user", json{{"uid", value(f.user.uid)},
                      {"gid", value(f.user.gid)},
                      {"groups", f.user.groups},
                      {"name", value(f.user.name)}}},
        {"kfd", access_json(f.kfd)},
        {"render_nodes", render},
        {"rocm", rocm},
        {"torch", torch},
        {"env", f.env},
        {"unreadable", unreadable},
    };
}

}  // namespace rmcp
