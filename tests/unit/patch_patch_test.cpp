#include "patch/patch.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::patch {
namespace {

TEST(PatchPatch, OnlyKnownAmdgpuParametersWithValidValues) {
    EXPECT_FALSE(check_amdgpu_parameter("cwsr_enable", "0"));
    EXPECT_FALSE(check_amdgpu_parameter("noretry", "-1"));
    EXPECT_FALSE(check_amdgpu_parameter("ppfeaturemask", "0xfff7bfff"));
    EXPECT_FALSE(check_amdgpu_parameter("lockup_timeout", "10000,10000,-1,0"));
    EXPECT_FALSE(check_amdgpu_parameter("vm_fragment_size", "9"));
    EXPECT_TRUE(check_amdgpu_parameter("cwsr_enable", "2"));
    EXPECT_TRUE(check_amdgpu_parameter("cwsr_enable", "0; rm -rf /"));
    EXPECT_TRUE(check_amdgpu_parameter("ppfeaturemask", "0x1ffffffff"));
    EXPECT_TRUE(check_amdgpu_parameter("lockup_timeout", "1,2,3,4,5"));
    EXPECT_TRUE(check_amdgpu_parameter("vm_fragment_size", "3"));
    const auto unknown = check_amdgpu_parameter("dc", "0");
    ASSERT_TRUE(unknown);
    EXPECT_NE(unknown->find("unknown amdgpu module parameter 'dc'"), std::string::npos);
}

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

TEST(PatchPatch, StartupHookIsOneGuardedLine) {
    const auto hook = startup_hook_content();
    EXPECT_NE(hook.find("\nimport os; exec(\"try:"), std::string::npos);
    EXPECT_NE(hook.find("except Exception"), std::string::npos);
    EXPECT_EQ(std::count(hook.begin(), hook.end(), '\n'), 2);
}

}  // namespace
}  // namespace rmcp::patch
