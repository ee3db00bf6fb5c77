#include "process/capture.hpp"

#include "process/spawn.hpp"
#include "util/unique_fd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::process {

namespace {

// How long the pipe may stay open after the command exited (a background process it left).
constexpr auto k_drain_after_exit = std::chrono::seconds(1);

bool has_exited(pid_t pid) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return info.si_pid == pid;
}

std::string mib(std::size_t bytes) {
    return bytes >= (std::size_t{1} << 20) ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

}  // namespace

bool keep_tail(std::string& text, std::size_t max_bytes, std::size_t max_lines) {
    bool cut = false;
    if (text.size() > max_bytes) {
        std::size_t from = text.size() - max_bytes;
        // Start at a line when one begins in the kept part: half a line is noise.
        if (from > 0 && text[from - 1] != '\n') {
            const auto nl = text.find('\n', from);
            if (nl != std::string::npos && nl + 1 < text.size()) from = nl + 1;
        }
        text.erase(0, from);
        cut = true;
    }
    if (max_lines == SIZE_MAX) return cut;
    // Count lines from the end; a final line without '\n' counts too.
    std::size_t lines = 0;
    std::size_t pos = text.size();
    if (pos > 0 && text.back() == '\n') --pos;
    while (pos > 0) {
        const auto nl = text.rfind('\n', pos - 1);
        ++lines;
        if (nl == std::string::npos) break;
        if (lines == max_lines) {
            text.erase(0, nl + 1);
            cut = true;
            break;
        }
        pos = nl;
    }
    return cut;
}

CommandOutput capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                             const CaptureLimits& limits) {
    CommandOutput result;
    if (argv.empty()) {
        result.error = "no command given";
        return result;
    }
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        result.error = std::strerror(errno);
        return result;
    }
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);
    SpawnRequest request;
    request.argv = argv;
    request.env = current_environment();
    request.fds = {FdMapping::dev_null(STDIN_FILENO, O_RDONLY), FdMapping::copy_of(write_end.get(), STDOUT_FILENO),
                   FdMapping::dev_null(STDERR_FILENO, O_WRONLY)};
    // Its own group: a timeout or a flood ends whatever it started too (a background child
    // holding the pipe would otherwise outlive it). Our unreaped child leads the group, so
    // the group id cannot be reused before we signal it.
    request.group = ProcessGroup::own;
    auto child = spawn(request);
    write_end.reset();  // the child's copy is the only writer left: end of file when it exits
    if (!child) {
        result.error = fmt::format("starting {}: {}", argv.front(), child.error().cause);
        return result;
    }
    const pid_t pid = child->pid;
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    char buf[65536];
    bool timed_out = false;
    bool flooded = false;
    bool trimmed = false;
    bool left_holder = false;
    std::size_t read_total = 0;
    std::optional<Clock::time_point> drain_until;  // set once the command itself has exited
    for (;;) {
        const auto now = Clock::now();
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        // The command exited (seen without reaping it: the zombie keeps its group id ours) but
        // something it started still holds the pipe: what that prints is not its answer.
        if (!drain_until && has_exited(pid)) drain_until = now + k_drain_after_exit;
        if (drain_until && now >= *drain_until) {
            left_holder = true;
            break;
        }
        pollfd p{read_end.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100))) <= 0) continue;
        const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        read_total += static_cast<std::size_t>(n);
        result.out.append(buf, static_cast<std::size_t>(n));
        // Amortised: trim once the buffer holds twice what is kept.
        if (result.out.size() > 2 * limits.max_bytes) trimmed |= keep_tail(result.out, limits.max_bytes, SIZE_MAX);
        if (read_total > limits.max_read) {
            flooded = true;
            break;
        }
    }
    read_end.reset();
    if (timed_out || flooded || left_holder) ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    trimmed |= keep_tail(result.out, limits.max_bytes, limits.max_lines);
    if (trimmed || flooded) {
        std::size_t lines = 0;
        for (const char c : result.out) lines += c == '\n';
        result.cut =
            fmt::format("kept the last {} lines ({}) of {} read", lines, mib(result.out.size()), mib(read_total));
        if (flooded)
            result.cut += fmt::format("; {} was stopped at the {} read limit", argv.front(), mib(limits.max_read));
    }
    if (left_holder) {
        if (!result.cut.empty()) result.cut += "; ";
        result.cut += fmt::format("{} exited but left a process holding its output: stopped reading {} s later and "
                                  "ended its process group",
                                  argv.front(), k_drain_after_exit.count());
    }
    if (flooded) {
        // What it printed before the limit is its answer: the newest part is kept.
        result.exit_code = 0;
        return result;
    }
    if (timed_out) {
        result.error = fmt::format("{} did not finish within {} ms", argv.front(), timeout.count());
        return result;
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (result.exit_code != 0) result.error = fmt::format("{} exited with {}", argv.front(), result.exit_code);
    return result;
}

CommandRunner system_runner(std::chrono::milliseconds timeout) {
    return [timeout](const std::vector<std::string>& argv) { return capture_output(argv, timeout); };
}

}  // namespace rmcp::process
