// detect: read the machine through a Root into Facts, once.
#pragma once

#include "facts/facts.hpp"
#include "root/root.hpp"

#include <string_view>

namespace rmcp {

// Never fails: what cannot be read becomes an absent or unreadable fact.
Facts detect(const Root& root);

// Whether an environment variable is one detect reports (FACTS.md lists why each matters).
bool is_relevant_env(std::string_view name);

}  // namespace rmcp
