#include "patch/profile.hpp"

#include <gtest/gtest.h>

namespace rmcp::patch {
namespace {

ProfileSet shipped() {
    auto set = load_profiles(std::string(RMCP_SOURCE_DIR) + "/profiles");
    EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().message());
    return set.ok() ? *set : ProfileSet{};
}

TEST(PatchProfile, LadderGoesFromDefaultToCpu) {
    const auto set = shipped();
    std::vector<std::string> names;
    for (const auto* p : set.ladder()) names.push_back(p->name);
    EXPECT_EQ(names, (std::vector<std::string>{"default", "isa-override", "miopen-no-gemm", "miopen-conservative",
                                               "allocator-conservative", "miopen-off", "cpu"}));
    for (const auto* p : set.ladder()) EXPECT_FALSE(p->cost.empty()) << p->name;
}

TEST(PatchProfile, NextStricterSkipsAnOverrideThatCannotApply) {
    const auto set = shipped();
    ASSERT_NE(set.next_stricter("default", {"gfx1031"}), nullptr);
    EXPECT_EQ(set.next_stricter("default", {"gfx1031"})->name, "isa-override");
    EXPECT_EQ(set.next_stricter("default", {"gfx1010"})->name, "miopen-no-gemm");  // RDNA1: no safe override
    EXPECT_EQ(set.next_stricter("default", {"gfx1100"})->name, "miopen-no-gemm");  // supported: none needed
    EXPECT_EQ(set.next_stricter("cpu", {}), nullptr);
    EXPECT_EQ(set.next_stricter("nope", {}), nullptr);
}

TEST(PatchProfile, ResolveFlattensExtendsAndDecidesTheOverride) {
    const auto set = shipped();
    auto env = set.resolve("miopen-no-gemm", {"gfx1032"});
    ASSERT_TRUE(env.ok());
    EXPECT_EQ(env->set.at("HSA_OVERRIDE_GFX_VERSION"), "10.3.0");
    EXPECT_EQ(env->set.at("MIOPEN_DEBUG_CONV_GEMM"), "0");
    env = set.resolve("miopen-no-gemm", {"gfx1012"});
    ASSERT_TRUE(env.ok());
    EXPECT_EQ(env->set.count("HSA_OVERRIDE_GFX_VERSION"), 0u);
    ASSERT_EQ(env->notes.size(), 1u);
    // GPUs that would need different values cannot share one variable.
    env = set.resolve("isa-override", {"gfx1031", "gfx1102"});
    ASSERT_TRUE(env.ok());
    EXPECT_EQ(env->set.count("HSA_OVERRIDE_GFX_VERSION"), 0u);
    env = set.resolve("cpu", {"gfx1031"});
    ASSERT_TRUE(env.ok());
    EXPECT_TRUE(env->hide_gpu);
    EXPECT_EQ(env->unset, std::vector<std::string>{"HSA_OVERRIDE_GFX_VERSION"});
    EXPECT_FALSE(set.resolve("nope", {}).ok());
}

TEST(PatchProfile, ApplyProfileEnvUnsetsThenSets) {
    ProfileEnv p;
    p.set = {{"A", "1"}};
    p.unset = {"B"};
    std::map<std::string, std::string> env{{"A", "0"}, {"B", "x"}, {"C", "y"}};
    apply_profile_env(env, p);
    EXPECT_EQ(env, (std::map<std::string, std::string>{{"A", "1"}, {"C", "y"}}));
}

TEST(PatchProfile, MalformedProfilesNameTheLine) {
    auto p = parse_profile("name = \"x\"\nrank = 0\ndescription = \"d\"\ncost = \"c\"\nhide_gpu = \"yes\"\n", "f.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().path, "f.toml:5");
    p = parse_profile("name = \"x\"\nrank = 0\ndescription = \"d\"\n", "f.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().cause.find("cost"), std::string::npos);
    p = parse_profile("name = \"x\"\nrank = 0\ndescription = \"d\"\ncost = \"c\"\ncolour = 1\n", "f.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().path, "f.toml:5");
}

TEST(PatchProfile, EnvFileRoundTripsAnyValue) {
    UserEnv env;
    env.set = {{"A", "it's"}, {"B", ""}, {"C", "'''"}, {"D", "$x `y` \\ \""}};
    env.unset = {"E"};
    auto back = parse_user_env(render_env_file(env), "f");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, env);
    auto bad = parse_user_env("# c\nexport A='1'\nA=$(id)\n", "f");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "f:3");
}

// Hand-edited lines in ordinary sh syntax mean what sh makes of them; rmcp's own write of
// the result is canonical and reads back the same (docs/patches.md, "profile.env").
TEST(PatchProfile, EnvFileReadsHandEditedShSyntax) {
    const std::string text = "# mine\n"
                             "export HSA_OVERRIDE_GFX_VERSION=\"10.3.0\"\n"
                             "PLAIN=abc   # trailing comment\n"
                             "export A=1 B='two words'; C=\"q\\\"\\$x\\\\ \\n\"\n"
                             "D=it\\'s\n"
                             "E='multi\nline'\n"
                             "export F\n"
                             "unset -v G H\n"
                             "MIXED='a'\"b\"c\\ d\n";
    auto env = parse_user_env(text, "f");
    ASSERT_TRUE(env.ok()) << env.error().message();
    EXPECT_EQ(env->set, (std::map<std::string, std::string>{{"A", "1"},
                                                            {"B", "two words"},
                                                            {"C", "q\"$x\\ \\n"},
                                                            {"D", "it's"},
                                                            {"E", "multi\nline"},
                                                            {"HSA_OVERRIDE_GFX_VERSION", "10.3.0"},
                                                            {"MIXED", "abc d"},
                                                            {"PLAIN", "abc"}}));
    EXPECT_EQ(env->unset, (std::vector<std::string>{"G", "H"}));
    auto back = parse_user_env(render_env_file(*env), "g");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, *env);
    EXPECT_EQ(render_env_file(*back), render_env_file(*env));
}

TEST(PatchProfile, EnvFileRefusesWhatNeedsAShell) {
    for (const char* text : {"A=$(id)\n", "A=`id`\n", "export A=\"$HOME/x\"\n", "A=${B}\n", "A=*.so\n", "A=~/x\n",
                             "source other.env\n", "A=1 | tee\n", "A='open\n", "A=\"open\n"}) {
        auto env = parse_user_env(std::string("# ok\n") + text, "f");
        ASSERT_FALSE(env.ok()) << text;
        EXPECT_EQ(env.error().path, "f:2") << text;
    }
}

TEST(PatchProfile, UserEnvFileFollowsXdg) {
    EXPECT_EQ(user_env_file_path({{"HOME", "/home/u"}}), "/home/u/.config/rmcp/profile.env");
    EXPECT_EQ(user_env_file_path({{"HOME", "/home/u"}, {"XDG_CONFIG_HOME", "/cfg"}}), "/cfg/rmcp/profile.env");
    EXPECT_EQ(user_env_file_path({{"HOME", "/home/u"}, {"XDG_CONFIG_HOME", "rel"}}),
              "/home/u/.config/rmcp/profile.env");
}

}  // namespace
}  // namespace rmcp::patch
