#include "util/diag.hpp"

#include "util/style.hpp"
#include "util/text.hpp"

#include <fmt/core.h>

namespace rmcp {

namespace {
const char* label(MessageLevel s) {
    switch (s) {
    case MessageLevel::error: return "error";
    case MessageLevel::warning: return "warning";
    case MessageLevel::note: return "note";
    }
    return "error";
}
}  // namespace

void Diagnostics::report(MessageLevel severity, std::string_view message) {
    if (severity == MessageLevel::warning) ++m_warnings;
    // -q silences notes and warnings, never errors.
    if (m_verbosity == Verbosity::quiet && severity != MessageLevel::error) return;
    // Messages name paths, arguments and values from input: shown through the one terminal-safe
    // path (util/text.hpp). Some are several lines by design (a rollback's list of files).
    const Style style(m_color);
    const std::string name = fmt::format("{}:", label(severity));
    const std::string shown = severity == MessageLevel::error     ? style.bold(style.red(name))
                              : severity == MessageLevel::warning ? style.bold(style.yellow(name))
                                                                  : style.bold(name);
    raw(fmt::format("rmcp: {} {}\n", shown, terminal_safe(message, Shown::lines)));
}

// fwrite, not fmt::print: fmt throws on a failed write, and a broken stderr must not turn
// into an uncaught exception. There is nowhere left to report it, so it is dropped.
void Diagnostics::raw(std::string_view text) {
    if (text.empty()) return;
    static_cast<void>(std::fwrite(text.data(), 1, text.size(), m_out));
    static_cast<void>(std::fflush(m_out));
}

void Diagnostics::verbose(std::string_view message) {
    if (m_verbosity == Verbosity::verbose) raw(fmt::format("rmcp: note: {}\n", terminal_safe(message, Shown::lines)));
}

}  // namespace rmcp
