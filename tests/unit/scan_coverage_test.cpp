// Coverage verdicts: covered, same-family override, and no safe override (docs/domain.md,
// "ISA families and what an override can do").
#include "scan/coverage.hpp"

#include <gtest/gtest.h>

using namespace rmcp::scan;

TEST(ScanCoverage, OverrideValues) {
    EXPECT_EQ(override_value_for("gfx1030"), "10.3.0");
    EXPECT_EQ(override_value_for("gfx90a:xnack-"), "9.0.10");
    EXPECT_EQ(override_value_for("gfx1100"), "11.0.0");
}

TEST(ScanCoverage, Verdicts) {
    const std::vector<std::string> torch = {"gfx1030", "gfx1100", "gfx900", "gfx906", "gfx908", "gfx90a"};
    auto c = assess("gfx1030", "gfx1030", torch);
    EXPECT_TRUE(c.covered);
    EXPECT_EQ(c.covered_by, "gfx1030");

    c = assess("gfx1031", "gfx1031", torch);  // RX 6700 XT
    EXPECT_FALSE(c.covered);
    EXPECT_EQ(c.nearest, "gfx1030");
    EXPECT_EQ(c.override_value, "10.3.0");

    c = assess("gfx1031", "gfx1030", torch);  // the override is already in effect
    EXPECT_TRUE(c.covered);

    c = assess("gfx1010", "gfx1010", torch);  // RDNA1: pytorch issue 132570, no safe override
    EXPECT_FALSE(c.covered);
    EXPECT_FALSE(c.nearest);
    EXPECT_FALSE(c.override_value);
    EXPECT_NE(c.reason.find("no override is safe"), std::string::npos);

    c = assess("gfx1012", "gfx1012", {"gfx1010", "gfx1030"});
    EXPECT_EQ(c.nearest, "gfx1010");
    EXPECT_EQ(c.override_value, "10.1.0");

    c = assess("gfx1103", "gfx1103", {"gfx11-generic"});  // generic code objects run natively
    EXPECT_TRUE(c.covered);
    EXPECT_EQ(c.covered_by, "gfx11-generic");

    c = assess("gfx1031", "gfx1100", {"gfx1031"});  // a stale cross-family override
    EXPECT_FALSE(c.covered);
    EXPECT_TRUE(c.remove_override);
    EXPECT_EQ(c.nearest, "gfx1031");

    c = assess("gfx90a", "gfx90a", {"gfx90a:xnack-", "gfx90a:xnack+"});
    EXPECT_TRUE(c.covered);
}

// Whether the chip itself has code, whatever the override says: decides whether an override
// is needed by the library (an RX 7800 XT, gfx1101, with 11.0.0 and a torch that has only
// gfx1100 code needs the override, although gfx1101 is on AMD's support list).
TEST(ScanCoverage, ChipCoverageIgnoresTheOverride) {
    const std::vector<std::string> torch61 = {"gfx1030", "gfx1100", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942"};
    auto c = assess("gfx1101", "gfx1100", torch61);
    EXPECT_TRUE(c.covered);
    EXPECT_FALSE(c.chip_covered);
    EXPECT_EQ(c.chip_override, "11.0.0");

    c = assess("gfx1101", "gfx1100", {"gfx1100", "gfx1101"});  // torch >= 2.6 ships gfx1101
    EXPECT_TRUE(c.chip_covered);
    EXPECT_FALSE(c.chip_override);

    c = assess("gfx1010", "gfx1030", torch61);  // RDNA1 as gfx1030: covered, but no safe value
    EXPECT_TRUE(c.covered);
    EXPECT_FALSE(c.chip_covered);
    EXPECT_FALSE(c.chip_override);

    c = assess("gfx1103", "gfx1103", {"gfx11-generic"});
    EXPECT_TRUE(c.chip_covered);
}
