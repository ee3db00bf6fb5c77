// `[applies]` in words (kb show, docs/kb/) and the one-line summary (explain, kb list).
#include "kb/describe.hpp"

#include <gtest/gtest.h>

namespace rmcp::kb {
namespace {

std::vector<DescribedLine> lines_of(const std::string& applies) {
    auto e = load_entry("id = \"e\"\ntitle = \"t\"\ncategory = \"config-risk\"\nseverity = \"info\"\n"
                        "confidence = \"hypothesis\"\nsummary = \"s\"\nscope = \"gpu\"\n"
                        "references = [\"https://example.org/\"]\n" +
                            applies,
                        "kb/e.toml");
    EXPECT_TRUE(e.ok()) << e.error().message();
    return e.ok() ? describe_predicate(*e->applies) : std::vector<DescribedLine>{};
}

TEST(KbDescribe, EveryLevelAndOperatorInWords) {
    const auto lines = lines_of(R"([applies]
all = [
  { fact = "gpu.gfx_target", in = ["gfx1031", "gfx1032"] },
  { not = { fact = "gpu.override", exists = true } },
  { not = { any = [ { fact = "env.A", exists = true }, { fact = "env.B", equals = "0" } ] } },
  { fact = "driver.kernel_release", version = ">=6.18" },
  { fact = "gpus.family", distinct = ">=2" },
  { fact = "driver.params.ppfeaturemask", bits_set = 0x4000 },
  { fact = "torch.hip_version", major_minor_differs = "rocm.version" },
]
)");
    ASSERT_EQ(lines.size(), 10U);
    EXPECT_EQ(lines[0].text, "all of:");
    EXPECT_EQ(lines[1].depth, 1U);
    EXPECT_EQ(lines[1].text, "`gpu.gfx_target` (the GPU's chip target) is one of gfx1031, gfx1032");
    EXPECT_EQ(lines[2].text, "not: `gpu.override` (an HSA_OVERRIDE_GFX_VERSION that applies to this GPU) is known");
    EXPECT_EQ(lines[3].text, "none of:");
    EXPECT_EQ(lines[4].depth, 2U);
    EXPECT_EQ(lines[4].text, "`env.A` is known");
    EXPECT_EQ(lines[5].text, "`env.B` is 0");
    EXPECT_EQ(lines[6].text, "`driver.kernel_release` (the running kernel) is a version >=6.18");
    EXPECT_EQ(lines[7].text, "the number of distinct values of `gpus.family` is >=2");
    EXPECT_EQ(lines[8].text, "`driver.params.ppfeaturemask` has the bits of 0x4000 set");
    EXPECT_EQ(lines[9].text, "the major.minor version of `torch.hip_version` (a PyTorch's torch.version.hip) differs "
                             "from that of `rocm.version` (an installed ROCm's version)");
}

TEST(KbDescribe, SummaryLineIsTheFirstSentence) {
    EXPECT_EQ(summary_line("One. Two."), "One.");
    EXPECT_EQ(summary_line("No full stop at all"), "No full stop at all");
    EXPECT_EQ(summary_line("Spans\n  lines. Next."), "Spans lines.");
    // Not a sentence end: abbreviations, ellipses, versions, quoted and bracketed text.
    EXPECT_EQ(summary_line("Use it (e.g. 10.3.0) here. Then."), "Use it (e.g. 10.3.0) here.");
    EXPECT_EQ(summary_line("The log says 'node-N ... Page not present. Reason' and dies. Then."),
              "The log says 'node-N ... Page not present. Reason' and dies.");
    EXPECT_EQ(summary_line("A vs. B doesn't matter, e.g. here. C."), "A vs. B doesn't matter, e.g. here.");
    EXPECT_EQ(summary_line("Kernel 6.18.3 faults... sometimes. Yes."), "Kernel 6.18.3 faults... sometimes.");
}

}  // namespace
}  // namespace rmcp::kb
