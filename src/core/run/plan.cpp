#include "run/plan.hpp"

#include <fmt/format.h>

namespace rmcp::run {

namespace {

Error plan_error(std::string_view name, std::string cause) {
    return Error{"choosing profile", std::string(name), std::move(cause), ExitCode::usage};
}

}  // namespace

Rung plain_rung(const patch::UserEnv& user_env) {
    Rung rung;
    // The same order as patch::apply_user_env: unset first, then set.
    for (const auto& name : user_env.unset) rung.env.push_back({name, std::nullopt});
    for (const auto& [name, value] : user_env.set) rung.env.push_back({name, value});
    return rung;
}

Rung rung_from(const patch::ProfileEnv& profile, const patch::UserEnv& user_env) {
    Rung rung = plain_rung(user_env);
    rung.profile = profile.name;
    rung.hide_gpu = profile.hide_gpu;
    // The same order as patch::apply_profile_env: unset first, then set.
    for (const auto& name : profile.unset) rung.env.push_back({name, std::nullopt});
    for (const auto& [name, value] : profile.set) rung.env.push_back({name, value});
    return rung;
}

Result<std::vector<Rung>> make_plan(const patch::ProfileSet& set, const PlanRequest& request) {
    const std::string start = request.start_env ? request.start_env->name : request.start;
    if (!set.find(start)) {
        std::string names;
        for (const auto* p : set.ladder()) names += (names.empty() ? "" : ", ") + p->name;
        return plan_error(start, fmt::format("no such profile (known: {}, auto)", names));
    }
    const std::size_t attempts = std::size_t{request.retries} + 1;
    std::vector<std::string> climb{start};
    for (const patch::Profile* p = set.next_stricter(start, request.gpu_targets); p && climb.size() < attempts;
         p = set.next_stricter(p->name, request.gpu_targets)) {
        if (p->hide_gpu) continue;  // the CPU rung is --fallback cpu's to add
        climb.push_back(p->name);
    }
    if (request.fallback == Fallback::cpu && request.retries > 0) {
        const patch::Profile* cpu = nullptr;
        for (const auto* p : set.ladder())
            if (p->hide_gpu) cpu = p;
        if (!cpu) return plan_error("--fallback cpu", "no profile hides the GPU (hide_gpu = true)");
        if (climb.back() != cpu->name) {
            if (climb.size() == attempts) climb.back() = cpu->name;
            else climb.push_back(cpu->name);
        }
    }
    std::vector<Rung> plan;
    for (const auto& name : climb) {
        if (request.start_env && plan.empty()) {
            plan.push_back(rung_from(*request.start_env, request.user_env));
            continue;
        }
        auto env = set.resolve(name, request.gpu_targets);
        if (!env) return env.error();
        plan.push_back(rung_from(*env, request.user_env));
    }
    return plan;
}

}  // namespace rmcp::run
