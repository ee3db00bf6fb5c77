#include "util/diag.hpp"

#include <fmt/core.h>

namespace rmcp {

namespace {
const char* label(Severity s) {
    switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
    }
    return "error";
}
}  // namespace

void Diagnostics::report(Severity severity, std::string_view message) {
    if (severity == Severity::warning) ++m_warnings;
    // -q silences notes and warnings, never errors.
    if (m_verbosity == Verbosity::quiet && severity != Severity::error) return;
    fmt::print(m_out, "rmcp: {}: {}\n", label(severity), message);
}

void Diagnostics::verbose(std::string_view message) {
    if (m_verbosity == Verbosity::verbose) fmt::print(m_out, "rmcp: note: {}\n", message);
}

}  // namespace rmcp
