// The text of `rmcp patch plan` (patch/patch.hpp declares it too, for its older callers).
#pragma once

#include "patch/patch.hpp"

#include <string>

namespace rmcp::patch {

// Operations and unified diffs.
std::string render_plan(const Plan& plan);

}  // namespace rmcp::patch
