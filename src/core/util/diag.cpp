#include "util/diag.hpp"

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
    fmt::print(m_out, "rmcp: {}: {}\n", label(severity), terminal_safe(message, Shown::lines));
}

void Diagnostics::verbose(std::string_view message) {
    if (m_verbosity == Verbosity::verbose) fmt::print(m_out, "rmcp: note: {}\n", terminal_safe(message, Shown::lines));
}

}  // namespace rmcp
