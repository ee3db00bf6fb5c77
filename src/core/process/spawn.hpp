// Starting processes: the one place rmcp calls posix_spawn. argv without a shell (PATH lookup
// like execvp), a complete environment, descriptors mapped into the child, its own process
// group (or session), and optionally pipes or pseudo-terminals for its output whose read
// ends the caller keeps. Used by `run` (the supervised child), `probe` (the worker's fork
// server) and capture_output (journalctl, dmesg).
#pragma once

#include "util/error.hpp"
#include "util/unique_fd.hpp"

#include <csignal>
#include <fcntl.h>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <sys/types.h>

namespace rmcp::process {

// What the child's stdout and stderr are when rmcp reads them.
enum class Terminal {
    pipes,  // two pipes
    // Two pseudo-terminals, so stdout and stderr stay apart and both answer isatty(); the
    // child leads a new session whose controlling terminal is the stdout one.
    pty,
};

// Where a child's process runs, for signals: rmcp's group, or a group of its own so that a
// signal to the group reaches every process of the child's and none of rmcp's, or a session
// of its own (setsid): every process it forks, in whatever groups they make, stays in that
// session, so kill_session() can end all of them (the probe's fork server).
enum class ProcessGroup { inherit, own, session };

// One descriptor of the child: a copy of one of ours, or /dev/null.
struct FdMapping {
    int child_fd = -1;
    int parent_fd = -1;         // dup2'ed onto child_fd; -1: /dev/null is opened there instead
    int null_flags = O_RDONLY;  // how /dev/null is opened

    static FdMapping copy_of(int parent_fd, int child_fd) { return {child_fd, parent_fd, 0}; }
    static FdMapping dev_null(int child_fd, int flags) { return {child_fd, -1, flags}; }
};

struct SpawnRequest {
    std::vector<std::string> argv;
    std::vector<std::string> env;  // "NAME=value" entries, complete
    // Set: stdout and stderr are made here and their read ends come back in SpawnedChild.
    std::optional<Terminal> output;
    std::vector<FdMapping> fds;              // applied after output's; other descriptors are inherited
                                             // unless close-on-exec
    ProcessGroup group = ProcessGroup::own;  // ignored with Terminal::pty (a new session)
    std::optional<sigset_t> signal_mask;     // the mask the child starts with; unset: ours
    bool reset_sigpipe = false;              // give the child SIGPIPE's default action back
};

struct SpawnedChild {
    pid_t pid = -1;   // with ProcessGroup::own also its process group id (and session id with a pty)
    UniqueFd out_fd;  // read end of the child's stdout (pipe, or pty master), when output was set
    UniqueFd err_fd;  // read end of the child's stderr
};

// Errors: ExitCode::usage for an empty argv, else ExitCode::environment with os_error set
// (ENOENT: not found, EACCES: not executable).
Result<SpawnedChild> spawn(const SpawnRequest& request);

// SIGKILLs every process of the session `leader` leads, found in /proc (a process stays
// in the session it was forked in unless it calls setsid). `leader` must be a child rmcp
// spawned with ProcessGroup::session and has not reaped yet: its pid, hence the session id,
// cannot be reused meanwhile. Each process is signalled through a pidfd opened before its
// session is checked again (pidfd_open/pidfd_send_signal, Linux 5.3; kill(2) where the
// kernel lacks them), so a pid reused between the scan and the signal is never hit.
// Returns how many processes were signalled.
std::size_t kill_session(pid_t leader);

// One environment edit: set name=value, or unset name when value is nullopt.
struct EnvEdit {
    std::string name;
    std::optional<std::string> value;
};

// base ("NAME=value" as in environ) with the changes applied in order; the result keeps
// base's order and appends new names at the end.
std::vector<std::string> apply_env(const std::vector<std::string>& base, const std::vector<EnvEdit>& changes);
std::vector<std::string> current_environment();
// The same as a map (the form the patch and profile code reads), NAME -> value.
std::map<std::string, std::string> current_environment_map();
// The value of name in env, if set.
std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name);

// Copies the window size of the terminal we run on (if any) onto a pty master.
void copy_window_size(int master_fd);

}  // namespace rmcp::process
