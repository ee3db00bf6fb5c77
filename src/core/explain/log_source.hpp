// Byte sources for the matcher: a whole file, stdin or descriptor read into a LogScanner,
// gzip data inflated transparently (detected by its magic bytes, any number of members).
#pragma once

#include "explain/matcher.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>

namespace rmcp::explain {

// `fd` is read until EOF and not closed; `what` names the source in errors
// ("reading <what>: <cause>").
Status scan_fd(int fd, std::string_view what, LogScanner& scanner);
// Opens and scans a file; "-" is stdin. Errors carry ExitCode::usage (unreadable log).
Status scan_path(const std::string& path, LogScanner& scanner);

}  // namespace rmcp::explain
