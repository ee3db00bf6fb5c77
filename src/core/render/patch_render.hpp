// The patch manager's outputs other than plans and diffs: a patch as JSON (`patch list`,
// `patch show --format json`), one operation in words (`patch show`), a plan as JSON
// (`patch plan --format json`, the confirmation of `apply`).
#pragma once

#include "patch/patch.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp::render {

nlohmann::json patch_json(const patch::Patch& p);
std::string describe_operation(const patch::Operation& op);
nlohmann::json plan_json(const patch::Plan& plan);

}  // namespace rmcp::render
