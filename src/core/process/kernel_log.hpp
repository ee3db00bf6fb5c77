// The kernel log, read through the process seam: `journalctl -k`, else `dmesg`, both found
// on PATH (never /dev/kmsg directly: both tools already honour the host's permissions, and
// tests put fakes on PATH or pass their own runner). `explain --kernel-log` reads the whole
// boot (docs/explain.md); `run` reads what came since its child started (docs/run.md,
// "Incident report").
#pragma once

#include "process/capture.hpp"
#include "util/error.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace rmcp::process {

struct KernelLog {
    std::string tool;    // "journalctl" or "dmesg"
    std::string source;  // the command as users see it: "journalctl -k -b", "dmesg", ...
    std::string text;
    std::string cut;  // set when text is not the whole log (CommandOutput::cut): shown as a note
};

// journalctl is asked for the newest lines only (`-n`): the tail is what a crash report
// needs, and the capture keeps no more lines than this anyway (CaptureLimits::max_lines).
inline constexpr std::size_t k_kernel_log_max_lines = 100'000;

// Without `since`: `journalctl -k -b --no-pager -n 100000`, falling back to `dmesg` when journalctl is
// missing, fails, or shows no entries (no journal, or no permission to read it).
// With `since`: `journalctl -k -q --no-pager -o short-iso -n 100000 --since @EPOCH`, falling back to
// `dmesg --time-format iso` with the lines stamped before `since` left out; no entries is
// an answer here (nothing happened since), not a reason to ask dmesg.
// Neither readable: an environment error (exit 3) naming both causes.
Result<KernelLog> read_kernel_log(const CommandRunner& runner,
                                  std::optional<std::chrono::system_clock::time_point> since = std::nullopt);

// Seconds since the epoch of a `dmesg --time-format iso` line
// ("2024-05-01T10:22:33,123456+02:00 message"); nullopt when it does not start with a stamp.
std::optional<long long> dmesg_iso_seconds(const std::string& line);

}  // namespace rmcp::process
