// process::spawn against real children (sh, grep on /proc/self/status): what each part of a
// SpawnRequest does to the child, and the environment helpers.
#include "process/spawn.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::process {
namespace {

// Everything readable from fd until end of file (or EIO: a pty whose slave closed); closes it.
std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

int wait_exit_code(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

SpawnRequest with_pipes(std::vector<std::string> argv) {
    SpawnRequest r;
    r.argv = std::move(argv);
    r.env = current_environment();
    r.output = Terminal::pipes;
    return r;
}

// The hexadecimal mask of a /proc/<pid>/status line ("SigBlk", "SigIgn") of a child that
// greps its own status.
unsigned long long status_mask(const std::string& grep_output) {
    const auto tab = grep_output.find('\t');
    return tab == std::string::npos ? ~0ULL : std::stoull(grep_output.substr(tab + 1), nullptr, 16);
}

TEST(ProcessSpawn, RefusesAnEmptyCommand) {
    auto child = spawn(SpawnRequest{});
    ASSERT_FALSE(child.ok());
    EXPECT_EQ(child.error().code, ExitCode::usage);
}

TEST(ProcessSpawn, AMissingCommandIsEnoent) {
    auto child = spawn(with_pipes({"rmcp-test-no-such-command"}));
    ASSERT_FALSE(child.ok());
    EXPECT_EQ(child.error().os_error, ENOENT);
    EXPECT_EQ(child.error().code, ExitCode::environment);
    EXPECT_EQ(child.error().message(), "starting rmcp-test-no-such-command: No such file or directory");
}

TEST(ProcessSpawn, PipesKeepStdoutAndStderrApart) {
    auto child = spawn(with_pipes({"sh", "-c", "echo out; echo err >&2; exit 3"}));
    ASSERT_TRUE(child.ok()) << child.error().message();
    EXPECT_EQ(read_all(child->out_fd.get()), "out\n");
    EXPECT_EQ(read_all(child->err_fd.get()), "err\n");
    EXPECT_EQ(wait_exit_code(child->pid), 3);
}

TEST(ProcessSpawn, TheEnvironmentIsExactlyTheOneGiven) {
    auto request = with_pipes({"sh", "-c", "echo \"$RMCP_TEST_VALUE\"; echo \"${HOME-unset}\""});
    request.env = {"RMCP_TEST_VALUE=from the request"};
    auto child = spawn(request);
    ASSERT_TRUE(child.ok()) << child.error().message();
    EXPECT_EQ(read_all(child->out_fd.get()), "from the request\nunset\n");
    child->err_fd.reset();
    EXPECT_EQ(wait_exit_code(child->pid), 0);
}

TEST(ProcessSpawn, OwnProcessGroupOrOurs) {
    for (const auto group : {ProcessGroup::own, ProcessGroup::inherit}) {
        auto request = with_pipes({"sleep", "5"});
        request.group = group;
        auto child = spawn(request);
        ASSERT_TRUE(child.ok()) << child.error().message();
        const pid_t pgid = ::getpgid(child->pid);
        ::kill(child->pid, SIGKILL);
        EXPECT_EQ(wait_exit_code(child->pid), 128 + SIGKILL);
        child->out_fd.reset();
        child->err_fd.reset();
        EXPECT_EQ(pgid, group == ProcessGroup::own ? child->pid : ::getpgrp());
    }
}

TEST(ProcessSpawn, ASessionOfItsOwnAndKillSessionEndsAllOfItOnly) {
    // The leader forks a process into another group of the session (as the probe's fork
    // server does for each child): kill_session ends both; a process outside lives.
    SpawnRequest outside_request = with_pipes({"sleep", "30"});
    auto outside = spawn(outside_request);
    ASSERT_TRUE(outside.ok()) << outside.error().message();
    auto request = with_pipes({"python3", "-c",
                               "import os, sys, time\n"
                               "pid = os.fork()\n"
                               "if pid == 0:\n"
                               "    os.setpgid(0, 0)\n"
                               "    time.sleep(30)\n"
                               "    os._exit(0)\n"
                               "print(pid, flush=True)\n"
                               "time.sleep(30)\n"});
    request.group = ProcessGroup::session;
    auto leader = spawn(request);
    ASSERT_TRUE(leader.ok()) << leader.error().message();
    EXPECT_EQ(::getsid(leader->pid), leader->pid);
    std::string line;
    char c = 0;
    while (::read(leader->out_fd.get(), &c, 1) == 1 && c != '\n') line += c;
    const pid_t member = static_cast<pid_t>(std::stol(line));
    EXPECT_EQ(::getsid(member), leader->pid);
    for (int i = 0; i < 100 && ::getpgid(member) != member; ++i) ::usleep(10'000);
    EXPECT_EQ(::getpgid(member), member);  // a group of its own, in the same session

    EXPECT_GE(kill_session(leader->pid), 2U);
    EXPECT_EQ(wait_exit_code(leader->pid), 128 + SIGKILL);
    const auto running = [](pid_t pid) {
        const std::string path = "/proc/" + std::to_string(pid) + "/stat";
        char buf[512] = {};
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        const std::string stat(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
        const auto close = stat.rfind(')');
        return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
    };
    for (int i = 0; i < 50 && running(member); ++i) ::usleep(20'000);
    EXPECT_FALSE(running(member));
    EXPECT_EQ(::kill(outside->pid, 0), 0);  // not of the session: untouched
    ::kill(outside->pid, SIGKILL);
    EXPECT_EQ(wait_exit_code(outside->pid), 128 + SIGKILL);
    EXPECT_EQ(kill_session(1), 0U);  // never init's
    EXPECT_EQ(kill_session(0), 0U);
}

TEST(ProcessSpawn, MapsDescriptorsAndDevNull) {
    int extra[2];
    ASSERT_EQ(::pipe2(extra, O_CLOEXEC), 0);
    auto request = with_pipes({"sh", "-c", "echo to-three >&3; cat; echo done"});
    request.fds = {FdMapping::copy_of(extra[1], 3), FdMapping::dev_null(STDIN_FILENO, O_RDONLY)};
    auto child = spawn(request);
    ::close(extra[1]);
    ASSERT_TRUE(child.ok()) << child.error().message();
    EXPECT_EQ(read_all(child->out_fd.get()), "done\n");  // cat read end of file from /dev/null at once
    child->err_fd.reset();
    EXPECT_EQ(wait_exit_code(child->pid), 0);
    EXPECT_EQ(read_all(extra[0]), "to-three\n");
}

// dup2(fd, fd) would leave close-on-exec set, and the child would find descriptor 9 closed.
TEST(ProcessSpawn, MapsADescriptorOntoItsOwnNumber) {
    if (::fcntl(9, F_GETFD) != -1) GTEST_SKIP() << "descriptor 9 is in use in this process";
    int extra[2];
    ASSERT_EQ(::pipe2(extra, O_CLOEXEC), 0);
    ASSERT_EQ(::dup3(extra[1], 9, O_CLOEXEC), 9);
    ::close(extra[1]);
    auto request = with_pipes({"sh", "-c", "echo nine >&9"});
    request.fds = {FdMapping::copy_of(9, 9)};
    auto child = spawn(request);
    ::close(9);
    ASSERT_TRUE(child.ok()) << child.error().message();
    child->out_fd.reset();
    child->err_fd.reset();
    EXPECT_EQ(wait_exit_code(child->pid), 0);
    EXPECT_EQ(read_all(extra[0]), "nine\n");
}

TEST(ProcessSpawn, APtyAnswersIsattyAndPassesBytesThrough) {
    auto request = with_pipes({"sh", "-c", "test -t 1 && test -t 2 && printf 'tty\\n'"});
    request.output = Terminal::pty;
    auto child = spawn(request);
    ASSERT_TRUE(child.ok()) << child.error().message();
    const int code = wait_exit_code(child->pid);
    EXPECT_EQ(read_all(child->out_fd.get()), "tty\n");  // no "\r\n": OPOST is off
    child->err_fd.reset();
    EXPECT_EQ(code, 0);
}

TEST(ProcessSpawn, SignalMaskAndSigpipe) {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    auto request = with_pipes({"grep", "SigBlk", "/proc/self/status"});
    request.signal_mask = mask;
    auto child = spawn(request);
    ASSERT_TRUE(child.ok()) << child.error().message();
    const auto blocked = status_mask(read_all(child->out_fd.get()));
    child->err_fd.reset();
    EXPECT_EQ(wait_exit_code(child->pid), 0);
    EXPECT_EQ(blocked, 1ULL << (SIGUSR1 - 1));

    // An ignored SIGPIPE is inherited through exec unless the request gives it back.
    struct sigaction ignore {
    }, saved{};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &saved), 0);
    for (const bool reset : {false, true}) {
        auto r = with_pipes({"grep", "SigIgn", "/proc/self/status"});
        r.reset_sigpipe = reset;
        auto c = spawn(r);
        ASSERT_TRUE(c.ok()) << c.error().message();
        const auto ignored = status_mask(read_all(c->out_fd.get()));
        c->err_fd.reset();
        EXPECT_EQ(wait_exit_code(c->pid), 0);
        EXPECT_EQ((ignored >> (SIGPIPE - 1)) & 1U, reset ? 0U : 1U) << "reset_sigpipe " << reset;
    }
    ::sigaction(SIGPIPE, &saved, nullptr);
}

TEST(ProcessEnv, ApplyEnvSetsReplacesAndUnsets) {
    const auto env = apply_env({"A=1", "B=2", "A=dup", "C=3"}, {{"A", "x"}, {"B", std::nullopt}, {"D", "4"}});
    EXPECT_EQ(env, (std::vector<std::string>{"A=x", "C=3", "D=4"}));
    EXPECT_EQ(env_value(env, "A"), std::optional<std::string>("x"));
    EXPECT_FALSE(env_value(env, "B").has_value());
    EXPECT_FALSE(env_value({"AB=1"}, "A").has_value());
    EXPECT_EQ(env_value({"E="}, "E"), std::optional<std::string>(""));
}

}  // namespace
}  // namespace rmcp::process
