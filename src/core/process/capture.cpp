#include "process/capture.hpp"

#include "process/spawn.hpp"
#include "util/unique_fd.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::process {

CommandOutput capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
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
    request.group = ProcessGroup::inherit;
    auto child = spawn(request);
    write_end.reset();  // the child's copy is the only writer left: end of file when it exits
    if (!child) {
        result.error = fmt::format("starting {}: {}", argv.front(), child.error().cause);
        return result;
    }
    const pid_t pid = child->pid;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[65536];
    bool timed_out = false;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{read_end.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        result.out.append(buf, static_cast<std::size_t>(n));
    }
    read_end.reset();
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

CommandRunner system_runner(std::chrono::milliseconds timeout) {
    return [timeout](const std::vector<std::string>& argv) { return capture_output(argv, timeout); };
}

}  // namespace rmcp::process
