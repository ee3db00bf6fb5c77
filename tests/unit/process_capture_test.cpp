// capture_output against real commands: stdout only, exit codes, missing commands and the
// time limit.
#include "process/capture.hpp"

#include <gtest/gtest.h>

namespace rmcp::process {
namespace {

using namespace std::chrono_literals;

TEST(ProcessCapture, CollectsStdoutOnly) {
    const auto out = capture_output({"sh", "-c", "echo hi; echo noise >&2"}, 10s);
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.out, "hi\n");
    EXPECT_EQ(out.error, "");
}

TEST(ProcessCapture, StdinIsDevNull) {
    const auto out = capture_output({"cat"}, 10s);  // would wait for a terminal otherwise
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.out, "");
}

TEST(ProcessCapture, AFailingCommandSaysItsExitCode) {
    const auto out = capture_output({"sh", "-c", "echo partial; exit 3"}, 10s);
    EXPECT_EQ(out.exit_code, 3);
    EXPECT_EQ(out.out, "partial\n");
    EXPECT_EQ(out.error, "sh exited with 3");
}

TEST(ProcessCapture, AMissingCommandCannotStart) {
    const auto out = capture_output({"rmcp-test-no-such-command"}, 10s);
    EXPECT_EQ(out.exit_code, -1);
    EXPECT_EQ(out.error, "starting rmcp-test-no-such-command: No such file or directory");
    EXPECT_EQ(capture_output({}, 10s).error, "no command given");
}

TEST(ProcessCapture, ACommandOverTheLimitIsKilled) {
    const auto out = capture_output({"sh", "-c", "echo early; exec sleep 30"}, 300ms);
    EXPECT_EQ(out.exit_code, -1);
    EXPECT_EQ(out.out, "early\n");
    EXPECT_EQ(out.error, "sh did not finish within 300 ms");
}

TEST(ProcessCapture, SystemRunnerIsCaptureOutput) {
    const auto runner = system_runner(10s);
    const auto out = runner({"sh", "-c", "printf 'a\\nb'"});
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.out, "a\nb");
}

}  // namespace
}  // namespace rmcp::process
