// The text of `rmcp patch plan`: each step, then its unified diff or advisory commands.
#include "render/plan_render.hpp"

#include "patch/diff.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

namespace rmcp::render {

using patch::OpKind;
using patch::Plan;

std::string render_plan(const Plan& plan) {
    const std::string ids = join(plan.patch_ids, " ");
    std::string out = fmt::format("plan for {}: {} step(s), {} file(s) to write{}\n", ids, plan.steps.size(),
                                  plan.writes(), plan.has_system_targets() ? ", needs root (writes under /etc)" : "");
    unsigned n = 0;
    for (const auto& s : plan.steps) {
        ++n;
        out += fmt::format("\n[{}] {} ({}): {}\n", n, s.patch->id, op_kind_name(s.op->kind), s.summary);
        if (s.op->kind == OpKind::advisory) {
            for (const auto line : split_lines(s.advisory))
                if (!line.empty()) out += fmt::format("    $ {}\n", line);
        } else if (s.in_effect) {
            out += fmt::format("    {}: already in effect, skipped\n", s.target);
        } else {
            const std::string from = s.existed ? "a" + s.target : "/dev/null";
            if (!s.existed) out += fmt::format("    create {} (mode {:04o})\n", s.target, s.new_mode);
            out += patch::unified_diff(s.old_content, s.new_content, from, "b" + s.target);
        }
        if (!s.op->note.empty()) out += fmt::format("    note: {}\n", s.op->note);
    }
    return out;
}

}  // namespace rmcp::render
