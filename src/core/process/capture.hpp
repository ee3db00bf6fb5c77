// Running a command and collecting its stdout, with a time limit: how rmcp asks the host's
// tools (journalctl, dmesg). CommandRunner is the seam: tests replace it with a function, or
// put fake commands on PATH for the real one.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rmcp::process {

struct CommandOutput {
    int exit_code = -1;  // -1: it could not be started or did not finish; 128+N: killed by signal N
    std::string out;     // its stdout
    std::string error;   // why it failed; empty on exit 0
};

// Runs argv (PATH lookup, never a shell) with stdin and stderr on /dev/null, in rmcp's
// environment, and collects its stdout; after `timeout` it is killed (SIGKILL) and reported
// as not finished.
CommandOutput capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

using CommandRunner = std::function<CommandOutput(const std::vector<std::string>& argv)>;

// capture_output with this time limit for each command.
CommandRunner system_runner(std::chrono::milliseconds timeout);

}  // namespace rmcp::process
