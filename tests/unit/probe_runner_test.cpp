// probe/runner.cpp without a Python: the outcome names, classify_child (a finished child's
// wait status, timeout, stdout report and stderr → a ScenarioResult, or an error that stops
// the probe) with the crash classifier, and resolve_interpreter against a PATH string.
// ZygoteRunner's fork-server start-up failures are in probe_fork_server_test.cpp and
// probe_command_test.cpp; its runs with the real worker in tests/cli/test_probe.py.
#include "probe/runner.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::probe {
namespace {

namespace fs = std::filesystem;

// Wait statuses as waitpid(2) reports them (glibc's W_EXITCODE layout).
int exited(int code) { return (code & 0xff) << 8; }
int killed(int sig) { return sig & 0x7f; }

TEST(ProbeRunner, WaitStatusHelpersMatchWhatWaitpidReports) {
    EXPECT_TRUE(WIFEXITED(exited(3)));
    EXPECT_EQ(WEXITSTATUS(exited(3)), 3);
    EXPECT_TRUE(WIFSIGNALED(killed(SIGABRT)));
    EXPECT_EQ(WTERMSIG(killed(SIGABRT)), SIGABRT);
    // The same as a real child's.
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(7);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_EQ(status, exited(7));
}

TEST(ProbeRunner, OutcomeNames) {
    EXPECT_EQ(outcome_name(Outcome::ok), "ok");
    EXPECT_EQ(outcome_name(Outcome::unsupported), "unsupported");
    EXPECT_EQ(outcome_name(Outcome::wrong), "wrong");
    EXPECT_EQ(outcome_name(Outcome::crash), "crash");
    EXPECT_EQ(outcome_name(Outcome::hang), "hang");
    EXPECT_FALSE(is_failure(Outcome::ok));
    EXPECT_FALSE(is_failure(Outcome::unsupported));
    EXPECT_TRUE(is_failure(Outcome::wrong));
    EXPECT_TRUE(is_failure(Outcome::crash));
    EXPECT_TRUE(is_failure(Outcome::hang));
}

// A classifier that records what it was given and names every crash "matched-entry".
struct Recorder {
    int calls = 0;
    std::string text;
    CrashClassifier classifier() {
        return [this](std::string_view t) {
            ++calls;
            text = std::string(t);
            return std::string("matched-entry");
        };
    }
};

TEST(ProbeClassifyChild, AnOkReportIsTimedAndTheLastJsonObjectLineWins) {
    Recorder rec;
    const std::string out = "loading\n{\"status\": \"wrong\"}\n{\"status\": \"ok\", \"median_ms\": 1.5}\nbye\n\n";
    auto r = classify_child(exited(0), false, out, "a warning\n", rec.classifier());
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->outcome, Outcome::ok);
    EXPECT_EQ(r->median_ms, 1.5);
    EXPECT_EQ(r->detail, "1.5 ms");
    EXPECT_EQ(r->exit_code, 0);
    EXPECT_EQ(r->signal, 0);
    EXPECT_EQ(r->report.value("status", ""), "ok");
    EXPECT_TRUE(r->kb_entry.empty());
    EXPECT_EQ(rec.calls, 0);  // only crashes are matched against the knowledge base
}

TEST(ProbeClassifyChild, AnOkReportFromAChildThatExitedNonZeroIsACrash) {
    auto r = classify_child(exited(1), false, "{\"status\": \"ok\", \"median_ms\": 1}\n", "oops\nTraceback end\n", {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::crash);
    EXPECT_EQ(r->detail, "exit 1");
    EXPECT_EQ(r->message, "Traceback end");
    EXPECT_EQ(r->exit_code, 1);
}

TEST(ProbeClassifyChild, UnsupportedCarriesTheWorkersMessage) {
    auto r = classify_child(exited(0), false, R"({"status": "unsupported", "message": "no fp16 conv on CPU"})", "", {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::unsupported);
    EXPECT_EQ(r->detail, "unsupported on this device");
    EXPECT_EQ(r->message, "no fp16 conv on CPU");
    EXPECT_FALSE(is_failure(r->outcome));
}

TEST(ProbeClassifyChild, WrongSaysTheErrorAndTolerance) {
    Recorder rec;
    auto r = classify_child(exited(0), false,
                            R"({"status": "wrong", "error": 1.08, "tolerance": 0.002, "message": "max abs diff"})", "",
                            rec.classifier());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::wrong);
    EXPECT_EQ(r->detail, "error 1.08 > 0.002");
    EXPECT_EQ(r->message, "max abs diff");
    EXPECT_EQ(rec.calls, 0);
    // Without a numeric error (NaN and infinity are not JSON numbers) the result was not finite.
    r = classify_child(exited(0), false, R"({"status": "wrong", "error": "nan"})", "", {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::wrong);
    EXPECT_EQ(r->detail, "non-finite result");
}

TEST(ProbeClassifyChild, ASignalIsACrashNamedByItWithTheTellingStderrLine) {
    Recorder rec;
    const std::string err =
        "starting\nMemory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f. Reason: Page not "
        "present.\nAborted (core dumped)\n\n";
    auto r = classify_child(killed(SIGABRT), false, "", err, rec.classifier());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::crash);
    EXPECT_EQ(r->detail, "SIGABRT");
    EXPECT_EQ(r->signal, SIGABRT);
    EXPECT_EQ(r->exit_code, -1);
    // A known crash text wins over the last line.
    EXPECT_EQ(r->message.rfind("Memory access fault by GPU node-1", 0), 0U) << r->message;
    EXPECT_EQ(r->kb_entry, "matched-entry");
    EXPECT_EQ(rec.calls, 1);
    EXPECT_EQ(rec.text, err);
}

TEST(ProbeClassifyChild, WithoutAKnownTextTheLastNonBlankLineIsTheMessage) {
    auto r = classify_child(killed(SIGSEGV), false, "", "first\nlast one\n   \n\t\r\n", {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->detail, "SIGSEGV");
    EXPECT_EQ(r->message, "last one");
    EXPECT_TRUE(r->kb_entry.empty());  // no classifier
    // Long lines are cut at 400 characters.
    r = classify_child(killed(SIGSEGV), false, "", std::string(1000, 'x') + "\n", {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->message, std::string(400, 'x'));
}

TEST(ProbeClassifyChild, AReportedExceptionIsACrashAndItsMessageReachesTheClassifier) {
    Recorder rec;
    auto r =
        classify_child(exited(1), false,
                       R"({"status": "error", "message": "RuntimeError: HIP error: invalid device function\nmore"})",
                       "stderr text", rec.classifier());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::crash);
    EXPECT_EQ(r->detail, "error");
    EXPECT_EQ(r->message, "RuntimeError: HIP error: invalid device function");  // first line only
    EXPECT_EQ(r->kb_entry, "matched-entry");
    EXPECT_EQ(rec.text, "stderr text\nRuntimeError: HIP error: invalid device function\nmore");
}

TEST(ProbeClassifyChild, AnExitWithoutAReportIsACrashWithItsStatus) {
    auto r = classify_child(exited(120), false, "not json\n", "Fatal Python error: Segmentation fault\n", {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::crash);
    EXPECT_EQ(r->detail, "exit 120");
    EXPECT_EQ(r->message, "Fatal Python error: Segmentation fault");
    EXPECT_TRUE(r->report.is_null());
}

TEST(ProbeClassifyChild, ATimeoutIsAHangWhateverTheStatusAndIsNotClassified) {
    Recorder rec;
    auto r = classify_child(killed(SIGKILL), true, R"({"status": "ok", "median_ms": 1})", "HIP error: stuck\n",
                            rec.classifier());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Outcome::hang);
    EXPECT_EQ(r->detail, "timed out");
    EXPECT_EQ(r->message, "HIP error: stuck");
    EXPECT_EQ(r->signal, SIGKILL);
    EXPECT_TRUE(r->kb_entry.empty());
    EXPECT_EQ(rec.calls, 0);
}

TEST(ProbeClassifyChild, ExitThreeOrAMissingTorchOrDeviceStopsTheProbe) {
    auto r =
        classify_child(exited(3), false, R"({"status": "no_torch", "message": "No module named 'torch'"})", "", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::environment);
    EXPECT_EQ(r.error().message(), "running the probe worker: No module named 'torch'");
    // A report without a message: its status.
    r = classify_child(exited(0), false, R"({"status": "no_device"})", "", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().cause, "no_device");
    // No report: the telling stderr line, else the status itself.
    r = classify_child(exited(3), false, "", "ImportError: libamdhip64.so: cannot open\n", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().cause, "ImportError: libamdhip64.so: cannot open");
    r = classify_child(exited(3), false, "", "", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().cause, "exit status 3");
    EXPECT_EQ(r.error().code, ExitCode::environment);
}

TEST(ProbeClassifyChild, ExitTwoIsAWorkerThatRejectedItsArguments) {
    auto r = classify_child(exited(2), false, "", "usage: worker\nworker: error: unknown op 'x'\n", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::environment);
    EXPECT_EQ(r.error().message(),
              "running the probe worker: it rejected its arguments: worker: error: unknown op 'x'");
}

class ProbeResolveInterpreter : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(m_dir / "a");
        fs::create_directories(m_dir / "b");
    }

    fs::path file(const fs::path& relative, bool executable) {
        const fs::path path = m_dir / relative;
        std::ofstream(path) << "#!/bin/sh\n";
        fs::permissions(path, executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write);
        return path;
    }
    std::string path_env(std::initializer_list<const char*> dirs) const {
        std::string out;
        for (const char* d : dirs) out += (out.empty() ? "" : ":") + (m_dir / d).string();
        return out;
    }

    testing_support::ScratchDir m_scratch{"resolve"};
    fs::path m_dir = m_scratch.path();
};

TEST_F(ProbeResolveInterpreter, APathIsTakenAsItIsWhenExecutable) {
    const auto py = file("a/python3", true);
    auto r = resolve_interpreter(py.string(), "");
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(*r, py.string());
}

TEST_F(ProbeResolveInterpreter, AMissingOrNonExecutablePathIsAnEnvironmentErrorWithErrno) {
    const std::string missing = (m_dir / "a" / "nope").string();
    auto r = resolve_interpreter(missing, path_env({"a", "b"}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::environment);
    EXPECT_EQ(r.error().os_error, ENOENT);
    EXPECT_EQ(r.error().message(), "starting the probe worker with " + missing + ": " + std::strerror(ENOENT));
    // A directory is named as one (access(X_OK) alone would take it for an interpreter).
    r = resolve_interpreter((m_dir / "a").string(), "");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().os_error, EISDIR);
    EXPECT_EQ(r.error().code, ExitCode::environment);
    if (::geteuid() != 0) {  // root may execute-check any file it likes
        const auto plain = file("a/python3", false);
        r = resolve_interpreter(plain.string(), "");
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().os_error, EACCES);
        EXPECT_EQ(r.error().path, plain.string());
    }
}

TEST_F(ProbeResolveInterpreter, ANameIsLookedUpInPathInOrder) {
    const auto in_b = file("b/python3", true);
    auto r = resolve_interpreter("python3", path_env({"a", "b"}));
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(*r, in_b.string());
    const auto in_a = file("a/python3", true);
    r = resolve_interpreter("python3", path_env({"a", "b"}));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, in_a.string());
}

TEST_F(ProbeResolveInterpreter, NonExecutableFilesAndDirectoriesInPathAreSkipped) {
    if (::geteuid() != 0) file("a/python3", false);
    else fs::create_directories(m_dir / "a" / "python3");
    fs::create_directories(m_dir / "c" / "python3");  // a directory is not an interpreter
    const auto in_b = file("b/python3", true);
    auto r = resolve_interpreter("python3", path_env({"c", "a", "b"}));
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(*r, in_b.string());
}

TEST_F(ProbeResolveInterpreter, ANameNotInPathIsAnEnvironmentError) {
    auto r = resolve_interpreter("python3", path_env({"a", "b"}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::environment);
    EXPECT_EQ(r.error().message(), "starting the probe worker with python3: not found in PATH");
}

TEST_F(ProbeResolveInterpreter, AnEmptyPathEntryIsTheCurrentDirectory) {
    file("a/python3", true);
    const fs::path old = fs::current_path();
    fs::current_path(m_dir / "a");
    auto leading = resolve_interpreter("python3", ":" + path_env({"b"}));
    auto trailing = resolve_interpreter("python3", path_env({"b"}) + ":");
    auto empty = resolve_interpreter("python3", "");
    fs::current_path(old);
    ASSERT_TRUE(leading.ok());
    EXPECT_EQ(*leading, "./python3");
    ASSERT_TRUE(trailing.ok());
    EXPECT_EQ(*trailing, "./python3");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(*empty, "./python3");
}

}  // namespace
}  // namespace rmcp::probe
