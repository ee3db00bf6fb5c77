#include "explain/kernel_log.hpp"

#include "run/kernel_log.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string_view>

namespace rmcp::explain {

CommandRunner system_command_runner() {
    return [](const std::vector<std::string>& argv) {
        auto captured = run::capture_output(argv, std::chrono::seconds(60));
        return CommandOutput{captured.exit_code, std::move(captured.out), std::move(captured.error)};
    };
}

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

}  // namespace

Result<KernelLogText> read_kernel_log(const CommandRunner& runner) {
    auto journal = runner({"journalctl", "-k", "-b", "--no-pager"});
    if (journal.exit_code == 0 && has_entries(journal.out))
        return KernelLogText{"journalctl -k -b", std::move(journal.out)};
    const std::string journal_why =
        journal.exit_code == 0 ? "journalctl: no entries" : (journal.error.empty() ? "journalctl failed" : journal.error);
    auto dmesg = runner({"dmesg"});
    if (dmesg.exit_code == 0) return KernelLogText{"dmesg", std::move(dmesg.out)};
    const std::string dmesg_why = dmesg.error.empty() ? "dmesg failed" : dmesg.error;
    return Error{"reading", "the kernel log", fmt::format("{}; {}", journal_why, dmesg_why), ExitCode::environment};
}

}  // namespace rmcp::explain
