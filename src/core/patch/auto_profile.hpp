// `--profile auto`: which rung of the ladder fits this machine, decided by data-driven
// rules over detect's facts (profiles/rules/auto.toml), plus the env changes of the
// patches that doctor's findings name as fixes. choose_auto() is the one decision that
// `rmcp env`, `rmcp run`, `rmcp doctor --fix` and rmcp.torch.enable() (through `rmcp env`)
// share (docs/patches.md, "auto").
#pragma once

#include "patch/profile.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace rmcp {
struct Facts;
}
namespace rmcp::kb {
struct KnowledgeBase;
}

namespace rmcp::patch {

struct AutoChoice {
    std::string profile;
    std::string why;
    unsigned rule_line = 0;
};

// The rules alone.
// `libraries`: scan's coverage facts, which decide `needs_override` (else AMD's list does).
Result<AutoChoice> choose_auto_profile(const ProfileSet& profiles, const std::filesystem::path& rules_file,
                                       const Facts& facts, const nlohmann::json* libraries = nullptr);

struct AutoDecision {
    AutoChoice choice;
    ProfileEnv env;                    // the chosen rung resolved here, plus the findings' changes
    std::vector<std::string> patches;  // env patches the findings contributed, in order
    std::vector<std::string> notes;    // what a user may want to know (stderr notes)
    std::vector<std::string> verbose;  // what only -v shows
};

struct AutoSources {
    std::filesystem::path rules_file;  // profiles/rules/auto.toml
    std::filesystem::path patch_dir;
    std::filesystem::path kb_dir;
    // The knowledge base of kb_dir when the caller has it loaded already (doctor does): used
    // instead of loading kb_dir again, which is most of the decision's time.
    const kb::KnowledgeBase* kb = nullptr;
};

// The auto profile for a machine: the rule's rung, resolved for its GPUs, plus, unless the
// rung hides the GPU, the env changes of the first applicable env fix of every finding that
// doctor reports on `doctor_facts` (facts_to_json with the `libraries` coverage facts, as
// `rmcp doctor` evaluates them). A knowledge base that does not load is a note, not an error.
Result<AutoDecision> choose_auto(const ProfileSet& profiles, const Facts& facts, const nlohmann::json& doctor_facts,
                                 const AutoSources& sources);

}  // namespace rmcp::patch
