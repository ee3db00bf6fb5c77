// run's time options (docs/run.md, "Signals, stalls, exit status"): finite seconds from 0 to
// 30 days, anything else a usage error (1e10 once overflowed into an immediate "stall").
#include "run/supervisor.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <unistd.h>

using namespace rmcp;

TEST(RunTimeOptions, AcceptsFiniteSecondsUpToThirtyDays) {
    EXPECT_EQ(run::check_seconds("0").value(), 0.0);
    EXPECT_EQ(run::check_seconds("0.25").value(), 0.25);
    EXPECT_EQ(run::check_seconds(" 5 ").value(), 5.0);
    EXPECT_EQ(run::check_seconds("2592000").value(), run::k_max_seconds);
    EXPECT_EQ(run::check_seconds("1e3").value(), 1000.0);
}

TEST(RunTimeOptions, RefusesEverythingElse) {
    for (const char* bad : {"", "-1", "-0.5", "2592000.5", "1e10", "9.3e9", "1e18", "1e99", "inf", "-inf", "nan", "NaN",
                            "abc", "5s", "0x10p9"}) {
        const auto r = run::check_seconds(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code, ExitCode::usage) << bad;
    }
}

// The library clamps what the CLI would refuse: no value reaches the conversion to
// milliseconds out of range (undefined behaviour, UBSan in the asan preset), and a huge
// stall timeout never turns into an immediate "stall".
TEST(RunTimeOptions, TheSupervisorClampsOutOfRangeValues) {
    for (const double bad :
         {1e10, 1e18, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
        run::RunOptions o;
        o.argv = {"sh", "-c", "sleep 0.2; echo healthy"};
        o.plan.push_back(run::Rung{});
        o.stall_timeout_s = bad;
        o.kill_grace_s = bad;
        const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        o.out_fd = devnull;
        o.err_fd = devnull;
        Diagnostics diag(stderr, Verbosity::quiet);
        const auto result = run::supervise(o, diag);
        ::close(devnull);
        ASSERT_EQ(result.attempts.size(), 1U);
        EXPECT_FALSE(result.attempts[0].stalled) << bad;
        EXPECT_EQ(result.exit_code, 0) << bad;
    }
}

// supervise() on real children, with stdout and stderr relayed into memory files.
namespace {

struct Relayed {
    run::RunResult result;
    std::string out, err;
};

std::string contents(int fd) {
    std::string text;
    char buf[4096];
    ::lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return text;
}

Relayed supervise_relayed(run::RunOptions o) {
    if (o.plan.empty()) o.plan.push_back(run::Rung{});
    o.out_fd = ::memfd_create("rmcp-test-out", MFD_CLOEXEC);
    o.err_fd = ::memfd_create("rmcp-test-err", MFD_CLOEXEC);
    Diagnostics diag(stderr, Verbosity::quiet);
    Relayed r;
    r.result = run::supervise(o, diag);
    r.out = contents(o.out_fd);
    r.err = contents(o.err_fd);
    return r;
}

TEST(RunSupervise, RelaysBothStreamsAndReturnsTheExitStatus) {
    run::RunOptions o;
    o.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
    const auto r = supervise_relayed(o);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    ASSERT_EQ(r.result.attempts.size(), 1U);
    const auto& a = r.result.attempts[0];
    EXPECT_EQ(a.end, run::AttemptEnd::exited);
    EXPECT_EQ(a.exit_status, 3);
    EXPECT_EQ(a.bytes_out, 4U);
    EXPECT_EQ(a.bytes_err, 4U);
    EXPECT_EQ(r.result.exit_code, 3);
    EXPECT_FALSE(r.result.incident());
}

TEST(RunSupervise, ASignalIsTheShellsCode) {
    run::RunOptions o;
    o.argv = {"sh", "-c", "kill -SEGV $$"};
    const auto r = supervise_relayed(o);
    ASSERT_EQ(r.result.attempts.size(), 1U);
    EXPECT_EQ(r.result.attempts[0].end, run::AttemptEnd::signaled);
    EXPECT_EQ(r.result.attempts[0].exit_status, SIGSEGV);
    EXPECT_EQ(r.result.exit_code, 128 + SIGSEGV);
    EXPECT_FALSE(r.result.attempts[0].gpu_failure);  // nothing recognised it
}

TEST(RunSupervise, AMissingCommandIs127) {
    run::RunOptions o;
    o.argv = {"rmcp-test-no-such-command"};
    const auto r = supervise_relayed(o);
    ASSERT_EQ(r.result.attempts.size(), 1U);
    EXPECT_EQ(r.result.attempts[0].end, run::AttemptEnd::not_started);
    EXPECT_EQ(r.result.attempts[0].error, "starting rmcp-test-no-such-command: No such file or directory");
    EXPECT_EQ(r.result.exit_code, run::k_exit_not_found);
}

TEST(RunSupervise, TheRungsEnvironmentReachesTheChild) {
    run::RunOptions o;
    o.argv = {"sh", "-c", "echo \"$RMCP_TEST_RUNG ${RMCP_TEST_UNSET-unset} ${PYTHONUNBUFFERED+set}\""};
    o.plan.push_back(run::Rung{"test", {{"RMCP_TEST_RUNG", "set"}, {"RMCP_TEST_UNSET", std::nullopt}}, false});
    ::setenv("RMCP_TEST_UNSET", "inherited", 1);
    const auto r = supervise_relayed(o);
    ::unsetenv("RMCP_TEST_UNSET");
    EXPECT_EQ(r.out, "set unset set\n");  // PYTHONUNBUFFERED: the last lines before a fault are the evidence
    EXPECT_EQ(r.result.attempts.at(0).rung.profile, "test");
}

TEST(RunSupervise, SilenceLongerThanTheStallTimeoutIsAStall) {
    run::RunOptions o;
    o.argv = {"sh", "-c", "echo started; exec sleep 30"};
    o.stall_timeout_s = 0.3;
    o.kill_grace_s = 0.3;
    const auto r = supervise_relayed(o);
    EXPECT_EQ(r.out, "started\n");
    ASSERT_EQ(r.result.attempts.size(), 1U);
    const auto& a = r.result.attempts[0];
    EXPECT_TRUE(a.stalled);
    EXPECT_TRUE(a.gpu_failure);
    EXPECT_EQ(a.end, run::AttemptEnd::signaled);
    EXPECT_TRUE(r.result.incident());
}

}  // namespace
