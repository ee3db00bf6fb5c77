// The probe's crash classifier: the first kb entry whose signature matches a dead child's
// output, the kb compiled once on first use, and "" (with one note) when the kb is unusable;
// the shared load-and-compile step (first_match_signatures) on its own.
#include "explain/crash_classifier.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

TEST(ExplainCrashClassifier, NamesTheShippedEntryOfAMemoryFault) {
    std::vector<std::string> notes;
    auto classify = rmcp::explain::first_entry_classifier(fs::path(RMCP_SOURCE_DIR) / "kb",
                                                          [&](const std::string& why) { notes.push_back(why); });
    const std::string crash =
        "step 12\n"
        "Memory access fault by GPU node-1 (Agent handle: 0x5581c2a0) on address 0x7f2a0000. Reason: Page not "
        "present or supervisor privilege.\n";
    EXPECT_EQ(classify(crash), "memory-access-fault");
    EXPECT_EQ(classify("epoch 1 loss 0.5\nepoch 2 loss 0.4\n"), "");
    EXPECT_EQ(classify(crash), "memory-access-fault");  // the compiled set is kept
    EXPECT_TRUE(notes.empty());
}

TEST(ExplainCrashClassifier, AnUnusableKnowledgeBaseAnswersNothingAndSaysWhyOnce) {
    std::vector<std::string> notes;
    auto classify = rmcp::explain::first_entry_classifier("/nonexistent-rmcp-kb",
                                                          [&](const std::string& why) { notes.push_back(why); });
    EXPECT_EQ(classify("Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x2."), "");
    EXPECT_EQ(classify("HIP error: invalid device function"), "");
    ASSERT_EQ(notes.size(), 1U);
    EXPECT_NE(notes.front().find("/nonexistent-rmcp-kb"), std::string::npos) << notes.front();
}

TEST(ExplainFirstMatchSignatures, CompilesOnceAndSharesTheSetWithEveryCopy) {
    auto load = rmcp::explain::first_match_signatures(fs::path(RMCP_SOURCE_DIR) / "kb");
    auto copy = load;
    const auto first = load();
    ASSERT_TRUE(first.ok()) << first.error().message();
    ASSERT_NE((*first)->set, nullptr);
    EXPECT_FALSE((*first)->kb.entries.empty());
    const auto again = copy();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->get(), first->get());  // the same compiled set, not a second compile
}

TEST(ExplainFirstMatchSignatures, AnUnusableKnowledgeBaseIsTheSameErrorEveryCall) {
    auto load = rmcp::explain::first_match_signatures("/nonexistent-rmcp-kb");
    const auto first = load();
    ASSERT_FALSE(first.ok());
    EXPECT_NE(first.error().message().find("/nonexistent-rmcp-kb"), std::string::npos) << first.error().message();
    const auto again = load();
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().message(), first.error().message());
}
