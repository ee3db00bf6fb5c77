#include "util/diag.hpp"

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
    fmt::print(m_out, "rmcp: {}: {}\n", label(severity), message);
}

void Diagnostics::verbose(std::string_view message) {
    if (m_verbosity == Verbosity::verbose) fmt::print(m_out, "rmcp: note: {}\n", message);
}

}  // namespace rmcp
