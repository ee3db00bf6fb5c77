// One message shape: `rmcp: error: <doing what> <path>: <cause>` (docs/exit-codes.md).
#pragma once

#include "util/error.hpp"

#include <cstdio>
#include <string_view>

namespace rmcp {

enum class MessageLevel { error, warning, note };

enum class Verbosity { quiet, normal, verbose };

// Diagnostics go to stderr; stdout carries only the requested output.
class Diagnostics {
public:
    explicit Diagnostics(std::FILE* out = stderr, Verbosity verbosity = Verbosity::normal)
        : m_out(out), m_verbosity(verbosity) {}

    void report(MessageLevel severity, std::string_view message);
    void error(const Error& e) { report(MessageLevel::error, e.message()); }
    void warning(std::string_view message) { report(MessageLevel::warning, message); }
    void note(std::string_view message) { report(MessageLevel::note, message); }
    // Printed only with -v.
    void verbose(std::string_view message);
    // Text as it is (a prompt, CLI11's own messages), whatever the verbosity.
    void raw(std::string_view text);

    [[nodiscard]] int warnings() const { return m_warnings; }
    void set_verbosity(Verbosity v) { m_verbosity = v; }
    [[nodiscard]] Verbosity verbosity() const { return m_verbosity; }
    // Colours the label ("error" red, "warning" yellow), as git, cargo and rg do; the CLI
    // turns it on from --color and stderr (util/terminal.hpp, use_color).
    void set_color(bool color) { m_color = color; }

private:
    std::FILE* m_out;
    Verbosity m_verbosity;
    int m_warnings = 0;
    bool m_color = false;
};

}  // namespace rmcp
