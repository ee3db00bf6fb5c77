// Which profile each attempt of `rmcp run` runs under: the escalation ladder
// (profiles/, patch/profile.hpp) climbed from the starting profile, one rung per retry.
#pragma once

#include "patch/profile.hpp"
#include "run/supervisor.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::run {

enum class Fallback { none, cpu };

struct PlanRequest {
    std::string start;  // a profile name ("auto" is decided by patch::choose_auto)
    // The first rung's environment when the caller resolved it (auto: the rung plus the
    // findings' fixes); its name is the rung the retries climb from.
    std::optional<patch::ProfileEnv> start_env;
    unsigned retries = 0;
    Fallback fallback = Fallback::none;
    std::vector<std::string> gpu_targets;  // physical gfx targets (patch::gpu_targets)
    patch::UserEnv user_env;               // the user's profile.env, applied first
};

// attempt 1 under `start`, each retry one rung stricter (rungs that change nothing here are
// skipped; the GPU-hiding rung only with Fallback::cpu), never more than retries+1 attempts.
// With Fallback::cpu and at least one retry, the last attempt hides the GPU: it replaces
// the last rung when the ladder is tall enough, or follows the top rung otherwise.
Result<std::vector<Rung>> make_plan(const patch::ProfileSet& set, const PlanRequest& request);

// A rung from a resolved profile: the user's env first, then the profile's unsets and sets.
Rung rung_from(const patch::ProfileEnv& profile, const patch::UserEnv& user_env);
// No profile at all: the user's environment (and profile.env) as they are.
Rung plain_rung(const patch::UserEnv& user_env);

}  // namespace rmcp::run
