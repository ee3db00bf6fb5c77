#include "patch/amdgpu_params.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::patch {
namespace {

TEST(AmdgpuParams, OnlyKnownParametersWithValidValues) {
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

TEST(AmdgpuParams, EveryKnownParameterHasAValidValueAndRefusesGarbage) {
    const auto names = known_amdgpu_parameters();
    ASSERT_FALSE(names.empty());
    for (const auto name : names) {
        EXPECT_TRUE(check_amdgpu_parameter(name, "")) << name;
        EXPECT_TRUE(check_amdgpu_parameter(name, "1\nblacklist amdgpu")) << name;
    }
    EXPECT_NE(std::find(names.begin(), names.end(), "cwsr_enable"), names.end());
}

TEST(AmdgpuParams, RangesAndListsAtTheirEdges) {
    EXPECT_FALSE(check_amdgpu_parameter("vm_fragment_size", "4"));
    EXPECT_FALSE(check_amdgpu_parameter("vm_fragment_size", "31"));
    EXPECT_FALSE(check_amdgpu_parameter("vm_fragment_size", "-1"));
    EXPECT_TRUE(check_amdgpu_parameter("vm_fragment_size", "32"));
    EXPECT_FALSE(check_amdgpu_parameter("ppfeaturemask", "0xffffffff"));
    EXPECT_FALSE(check_amdgpu_parameter("ppfeaturemask", "4294967295"));
    EXPECT_TRUE(check_amdgpu_parameter("ppfeaturemask", "4294967296"));
    EXPECT_FALSE(check_amdgpu_parameter("lockup_timeout", "-1"));
    EXPECT_TRUE(check_amdgpu_parameter("lockup_timeout", "-2"));
    EXPECT_TRUE(check_amdgpu_parameter("lockup_timeout", "1,,2"));
    const auto why = check_amdgpu_parameter("cwsr_enable", "2");
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "invalid value '2' for amdgpu.cwsr_enable: 0 off, 1 on");
    const auto unknown = check_amdgpu_parameter("nope", "0");
    ASSERT_TRUE(unknown);
    EXPECT_NE(unknown->find("(known: noretry, vm_fragment_size, "), std::string::npos) << *unknown;
}

}  // namespace
}  // namespace rmcp::patch
