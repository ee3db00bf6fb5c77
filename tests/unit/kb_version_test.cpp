#include "kb/version.hpp"

#include <gtest/gtest.h>

using rmcp::kb::parse_version;
using rmcp::kb::VersionRange;

TEST(KbVersion, ParsesLeadingNumbersAndIgnoresSuffixes) {
    EXPECT_EQ(*parse_version("6.1.0-18-amd64"), (std::vector<unsigned long>{6, 1, 0}));
    EXPECT_EQ(*parse_version("2.3.0+rocm6.0"), (std::vector<unsigned long>{2, 3, 0}));
    EXPECT_EQ(*parse_version("1.13.0a0"), (std::vector<unsigned long>{1, 13, 0}));
    EXPECT_EQ(*parse_version("6.0.32831-"), (std::vector<unsigned long>{6, 0, 32831}));
    EXPECT_EQ(*parse_version("v5.7"), (std::vector<unsigned long>{5, 7}));
    EXPECT_FALSE(parse_version("rocm").has_value());
    EXPECT_FALSE(parse_version("").has_value());
}

TEST(KbVersion, RangesCompareNumericallySegmentBySegment) {
    const auto r = VersionRange::parse(">=5.7, <6.2");
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->contains("5.7"));
    EXPECT_TRUE(r->contains("5.10.1"));  // numeric, not lexical
    EXPECT_TRUE(r->contains("6.1.2+rocm5.2"));
    EXPECT_FALSE(r->contains("6.2.0"));
    EXPECT_FALSE(r->contains("5.6.99"));
    EXPECT_FALSE(r->contains("unknown"));
}

TEST(KbVersion, MissingSegmentsAreZeroAndBareVersionMeansEqual) {
    const auto r = VersionRange::parse("6.2");
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->contains("6.2.0"));
    EXPECT_FALSE(r->contains("6.2.1"));
    const auto kernel = VersionRange::parse(">=6.18, <6.19");
    ASSERT_TRUE(kernel.ok());
    EXPECT_TRUE(kernel->contains("6.18.3-arch1-1"));
    EXPECT_FALSE(kernel->contains("6.17.9"));
    const auto ne = VersionRange::parse("!=1.0, >0.9");
    ASSERT_TRUE(ne.ok());
    EXPECT_FALSE(ne->contains("1.0.0"));
    EXPECT_TRUE(ne->contains("0.9.1"));
}

TEST(KbVersion, RejectsMalformedRanges) {
    for (const char* bad : {"", ">=", ">=5.x", "5..7", ">=5.7,", "~5.7", ">= 5.7 and <6"})
        EXPECT_FALSE(VersionRange::parse(bad).ok()) << bad;
}
