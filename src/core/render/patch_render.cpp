#include "render/patch_render.hpp"

#include <fmt/format.h>

namespace rmcp::render {

nlohmann::json patch_json(const patch::Patch& p) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& op : p.operations) {
        nlohmann::json o{{"kind", patch::op_kind_name(op.kind)}};
        if (!op.set.empty()) o["set"] = op.set;
        if (!op.remove.empty()) o["remove"] = op.remove;
        if (!op.unset.empty()) o["unset"] = op.unset;
        if (!op.params.empty()) o["params"] = op.params;
        if (!op.file.empty()) o["file"] = op.file;
        if (!op.derived.empty()) o["derived"] = op.derived;
        if (!op.command.empty()) o["command"] = op.command;
        if (!op.by_distro.empty()) {
            o["distro"] = nlohmann::json::array();
            for (const auto& d : op.by_distro) o["distro"].push_back({{"ids", d.ids}, {"command", d.command}});
        }
        if (!op.note.empty()) o["note"] = op.note;
        ops.push_back(o);
    }
    return {{"id", p.id},
            {"title", p.title},
            {"why", p.why},
            {"cost", p.cost},
            {"evidence", p.evidence},
            {"references", p.references},
            {"reversible", p.fully_reversible() ? "yes" : "partly"},
            {"operations", ops}};
}

std::string describe_operation(const patch::Operation& op) {
    switch (op.kind) {
    case patch::OpKind::env: {
        std::string s = "set in the user's profile.env:";
        for (const auto& [k, v] : op.set) s += fmt::format(" {}={}", k, v);
        for (const auto& k : op.unset) s += fmt::format(" unset {}", k);
        for (const auto& k : op.remove) s += fmt::format(" (forget {})", k);
        return s;
    }
    case patch::OpKind::modprobe: {
        std::string s = "write /etc/modprobe.d/rmcp-<id>.conf: options amdgpu";
        for (const auto& [k, v] : op.params) s += fmt::format(" {}={}", k, v);
        return s;
    }
    case patch::OpKind::python_hook: return "install the Python start-up hook (rmcp-startup.pth)";
    case patch::OpKind::advisory: {
        std::string s = "advisory (rmcp never runs it):";
        if (!op.command.empty()) s += " " + op.command;
        for (const auto& d : op.by_distro) s += fmt::format("\n       on {}: {}", fmt::join(d.ids, "/"), d.command);
        return s;
    }
    }
    return {};
}

nlohmann::json plan_json(const patch::Plan& plan) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : plan.steps) {
        nlohmann::json j{{"patch", s.patch->id}, {"kind", patch::op_kind_name(s.op->kind)}, {"summary", s.summary}};
        if (s.op->kind == patch::OpKind::advisory) {
            j["command"] = s.advisory;
        } else {
            j["target"] = s.target;
            j["system"] = s.system;
            j["existed"] = s.existed;
            j["in_effect"] = s.in_effect;
            j["content"] = s.new_content;
            j["mode"] = s.new_mode;
        }
        steps.push_back(j);
    }
    return {{"schema_version", 1}, {"patches", plan.patch_ids}, {"steps", steps}};
}

}  // namespace rmcp::render
