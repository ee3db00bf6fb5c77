#include "patch/patch.hpp"

#include "facts/facts.hpp"
#include "patch/profile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace rmcp::patch {
namespace {

TEST(PatchPatch, ShippedPatchesLoad) {
    auto set = load_patches(std::filesystem::path(RMCP_SOURCE_DIR) / "patches");
    ASSERT_TRUE(set.ok()) << set.error().message();
    EXPECT_NE(set->find("modprobe-cwsr-disable"), nullptr);
    for (const auto& p : set->patches) {
        EXPECT_FALSE(p.operations.empty()) << p.id;
        EXPECT_EQ(p.file.substr(p.file.rfind('/') + 1), p.id + ".toml");
    }
}

TEST(PatchPatch, MalformedPatchNamesTheLine) {
    const std::string head = "id = \"a-b\"\ntitle = \"t\"\nwhy = \"w\"\ncost = \"c\"\nevidence = \"reported\"\n";
    auto p = parse_patch(head + "\n[[operation]]\nkind = \"env\"\nset = { \"A B\" = \"1\" }\n", "p.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().path, "p.toml:7");
    p = parse_patch(head + "evidence2 = 1\n", "p.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().path, "p.toml:6");
    p = parse_patch(head, "p.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().cause.find("[[operation]]"), std::string::npos);
}

}  // namespace
}  // namespace rmcp::patch

// takes_effect: at-once by default, re-login for an advisory whose result a running login does
// not see (docs/patches.md, "From finding to fixed"); anything else names its line.
TEST(PatchPatch, TakesEffectIsAtOnceOrRelogin) {
    const std::string head = "id = \"advise-x\"\ntitle = \"t\"\nwhy = \"w\"\ncost = \"c\"\nevidence = \"reported\"\n";
    const std::string op = "[[operation]]\nkind = \"advisory\"\ncommand = \"true\"\n";
    auto plain = rmcp::patch::parse_patch(head + op, "p.toml");
    ASSERT_TRUE(plain) << plain.error().message();
    EXPECT_EQ(plain->takes_effect, rmcp::patch::TakesEffect::at_once);
    auto relogin = rmcp::patch::parse_patch(head + "takes_effect = \"re-login\"\n" + op, "p.toml");
    ASSERT_TRUE(relogin) << relogin.error().message();
    EXPECT_EQ(relogin->takes_effect, rmcp::patch::TakesEffect::relogin);
    auto bad = rmcp::patch::parse_patch(head + "takes_effect = \"reboot\"\n" + op, "p.toml");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "p.toml:6");
}
