// New kernel-log lines since a point in time, for incident reports. Read through the
// process seam (journalctl, else dmesg, found on PATH) rather than /dev/kmsg directly:
// both already know how to honour the host's permissions, and tests put fakes on PATH.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace rmcp::run {

struct KernelLog {
    std::string source;              // "journalctl", "dmesg", or "" when neither could be read
    std::vector<std::string> lines;  // oldest first, at most k_kernel_log_lines
    std::string error;               // why nothing could be read
};

inline constexpr std::size_t k_kernel_log_lines = 400;

KernelLog read_kernel_log_since(std::chrono::system_clock::time_point since);

// Runs argv (PATH lookup, no shell) with stdin and stderr on /dev/null and collects its
// stdout; error says why not when it cannot start, fails, or outlives timeout (then killed).
struct Captured {
    int exit_code = -1;
    std::string out;
    std::string error;
};
Captured capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace rmcp::run
