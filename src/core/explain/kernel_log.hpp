// `rmcp explain --kernel-log`: the kernel log of the current boot, read through the process
// seam (journalctl, else dmesg) so that tests can put fakes on PATH or inject a runner.
#pragma once

#include "util/error.hpp"

#include <functional>
#include <string>
#include <vector>

namespace rmcp::explain {

struct CommandOutput {
    int exit_code = -1;  // -1: it could not be started or did not finish
    std::string out;     // its stdout
    std::string error;   // why it failed; empty on exit 0
};

// The process seam: runs argv (PATH lookup, never a shell) and collects its stdout.
using CommandRunner = std::function<CommandOutput(const std::vector<std::string>& argv)>;

// Runs commands for real (run::capture_output, 60 s limit each).
CommandRunner system_command_runner();

struct KernelLogText {
    std::string source;  // the command that produced it: "journalctl -k -b" or "dmesg"
    std::string text;
};

// `journalctl -k -b --no-pager`, falling back to `dmesg` when journalctl is missing,
// fails, or shows no entries (no journal, or no permission to read it). Neither readable:
// an environment error (exit 3) naming both causes.
Result<KernelLogText> read_kernel_log(const CommandRunner& runner);

}  // namespace rmcp::explain
