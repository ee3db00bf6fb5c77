// `rmcp doctor` as a library (kb/doctor.cpp): which entries are checked, the order of the
// findings, the no-GPU note, the --fail-on rule and the status names.
#include "kb/doctor.hpp"

#include <gtest/gtest.h>

namespace rmcp::kb {
namespace {

Entry entry(const std::string& id, const std::string& severity, const std::string& applies) {
    std::string text = "id = \"" + id + "\"\ntitle = \"t\"\ncategory = \"config-risk\"\nseverity = \"" + severity +
                       "\"\nconfidence = \"reported\"\nsummary = \"s.\"\nreferences = [\"https://example.org\"]\n";
    if (!applies.empty()) text += "[applies]\n" + applies + "\n";
    else text += "[[signatures]]\npattern = 'boom'\n";
    auto e = load_entry(text, "kb/" + id + ".toml");
    EXPECT_TRUE(e.ok()) << id << ": " << (e.ok() ? "" : e.error().message());
    return e.ok() ? *e : Entry{};
}

KnowledgeBase sample() {
    KnowledgeBase kb;
    // Sorted by id, as kb::load leaves them.
    kb.entries = {
        entry("a-info", "info", "fact = \"driver.loaded\"\nequals = true"),
        entry("b-log-only", "critical", ""),
        entry("c-critical", "critical", "fact = \"driver.loaded\"\nequals = true"),
        entry("d-never", "critical", "fact = \"driver.loaded\"\nequals = false"),
        entry("e-warning", "warning", "fact = \"driver.loaded\"\nequals = true"),
        entry("f-critical", "critical", "fact = \"driver.loaded\"\nequals = true"),
    };
    return kb;
}

const nlohmann::json k_facts = {{"driver", {{"loaded", true}}}, {"gpus", nlohmann::json::array({{{"node", 1}}})}};

std::vector<std::string> ids(const DoctorReport& r) {
    std::vector<std::string> out;
    for (const auto& f : r.findings) out.push_back(f.entry->id);
    return out;
}

TEST(KbDoctor, MostSevereFirstThenById) {
    const auto kb = sample();
    const auto r = run_doctor(kb, k_facts);
    EXPECT_EQ(ids(r), (std::vector<std::string>{"c-critical", "f-critical", "e-warning", "a-info"}));
    EXPECT_EQ(r.entries_checked, 5U);  // the log-only entry is explain's business
    EXPECT_EQ(r.gpus, 1U);
    EXPECT_TRUE(r.notes.empty());
    for (const auto& f : r.findings) EXPECT_EQ(f.status, FindingStatus::open);  // the evaluator decides no status
}

TEST(KbDoctor, NoGpuIsANote) {
    const auto kb = sample();
    const auto r = run_doctor(kb, {{"driver", {{"loaded", false}}}, {"gpus", nlohmann::json::array()}});
    EXPECT_EQ(ids(r), (std::vector<std::string>{"d-never"}));
    EXPECT_EQ(r.gpus, 0U);
    ASSERT_EQ(r.notes.size(), 1U);
    EXPECT_NE(r.notes[0].find("no AMD GPU found"), std::string::npos);
    // Facts without a gpus array count as no GPU too.
    EXPECT_EQ(run_doctor(kb, {{"driver", {{"loaded", false}}}}).notes.size(), 1U);
}

TEST(KbDoctor, FailOnCountsOpenFindingsAtOrAboveTheThreshold) {
    const auto kb = sample();
    auto r = run_doctor(kb, k_facts);
    EXPECT_TRUE(has_findings_at_or_above(r, Severity::critical));
    EXPECT_TRUE(has_findings_at_or_above(r, Severity::info));
    // Critical findings answered by profile.env or a pending fix do not count.
    r.findings[0].status = FindingStatus::fixed_by_profile;
    r.findings[1].status = FindingStatus::pending;
    EXPECT_FALSE(has_findings_at_or_above(r, Severity::critical));
    EXPECT_TRUE(has_findings_at_or_above(r, Severity::warning));
    r.findings[2].status = FindingStatus::fixed;
    EXPECT_FALSE(has_findings_at_or_above(r, Severity::warning));
    // Issue 28: what is left is info, a fact about the machine: never counted, even when a
    // caller leaves its status open.
    EXPECT_FALSE(has_findings_at_or_above(r, Severity::info));
    EXPECT_FALSE(has_findings_at_or_above(DoctorReport{}, Severity::info));
}

TEST(KbDoctor, StatusNames) {
    EXPECT_EQ(finding_status_name(FindingStatus::open), "open");
    EXPECT_EQ(finding_status_name(FindingStatus::fixed_by_profile), "fixed-by-profile");
    EXPECT_EQ(finding_status_name(FindingStatus::fixed), "fixed");
    EXPECT_EQ(finding_status_name(FindingStatus::pending), "pending");
}

}  // namespace
}  // namespace rmcp::kb
