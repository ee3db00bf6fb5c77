#include "process/spawn.hpp"

#include "util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <pty.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

extern char** environ;

namespace rmcp::process {

namespace {

// Bigger pipes mean fewer wake-ups per megabyte relayed; 1 MiB is the unprivileged
// ceiling by default (/proc/sys/fs/pipe-max-size). Failure only costs speed.
constexpr int k_pipe_size = 1 << 20;

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

// The child's stdout and stderr when rmcp reads them: our read ends, and the child's ends
// (write ends of pipes, or the paths of pty slaves, opened in the child).
struct OutputEnds {
    UniqueFd read_out, read_err, write_out, write_err;
    std::string slave_out, slave_err;
};

Status make_pipe(UniqueFd& read_end, UniqueFd& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return os_error("creating pipe for", "child output", errno);
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
    ::fcntl(fds[0], F_SETPIPE_SZ, k_pipe_size);
    return ok_status();
}

// A pty whose slave passes bytes through untouched: without OPOST the line discipline
// would turn "\n" into "\r\n" and the relay would no longer be byte-identical.
Status make_pty(UniqueFd& master, UniqueFd& slave, std::string& slave_path) {
    char name[256] = {};
    int master_fd = -1, slave_fd = -1;
    if (::openpty(&master_fd, &slave_fd, name, nullptr, nullptr) != 0)
        return os_error("opening pseudo-terminal for", "child output", errno);
    master.reset(master_fd);
    slave.reset(slave_fd);
    set_cloexec(master_fd);
    set_cloexec(slave_fd);
    termios tio{};
    if (::tcgetattr(slave_fd, &tio) == 0) {
        tio.c_oflag &= ~static_cast<tcflag_t>(OPOST);
        ::tcsetattr(slave_fd, TCSANOW, &tio);
    }
    copy_window_size(master_fd);
    slave_path = name;
    return ok_status();
}

Status make_output(Terminal terminal, OutputEnds& ends) {
    if (terminal == Terminal::pipes) {
        auto made = make_pipe(ends.read_out, ends.write_out);
        if (made) made = make_pipe(ends.read_err, ends.write_err);
        return made;
    }
    auto made = make_pty(ends.read_out, ends.write_out, ends.slave_out);
    if (made) made = make_pty(ends.read_err, ends.write_err, ends.slave_err);
    return made;
}

// One file action for the child: dup2(parent_fd, child_fd), or open(path) onto child_fd.
struct ChildFd {
    int child_fd = -1;
    int parent_fd = -1;
    std::string path;
    int open_flags = 0;
};

// dup2 is applied in order in the child: a parent descriptor that is also the target of an
// earlier action would be overwritten first, and dup2(fd, fd) keeps close-on-exec set (glibc
// before 2.29, https://sourceware.org/bugzilla/show_bug.cgi?id=23640). So every source that
// is not above all targets is first copied above them; the copies close after the spawn.
Status move_sources_above_targets(std::vector<ChildFd>& actions, std::vector<UniqueFd>& copies) {
    int highest_target = -1;
    for (const auto& a : actions) highest_target = std::max(highest_target, a.child_fd);
    for (auto& a : actions) {
        if (a.parent_fd < 0 || a.parent_fd > highest_target) continue;
        const int moved = ::fcntl(a.parent_fd, F_DUPFD_CLOEXEC, highest_target + 1);
        if (moved < 0) return os_error("duplicating a descriptor for", "the child", errno);
        copies.emplace_back(moved);
        a.parent_fd = moved;
    }
    return ok_status();
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
struct SpawnAttributes {
    posix_spawn_file_actions_t actions{};
    posix_spawnattr_t attr{};
    SpawnAttributes() {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
    }
    ~SpawnAttributes() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

// The session id of process `pid` from /proc/PID/stat (proc(5): "pid (comm) state ppid pgrp
// session ..."; comm may hold spaces and parentheses, so fields are counted after the last
// ')'). nullopt when it is gone, unreadable, or a zombie (nothing left to signal).
std::optional<pid_t> session_of(pid_t pid) {
    const std::string path = "/proc/" + std::to_string(pid) + "/stat";
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    char buf[1024];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
    if (n <= 0) return std::nullopt;
    const std::string_view stat(buf, static_cast<std::size_t>(n));
    const auto close = stat.rfind(')');
    if (close == std::string_view::npos) return std::nullopt;
    long fields[3] = {0, 0, 0};  // ppid pgrp session, after the state letter
    std::size_t pos = close + 1;
    if (stat.substr(pos).starts_with(" Z")) return std::nullopt;
    for (int field = -1; field < 3; ++field) {
        while (pos < stat.size() && stat[pos] == ' ') ++pos;
        const auto end = stat.find(' ', pos);
        if (end == std::string_view::npos) return std::nullopt;
        if (field >= 0) {
            const std::string number(stat.substr(pos, end - pos));
            char* stop = nullptr;
            fields[field] = std::strtol(number.c_str(), &stop, 10);
            if (stop == number.c_str() || *stop != '\0') return std::nullopt;
        }
        pos = end;
    }
    return static_cast<pid_t>(fields[2]);
}

#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
int send_through_pidfd(int pidfd, int sig) {
    return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}
#else
int open_pidfd(pid_t) {
    errno = ENOSYS;
    return -1;
}
int send_through_pidfd(int, int) {
    errno = ENOSYS;
    return -1;
}
#endif

}  // namespace

std::size_t kill_session(pid_t leader) {
    if (leader <= 1) return 0;
    std::size_t signalled = 0;
    // Killed processes cannot fork; the others might between two scans: a few rounds.
    for (int round = 0; round < 5; ++round) {
        std::vector<pid_t> members;
        if (DIR* proc = ::opendir("/proc")) {
            while (const dirent* e = ::readdir(proc)) {
                char* end = nullptr;
                const long pid = std::strtol(e->d_name, &end, 10);
                if (end == e->d_name || *end != '\0' || pid <= 1) continue;
                if (session_of(static_cast<pid_t>(pid)) == leader) members.push_back(static_cast<pid_t>(pid));
            }
            ::closedir(proc);
        }
        if (members.empty()) break;
        for (const pid_t pid : members) {
            UniqueFd pidfd(open_pidfd(pid));
            if (pidfd) {
                // The descriptor pins the process: check it is still one of the session's.
                if (session_of(pid) == leader && send_through_pidfd(pidfd.get(), SIGKILL) == 0) ++signalled;
            } else if (errno == ENOSYS && session_of(pid) == leader && ::kill(pid, SIGKILL) == 0) {
                ++signalled;  // no pidfd: the window between the check and kill(2) remains
            }
        }
    }
    return signalled;
}

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

std::map<std::string, std::string> current_environment_map() {
    // One walk of environ (current_environment); the first of a repeated name wins, as in getenv.
    std::map<std::string, std::string> env;
    for (const std::string& entry : current_environment()) {
        const std::string_view kv(entry);
        const auto eq = kv.find('=');
        if (eq != std::string_view::npos) env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    return env;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
    for (const auto& entry : env)
        if (entry.size() > name.size() && entry[name.size()] == '=' && entry.compare(0, name.size(), name) == 0)
            return entry.substr(name.size() + 1);
    return std::nullopt;
}

std::vector<std::string> apply_env(const std::vector<std::string>& base, const std::vector<EnvEdit>& changes) {
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

Result<SpawnedChild> spawn(const SpawnRequest& request) {
    if (request.argv.empty()) return Error{"starting", "", "no command given", ExitCode::usage};
    OutputEnds ends;
    std::vector<ChildFd> child_fds;
    if (request.output) {
        if (auto made = make_output(*request.output, ends); !made) return made.error();
        if (*request.output == Terminal::pipes) {
            child_fds.push_back({STDOUT_FILENO, ends.write_out.get(), {}, 0});
            child_fds.push_back({STDERR_FILENO, ends.write_err.get(), {}, 0});
        } else {
            // Opening a tty without O_NOCTTY as a session leader without one makes it the
            // controlling terminal (setsid(2), credentials(7)).
            child_fds.push_back({STDOUT_FILENO, -1, ends.slave_out, O_RDWR});
            child_fds.push_back({STDERR_FILENO, -1, ends.slave_err, O_RDWR | O_NOCTTY});
        }
    }
    for (const auto& m : request.fds)
        child_fds.push_back({m.child_fd, m.parent_fd, m.parent_fd < 0 ? "/dev/null" : "", m.null_flags});
    std::vector<UniqueFd> copies;
    if (auto moved = move_sources_above_targets(child_fds, copies); !moved) return moved.error();

    SpawnAttributes spawn_attr;
    for (const auto& c : child_fds) {
        if (c.parent_fd >= 0) posix_spawn_file_actions_adddup2(&spawn_attr.actions, c.parent_fd, c.child_fd);
        else posix_spawn_file_actions_addopen(&spawn_attr.actions, c.child_fd, c.path.c_str(), c.open_flags, 0);
    }
    short flags = 0;
    if (request.output == Terminal::pty || request.group == ProcessGroup::session) {
        flags |= POSIX_SPAWN_SETSID;
    } else if (request.group == ProcessGroup::own) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&spawn_attr.attr, 0);
    }
    if (request.signal_mask) {
        flags |= POSIX_SPAWN_SETSIGMASK;
        posix_spawnattr_setsigmask(&spawn_attr.attr, &*request.signal_mask);
    }
    if (request.reset_sigpipe) {
        sigset_t defaults;
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGPIPE);
        flags |= POSIX_SPAWN_SETSIGDEF;
        posix_spawnattr_setsigdefault(&spawn_attr.attr, &defaults);
    }
    posix_spawnattr_setflags(&spawn_attr.attr, flags);

    const auto argv = c_strings(request.argv);
    const auto envp = c_strings(request.env);
    // posix_spawnp searches PATH as execvp does (ours, not the child's environment's); a
    // name with a slash is used as it is.
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, request.argv.front().c_str(), &spawn_attr.actions, &spawn_attr.attr,
                                  argv.data(), envp.data());
    if (rc != 0) return os_error("starting", request.argv.front(), rc);
    return SpawnedChild{pid, std::move(ends.read_out), std::move(ends.read_err)};
}

}  // namespace rmcp::process
