// Whole-file writes that never leave a partial file behind: temp file in the same
// directory, write, fsync, rename over the target, fsync the directory. The one way rmcp
// writes a file (docs/security.md, "Output files"): every option that names an output
// (`snapshot -o`, `doctor -o`, `run --report`, `probe --save/--html`, `kb render`) and the
// profile, journal and patch writes go through here.
#pragma once

#include "util/error.hpp"

#include <string>
#include <string_view>
#include <sys/types.h>

namespace rmcp {

// The temporary file's name: `<name>.rmcp-tmp-XXXXXX` next to the target (write_file_atomic_at),
// `.<name>.rmcp-tmp-XXXXXX` for a file the user named (write_file_atomic: hidden, so that a
// reader of the directory that skips dot files, such as NFD's features.d, never reads it).
// A kill between its creation and the rename leaves one behind; `rmcp patch status` and
// `apply` remove those next to patch targets.
inline constexpr std::string_view k_temp_infix = ".rmcp-tmp-";

// Writes `path` (a file the user named). Only a regular file or a missing path is replaced:
// a directory, device node, FIFO or socket at the path, or a symbolic link (to anything) is
// refused (exit 2, "not a regular file"), so `-o /dev/null` or `/dev/stdout` (a link to
// /proc/self/fd/1) never turns a system node into a file. Links are refused even when they
// lead to a regular file: replacing one destroys it, and following one writes wherever it
// points (/proc/self/fd/1 is a regular file when stdout is redirected to one); the message
// says to name the file itself. An existing file keeps its permission bits; a new one
// gets `mode`. "-" is refused: the callers that take it
// mean standard output and handle it before calling (cli/context.hpp, write_output).
// ENOSPC, EROFS, EACCES, ...: an error naming the path and the cause (exit 3); the previous
// file is intact and no temporary file is left.
Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode = 0644);

// What write_file_atomic would refuse at once ("-", no file name, a path that is not a
// regular file or missing), checked before long work (a `run`, a `probe`) so the user
// learns it before, not after. Writes nothing.
Status check_output_file(const std::string& path);

// The same inside the directory `dirfd` (opened by Root): the temporary file is created
// there with O_EXCL | O_NOFOLLOW and renamed onto `name`, so nothing outside that directory
// is touched whatever links the tree holds. A directory, device node, FIFO or socket at
// `name` is refused; a link there is replaced, never followed. `mode` is set exactly.
// `shown` names the target in errors.
Status write_file_atomic_at(int dirfd, std::string_view name, std::string_view content, mode_t mode,
                            const std::string& shown);

}  // namespace rmcp
