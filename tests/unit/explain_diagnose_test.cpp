#include "explain/diagnose.hpp"
#include "kb/predicate.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace rmcp::explain {
namespace {

kb::Entry entry(std::string id, std::string pattern, std::vector<std::string> context, bool specific,
                kb::Severity severity = kb::Severity::warning) {
    kb::Entry e;
    e.id = std::move(id);
    e.category = "gpu-memory-fault";
    e.severity = severity;
    e.signatures.push_back(kb::Signature{std::move(pattern), std::move(context), 5, 1});
    if (specific) e.applies = std::make_shared<kb::Predicate>();
    return e;
}

std::vector<std::string> rank_ids(const std::vector<kb::Entry>& entries, std::string_view log,
                                  const AppliesFn& applies = {}) {
    auto set = SignatureSet::compile(entries);
    EXPECT_TRUE(set.ok());
    DiagnosisBuilder builder(entries, *set);
    LogScanner scanner(*set, builder.collector("test.log"));
    EXPECT_TRUE(scanner.feed(log).ok());
    EXPECT_TRUE(scanner.finish().ok());
    builder.add_counts("test.log", scanner);
    std::vector<std::string> ids;
    for (const auto& d : builder.rank(applies)) ids.push_back(d.entry->id);
    return ids;
}

const std::string k_fault =
    "Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x2. Reason: Page not present";

std::vector<kb::Entry> fault_entries() {
    return {entry("generic", "Memory access fault by GPU node-\\d+", {"core dump"}, false, kb::Severity::critical),
            entry("miopen", "Reason: Page not present", {"MIOpen", "GemmBwdRest"}, true),
            entry("rocblas", "Reason: Page not present", {"rocblas_gemm"}, true)};
}

TEST(ExplainDiagnose, ContextNearTheMatchDecidesBetweenEntriesOnTheSameLine) {
    const auto entries = fault_entries();
    EXPECT_EQ(rank_ids(entries, "MIOpen(HIP): solver GemmBwdRest\n" + k_fault + "\ncore dump\n"),
              (std::vector<std::string>{"miopen", "generic", "rocblas"}));
    EXPECT_EQ(rank_ids(entries, "rocblas_gemm_ex trace\n" + k_fault + "\n"),
              (std::vector<std::string>{"rocblas", "generic", "miopen"}));
    // No context at all: the generic entry first, specific ones without their evidence after.
    EXPECT_EQ(rank_ids(entries, k_fault + "\n").front(), "generic");
}

TEST(ExplainDiagnose, EntriesThatHoldOnThisMachineComeFirst) {
    const auto entries = fault_entries();
    AppliesFn applies = [](const kb::Entry& e) -> std::optional<bool> {
        if (!e.applies) return std::nullopt;
        return e.id == "rocblas";
    };
    EXPECT_EQ(rank_ids(entries, "MIOpen GemmBwdRest\n" + k_fault + "\n", applies).front(), "rocblas");
}

TEST(ExplainDiagnose, GroupsPerEntryCountsAllLinesAndExplainsTheRank) {
    const std::vector<kb::Entry> entries = {entry("oom", "HIP out of memory", {"allocator"}, false)};
    auto set = SignatureSet::compile(entries);
    ASSERT_TRUE(set.ok());
    DiagnosisBuilder builder(entries, *set);
    ScanLimits limits;
    limits.max_reports_per_signature = 3;
    LogScanner scanner(*set, builder.collector("a.log"), limits);
    std::string log;
    for (int i = 0; i < 10; ++i) log += "HIP out of memory\n";
    ASSERT_TRUE(scanner.feed(log).ok());
    ASSERT_TRUE(scanner.finish().ok());
    builder.add_counts("a.log", scanner);
    auto ranked = builder.rank({});
    ASSERT_EQ(ranked.size(), 1U);
    EXPECT_EQ(ranked[0].occurrences.size(), 3U);
    EXPECT_EQ(ranked[0].total_matches, 10U);
    EXPECT_EQ(ranked[0].occurrences[2].line, 3U);
    EXPECT_EQ(ranked[0].reason, "none of its context words nearby; 1 of 1 signature matched; severity warning");
    builder.drop_source("a.log");
    EXPECT_TRUE(builder.rank({}).empty());
}

// An entry raised by a bug report's facts: `applies` on driver.loaded, one signature that the
// logs below never match.
kb::Entry fact_entry(const std::string& id, const std::string& category, const std::string& severity,
                     const std::string& pattern = "never printed") {
    const std::string text = "id = \"" + id + "\"\ntitle = \"t\"\ncategory = \"" + category + "\"\nseverity = \"" +
                             severity +
                             "\"\nconfidence = \"reported\"\nsummary = \"s.\"\nreferences = [\"https://example.org\"]\n"
                             "[applies]\nfact = \"driver.loaded\"\nequals = true\n[[signatures]]\npattern = '" +
                             pattern + "'\n";
    auto e = kb::load_entry(text, "kb/" + id + ".toml");
    EXPECT_TRUE(e.ok()) << id << ": " << (e.ok() ? "" : e.error().message());
    return e.ok() ? *e : kb::Entry{};
}

std::vector<std::string> rank_with_report(const std::vector<kb::Entry>& entries, std::string_view log) {
    auto set = SignatureSet::compile(entries);
    EXPECT_TRUE(set.ok());
    DiagnosisBuilder builder(entries, *set);
    LogScanner scanner(*set, builder.collector("report.txt"));
    EXPECT_TRUE(scanner.feed(log).ok());
    EXPECT_TRUE(scanner.finish().ok());
    const nlohmann::json reporter = {{"driver", {{"loaded", true}}}};
    std::vector<std::string> ids;
    for (const auto& d : builder.rank(applies_on(reporter), &reporter)) ids.push_back(d.entry->id);
    return ids;
}

// Issue 13, seventh round: a report that shows only the machine (no failure line).
TEST(ExplainDiagnose, AReportWithoutAFailureSpeaksOnlyWhenACriticalEntryHolds) {
    EXPECT_TRUE(rank_with_report({fact_entry("risk", "config-risk", "warning")}, "rocminfo output\n").empty());
    EXPECT_TRUE(
        rank_with_report({fact_entry("note", "config-risk", "info"), fact_entry("risk", "config-risk", "warning")},
                         "rocminfo output\n")
            .empty());
}

TEST(ExplainDiagnose, OnceACriticalEntryHoldsTheSettingBehindItComesFirst) {
    // The critical entry predicts a fault the log does not show; the config-risk warning names
    // the setting the report does show (a global override on GPUs of two families).
    const std::vector<kb::Entry> entries = {fact_entry("a-fault", "gpu-memory-fault", "critical"),
                                            fact_entry("b-note", "config-risk", "info"),
                                            fact_entry("c-setting", "config-risk", "warning")};
    EXPECT_EQ(rank_with_report(entries, "rocminfo output\n"), (std::vector<std::string>{"c-setting", "a-fault"}));
}

TEST(ExplainDiagnose, AFactRaisedEntryOfTheKindTheLogShowsStillComesBeforeTheSetting) {
    // The log shows a memory fault: the machine's prediction of that fault explains it and
    // ranks first; the setting follows, before what the log only matched.
    const std::vector<kb::Entry> entries = {fact_entry("a-fault", "gpu-memory-fault", "critical"),
                                            fact_entry("c-setting", "config-risk", "warning"),
                                            entry("generic", "Memory access fault by GPU node-\\d+", {"core dump"},
                                                  false, kb::Severity::critical)};
    EXPECT_EQ(rank_with_report(entries, k_fault + "\n"), (std::vector<std::string>{"a-fault", "generic", "c-setting"}));
}

// Issue 13, eleventh round: an info-level entry is a note on a harmless or slow-but-working
// message (PyTorch's hipBLASLt fallback warning), never the failure of the log it appears in.
kb::Entry family(std::string id, std::string pattern) {
    auto e = entry(std::move(id), std::move(pattern), {}, false, kb::Severity::critical);
    e.confidence = kb::Confidence::generic;
    return e;
}

const std::string k_note_line = "UserWarning: Attempting to use hipBLASLt on an unsupported architecture!";
const std::string k_hsa_line = "Callback: Queue aborting with error : HSA_STATUS_ERROR_OUT_OF_REGISTERS";

TEST(ExplainDiagnose, ANoteRanksAfterTheErrorAFamilyEntryRecognisedNearby) {
    const std::vector<kb::Entry> entries = {entry("note", "Attempting to use hipBLASLt", {"hipBLASLt"}, false,
                                                  kb::Severity::info),
                                            family("family-hsa", "HSA_STATUS_ERROR_[A-Z_]+")};
    // Two lines apart: a specific warning or critical entry would cover the family's line (the
    // same error block); a note does not.
    EXPECT_EQ(rank_ids(entries, k_note_line + "\ngot prompt\n" + k_hsa_line + "\n"),
              (std::vector<std::string>{"family-hsa", "note"}));
}

TEST(ExplainDiagnose, ANoteStillExplainsItsOwnLineInsteadOfTheFamily) {
    // rocprofiler's 'aqlprofile API table load failed: HSA_STATUS_ERROR: ...' is the note's line.
    const std::vector<kb::Entry> entries = {entry("note", "aqlprofile API table load failed", {}, false,
                                                  kb::Severity::info),
                                            family("family-hsa", "HSA_STATUS_ERROR")};
    EXPECT_EQ(rank_ids(entries, "aqlprofile API table load failed: HSA_STATUS_ERROR: A generic error\n"),
              (std::vector<std::string>{"note"}));
}

TEST(ExplainDiagnose, ALogWithOnlyANoteShowsNoFailureToTheReportsFacts) {
    // The report's warning-level entry would join a failure; a harmless note is none.
    auto note = entry("note", "Attempting to use hipBLASLt", {}, false, kb::Severity::info);
    note.category = "rocblas-missing-arch";
    const std::vector<kb::Entry> entries = {note, fact_entry("risk", "rocblas-missing-arch", "warning")};
    EXPECT_EQ(rank_with_report(entries, k_note_line + "\n"), (std::vector<std::string>{"note"}));
}

}  // namespace
}  // namespace rmcp::explain
