#include "explain/diagnose.hpp"
#include "kb/predicate.hpp"

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

}  // namespace
}  // namespace rmcp::explain
