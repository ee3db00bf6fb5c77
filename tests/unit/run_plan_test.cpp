// run/plan.cpp: which profile each attempt of `rmcp run` gets (docs/run.md "Retries").
#include "run/plan.hpp"

#include <gtest/gtest.h>

namespace rmcp::run {
namespace {

patch::ProfileSet shipped() {
    auto set = patch::load_profiles(std::filesystem::path(RMCP_SOURCE_DIR) / "profiles");
    EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().message());
    return set.ok() ? std::move(*set) : patch::ProfileSet{};
}

std::vector<std::string> names(const std::vector<Rung>& plan) {
    std::vector<std::string> out;
    for (const auto& r : plan) out.push_back(r.profile + (r.hide_gpu ? "+cpu" : ""));
    return out;
}

// The ladder in rank order, without the GPU-hiding rung, from `start` up.
std::vector<std::string> climb_from(const patch::ProfileSet& set, const std::string& start, std::size_t n) {
    std::vector<std::string> out;
    bool on = false;
    for (const auto* p : set.ladder()) {
        if (p->name == start) on = true;
        if (on && !p->hide_gpu && out.size() < n) out.push_back(p->name);
    }
    return out;
}

TEST(RunPlan, NoRetriesIsOneAttemptUnderTheStartProfile) {
    const auto set = shipped();
    PlanRequest req;
    req.start = "miopen-no-gemm";
    auto plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(names(*plan), std::vector<std::string>{"miopen-no-gemm"});
}

TEST(RunPlan, RetriesClimbOneRungEachWithoutTheCpuRung) {
    const auto set = shipped();
    PlanRequest req;
    req.start = "miopen-no-gemm";
    req.retries = 2;
    auto plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(names(*plan), climb_from(set, "miopen-no-gemm", 3));
    // More retries than rungs: stops at the strictest GPU rung, never hides the GPU.
    req.retries = 50;
    plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    for (const auto& rung : *plan) EXPECT_FALSE(rung.hide_gpu);
    EXPECT_EQ(names(*plan), climb_from(set, "miopen-no-gemm", 50));
}

TEST(RunPlan, FallbackCpuReplacesOrFollowsTheLastRung) {
    const auto set = shipped();
    PlanRequest req;
    req.start = "miopen-no-gemm";
    req.retries = 2;
    req.fallback = Fallback::cpu;
    auto plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->size(), 3u);
    EXPECT_EQ((*plan)[1].profile, climb_from(set, "miopen-no-gemm", 2)[1]);
    EXPECT_TRUE((*plan)[2].hide_gpu);
    req.retries = 50;
    plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->size(), climb_from(set, "miopen-no-gemm", 50).size() + 1);
    EXPECT_TRUE(plan->back().hide_gpu);
    // Without a retry the fallback has no attempt to use.
    req.retries = 0;
    plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(names(*plan), std::vector<std::string>{"miopen-no-gemm"});
}

TEST(RunPlan, UserEnvComesFirstThenUnsetThenSet) {
    const auto set = shipped();
    PlanRequest req;
    req.start = "cpu";
    req.user_env.set = {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}};
    auto plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    const auto& env = plan->front().env;
    ASSERT_FALSE(env.empty());
    EXPECT_EQ(env.front().name, "HSA_OVERRIDE_GFX_VERSION");
    const auto after =
        std::find_if(env.begin() + 1, env.end(), [](const EnvEdit& c) { return c.name == "HSA_OVERRIDE_GFX_VERSION"; });
    ASSERT_NE(after, env.end());
    EXPECT_FALSE(after->value.has_value());  // the cpu rung unsets the override after profile.env set it
    auto final_env = apply_env({"HSA_OVERRIDE_GFX_VERSION=11.0.0", "PATH=/bin"}, env);
    EXPECT_FALSE(env_value(final_env, "HSA_OVERRIDE_GFX_VERSION").has_value());
    EXPECT_EQ(env_value(final_env, "HIP_VISIBLE_DEVICES"), std::optional<std::string>(""));
}

// profile.env may carry `unset NAME` lines (env-unset-* patches): run must honour them.
TEST(RunPlan, UserEnvUnsetsReachTheChild) {
    const auto set = shipped();
    PlanRequest req;
    req.start = "default";
    req.user_env.unset = {"HSA_OVERRIDE_GFX_VERSION"};
    auto plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    auto final_env = apply_env({"HSA_OVERRIDE_GFX_VERSION=10.3.0", "PATH=/bin"}, plan->front().env);
    EXPECT_FALSE(env_value(final_env, "HSA_OVERRIDE_GFX_VERSION").has_value());
    EXPECT_EQ(env_value(final_env, "PATH"), std::optional<std::string>("/bin"));
}

// `auto` is decided once (patch::choose_auto); the plan starts from the environment it
// resolved, findings' changes included, and climbs from its rung.
TEST(RunPlan, AStartEnvironmentIsTheFirstRung) {
    const auto set = shipped();
    PlanRequest req;
    patch::ProfileEnv start;
    start.name = "isa-override";
    start.set = {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}, {"EXTRA", "from-a-finding"}};
    req.start_env = start;
    req.retries = 1;
    req.gpu_targets = {"gfx1031"};
    auto plan = make_plan(set, req);
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->size(), 2U);
    EXPECT_EQ((*plan)[0].profile, "isa-override");
    EXPECT_EQ(apply_env({}, (*plan)[0].env),
              (std::vector<std::string>{"EXTRA=from-a-finding", "HSA_OVERRIDE_GFX_VERSION=10.3.0"}));
    EXPECT_NE((*plan)[1].profile, "isa-override");
}

TEST(RunPlan, UnknownProfileIsAUsageError) {
    const auto set = shipped();
    PlanRequest req;
    req.start = "nope";
    auto plan = make_plan(set, req);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().code, ExitCode::usage);
}

TEST(RunEnv, ApplyEnvReplacesUnsetsAndAppends) {
    const auto env = apply_env({"A=1", "B=2", "A=dup"}, {{"A", "x"}, {"B", std::nullopt}, {"C", "3"}});
    EXPECT_EQ(env, (std::vector<std::string>{"A=x", "C=3"}));
}

}  // namespace
}  // namespace rmcp::run
