// What doctor knows about fixes: the findings evaluated in the environment a training run
// would get (the process environment, then the user's profile.env, then a profile, in the
// order `rmcp run` and `rmcp env` apply them), each with its status (kb::FindingStatus),
// the first fix that applies on this machine and the exact command to run next
// (docs/patches.md, "From finding to fixed").
#pragma once

#include "facts/facts.hpp"
#include "kb/doctor.hpp"
#include "kb/kb.hpp"
#include "patch/auto_profile.hpp"
#include "patch/patch.hpp"
#include "patch/profile.hpp"
#include "root/root.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::patch {

// The site-packages the start-up hook goes to when none is given: that of a venv, user or
// conda PyTorch detect found, else the user site of the newest system Python (logical path).
std::string default_site_packages(const Root& root, const Facts& facts, const std::map<std::string, std::string>& env);

// The PlanContext for planning `ids` on this machine: environment, distribution, machine
// variables and derived override sets (with the coverage facts of `libraries`, computed
// here when a patch needs them and none are given).
PlanContext machine_plan_context(const Root& root, const Facts& facts, const PatchSet& set,
                                 const std::vector<std::string>& ids, const ProfileSet* profiles,
                                 std::string site_packages, const std::map<std::string, std::string>& env,
                                 const nlohmann::json* libraries = nullptr);

// Facts as they are under extra environment changes (profile.env, then a profile): the
// relevant variables and the effective gfx target of every GPU follow them.
Facts facts_with_env(const Facts& facts, const UserEnv& user, const ProfileEnv* profile);

struct DoctorRequest {
    std::map<std::string, std::string> env;  // the process environment (HOME, XDG_*)
    std::string profile;                     // also evaluate under this profile ("auto" allowed); may be empty
    bool decide_auto = false;                // report the auto decision without evaluating under it
    bool scan = true;                        // coverage facts from library headers
    std::filesystem::path profile_dir;
    std::filesystem::path patch_dir;
    std::filesystem::path kb_dir;
    std::string command;  // how the user runs rmcp: "rmcp", "rmcp --root DIR"
};

struct DoctorOutcome {
    kb::DoctorReport report;    // every finding with status, fix and next command
    Facts facts;                // as a run would see them: profile.env and the profile applied
    nlohmann::json facts_json;  // the same as the JSON the report was evaluated on (with library coverage)
    std::optional<AutoDecision> auto_decision;
    std::string env_file;            // logical path of profile.env
    std::vector<std::string> notes;  // for stderr
};

// Never modifies the machine. Errors: a profile.env that cannot be parsed, an unknown profile.
Result<DoctorOutcome> doctor_with_state(const Root& root, const kb::KnowledgeBase& kb, const DoctorRequest& request);

// The patches `doctor --fix` applies: the first applicable fix of every open finding that
// has something to do (not advise-ignore's no-op), once each.
std::vector<std::string> fix_patch_ids(const kb::DoctorReport& report);

}  // namespace rmcp::patch
