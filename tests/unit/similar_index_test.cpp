// src/core/similar/index.hpp: the index of public threads, built from records in a scratch
// directory with the real librmcp_xapian.so of this build, looked up, cached and voted.
#include "similar/index.hpp"
#include "similar/terms.hpp"
#include "similar/threads.hpp"

#include "captured_output.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace rmcp::similar {
namespace {

using testing_support::ScratchDir;

const ModulePaths k_module{{std::filesystem::path(RMCP_BINARY_DIR) / "librmcp_xapian.so"}};

void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::string record(const std::string& n, const std::string& category, const std::string& excerpt, bool clean = false) {
    return "[[thread]]\nurl = \"https://github.com/example/project/issues/" + n + "\"\nsplit = \"dev\"\ncategory = \"" +
           category + "\"\ncause = \"cause " + n + "\"\nfixed = \"fix " + n + "\"\nexcerpt = \"" + excerpt + "\"\n" +
           (clean ? "clean = true\n" : "") + "\n";
}

void three_threads(const std::filesystem::path& dir) {
    write(dir / "threads.toml",
          record("1", "gpu-hang", "a.log") + record("2", "out-of-memory", "b.log") + record("3", "gpu-hang", "c.log"));
    write(dir / "excerpts/a.log", "amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=SUSPEND\n"
                                  "amdgpu: GPU reset begin!\n");
    write(dir / "excerpts/b.log", "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n");
    write(dir / "excerpts/c.log", "amdgpu 0000:03:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE\n"
                                  "amdgpu: ring gfx_0.0.0 timeout\n");
}

std::vector<std::string> terms_of(const std::string& log) {
    TermCollector c;
    std::size_t start = 0;
    while (start < log.size()) {
        const auto nl = log.find('\n', start);
        c.add_line(std::string_view(log).substr(start, nl - start));
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    return c.terms();
}

TEST(SimilarIndex, NearestThreadsComeFirstWithTheirRecords) {
    ScratchDir scratch("similar-index");
    three_threads(scratch / "threads");
    testing_support::SavedEnvironment saved{"XDG_CACHE_HOME"};
    ::setenv("XDG_CACHE_HOME", (scratch / "cache").c_str(), 1);
    auto index = ThreadIndex::open(scratch / "threads", k_module);
    ASSERT_TRUE(index) << index.error().message();
    auto near =
        index->nearest(terms_of("[ 12.5] amdgpu 0000:0a:00.0: amdgpu: MES failed to respond to msg=SUSPEND\n"), 3);
    ASSERT_TRUE(near) << near.error().message();
    ASSERT_GE(near->size(), 2U);
    EXPECT_EQ((*near)[0].record["url"], "https://github.com/example/project/issues/1");
    EXPECT_EQ((*near)[0].category(), "gpu-hang");
    EXPECT_EQ((*near)[0].record["fixed"], "fix 1");
    EXPECT_GT((*near)[0].similarity, (*near)[1].similarity);
    EXPECT_LE((*near)[0].similarity, 1.0);
    // Leaving a thread out: it is never returned.
    auto without = index->nearest(terms_of("amdgpu: MES failed to respond to msg=SUSPEND\n"), 3,
                                  {"https://github.com/example/project/issues/1"});
    ASSERT_TRUE(without);
    for (const auto& r : *without) EXPECT_NE(r.record["url"], "https://github.com/example/project/issues/1");
    // The vote: both MES threads establish gpu-hang.
    auto v = vote(*near);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->category, "gpu-hang");
}

TEST(SimilarIndex, CacheIsReusedWhileTheRecordsStayAndRebuiltWhenTheyChange) {
    ScratchDir scratch("similar-cache");
    three_threads(scratch / "threads");
    testing_support::SavedEnvironment saved{"XDG_CACHE_HOME"};
    ::setenv("XDG_CACHE_HOME", (scratch / "cache").c_str(), 1);
    auto first = ThreadIndex::open(scratch / "threads", k_module);
    ASSERT_TRUE(first) << first.error().message();
    auto again = ThreadIndex::open(scratch / "threads", k_module);
    ASSERT_TRUE(again);
    EXPECT_EQ(first->path(), again->path());
    write(scratch / "threads/excerpts/b.log",
          "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 20.00 GiB\n");
    auto changed = ThreadIndex::open(scratch / "threads", k_module);
    ASSERT_TRUE(changed);
    EXPECT_NE(changed->path(), first->path());
}

TEST(SimilarIndex, ShippedIndexIsUsedOnlyWhenBuiltFromTheseRecords) {
    ScratchDir scratch("similar-shipped");
    three_threads(scratch / "threads");
    ASSERT_TRUE(ThreadIndex::build(scratch / "threads", scratch / "threads/index", k_module));
    testing_support::SavedEnvironment saved{"XDG_CACHE_HOME"};
    ::setenv("XDG_CACHE_HOME", (scratch / "cache").c_str(), 1);
    auto index = ThreadIndex::open(scratch / "threads", k_module);
    ASSERT_TRUE(index);
    EXPECT_EQ(index->path(), scratch / "threads/index");
    write(scratch / "threads/threads.toml", record("1", "gpu-hang", "a.log"));
    auto stale = ThreadIndex::open(scratch / "threads", k_module);
    ASSERT_TRUE(stale);
    EXPECT_NE(stale->path(), scratch / "threads/index");
}

TEST(SimilarIndex, BadRecordsNameFileAndLine) {
    ScratchDir scratch("similar-bad");
    write(scratch / "threads/threads.toml",
          "[[thread]]\nurl = \"u\"\nsplit = \"dev\"\ncause = \"c\"\nexcerpt = \"x.log\"\n"
          "colour = \"red\"\n");
    auto records = load_threads(scratch / "threads");
    ASSERT_FALSE(records);
    EXPECT_NE(records.error().message().find("threads.toml:6"), std::string::npos) << records.error().message();
    write(scratch / "threads/threads.toml",
          "[[thread]]\nurl = \"u\"\nsplit = \"dev\"\ncause = \"c\"\nexcerpt = \"../x\"\n");
    EXPECT_FALSE(load_threads(scratch / "threads"));
}

// The machine facts a thread states (issue 31, item 5): `overrides` (an array of "NAME=value")
// and `kernel` (a string) are read into the record and shown with it; a wrong type names file:line.
TEST(SimilarIndex, OverridesAndKernelAreReadAndShownOrRefusedWithFileAndLine) {
    ScratchDir scratch("similar-facts");
    const std::string head = "[[thread]]\nurl = \"u\"\nsplit = \"dev\"\ncause = \"c\"\nexcerpt = \"x.log\"\n";
    write(scratch / "threads/threads.toml",
          head + "overrides = [\"HSA_OVERRIDE_GFX_VERSION=10.3.0\", \"HIP_VISIBLE_DEVICES=0\"]\n"
                 "kernel = \"6.8.0-45-generic\"\n");
    auto records = load_threads(scratch / "threads");
    ASSERT_TRUE(records) << records.error().message();
    ASSERT_EQ(records->size(), 1U);
    EXPECT_EQ((*records)[0].overrides,
              (std::vector<std::string>{"HSA_OVERRIDE_GFX_VERSION=10.3.0", "HIP_VISIBLE_DEVICES=0"}));
    EXPECT_EQ((*records)[0].kernel, "6.8.0-45-generic");
    const auto shown = record_json((*records)[0]);
    EXPECT_EQ(shown["overrides"], nlohmann::json::array({"HSA_OVERRIDE_GFX_VERSION=10.3.0", "HIP_VISIBLE_DEVICES=0"}));
    EXPECT_EQ(shown["kernel"], "6.8.0-45-generic");
    // Absent: none stated.
    write(scratch / "threads/threads.toml", head);
    records = load_threads(scratch / "threads");
    ASSERT_TRUE(records) << records.error().message();
    EXPECT_TRUE((*records)[0].overrides.empty());
    EXPECT_EQ(record_json((*records)[0])["overrides"], nlohmann::json::array());
    // Wrong shapes, each at its line (the 6th).
    for (const std::string bad : {"overrides = \"HSA_OVERRIDE_GFX_VERSION=10.3.0\"\n", "overrides = [1]\n",
                                  "overrides = [\"HSA_OVERRIDE_GFX_VERSION\"]\n", "kernel = 6\n"}) {
        write(scratch / "threads/threads.toml", head + bad);
        records = load_threads(scratch / "threads");
        ASSERT_FALSE(records) << bad;
        EXPECT_NE(records.error().message().find("threads.toml:6"), std::string::npos) << records.error().message();
        EXPECT_NE(records.error().message().find(bad.substr(0, bad.find(' '))), std::string::npos)
            << records.error().message();
    }
}

TEST(SimilarIndex, MissingModuleIsAnErrorNotACrash) {
    ScratchDir scratch("similar-nomodule");
    three_threads(scratch / "threads");
    // The module is loaded once per process: a missing one is only seen before the first load.
    auto paths = ModulePaths{{scratch / "no-such-module.so"}};
    auto index = ThreadIndex::open(scratch / "threads", paths);
    if (!index) EXPECT_NE(index.error().message().find("librmcp_xapian.so"), std::string::npos);
}

TEST(SimilarVote, CleanMajorityOrLowSimilarityGivesNoVote) {
    auto report = [](const char* cat, double sim, bool clean = false) {
        SimilarReport r;
        r.record = {{"category", cat}, {"clean", clean}};
        r.similarity = sim;
        return r;
    };
    EXPECT_FALSE(vote({report("gpu-hang", k_vote_similarity / 2), report("gpu-hang", k_vote_similarity / 2)}));
    EXPECT_FALSE(vote({report("gpu-hang", 0.95)}));  // one thread is no vote
    EXPECT_FALSE(vote({report("gpu-hang", 0.95), report("out-of-memory", 0.9), report("device-access", 0.9)}));
    EXPECT_FALSE(vote({report("", 0.9, true), report("", 0.8, true), report("gpu-hang", 0.7)}));
    auto v =
        vote({report("gpu-hang", 0.9), report("out-of-memory", 0.8), report("gpu-hang", 0.7), report("gpu-hang", 0.6)});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->category, "gpu-hang");
    EXPECT_EQ(v->votes, 2U);
    EXPECT_EQ(v->of, 3U);
}

}  // namespace
}  // namespace rmcp::similar
