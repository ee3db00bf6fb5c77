// The kernel-log reader through an injected runner: which commands it asks, in which order,
// and what it makes of their answers (docs/explain.md, docs/run.md "Incident report").
#include "process/kernel_log.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace rmcp::process {
namespace {

using Argv = std::vector<std::string>;

// A runner that answers journalctl and dmesg with the given outputs and records the calls.
struct FakeRunner {
    CommandOutput journalctl;
    CommandOutput dmesg;
    std::vector<Argv> calls;

    CommandRunner runner() {
        return [this](const Argv& argv) {
            calls.push_back(argv);
            return argv.front() == "journalctl" ? journalctl : dmesg;
        };
    }
};

TEST(ProcessKernelLog, WholeBootPrefersJournalctl) {
    FakeRunner fake{{0, "Mar 12 kernel: hello\n", ""}, {0, "[ 1.0] dmesg line\n", ""}, {}};
    auto log = read_kernel_log(fake.runner());
    ASSERT_TRUE(log.ok());
    EXPECT_EQ(log->tool, "journalctl");
    EXPECT_EQ(log->source, "journalctl -k -b");
    EXPECT_EQ(log->text, "Mar 12 kernel: hello\n");
    EXPECT_EQ(fake.calls, (std::vector<Argv>{{"journalctl", "-k", "-b", "--no-pager", "-n", "100000"}}));
}

TEST(ProcessKernelLog, WholeBootFallsBackToDmesgWhenJournalctlShowsNoEntries) {
    FakeRunner fake{{0, "-- No entries --\n", ""}, {0, "[ 1.0] dmesg line\n", ""}, {}};
    auto log = read_kernel_log(fake.runner());
    ASSERT_TRUE(log.ok());
    EXPECT_EQ(log->source, "dmesg");
    EXPECT_EQ(log->text, "[ 1.0] dmesg line\n");
    EXPECT_EQ(fake.calls, (std::vector<Argv>{{"journalctl", "-k", "-b", "--no-pager", "-n", "100000"}, {"dmesg"}}));
}

TEST(ProcessKernelLog, NeitherReadableIsAnEnvironmentErrorNamingBoth) {
    FakeRunner fake{{1, "", "journalctl exited with 1"}, {1, "", "dmesg exited with 1"}, {}};
    auto log = read_kernel_log(fake.runner());
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.error().code, ExitCode::environment);
    EXPECT_EQ(log.error().message(), "reading the kernel log: journalctl exited with 1; dmesg exited with 1");

    FakeRunner silent{{0, "", ""}, {-1, "", ""}, {}};
    log = read_kernel_log(silent.runner());
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.error().cause, "journalctl: no entries; dmesg failed");
}

TEST(ProcessKernelLog, SinceAsksJournalctlFromThatSecond) {
    const auto since = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
    FakeRunner fake{{0, "", ""}, {0, "never asked\n", ""}, {}};
    auto log = read_kernel_log(fake.runner(), since);
    ASSERT_TRUE(log.ok());
    // No entries since the start is an answer, not a reason to ask dmesg.
    EXPECT_EQ(log->tool, "journalctl");
    EXPECT_EQ(log->text, "");
    EXPECT_EQ(fake.calls, (std::vector<Argv>{{"journalctl", "-k", "-q", "--no-pager", "-o", "short-iso", "-n", "100000",
                                              "--since", "@1700000000"}}));
}

TEST(ProcessKernelLog, SinceFiltersDmesgByItsIsoStamps) {
    const auto since = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
    // 1700000000 is 2023-11-14T22:13:20Z.
    const std::string dmesg = "2023-11-14T22:13:19,000000+00:00 before\n"
                              "2023-11-14T23:13:20,500000+01:00 at the second, in another zone\n"
                              "no stamp at all\n"
                              "\n"
                              "2023-11-14T22:15:00,000001+00:00 after\n";
    FakeRunner fake{{1, "", "journalctl exited with 1"}, {0, dmesg, ""}, {}};
    auto log = read_kernel_log(fake.runner(), since);
    ASSERT_TRUE(log.ok());
    EXPECT_EQ(log->tool, "dmesg");
    EXPECT_EQ(log->text, "2023-11-14T23:13:20,500000+01:00 at the second, in another zone\n"
                         "2023-11-14T22:15:00,000001+00:00 after\n");
    ASSERT_EQ(fake.calls.size(), 2U);
    EXPECT_EQ(fake.calls[1], (Argv{"dmesg", "--time-format", "iso"}));
}

TEST(ProcessKernelLog, DmesgIsoSeconds) {
    EXPECT_EQ(dmesg_iso_seconds("1970-01-01T00:00:10,000000+00:00 x"), 10);
    EXPECT_EQ(dmesg_iso_seconds("1970-01-01T02:00:10,000000+02:00 x"), 10);
    EXPECT_EQ(dmesg_iso_seconds("1970-01-01T00:00:10,000000-01:30 x"), 10 + 5400);
    EXPECT_FALSE(dmesg_iso_seconds("[    1.000000] amdgpu: x").has_value());
    EXPECT_FALSE(dmesg_iso_seconds("").has_value());
}

}  // namespace
}  // namespace rmcp::process
