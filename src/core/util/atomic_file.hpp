// Whole-file writes that never leave a partial file behind: temp file in the same
// directory, write, fsync, rename over the target, fsync the directory.
#pragma once

#include "util/error.hpp"

#include <string>
#include <string_view>
#include <sys/types.h>

namespace rmcp {

Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode = 0644);

}  // namespace rmcp
