// Starting the supervised child: argv without a shell (PATH lookup like execvp), its own
// process group, stdout and stderr on pipes or pseudo-terminals whose read ends we keep.
#pragma once

#include "util/error.hpp"

#include <csignal>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

namespace rmcp::run {

enum class Terminal { pipes, pty };

// One environment edit: set name=value, or unset name when value is nullopt.
struct EnvChange {
    std::string name;
    std::optional<std::string> value;
};

struct SpawnRequest {
    std::vector<std::string> argv;
    std::vector<std::string> env;  // "NAME=value" entries, complete
    Terminal terminal = Terminal::pipes;
    sigset_t child_mask{};         // the signal mask the child starts with
    bool reset_sigpipe = false;    // give the child SIGPIPE's default action back
};

struct SpawnedChild {
    pid_t pid = -1;  // also its process group id (and session id with a pty)
    int out_fd = -1; // read end of the child's stdout (pipe, or pty master)
    int err_fd = -1; // read end of the child's stderr
};

Result<SpawnedChild> spawn_child(const SpawnRequest& request);

// base ("NAME=value" as in environ) with the changes applied in order; the result keeps
// base's order and appends new names at the end.
std::vector<std::string> apply_env(const std::vector<std::string>& base, const std::vector<EnvChange>& changes);
std::vector<std::string> current_environment();
// The value of name in env, if set.
std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name);

// Copies the window size of the terminal we run on (if any) onto a pty master.
void copy_window_size(int master_fd);

}  // namespace rmcp::run
