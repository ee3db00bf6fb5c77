// A small in-process unified diff (line LCS) for the config files rmcp writes: they are a
// few lines long, so O(n·m) is fine and no `diff` process is needed for `patch plan`.
#pragma once

#include <string>
#include <string_view>

namespace rmcp::patch {

// Unified diff with `context` lines around changes; "" when the texts are equal.
// from_label/to_label go on the ---/+++ lines as given ("/dev/null" for absence).
std::string unified_diff(std::string_view from, std::string_view to, std::string_view from_label,
                         std::string_view to_label, unsigned context = 3);

}  // namespace rmcp::patch
