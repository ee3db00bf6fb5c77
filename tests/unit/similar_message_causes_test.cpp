// src/core/similar/message_causes.hpp: the tally of what the public threads answered with one kb
// entry established, with --exclude-thread honoured and a malformed file named by file:line.
#include "similar/message_causes.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace rmcp::similar {
namespace {

using testing_support::ScratchDir;

std::string message(const std::string& entry, const std::string& n, const std::string& category) {
    return "[[message]]\nentry = \"" + entry + "\"\nurl = \"https://github.com/example/p/issues/" + n +
           "\"\ncategory = \"" + category + "\"\n\n";
}

TEST(SimilarMessageCauses, TallyOfOneEntryMostThreadsFirstThenByName) {
    ScratchDir dir("message-causes");
    std::ofstream(dir.path() / "message-causes.toml")
        << message("memory-access-fault", "1", "gpu-memory-fault") +
               message("memory-access-fault", "2", "config-risk") +
               message("memory-access-fault", "3", "gpu-memory-fault") +
               message("memory-access-fault", "4", "kernel-driver-fault") +
               message("hip-invalid-device-function", "5", "unsupported-gpu");
    auto m = message_causes(dir.path(), "memory-access-fault", {});
    ASSERT_TRUE(m.ok()) << m.error().message();
    EXPECT_EQ(m->threads, 4U);
    EXPECT_EQ(message_causes_text(*m), "2 gpu-memory-fault, 1 config-risk, 1 kernel-driver-fault");
    EXPECT_EQ(message_causes_json(*m)["causes"][0], (nlohmann::json{{"category", "gpu-memory-fault"}, {"threads", 2}}));
    // A thread left out (its own log, measured) is not counted.
    auto without = message_causes(dir.path(), "memory-access-fault", {"https://github.com/example/p/issues/1"});
    ASSERT_TRUE(without.ok());
    EXPECT_EQ(message_causes_text(*without), "1 config-risk, 1 gpu-memory-fault, 1 kernel-driver-fault");
    auto none = message_causes(dir.path(), "no-such-entry", {});
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(none->threads, 0U);
}

TEST(SimilarMessageCauses, MalformedFileNamesFileAndLine) {
    ScratchDir dir("message-causes");
    const auto file = (dir.path() / "message-causes.toml").string();
    std::ofstream(file) << message("e", "1", "gpu-hang") + "[[message]]\nentry = \"e\"\nurl = \"u\"\n";
    auto m = message_causes(dir.path(), "e", {});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().path, file + ":6");
    EXPECT_NE(m.error().cause.find("category"), std::string::npos) << m.error().cause;
    std::ofstream(file) << message("e", "1", "gpu-hang") +
                               "[[message]]\nentry = \"e\"\nurl = \"u\"\ncategory = \"c\"\nwhy = 1\n";
    m = message_causes(dir.path(), "e", {});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().path, file + ":10");
    // A category outside the kb's list (it would be printed as it is) is refused.
    std::ofstream(file) << message("e", "1", "gpu-hang") + message("e", "2", "\\u001b[31mred");
    m = message_causes(dir.path(), "e", {});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().path, file + ":6");
    EXPECT_NE(m.error().cause.find("unknown category"), std::string::npos) << m.error().cause;
    auto missing = message_causes(dir.path() / "absent", "e", {});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().cause, "cannot open");
}

}  // namespace
}  // namespace rmcp::similar
