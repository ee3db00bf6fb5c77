// `--profile auto`'s rules (patch/auto_profile.cpp, choose_auto_profile) over the shipped
// profiles/rules/auto.toml and fixture roots, and the rules file's own errors.
#include "patch/auto_profile.hpp"

#include "detect/detect.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rmcp::patch {
namespace {

namespace fs = std::filesystem;

const fs::path k_source(RMCP_SOURCE_DIR);
const fs::path k_rules = k_source / "profiles" / "rules" / "auto.toml";

ProfileSet shipped() {
    auto set = load_profiles(k_source / "profiles");
    EXPECT_TRUE(set.ok());
    return set.ok() ? *set : ProfileSet{};
}

Facts detect_fixture(const std::string& name) {
    auto root = Root::open(k_source / "tests" / "fixtures" / name);
    EXPECT_TRUE(root.ok()) << name;
    return root.ok() ? detect(*root) : Facts{};
}

AutoChoice choose(const std::string& fixture) {
    auto c = choose_auto_profile(shipped(), k_rules, detect_fixture(fixture));
    EXPECT_TRUE(c.ok()) << fixture << ": " << (c.ok() ? "" : c.error().message());
    return c.ok() ? *c : AutoChoice{};
}

// KB audit 2: without an AMD GPU nothing is hidden (the cpu rung's empty CUDA_VISIBLE_DEVICES
// would switch off an NVIDIA GPU that works).
TEST(AutoProfile, NoAmdGpuChangesNothing) {
    const auto c = choose("no-amdgpu");
    EXPECT_EQ(c.profile, "default");
    EXPECT_EQ(c.why,
              "detect found no AMD GPU with a known target: nothing to change (other vendors' GPUs are left alone)");
    EXPECT_EQ(c.rule_line, 18U);  // the first [[rule]] of auto.toml
}

TEST(AutoProfile, InaccessibleKfdRunsOnTheCpu) {
    // A supported gfx1030 whose /dev/kfd this user cannot open.
    const auto c = choose("kfd-no-access");
    EXPECT_EQ(c.profile, "cpu");
    EXPECT_EQ(c.why, "/dev/kfd is not accessible to this user (see the device-access patch)");
    EXPECT_EQ(c.rule_line, 24U);
}

TEST(AutoProfile, UnsupportedRdna2ChipRunsAsItsFamilysSupportedMember) {
    // gfx1031 is not on AMD's list; isa-override has a rule for gfx1031-gfx1036 (→ 10.3.0).
    const auto c = choose("rx6700xt-gfx1031");
    EXPECT_EQ(c.profile, "isa-override");
    EXPECT_EQ(c.rule_line, 32U);
}

TEST(AutoProfile, SupportedOrOverrideLessChipsGetTheDefault) {
    // gfx1100 is supported: no override.
    EXPECT_EQ(choose("rx7900xtx-gfx1100").profile, "default");
    // gfx1012 (RDNA1) is unsupported, but its family has no supported member to run as.
    const auto c = choose("rx5500xt-gfx1012");
    EXPECT_EQ(c.profile, "default");
    EXPECT_EQ(c.why, "no rule above matched");
    EXPECT_EQ(c.rule_line, 39U);
}

class AutoRulesFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("rmcp-auto-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
    fs::path write(const std::string& text) {
        const auto p = dir / "auto.toml";
        std::ofstream(p) << text;
        return p;
    }
    fs::path dir;
};

TEST_F(AutoRulesFile, MissingFileIsAnError) {
    EXPECT_FALSE(choose_auto_profile(shipped(), dir / "none.toml", Facts{}).ok());
}

TEST_F(AutoRulesFile, UnknownProfileUnknownKeyAndNoMatch) {
    const auto unknown_profile =
        choose_auto_profile(shipped(), write("[[rule]]\nprofile = \"no-such-rung\"\nwhy = \"x\"\n"), Facts{});
    ASSERT_FALSE(unknown_profile.ok());
    EXPECT_NE(unknown_profile.error().message().find("no-such-rung"), std::string::npos)
        << unknown_profile.error().message();

    EXPECT_FALSE(
        choose_auto_profile(shipped(), write("[[rule]]\nprofile = \"cpu\"\nwhy = \"x\"\ncolour = 1\n"), Facts{}).ok());
    EXPECT_FALSE(choose_auto_profile(shipped(),
                                     write("[[rule]]\nprofile = \"cpu\"\nwhy = \"x\"\nkfd_accessible = \"yes\"\n"),
                                     Facts{})
                     .ok());

    // No GPU: a gpu_count = 1 rule does not hold, and nothing follows it.
    const auto none =
        choose_auto_profile(shipped(), write("[[rule]]\nprofile = \"cpu\"\nwhy = \"x\"\ngpu_count = 1\n"), Facts{});
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message().find("no rule matched"), std::string::npos);
}

TEST_F(AutoRulesFile, UnknownFactsNeverSatisfyACondition) {
    // kfd.accessible is absent in empty facts: neither `true` nor `false` holds.
    const auto rules = write("[[rule]]\nprofile = \"cpu\"\nwhy = \"a\"\nkfd_accessible = false\n"
                             "[[rule]]\nprofile = \"miopen-off\"\nwhy = \"b\"\nkfd_accessible = true\n"
                             "[[rule]]\nprofile = \"default\"\nwhy = \"c\"\n");
    const auto c = choose_auto_profile(shipped(), rules, Facts{});
    ASSERT_TRUE(c.ok()) << c.error().message();
    EXPECT_EQ(c->profile, "default");
    EXPECT_EQ(c->why, "c");
    EXPECT_EQ(c->rule_line, 9U);  // the third [[rule]] starts on line 9
}

}  // namespace
}  // namespace rmcp::patch
