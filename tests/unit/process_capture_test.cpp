// capture_output against real commands: stdout only, exit codes, missing commands, the
// time limit, and the bounds on what is kept (docs/security.md, "Bounded capture").
#include "process/capture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <unistd.h>

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

TEST(ProcessCapture, KeepTailKeepsTheNewestLinesAndBytes) {
    std::string text = "one\ntwo\nthree\nfour\n";
    EXPECT_FALSE(keep_tail(text, 100, 10));
    EXPECT_EQ(text, "one\ntwo\nthree\nfour\n");
    EXPECT_TRUE(keep_tail(text, 100, 2));
    EXPECT_EQ(text, "three\nfour\n");
    text = "alpha\nbeta\ngamma";  // a last line without its newline counts
    EXPECT_TRUE(keep_tail(text, 100, 1));
    EXPECT_EQ(text, "gamma");
    text = "aaaa\nbbbb\ncccc\n";
    EXPECT_TRUE(keep_tail(text, 7, 100));  // cut at a line start inside the last 7 bytes
    EXPECT_EQ(text, "cccc\n");
    text = "xxxxxxxxxxxxxxxxxxxx";  // no line start in reach: the bytes
    EXPECT_TRUE(keep_tail(text, 5, 100));
    EXPECT_EQ(text, "xxxxx");
}

TEST(ProcessCapture, AFloodIsStoppedAtTheReadLimitAndItsTailKept) {
    CaptureLimits limits;
    limits.max_bytes = 64 << 10;
    limits.max_lines = 1000;
    limits.max_read = 1 << 20;
    const auto began = std::chrono::steady_clock::now();
    const auto out = capture_output({"yes", "flood"}, std::chrono::seconds(20), limits);
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(10));
    EXPECT_EQ(out.exit_code, 0);  // what came before the limit is the answer
    EXPECT_EQ(out.error, "");
    EXPECT_LE(out.out.size(), limits.max_bytes);
    EXPECT_EQ(out.out.substr(0, 6), "flood\n");  // whole lines
    EXPECT_NE(out.cut.find("kept the last 1000 lines"), std::string::npos) << out.cut;
    EXPECT_NE(out.cut.find("yes was stopped at the 1 MiB read limit"), std::string::npos) << out.cut;
}

TEST(ProcessCapture, OutputWithinTheLimitsIsWholeAndNotCut) {
    const auto out = capture_output({"seq", "1", "5000"}, std::chrono::seconds(10));
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.cut, "");
    EXPECT_EQ(out.out.substr(out.out.size() - 5), "5000\n");
}

TEST(ProcessCapture, ABackgroundHolderOfThePipeIsEndedSoonAfterTheCommandExits) {
    char templ[] = "/tmp/rmcp-capture-test-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    const std::string pid_file = std::string(templ) + "/holder.pid";
    const auto began = std::chrono::steady_clock::now();
    const auto out = capture_output({"sh", "-c", "sh -c 'echo $$ > " + pid_file + "; exec sleep 60' & echo answer"},
                                    std::chrono::seconds(30));
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.out, "answer\n");
    EXPECT_NE(out.cut.find("left a process holding its output"), std::string::npos) << out.cut;
    pid_t holder = 0;
    std::ifstream(pid_file) >> holder;
    ASSERT_GT(holder, 1);
    // Gone, or a zombie its new parent has not reaped yet (SIGKILL is asynchronous).
    const auto running = [holder] {
        std::ifstream stat("/proc/" + std::to_string(holder) + "/stat");
        std::string pid, comm, state;
        return static_cast<bool>(stat >> pid >> comm >> state) && state != "Z";
    };
    for (int i = 0; i < 50 && running(); ++i) ::usleep(20'000);
    EXPECT_FALSE(running()) << "the holder in the command's group still runs";
    ::unlink(pid_file.c_str());
    ::rmdir(templ);
}

}  // namespace
}  // namespace rmcp::process
