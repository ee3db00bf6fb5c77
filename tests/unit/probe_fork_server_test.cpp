// The fork-server client (probe/fork_server.cpp) against interpreters that are not the
// worker: what start() says when the interpreter is missing, ends without answering, does
// not answer in time, or answers something else; and the signal names in its messages.
#include "probe/fork_server.hpp"

#include "process/spawn.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace rmcp::probe {
namespace {

namespace fs = std::filesystem;

// An executable sh script standing in for the interpreter (it is run as
// `PY -m rmcp.worker --serve --control-fd 3`).
class ProbeForkServerStart : public ::testing::Test {
protected:
    std::string script(const std::string& body) {
        const fs::path path = m_dir / "python3";
        std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
        fs::permissions(path, fs::perms::owner_all);
        return path.string();
    }

    static ForkServerOptions options(const std::string& python) {
        ForkServerOptions o;
        o.python = python;
        o.env = process::current_environment();
        o.handshake_timeout = std::chrono::milliseconds(300);
        return o;
    }

    testing_support::ScratchDir m_scratch{"fork-server"};
    fs::path m_dir = m_scratch.path();
};

TEST(ProbeForkServer, SignalNames) {
    EXPECT_EQ(signal_name(SIGABRT), "SIGABRT");
    EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
    EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
    EXPECT_EQ(signal_name(SIGRTMIN + 6), "signal " + std::to_string(SIGRTMIN + 6));
}

TEST_F(ProbeForkServerStart, AMissingInterpreterIsAnEnvironmentErrorNamingIt) {
    const std::string missing = (m_dir / "no-such-python").string();
    auto server = ForkServer::start(options(missing));
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.error().code, ExitCode::environment);
    EXPECT_EQ(server.error().doing, "starting the probe worker with");
    EXPECT_EQ(server.error().path, missing);
}

TEST_F(ProbeForkServerStart, OneThatEndsWithoutAnsweringIsNamedWithItsExitAndLastLine) {
    auto server = ForkServer::start(options(script("echo 'No module named rmcp' >&2\nexit 1")));
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.error().code, ExitCode::environment);
    EXPECT_EQ(server.error().doing, "checking the interpreter");
    EXPECT_NE(server.error().cause.find("ended without answering"), std::string::npos) << server.error().cause;
    EXPECT_NE(server.error().cause.find("exit status 1"), std::string::npos) << server.error().cause;
    EXPECT_NE(server.error().cause.find("No module named rmcp"), std::string::npos) << server.error().cause;
}

TEST_F(ProbeForkServerStart, OneThatDoesNotAnswerInTimeIsNotTakenForPython) {
    auto server = ForkServer::start(options(script("exec sleep 30")));
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.error().code, ExitCode::environment);
    EXPECT_NE(server.error().cause.find("no answer within 0.3 s"), std::string::npos) << server.error().cause;
}

TEST_F(ProbeForkServerStart, AnAnswerOtherThanTheHandshakeIsRefused) {
    auto server = ForkServer::start(options(script("printf '{\"event\": \"ready\"}' >&3\nexec sleep 30")));
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.error().code, ExitCode::environment);
    // The schema names what is wrong with it (src/core/probe/worker_protocol.cpp).
    EXPECT_TRUE(server.error().cause.starts_with("it answered something other than the worker's handshake"))
        << server.error().cause;
}

}  // namespace
}  // namespace rmcp::probe
