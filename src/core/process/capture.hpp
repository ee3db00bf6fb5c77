// Running a command and collecting its stdout, with a time limit: how rmcp asks the host's
// tools (journalctl, dmesg). CommandRunner is the seam: tests replace it with a function, or
// put fake commands on PATH for the real one.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace rmcp::process {

struct CommandOutput {
    int exit_code = -1;  // -1: it could not be started or did not finish; 128+N: killed by signal N
    std::string out;     // its stdout (at most CaptureLimits: the newest part)
    std::string error;   // why it failed; empty on exit 0
    // Set when `out` is not all the command printed: what was cut and why ("kept the last
    // 100000 lines (8 MiB) of 40 MiB; journalctl was stopped at the 32 MiB read limit").
    std::string cut;
};

// What is kept of a command's output (docs/security.md, "Bounded capture"). A crash report
// needs the end of a log (the fault is the newest line), so the newest bytes and lines are
// kept; a command that prints more than max_read in all is flooding, not answering: it is
// stopped (its process group killed) and what was kept so far is its answer, with `cut` set.
struct CaptureLimits {
    std::size_t max_bytes = std::size_t{8} << 20;  // the newest bytes kept
    std::size_t max_lines = 100'000;               // the newest lines kept
    std::size_t max_read = std::size_t{32} << 20;  // stop reading (and kill) past this
};

// Runs argv (PATH lookup, never a shell) in a process group of its own with stdin and
// stderr on /dev/null, in rmcp's environment, and collects its stdout within `limits`;
// after `timeout` its group is killed (SIGKILL) and it is reported as not finished.
CommandOutput capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                             const CaptureLimits& limits = {});

// text cut to its last `max_lines` lines and `max_bytes` bytes (at a line start when one
// is in reach); true when something was cut.
bool keep_tail(std::string& text, std::size_t max_bytes, std::size_t max_lines);

using CommandRunner = std::function<CommandOutput(const std::vector<std::string>& argv)>;

// capture_output with this time limit for each command.
CommandRunner system_runner(std::chrono::milliseconds timeout);

}  // namespace rmcp::process
