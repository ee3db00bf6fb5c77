// What a plan says a profile.env step does (patch/env_change.hpp; newcomer review, findings 12
// and 13): the diff's effect in `rmcp env`'s words, long lists folded.
#include "patch/env_change.hpp"

#include <gtest/gtest.h>

namespace rmcp::patch {
namespace {

TEST(EnvChange, ExportsUnsetsAndForgetsAsTheDiffDoes) {
    UserEnv before;
    before.set = {{"A", "1"}, {"KEEP", "x"}};
    before.unset = {"OLD"};
    UserEnv after;
    after.set = {{"A", "2"}, {"KEEP", "x"}, {"NEW", "it's"}};
    after.unset = {"B"};
    EXPECT_EQ(describe_env_change(before, after), "export A='2'; export NEW='it'\\''s'; unset B; forget OLD");
    EXPECT_EQ(describe_env_change(after, after), "no change (already in effect)");
}

TEST(EnvChange, ALongUnsetListIsOneItem) {
    UserEnv after;
    after.set = {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}};
    for (int n = 0; n <= 8; ++n) after.unset.push_back("HSA_OVERRIDE_GFX_VERSION_" + std::to_string(n));
    EXPECT_EQ(describe_env_change({}, after),
              "export HSA_OVERRIDE_GFX_VERSION='10.3.0'; unset HSA_OVERRIDE_GFX_VERSION_0 … "
              "HSA_OVERRIDE_GFX_VERSION_8 (9 variables)");
}

}  // namespace
}  // namespace rmcp::patch
