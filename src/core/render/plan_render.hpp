// The text of `rmcp patch plan` and of apply's confirmation: the operations and unified diffs.
#pragma once

#include "patch/patch.hpp"

#include <string>

namespace rmcp::render {

std::string render_plan(const patch::Plan& plan);

}  // namespace rmcp::render
