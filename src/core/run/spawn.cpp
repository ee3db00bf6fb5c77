#include "run/spawn.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

extern char** environ;

namespace rmcp::run {

namespace {

// Bigger pipes mean fewer wake-ups per megabyte relayed; 1 MiB is the unprivileged
// ceiling by default (/proc/sys/fs/pipe-max-size). Failure only costs speed.
constexpr int k_pipe_size = 1 << 20;

Error os_failure(std::string_view doing, std::string_view path, int err) {
    return Error{std::string(doing), std::string(path), std::strerror(err), ExitCode::environment, err};
}

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

struct Fds {
    int read_out = -1, write_out = -1, read_err = -1, write_err = -1;
    std::string slave_out, slave_err;  // pty slave paths
    void close_child_ends() {
        if (write_out >= 0) ::close(write_out);
        if (write_err >= 0) ::close(write_err);
        write_out = write_err = -1;
    }
    void close_all() {
        close_child_ends();
        if (read_out >= 0) ::close(read_out);
        if (read_err >= 0) ::close(read_err);
        read_out = read_err = -1;
    }
};

Status make_pipe(int& read_end, int& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return os_failure("creating pipe for", "child output", errno);
    read_end = fds[0];
    write_end = fds[1];
    ::fcntl(read_end, F_SETPIPE_SZ, k_pipe_size);
    return ok_status();
}

// A pty whose slave passes bytes through untouched: without OPOST the line discipline
// would turn "\n" into "\r\n" and the relay would no longer be byte-identical.
Status make_pty(int& master, int& slave, std::string& slave_path) {
    char name[256] = {};
    if (::openpty(&master, &slave, name, nullptr, nullptr) != 0)
        return os_failure("opening pseudo-terminal for", "child output", errno);
    set_cloexec(master);
    set_cloexec(slave);
    termios tio{};
    if (::tcgetattr(slave, &tio) == 0) {
        tio.c_oflag &= ~static_cast<tcflag_t>(OPOST);
        ::tcsetattr(slave, TCSANOW, &tio);
    }
    copy_window_size(master);
    slave_path = name;
    return ok_status();
}

}  // namespace

void copy_window_size(int master_fd) {
    winsize ws{};
    for (const int fd : {STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO})
        if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
            ::ioctl(master_fd, TIOCSWINSZ, &ws);
            return;
        }
}

std::vector<std::string> current_environment() {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    return env;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
    for (const auto& entry : env)
        if (entry.size() > name.size() && entry[name.size()] == '=' && entry.compare(0, name.size(), name) == 0)
            return entry.substr(name.size() + 1);
    return std::nullopt;
}

std::vector<std::string> apply_env(const std::vector<std::string>& base, const std::vector<EnvChange>& changes) {
    std::vector<std::string> env = base;
    for (const auto& change : changes) {
        const auto same_name = [&](const std::string& entry) {
            return entry.size() > change.name.size() && entry[change.name.size()] == '=' &&
                   entry.compare(0, change.name.size(), change.name) == 0;
        };
        bool replaced = false;
        for (auto it = env.begin(); it != env.end();) {
            if (!same_name(*it)) {
                ++it;
                continue;
            }
            if (change.value && !replaced) {
                *it = change.name + '=' + *change.value;
                replaced = true;
                ++it;
            } else {
                it = env.erase(it);  // unset, or a duplicate of a name already replaced
            }
        }
        if (change.value && !replaced) env.push_back(change.name + '=' + *change.value);
    }
    return env;
}

Result<SpawnedChild> spawn_child(const SpawnRequest& request) {
    if (request.argv.empty()) return Error{"starting", "", "no command given", ExitCode::usage};
    Fds fds;
    Status made = ok_status();
    if (request.terminal == Terminal::pipes) {
        made = make_pipe(fds.read_out, fds.write_out);
        if (made) made = make_pipe(fds.read_err, fds.write_err);
    } else {
        // Two terminals keep stdout and stderr apart, and both answer isatty() (tqdm
        // checks stderr, print() buffering checks stdout).
        made = make_pty(fds.read_out, fds.write_out, fds.slave_out);
        if (made) made = make_pty(fds.read_err, fds.write_err, fds.slave_err);
    }
    if (!made) {
        fds.close_all();
        return made.error();
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    short flags = POSIX_SPAWN_SETSIGMASK;
    if (request.terminal == Terminal::pipes) {
        // Its own process group, so signals reach every process of the run and none of ours.
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawn_file_actions_adddup2(&actions, fds.write_out, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, fds.write_err, STDERR_FILENO);
    } else {
        // A new session whose controlling terminal is the stdout pty: opening a tty without
        // O_NOCTTY as a session leader without one acquires it (setsid(2), credentials(7)).
        flags |= POSIX_SPAWN_SETSID;
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, fds.slave_out.c_str(), O_RDWR, 0);
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, fds.slave_err.c_str(), O_RDWR | O_NOCTTY, 0);
    }
    posix_spawnattr_setsigmask(&attr, &request.child_mask);
    if (request.reset_sigpipe) {
        sigset_t defaults;
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGPIPE);
        flags |= POSIX_SPAWN_SETSIGDEF;
        posix_spawnattr_setsigdefault(&attr, &defaults);
    }
    posix_spawnattr_setflags(&attr, flags);

    std::vector<char*> argv;
    for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    // posix_spawnp searches PATH as execvp does (ours, not the child's environment's).
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, request.argv.front().c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    fds.close_child_ends();
    if (rc != 0) {
        fds.close_all();
        return os_failure("starting", request.argv.front(), rc);
    }
    return SpawnedChild{pid, fds.read_out, fds.read_err};
}

}  // namespace rmcp::run
