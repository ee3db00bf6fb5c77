#include "patch/next_step.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rmcp::patch {

namespace {

// "true" is the data's way to say there is nothing to run (patches/advise-ignore.toml).
bool nothing_to_run(std::string_view line) { return trim(line).empty() || trim(line) == "true"; }

}  // namespace

std::optional<FixStep> first_fix_step(const kb::Entry& entry, const PatchSet& patches, std::string_view command,
                                      bool live) {
    for (const auto& fix : entry.fixes) {
        const Patch* p = patches.find(fix.patch);
        if (!p) continue;
        FixStep step{p->id, {}, fix.cost};
        const bool advisory = std::all_of(p->operations.begin(), p->operations.end(),
                                          [](const Operation& op) { return op.kind == OpKind::advisory; });
        if (!advisory) {
            const bool system = std::any_of(p->operations.begin(), p->operations.end(),
                                            [](const Operation& op) { return op.kind == OpKind::modprobe; });
            step.next = fmt::format("{}{} patch apply {}", live && system ? "sudo " : "", command, sh_word(p->id));
            return step;
        }
        // One fixed line for every machine: print it; anything chosen per machine: let the
        // plan choose it.
        std::vector<std::string> lines;
        bool per_machine = false;
        for (const auto& op : p->operations) {
            // {placeholders} and per-distribution or per-GPU lines are filled in by the plan.
            per_machine =
                per_machine || !op.by_distro.empty() || !op.by_gpu.empty() || op.command.find('{') != std::string::npos;
            for (const auto line : split_lines(op.command))
                if (!nothing_to_run(line)) lines.emplace_back(trim(line));
        }
        if (!per_machine && lines.empty()) return std::nullopt;  // advise-ignore: nothing to do
        if (per_machine || lines.size() != 1) {
            step.next = fmt::format("{} patch plan {}", command, sh_word(p->id));
            return step;
        }
        std::string line = lines.front();
        if (line.rfind("rmcp ", 0) == 0) line = std::string(command) + line.substr(4);
        step.next = std::move(line);
        return step;
    }
    return std::nullopt;
}

}  // namespace rmcp::patch
