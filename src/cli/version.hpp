// rmcp's version: project(VERSION) refined by `git describe` at build time
// (cmake/version_file.cmake writes the definition into the build tree).
#pragma once

#include <string_view>

namespace rmcp::cli {

std::string_view rmcp_version();

}  // namespace rmcp::cli
