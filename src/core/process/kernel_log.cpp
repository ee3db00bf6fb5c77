#include "process/kernel_log.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <string_view>

namespace rmcp::process {

namespace {

// journalctl prints "-- No entries --" (and, without permission, only hints on stderr).
bool has_entries(std::string_view text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const auto line = text.substr(pos, end - pos);
        if (!line.empty() && line.substr(0, 3) != "-- ") return true;
        pos = end + 1;
    }
    return false;
}

// The non-empty lines of text stamped at or after `epoch`, each ending in '\n'.
std::string lines_since(std::string_view text, long long epoch) {
    std::string kept;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string_view::npos) nl = text.size();
        if (nl > start) {
            const std::string line(text.substr(start, nl - start));
            const auto stamp = dmesg_iso_seconds(line);
            if (stamp && *stamp >= epoch) {
                kept += line;
                kept += '\n';
            }
        }
        start = nl + 1;
    }
    return kept;
}

std::string max_lines() { return std::to_string(k_kernel_log_max_lines); }

std::string why_failed(const CommandOutput& output, std::string_view tool) {
    return output.error.empty() ? fmt::format("{} failed", tool) : output.error;
}

}  // namespace

std::optional<long long> dmesg_iso_seconds(const std::string& line) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, oh = 0, om = 0;
    char sign = '+';
    long frac = 0;
    if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d,%ld%c%2d:%2d", &y, &mo, &d, &h, &mi, &s, &frac, &sign, &oh,
                    &om) != 10)
        return std::nullopt;
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    const long long offset = (oh * 3600LL + om * 60LL) * (sign == '-' ? -1 : 1);
    return static_cast<long long>(::timegm(&tm)) - offset;
}

Result<KernelLog> read_kernel_log(const CommandRunner& runner,
                                  std::optional<std::chrono::system_clock::time_point> since) {
    std::string journal_why;
    if (since) {
        const auto epoch = std::chrono::duration_cast<std::chrono::seconds>(since->time_since_epoch()).count();
        auto journal = runner({"journalctl", "-k", "-q", "--no-pager", "-o", "short-iso", "-n", max_lines(), "--since",
                               fmt::format("@{}", epoch)});
        if (journal.exit_code == 0)
            return KernelLog{"journalctl", fmt::format("journalctl -k --since @{}", epoch), std::move(journal.out),
                             std::move(journal.cut)};
        journal_why = why_failed(journal, "journalctl");
        auto dmesg = runner({"dmesg", "--time-format", "iso"});
        if (dmesg.exit_code == 0)
            return KernelLog{"dmesg", "dmesg --time-format iso", lines_since(dmesg.out, epoch), std::move(dmesg.cut)};
        return Error{"reading", "the kernel log", fmt::format("{}; {}", journal_why, why_failed(dmesg, "dmesg")),
                     ExitCode::environment};
    }
    auto journal = runner({"journalctl", "-k", "-b", "--no-pager", "-n", max_lines()});
    if (journal.exit_code == 0 && has_entries(journal.out))
        return KernelLog{"journalctl", "journalctl -k -b", std::move(journal.out), std::move(journal.cut)};
    journal_why = journal.exit_code == 0 ? "journalctl: no entries" : why_failed(journal, "journalctl");
    auto dmesg = runner({"dmesg"});
    if (dmesg.exit_code == 0) return KernelLog{"dmesg", "dmesg", std::move(dmesg.out), std::move(dmesg.cut)};
    return Error{"reading", "the kernel log", fmt::format("{}; {}", journal_why, why_failed(dmesg, "dmesg")),
                 ExitCode::environment};
}

}  // namespace rmcp::process
