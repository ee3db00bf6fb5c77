// src/core/similar/terms.hpp: which lines are error lines and what terms they give.
#include "similar/terms.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::similar {
namespace {

bool has(const std::vector<std::string>& terms, const std::string& t) {
    return std::find(terms.begin(), terms.end(), t) != terms.end();
}

TEST(SimilarTerms, ErrorLinesAreTheOnesWithAnErrorWord) {
    EXPECT_TRUE(is_error_line("RuntimeError: HIP error: invalid device function"));
    EXPECT_TRUE(is_error_line("[ 2650.759244] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=SUSPEND"));
    EXPECT_TRUE(is_error_line("Memory access fault by GPU node-1 (Agent handle: 0x55) on address 0x7f4e8c200000."));
    EXPECT_FALSE(is_error_line("Epoch 3: 100%|##########| 400/400 [00:10<00:00, 7.1it/s]"));
    EXPECT_FALSE(is_error_line("[2024-03-12 10:01:02.123] INFO  step 10 loss=0.1234"));
}

TEST(SimilarTerms, PatternListsTheSameWords) {
    const auto pattern = error_line_pattern();
    EXPECT_EQ(pattern.rfind("(?i)(?:", 0), 0U);
    EXPECT_NE(pattern.find("|fault|"), std::string::npos);
    EXPECT_NE(pattern.find("out of memory"), std::string::npos);
}

TEST(SimilarTerms, AddressesNumbersAndPathsBecomePlaceholders) {
    const auto a =
        line_terms("Memory access fault by GPU node-1 (Agent handle: 0x5581f0c0a0b0) on address 0x7f4e8c200000.");
    const auto b = line_terms("Memory access fault by GPU node-2 (Agent handle: 0x7ffd0000beef) on address 0x1000.");
    EXPECT_EQ(a, b);
    EXPECT_TRUE(has(a, "memory"));
    EXPECT_TRUE(has(a, "access_fault"));
    for (const auto& t : a) EXPECT_EQ(t.find("0x"), std::string::npos) << t;
    const auto p = line_terms("  File \"/home/ana/src/train.py\", line 88, in forward");
    EXPECT_TRUE(has(p, "train.py"));
    EXPECT_FALSE(has(p, "home"));
}

TEST(SimilarTerms, ErrorNamesTargetsAndLibrariesStayWhole) {
    const auto t = line_terms(
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: for GPU arch : gfx1036 "
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION hipErrorNoBinaryForGpu /opt/rocm/lib/librocblas.so.4");
    EXPECT_TRUE(has(t, "gfx1036"));
    EXPECT_TRUE(has(t, "hsa_status_error_memory_aperture_violation"));
    EXPECT_TRUE(has(t, "hiperrornobinaryforgpu"));
    EXPECT_TRUE(has(t, "librocblas.so"));
    EXPECT_TRUE(has(t, "rocblas_error"));  // a neighbouring pair
}

TEST(SimilarTerms, PairsJoinAcrossStopWordsNotAcrossPlaceholders) {
    const auto t = line_terms("amdgpu: MES failed to respond to msg=SUSPEND");
    EXPECT_TRUE(has(t, "failed_respond"));
    EXPECT_TRUE(has(t, "msg_suspend"));
    const auto u = line_terms("size 4096 exceeds");
    EXPECT_FALSE(has(u, "size_exceeds"));
}

TEST(SimilarTerms, LongWordsAreCutSoThatXapianTakesThem) {
    // Mangled C++ names in backtraces run to hundreds of bytes; Xapian refuses terms over 245.
    const auto t = line_terms("error in _ZN2ck16tensor_operation6device8instance" + std::string(300, 'x') + " " +
                              std::string(300, 'y'));
    for (const auto& term : t) EXPECT_LE(term.size(), 129U) << term;
}

TEST(SimilarTerms, CollectorKeepsDistinctErrorLinesUpToItsLimit) {
    TermCollector c(2);
    EXPECT_TRUE(c.add_line("INFO all good"));
    EXPECT_TRUE(c.add_line("error at 0x1"));
    EXPECT_TRUE(c.add_line("error at 0x2"));  // the same line after normalisation
    EXPECT_EQ(c.lines(), 1U);
    EXPECT_FALSE(c.add_line("fault in kernel"));
    EXPECT_EQ(c.lines(), 2U);
    EXPECT_FALSE(c.add_line("another failure"));
    EXPECT_EQ(c.lines(), 2U);
    EXPECT_TRUE(has(c.terms(), "fault"));
    EXPECT_FALSE(has(c.terms(), "another"));
}

}  // namespace
}  // namespace rmcp::similar
