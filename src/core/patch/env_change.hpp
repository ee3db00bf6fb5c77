// How a plan describes a change to the user's profile.env (patch/plan.cpp): what the diff does,
// in the words `rmcp env` would print, not the patch's own list of operations.
#pragma once

#include "patch/profile.hpp"

#include <string>

namespace rmcp::patch {

// One line for a plan step that changes profile.env, from the file before and after the step:
// "export A='1'; unset B; forget C" ("unset X_0 … X_8 (9 variables)" for long lists), or
// "no change (already in effect)".
std::string describe_env_change(const UserEnv& before, const UserEnv& after);

}  // namespace rmcp::patch
