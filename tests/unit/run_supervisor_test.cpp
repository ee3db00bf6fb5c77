// run's time options (docs/run.md, "Signals, stalls, exit status"): finite seconds from 0 to
// 30 days, anything else a usage error (1e10 once overflowed into an immediate "stall").
#include "run/supervisor.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <limits>
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
    for (const char* bad : {"", "-1", "-0.5", "2592000.5", "1e10", "9.3e9", "1e18", "1e99", "inf", "-inf", "nan",
                            "NaN", "abc", "5s", "0x10p9"}) {
        const auto r = run::check_seconds(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code, ExitCode::usage) << bad;
    }
}

// The library clamps what the CLI would refuse: no value reaches the conversion to
// milliseconds out of range (undefined behaviour, UBSan in the asan preset), and a huge
// stall timeout never turns into an immediate "stall".
TEST(RunTimeOptions, TheSupervisorClampsOutOfRangeValues) {
    for (const double bad : {1e10, 1e18, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
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
