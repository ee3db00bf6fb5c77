// `rmcp kb lint`'s checks (docs/kb-format.md "Confidence"): reference kinds, confidence sources,
// costs, patch ids, and entries that fire on healthy machines.
#include "kb/lint.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::kb {
namespace {

Entry entry_from(const std::string& body) {
    auto e = load_entry("id = \"e\"\ntitle = \"t\"\ncategory = \"config-risk\"\nsummary = \"s\"\n" + body, "kb/e.toml");
    EXPECT_TRUE(e.ok()) << e.error().message();
    return e.ok() ? *e : Entry{};
}

std::vector<std::string> checks_of(const KnowledgeBase& kb, const std::set<std::string>* patches = nullptr,
                                   const std::vector<HealthyMachine>& healthy = {}) {
    std::vector<std::string> out;
    for (const auto& p : lint(kb, patches, healthy)) out.push_back(p.check);
    return out;
}

TEST(KbLint, ClassifiesReferences) {
    EXPECT_TRUE(classify_reference("https://rocm.docs.amd.com/projects/MIOpen/en/latest/x.html").vendor);
    EXPECT_FALSE(classify_reference("https://rocm.docs.amd.com/x").thread);
    const auto rocm_issue = classify_reference("https://github.com/ROCm/ROCm/issues/5724");
    EXPECT_TRUE(rocm_issue.vendor && rocm_issue.thread);
    const auto user_issue =
        classify_reference("https://github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU/issues/37");
    EXPECT_TRUE(user_issue.thread);
    EXPECT_FALSE(user_issue.vendor);
    EXPECT_TRUE(classify_reference("https://github.com/pytorch/pytorch/pull/128753").vendor);
    EXPECT_TRUE(
        classify_reference("https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/").vendor);
    EXPECT_TRUE(classify_reference("https://gitlab.freedesktop.org/drm/amd/-/issues/4765").thread);
    EXPECT_TRUE(classify_reference("https://docs.python.org/3/library/multiprocessing.html").vendor);
    const auto blog = classify_reference("https://example.org/rocm-tips");
    EXPECT_FALSE(blog.vendor || blog.thread);
    EXPECT_FALSE(classify_reference("not a url").vendor);
}

// Issue 30, item 9: ROCm's tracker is cited as github.com/ROCm/ROCm, never by the search index's
// name for it, in kb entries and in patches alike.
TEST(KbLint, RefusesTheLegacyRocmTrackerAddress) {
    EXPECT_EQ(reference_address_problem("https://github.com/ROCm/ROCm/issues/5724"), "");
    const auto why = reference_address_problem("https://github.com/ROCm/legacy-rocm-build/issues/5724");
    EXPECT_NE(why.find("https://github.com/ROCm/ROCm/issues/5724"), std::string::npos) << why;
    EXPECT_NE(reference_address_problem("HTTPS://GitHub.com/rocm/Legacy-ROCm-Build/issues/1#x"), "");

    KnowledgeBase kb;
    kb.entries.push_back(entry_from("severity = \"info\"\nconfidence = \"reported\"\nreferences = "
                                    "[\"https://github.com/ROCm/legacy-rocm-build/issues/1\"]\n"
                                    "[[signatures]]\npattern = 'x'\n"));
    EXPECT_EQ(checks_of(kb), std::vector<std::string>{"reference-address"});

    const auto patches = lint_reference_addresses(
        {{"p-ok", "patches/p-ok.toml", {"https://github.com/ROCm/ROCm/issues/2"}},
         {"p-old",
          "patches/p-old.toml",
          {"https://rocm.docs.amd.com/x", "https://github.com/ROCm/legacy-rocm-build/issues/3"}}});
    ASSERT_EQ(patches.size(), 1U);
    EXPECT_EQ(patches[0].entry, "p-old");
    EXPECT_EQ(patches[0].file, "patches/p-old.toml");
    EXPECT_EQ(patches[0].check, "reference-address");
}

TEST(KbLint, ConfidenceNeedsItsKindOfSource) {
    const auto with = [](const char* confidence, const char* ref) {
        KnowledgeBase kb;
        kb.entries.push_back(entry_from(std::string("severity = \"info\"\nconfidence = \"") + confidence +
                                        "\"\nreferences = [\"" + ref + "\"]\n[[signatures]]\npattern = 'x'\n"));
        return checks_of(kb);
    };
    const std::vector<std::string> bad{"confidence-source"};
    EXPECT_EQ(with("vendor-confirmed", "https://example.org/"), bad);
    EXPECT_TRUE(with("vendor-confirmed", "https://llvm.org/docs/AMDGPUUsage.html").empty());
    EXPECT_EQ(with("user-confirmed", "https://llvm.org/docs/AMDGPUUsage.html"), bad);
    EXPECT_TRUE(with("user-confirmed", "https://github.com/ollama/ollama/issues/8851").empty());
    EXPECT_EQ(with("reported", "https://example.org/"), bad);
    EXPECT_TRUE(with("reported", "https://community.amd.com/t/1").empty());
    EXPECT_TRUE(with("hypothesis", "https://example.org/").empty());
}

TEST(KbLint, CostsMustSaySomethingAndPatchesMustExist) {
    KnowledgeBase kb;
    kb.entries.push_back(entry_from("severity = \"info\"\nconfidence = \"hypothesis\"\n"
                                    "references = [\"https://example.org/\"]\n[[signatures]]\npattern = 'x'\n"
                                    "[[fixes]]\npatch = \"a\"\ncost = \"None.\"\n"
                                    "[[fixes]]\npatch = \"b\"\ncost = \"none: nothing is lost\"\n"));
    const std::set<std::string> patches{"a"};
    EXPECT_EQ(checks_of(kb, &patches), (std::vector<std::string>{"cost", "patch"}));
    EXPECT_EQ(checks_of(kb), (std::vector<std::string>{"cost"}));
}

TEST(KbLint, OnlyInfoMayFireOnHealthyMachines) {
    const auto make = [](const char* severity) {
        KnowledgeBase kb;
        kb.entries.push_back(
            entry_from(std::string("severity = \"") + severity +
                       "\"\nconfidence = \"reported\"\nreferences = [\"https://github.com/o/r/issues/1\"]\n"
                       "[applies]\nfact = \"driver.loaded\"\nequals = true\n"
                       "[[fixes]]\npatch = \"a\"\ncost = \"a reboot\"\n"));
        return kb;
    };
    const std::vector<HealthyMachine> healthy{{"loaded",
                                               {{"driver", {{"loaded", true}}}, {"gpus", nlohmann::json::array()}}},
                                              {"unloaded", {{"driver", {{"loaded", false}}}}}};
    const auto problems = lint(make("warning"), nullptr, healthy);
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_EQ(problems[0].check, "healthy-fires");
    EXPECT_NE(problems[0].message.find("on the healthy machine loaded: driver.loaded = true (equals true)"),
              std::string::npos);
    EXPECT_TRUE(lint(make("info"), nullptr, healthy).empty());
}

TEST(KbLint, ShippedKnowledgeBaseHasNoSourceOrCostProblem) {
    const auto kb = load(std::filesystem::path(RMCP_SOURCE_DIR) / "kb");
    ASSERT_TRUE(kb.ok()) << kb.error().message();
    for (const auto& p : lint(*kb, nullptr, {})) ADD_FAILURE() << p.entry << " [" << p.check << "]: " << p.message;
}

}  // namespace
// Issue 28's severity discipline: a warning or critical cannot rest on a hypothesis, and a version
// range in its [applies] states where it ends (under a negation the bounds swap).
TEST(KbLint, SeverityNeedsASourceAndVersionRangesAnEnd) {
    const auto entry = [](const char* severity, const char* confidence, const char* applies) {
        KnowledgeBase kb;
        kb.entries.push_back(entry_from(std::string("severity = \"") + severity + "\"\nconfidence = \"" + confidence +
                                        "\"\nreferences = [\"https://github.com/o/r/issues/1\"]\n[applies]\n" +
                                        applies + "[[fixes]]\npatch = \"a\"\ncost = \"a reboot\"\n"));
        return kb;
    };
    const char* loaded = "fact = \"driver.loaded\"\nequals = true\n";
    EXPECT_EQ(checks_of(entry("warning", "hypothesis", loaded)), (std::vector<std::string>{"severity"}));
    EXPECT_TRUE(checks_of(entry("info", "hypothesis", loaded)).empty());
    EXPECT_TRUE(checks_of(entry("critical", "reported", loaded)).empty());
    const char* open_ended = "fact = \"driver.kernel_release\"\nversion = \">=6.18\"\n";
    const char* bounded = "fact = \"driver.kernel_release\"\nversion = \">=6.18, <6.20\"\n";
    const char* negated_upper = "not = { fact = \"driver.kernel_release\", version = \"<6.18\" }\n";
    const char* negated_lower = "not = { fact = \"driver.kernel_release\", version = \">=6.18\" }\n";
    EXPECT_EQ(checks_of(entry("warning", "reported", open_ended)), (std::vector<std::string>{"version-unbounded"}));
    EXPECT_EQ(checks_of(entry("warning", "reported", negated_upper)), (std::vector<std::string>{"version-unbounded"}));
    EXPECT_TRUE(checks_of(entry("warning", "reported", bounded)).empty());
    EXPECT_TRUE(checks_of(entry("warning", "reported", negated_lower)).empty());
    EXPECT_TRUE(checks_of(entry("info", "reported", open_ended)).empty());
}

}  // namespace rmcp::kb
