#include "process/pager.hpp"

#include "process/spawn.hpp"
#include "util/terminal.hpp"
#include "util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::process {

std::vector<std::string> pager_command(const std::optional<std::string>& pager_env) {
    if (!pager_env) return {"less", "-FRX"};
    std::vector<std::string> argv;
    std::string word;
    for (const char c : *pager_env + " ") {
        if (c == ' ' || c == '\t') {
            if (!word.empty()) argv.push_back(std::move(word));
            word.clear();
        } else {
            word += c;
        }
    }
    if (argv.size() == 1 && argv[0] == "cat") argv.clear();
    return argv;
}

bool wants_pager(bool stdout_is_terminal, std::size_t lines, int rows) {
    return stdout_is_terminal && rows > 0 && lines > static_cast<std::size_t>(rows);
}

namespace {

// Starts the pager with a pipe as its standard input; its stdout and stderr are ours (the
// terminal), and it stays in our process group, the terminal's foreground group, so that it
// may read keys from the terminal. Nullopt when it cannot be started.
struct Pager {
    pid_t pid = -1;
    UniqueFd input;
};

std::optional<Pager> start_pager(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    UniqueFd read_end(fds[0]);
    UniqueFd write_end(fds[1]);
    SpawnRequest request;
    request.argv = argv;
    request.env = current_environment();
    request.fds.push_back(FdMapping::copy_of(read_end.get(), STDIN_FILENO));
    request.group = ProcessGroup::inherit;
    request.reset_sigpipe = true;
    auto child = spawn(request);
    if (!child) return std::nullopt;
    return Pager{child->pid, std::move(write_end)};
}

}  // namespace

void page_or_write(StandardOutput& out, std::string_view text) {
    const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    const bool tty = ::isatty(out.fd()) == 1;
    if (!wants_pager(tty, lines, output_height(out.fd()))) {
        out.write(text);
        return;
    }
    const char* env = std::getenv("PAGER");
    const auto argv = pager_command(env ? std::optional<std::string>(env) : std::nullopt);
    std::optional<Pager> pager = argv.empty() ? std::nullopt : start_pager(argv);
    if (!pager) {
        out.write(text);
        return;
    }
    // Ctrl-C and Ctrl-\ at the pager reach the whole foreground group: rmcp waits for the
    // pager to end instead of dying under it (git does the same).
    struct sigaction ignore {
    }, old_int{}, old_quit{}, old_pipe{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int);
    ::sigaction(SIGQUIT, &ignore, &old_quit);
    // A pager that quits before reading everything closes the pipe: EPIPE, not a signal.
    ::sigaction(SIGPIPE, &ignore, &old_pipe);
    std::string_view rest = text;
    while (!rest.empty()) {
        const ssize_t n = ::write(pager->input.get(), rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the pager quit early: the user has seen enough
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    pager->input.reset();
    int status = 0;
    while (::waitpid(pager->pid, &status, 0) < 0 && errno == EINTR) {}
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::sigaction(SIGINT, &old_int, nullptr);
}

}  // namespace rmcp::process
