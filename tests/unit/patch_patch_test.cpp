#include "patch/patch.hpp"

#include "facts/facts.hpp"
#include "patch/profile.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::patch {
namespace {

TEST(PatchPatch, ShippedPatchesLoad) {
    auto set = load_patches(std::string(RMCP_SOURCE_DIR) + "/patches");
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
