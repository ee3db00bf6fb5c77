#include "run/kernel_log.hpp"

#include "run/spawn.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::run {

namespace {

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        if (nl > start) lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return lines;
}

void keep_last(std::vector<std::string>& lines) {
    if (lines.size() > k_kernel_log_lines) lines.erase(lines.begin(), lines.end() - k_kernel_log_lines);
}

// dmesg --time-format iso: "2024-05-01T10:22:33,123456+02:00 message". Returns seconds
// since the epoch, or -1 when the line does not start with such a stamp.
long long iso_seconds(const std::string& line) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, oh = 0, om = 0;
    char sign = '+';
    long frac = 0;
    if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d,%ld%c%2d:%2d", &y, &mo, &d, &h, &mi, &s, &frac, &sign, &oh,
                    &om) != 10)
        return -1;
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    const long long offset = (oh * 3600LL + om * 60LL) * (sign == '-' ? -1 : 1);
    return static_cast<long long>(::timegm(&tm)) - offset;
}

}  // namespace

Captured capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    Captured result;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        result.error = std::strerror(errno);
        return result;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    auto env = current_environment();
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, argv.front().c_str(), &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        result.error = fmt::format("starting {}: {}", argv.front(), std::strerror(rc));
        return result;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[65536];
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        result.out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (timed_out) {
        result.error = fmt::format("{} did not finish within {} ms", argv.front(), timeout.count());
        return result;
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (result.exit_code != 0) result.error = fmt::format("{} exited with {}", argv.front(), result.exit_code);
    return result;
}

KernelLog read_kernel_log_since(std::chrono::system_clock::time_point since) {
    using namespace std::chrono;
    KernelLog log;
    const auto epoch = duration_cast<seconds>(since.time_since_epoch()).count();
    constexpr auto k_timeout = milliseconds(3000);
    auto journal = capture_output({"journalctl", "-k", "-q", "--no-pager", "-o", "short-iso", "--since",
                                   fmt::format("@{}", epoch)},
                                  k_timeout);
    if (journal.exit_code == 0) {
        log.source = "journalctl";
        log.lines = split(journal.out);
        keep_last(log.lines);
        return log;
    }
    auto dmesg = capture_output({"dmesg", "--time-format", "iso"}, k_timeout);
    if (dmesg.exit_code == 0) {
        log.source = "dmesg";
        for (auto& line : split(dmesg.out))
            if (iso_seconds(line) >= epoch) log.lines.push_back(std::move(line));
        keep_last(log.lines);
        return log;
    }
    log.error = fmt::format("{}; {}", journal.error, dmesg.error);
    return log;
}

}  // namespace rmcp::run
