#include "patch/doctor_fix.hpp"

#include "detect/detect.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rmcp::patch {
namespace {

const std::filesystem::path k_source = RMCP_SOURCE_DIR;

Facts one_gpu(const std::string& target) {
    Facts facts;
    Gpu gpu;
    gpu.node = 1;
    gpu.gfx_target = Fact<std::string>::known(target, "test");
    apply_gfx_override(gpu, facts.env);
    facts.gpus.push_back(gpu);
    return facts;
}

// The effective environment is the process's, then profile.env, then the profile; the
// effective target follows it, and an override that profile.env unsets is gone.
TEST(PatchDoctorFix, FactsFollowProfileEnvThenProfile) {
    Facts facts = one_gpu("gfx1031");
    facts.env["HSA_OVERRIDE_GFX_VERSION"] = "11.0.0";
    apply_gfx_override(facts.gpus[0], facts.env);
    ASSERT_EQ(*facts.gpus[0].effective_gfx_target, "gfx1100");

    UserEnv user;
    user.unset = {"HSA_OVERRIDE_GFX_VERSION"};
    user.set = {{"NOT_RELEVANT_AT_ALL", "x"}};
    const Facts cleared = facts_with_env(facts, user, nullptr);
    EXPECT_EQ(*cleared.gpus[0].effective_gfx_target, "gfx1031");
    EXPECT_FALSE(cleared.gpus[0].gfx_override.has_value());
    EXPECT_EQ(cleared.env.count("NOT_RELEVANT_AT_ALL"), 0U);

    ProfileEnv profile;
    profile.set = {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}};
    const Facts overridden = facts_with_env(facts, user, &profile);
    EXPECT_EQ(*overridden.gpus[0].effective_gfx_target, "gfx1030");
    EXPECT_EQ(overridden.env.at("HSA_OVERRIDE_GFX_VERSION"), "10.3.0");
}

TEST(PatchDoctorFix, FixIdsAreTheOpenFindingsFirstFixesOnceEach) {
    kb::Entry a;
    a.id = "a";
    a.severity = kb::Severity::warning;
    kb::DoctorReport report;
    const auto add = [&](kb::FindingStatus status, std::string fix) {
        kb::Finding f;
        f.entry = &a;
        f.status = status;
        f.chosen_fix = std::move(fix);
        f.next_command = f.chosen_fix.empty() ? "" : "rmcp patch apply " + f.chosen_fix;
        report.findings.push_back(f);
    };
    add(kb::FindingStatus::open, "env-x");
    add(kb::FindingStatus::open, "env-x");
    add(kb::FindingStatus::fixed_by_profile, "env-y");
    add(kb::FindingStatus::pending, "modprobe-z");
    add(kb::FindingStatus::open, "");
    add(kb::FindingStatus::open, "python-w");
    EXPECT_EQ(fix_patch_ids(report), (std::vector<std::string>{"env-x", "python-w"}));
    EXPECT_TRUE(kb::has_findings_at_or_above(report, kb::Severity::info));
    for (auto& f : report.findings)
        if (f.status == kb::FindingStatus::open) f.status = kb::FindingStatus::fixed;
    EXPECT_FALSE(kb::has_findings_at_or_above(report, kb::Severity::info));
}

// One auto decision for every front end: on an RDNA2 card that AMD does not list, the rules
// pick the ISA-family override, and its value is in the environment.
TEST(PatchDoctorFix, ChooseAutoGivesTheRungAndItsEnvironment) {
    auto profiles = load_profiles(k_source / "profiles");
    ASSERT_TRUE(profiles.ok());
    Facts facts = one_gpu("gfx1031");
    facts.gpus[0].officially_supported = Fact<bool>::known(false, "test");
    facts.kfd.accessible = Fact<bool>::known(true, "test");
    TorchInstall torch;  // a ROCm PyTorch: without ROCm, auto changes nothing (issue 28)
    torch.hip_version = Fact<std::string>::known("6.2.41133", "test");
    facts.torch.push_back(torch);
    AutoSources sources{k_source / "profiles" / "rules" / "auto.toml", k_source / "patches", k_source / "kb"};
    auto d = choose_auto(*profiles, facts, nlohmann::json::object(), sources);
    ASSERT_TRUE(d.ok()) << d.error().message();
    EXPECT_EQ(d->choice.profile, "isa-override");
    EXPECT_EQ(d->env.set.at("HSA_OVERRIDE_GFX_VERSION"), "10.3.0");
    facts.gpus.clear();
    d = choose_auto(*profiles, facts, nlohmann::json::object(), sources);
    ASSERT_TRUE(d.ok());
    // No AMD GPU: nothing is hidden (KB audit 2: an NVIDIA GPU would be switched off).
    EXPECT_EQ(d->choice.profile, "default");
    EXPECT_FALSE(d->env.hide_gpu);
}

// User profiles are read through the Root and add to the ladder; one with a shipped name wins.
TEST(PatchDoctorFix, UserProfilesAddToTheShippedLadder) {
    const auto dir = std::filesystem::path(testing::TempDir()) / "rmcp-user-profiles";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "home/u/.config/rmcp/profiles");
    std::ofstream(dir / "home/u/.config/rmcp/profiles/probed.toml")
        << "name = \"probed\"\nrank = 5\ndescription = \"d\"\ncost = \"c\"\n[set]\nA = \"1\"\n";
    std::ofstream(dir / "home/u/.config/rmcp/profiles/default.toml")
        << "name = \"default\"\nrank = 0\ndescription = \"mine\"\ncost = \"c\"\n";
    auto root = Root::open(dir);
    ASSERT_TRUE(root.ok());
    std::vector<std::string> notes;
    auto set = load_profiles_with_user(k_source / "profiles", *root, {{"HOME", "/home/u"}}, notes);
    ASSERT_TRUE(set.ok()) << set.error().message();
    ASSERT_NE(set->find("probed"), nullptr);
    EXPECT_EQ(set->find("default")->description, "mine");
    ASSERT_EQ(notes.size(), 1U);
    EXPECT_NE(notes[0].find("default"), std::string::npos);
    EXPECT_NE(set->find("isa-override"), nullptr);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rmcp::patch
