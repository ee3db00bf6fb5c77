// The `next` command for a recognised problem where nothing is planned on the machine
// (`rmcp explain`, `rmcp run`'s crash summary): the same words doctor uses (issue 30, one
// vocabulary: `next` is the one command line to run next), from the entry's fixes and the
// patch definitions alone. Doctor plans every fix on the machine and may choose a later one
// (patch/doctor_fix.hpp); without a plan the first fix rmcp knows is the one named.
#pragma once

#include "kb/kb.hpp"
#include "patch/patch.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rmcp::patch {

struct FixStep {
    std::string patch;  // the fix: a patch id
    std::string next;   // the command line
    std::string cost;   // the entry's cost of that fix ("" when it gives none)
};

// The first of the entry's fixes that names a patch in `patches`:
//   - an advisory whose one command is the same everywhere: that command (`rmcp ...` as the
//     user runs rmcp here); one chosen by distribution or GPU: `<command> patch plan ID`, which
//     prints the line for this machine;
//   - otherwise `<command> patch apply ID`, with `sudo ` when it writes under /etc (modprobe)
//     and `live` (the machine itself, not --root).
// `command` is how the user runs rmcp ("rmcp", "rmcp --root DIR"). nullopt when the entry has
// no such fix, or its fix is advise-ignore's "nothing to run".
std::optional<FixStep> first_fix_step(const kb::Entry& entry, const PatchSet& patches, std::string_view command,
                                      bool live);

}  // namespace rmcp::patch
