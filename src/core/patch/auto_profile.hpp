// `--profile auto`: which rung of the ladder fits this machine, decided by data-driven
// rules over detect's facts (profiles/rules/auto.toml), plus the env changes of the
// patches that doctor's findings name as fixes (added by the caller, see env.cpp).
#pragma once

#include "patch/profile.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>

namespace rmcp {
struct Facts;
}

namespace rmcp::patch {

struct AutoChoice {
    std::string profile;
    std::string why;
    unsigned rule_line = 0;
};

Result<AutoChoice> choose_auto_profile(const ProfileSet& profiles, const std::filesystem::path& rules_file,
                                       const Facts& facts);

}  // namespace rmcp::patch
