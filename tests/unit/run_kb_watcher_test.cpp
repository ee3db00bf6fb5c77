// The supervisor's watcher over the shipped knowledge base (run/kb_watcher.cpp): a ROCr memory
// fault on stderr is reported as memory-access-fault, clean output as nothing, and a factory
// over a directory that is not a knowledge base fails instead of watching nothing.
#include "run/kb_watcher.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace rmcp::run {
namespace {

namespace fs = std::filesystem;

const fs::path k_kb = fs::path(RMCP_SOURCE_DIR) / "kb";

std::vector<WatchMatch> watch(OutputWatcher& w, StreamId stream, std::string_view bytes) {
    auto found = w.feed(stream, bytes);
    auto rest = w.finish();
    found.insert(found.end(), rest.begin(), rest.end());
    return found;
}

TEST(KbWatcher, MemoryFaultLineIsReported) {
    auto factory = kb_watcher_factory(k_kb);
    auto watcher = factory();
    ASSERT_TRUE(watcher.ok()) << watcher.error().message();
    const std::string prefix = "epoch 1 loss 0.25\n";
    const std::string fault = "Memory access fault by GPU node-1 (Agent handle: 0x55d0) on address 0x7f00. Reason: "
                              "Page not present or supervisor privilege.";
    const auto found = watch(**watcher, StreamId::err, prefix + fault + "\nAborted (core dumped)\n");
    const auto it = std::find_if(found.begin(), found.end(),
                                 [](const WatchMatch& m) { return m.entry_id == "memory-access-fault"; });
    ASSERT_NE(it, found.end());
    EXPECT_EQ(it->category, "gpu-memory-fault");
    EXPECT_EQ(it->severity, "critical");
    EXPECT_EQ(it->title, "ROCr: Memory access fault by GPU");
    EXPECT_EQ(it->stream, StreamId::err);
    // The match ends inside the fault line, an offset within the whole stream.
    EXPECT_GT(it->end_offset, prefix.size());
    EXPECT_LE(it->end_offset, prefix.size() + fault.size());
    // One report per entry and stream, however many signatures or lines matched.
    EXPECT_EQ(std::count_if(found.begin(), found.end(),
                            [](const WatchMatch& m) { return m.entry_id == "memory-access-fault"; }),
              1);
}

TEST(KbWatcher, CleanOutputReportsNothing) {
    auto factory = kb_watcher_factory(k_kb);
    auto watcher = factory();
    ASSERT_TRUE(watcher.ok());
    EXPECT_TRUE(watch(**watcher, StreamId::out, "epoch 1 loss 0.25\nepoch 2 loss 0.19\nsaved checkpoint\n").empty());
}

TEST(KbWatcher, StreamsAreScannedApart) {
    auto factory = kb_watcher_factory(k_kb);
    auto watcher = factory();
    ASSERT_TRUE(watcher.ok());
    // Half of the message on stdout and half on stderr is no message at all.
    auto found = (*watcher)->feed(StreamId::out, "Memory access fault by GPU node-1 (Agent handle: 0x1) ");
    auto more = (*watcher)->feed(StreamId::err, "on address 0x2. Reason: Page not present or supervisor privilege.\n");
    found.insert(found.end(), more.begin(), more.end());
    auto rest = (*watcher)->finish();
    found.insert(found.end(), rest.begin(), rest.end());
    EXPECT_TRUE(std::none_of(found.begin(), found.end(),
                             [](const WatchMatch& m) { return m.entry_id == "memory-access-fault"; }));
}

TEST(KbWatcher, FactoryServesEveryAttempt) {
    auto factory = kb_watcher_factory(k_kb);
    auto first = factory();
    auto second = factory();  // compiled once, a fresh watcher each time
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(second.ok());
    EXPECT_NE(first->get(), second->get());
    (void)watch(**first, StreamId::err, "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION\n");
    // The second watcher did not see the first one's output.
    EXPECT_TRUE(watch(**second, StreamId::err, "all good\n").empty());
}

TEST(KbWatcher, MissingKnowledgeBaseIsAnError) {
    auto factory = kb_watcher_factory(fs::path(RMCP_SOURCE_DIR) / "tests" / "no-such-kb-dir");
    EXPECT_FALSE(factory().ok());
    EXPECT_FALSE(factory().ok());  // the failure is remembered, not retried into success
}

}  // namespace
}  // namespace rmcp::run
