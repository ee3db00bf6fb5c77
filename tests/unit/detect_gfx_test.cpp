#include "detect/gfx.hpp"
#include "util/toml.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmcp {

// Issue 28, item 5: the support list is data with its sources and the date it was checked;
// the compiled copy must be that list, no more and no less.
TEST(Gfx, SupportListIsTheDataFile) {
    const auto table = toml::parse_file(std::string(RMCP_SOURCE_DIR) + "/data/rocm-support.toml");
    ASSERT_TRUE(table["checked_on"].is_string());
    std::vector<std::string> listed;
    if (const auto* rows = table["target"].as_array())
        for (const auto& row : *rows)
            if (const auto* t = row.as_table()) listed.push_back((*t)["gfx"].value_or(std::string()));
    auto compiled = officially_supported_targets();
    std::sort(listed.begin(), listed.end());
    std::sort(compiled.begin(), compiled.end());
    EXPECT_EQ(compiled, listed);
    EXPECT_TRUE(gfx_officially_supported("gfx950"));   // KB audit 2: MI350/MI355X
    EXPECT_TRUE(gfx_officially_supported("gfx1151"));  // KB audit 2: Strix Halo
}

// Values from docs/domain.md "Where the truth about a GPU lives".
TEST(Gfx, DecodesTargetVersions) {
    EXPECT_EQ(decode_gfx_target_version(100100), "gfx1010");
    EXPECT_EQ(decode_gfx_target_version(100102), "gfx1012");
    EXPECT_EQ(decode_gfx_target_version(100300), "gfx1030");
    EXPECT_EQ(decode_gfx_target_version(100301), "gfx1031");
    EXPECT_EQ(decode_gfx_target_version(100302), "gfx1032");
    EXPECT_EQ(decode_gfx_target_version(110000), "gfx1100");
    EXPECT_EQ(decode_gfx_target_version(110003), "gfx1103");
    EXPECT_EQ(decode_gfx_target_version(90010), "gfx90a");
    EXPECT_EQ(decode_gfx_target_version(90012), "gfx90c");
    EXPECT_EQ(decode_gfx_target_version(110501), "gfx1151");
    EXPECT_EQ(decode_gfx_target_version(120001), "gfx1201");
}

TEST(Gfx, RejectsCpuAndImpossibleVersions) {
    EXPECT_FALSE(decode_gfx_target_version(0));
    EXPECT_FALSE(decode_gfx_target_version(101600));  // minor 16 has no hex digit
    EXPECT_FALSE(decode_gfx_target_version(100017));
}

TEST(Gfx, EncodeIsTheInverse) {
    for (const auto v : {100100U, 100300U, 100301U, 110003U, 90010U, 120001U})
        EXPECT_EQ(encode_gfx_target(*decode_gfx_target_version(v)), v);
    EXPECT_FALSE(encode_gfx_target("gfx"));
    EXPECT_FALSE(encode_gfx_target("navi10"));
}

TEST(Gfx, FamiliesAndGenericTargets) {
    EXPECT_EQ(gfx_family("gfx1010"), "RDNA1");
    EXPECT_EQ(gfx_family("gfx1031"), "RDNA2");
    EXPECT_EQ(gfx_family("gfx1103"), "RDNA3");
    EXPECT_EQ(gfx_family("gfx1201"), "RDNA4");
    EXPECT_EQ(gfx_family("gfx90a:xnack-"), "CDNA2");
    EXPECT_EQ(gfx_generic_target("gfx1035"), "gfx10-3-generic");
    EXPECT_FALSE(gfx_generic_target("gfx90a"));
}

// docs/domain.md: 10.3.0 is ISA-safe on gfx1031–1036 but not on RDNA1.
TEST(Gfx, IntegratedOnlyWhereTheProcessorTableSaysSo) {
    EXPECT_EQ(gfx_integrated("gfx1036"), true);  // desktop Ryzen 7000/9000 graphics
    EXPECT_EQ(gfx_integrated("gfx1103"), true);
    EXPECT_EQ(gfx_integrated("gfx1151"), true);
    EXPECT_EQ(gfx_integrated("gfx90c:xnack-"), true);
    EXPECT_EQ(gfx_integrated("gfx1100"), false);
    EXPECT_EQ(gfx_integrated("gfx1031"), false);
    EXPECT_EQ(gfx_integrated("gfx906:sramecc+:xnack-"), false);
    EXPECT_EQ(gfx_integrated("gfx942"), std::nullopt);  // MI300A and MI300X share it
    EXPECT_EQ(gfx_integrated("gfx9999"), std::nullopt);
}

TEST(Gfx, OverrideFamilySafety) {
    EXPECT_TRUE(same_isa_family("gfx1030", "gfx1031"));
    EXPECT_TRUE(same_isa_family("gfx1030", "gfx1036"));
    EXPECT_FALSE(same_isa_family("gfx1030", "gfx1010"));
    EXPECT_FALSE(same_isa_family("gfx1100", "gfx1030"));
    EXPECT_TRUE(same_isa_family("gfx1100", "gfx1103"));
}

TEST(Gfx, ParsesOverridesLikeLibhsakmt) {
    EXPECT_EQ(parse_gfx_override("10.3.0"), "gfx1030");
    EXPECT_EQ(parse_gfx_override("11.0.0"), "gfx1100");
    EXPECT_EQ(parse_gfx_override("9.0.10"), "gfx90a");
    EXPECT_FALSE(parse_gfx_override(""));
    EXPECT_FALSE(parse_gfx_override("10.3"));
    EXPECT_FALSE(parse_gfx_override("10.3.0.1"));
    EXPECT_FALSE(parse_gfx_override("gfx1030"));
    EXPECT_FALSE(parse_gfx_override("64.0.0"));
    EXPECT_FALSE(parse_gfx_override("10.256.0"));
    EXPECT_FALSE(parse_gfx_override("-1.3.0"));
}

TEST(Gfx, OfficialSupportList) {
    EXPECT_TRUE(gfx_officially_supported("gfx1030"));
    EXPECT_TRUE(gfx_officially_supported("gfx1100"));
    EXPECT_TRUE(gfx_officially_supported("gfx90a"));
    EXPECT_FALSE(gfx_officially_supported("gfx1010"));
    EXPECT_FALSE(gfx_officially_supported("gfx1031"));
}

TEST(Gfx, ProductAndChipNames) {
    const std::vector<std::pair<std::string, std::optional<std::string>>> cases{
        // Product names (rocminfo's Marketing Name, issue templates).
        {"AMD Radeon RX 6700 XT", "gfx1031"},
        {"Radeon RX 6800M", "gfx1031"},
        {"AMD Radeon RX 7900XTX", "gfx1100"},
        {"AMD Radeon Graphics", std::nullopt},
        // The PCI ID database's names (lspci, rocm-smi's Card Series, amd-smi's MARKET_NAME).
        {"Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]", "gfx1030"},
        {"Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", "gfx1100"},
        {"Navi 48", "gfx1201"},
        {"Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]", "gfx1010"},
        {"Lexa PRO [Radeon RX 550/550X]", "gfx803"},
        {"Ellesmere [Radeon RX 470/480/570/570X/580/580X/590]", "gfx803"},
        {"Curacao PRO [Radeon R7 370 / R9 270/370 OEM]", "gfx601"},
        {"Vega 20", "gfx906"},
        {"Vega 12 [Radeon Pro Vega 20]", "gfx904"},
        {"Vega 10 XTX [Radeon Vega Frontier Edition]", "gfx900"},
        {"AMD Radeon Vega 10 Graphics", "gfx902"},
        {"Rembrandt [Radeon 680M]", "gfx1035"},
        {"Raphael", "gfx1036"},
        {"Granite Ridge [Radeon Vega Series / Radeon Vega Mobile Series]", "gfx1036"},
        {"Phoenix1", "gfx1103"},
        {"Strix Halo [Radeon Graphics / 8050S / 8060S Graphics]", "gfx1151"},
        {"Cezanne [Radeon Vega Series / Radeon Vega Mobile Series]", "gfx90c"},
        // Words that name other things.
        {"ASUS ROG Strix G15", std::nullopt},
        {"Phoenix BIOS 4.0", std::nullopt},
        {"Navi 210", std::nullopt},
    };
    for (const auto& [name, gfx] : cases) EXPECT_EQ(gfx_for_marketing_name(name), gfx) << name;
}

}  // namespace rmcp
