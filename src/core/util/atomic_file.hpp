// Whole-file writes that never leave a partial file behind: temp file in the same
// directory, write, fsync, rename over the target, fsync the directory.
#pragma once

#include "util/error.hpp"

#include <string>
#include <string_view>
#include <sys/types.h>

namespace rmcp {

// The temporary file's name: `<name>.rmcp-tmp-XXXXXX` next to the target. A kill between
// its creation and the rename leaves one behind; `rmcp patch status` and `apply` remove them.
inline constexpr std::string_view k_temp_infix = ".rmcp-tmp-";

Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode = 0644);

// The same inside the directory `dirfd` (opened by Root): the temporary file is created
// there with O_EXCL | O_NOFOLLOW and renamed onto `name`, so nothing outside that directory
// is touched whatever links the tree holds. `shown` names the target in errors.
Status write_file_atomic_at(int dirfd, std::string_view name, std::string_view content, mode_t mode,
                            const std::string& shown);

}  // namespace rmcp
