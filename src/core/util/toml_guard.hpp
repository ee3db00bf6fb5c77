// Input screening before toml++ sees a file. Debian 12's toml++ 3.3 reaches
// TOML_UNREACHABLE (undefined behaviour, also in release builds) when it tests some
// non-ASCII characters as whitespace between tokens — e.g. U+045A on a line of its own
// (found by tests/fuzz/fuzz_kb_loader). TOML allows non-ASCII only inside strings and
// comments, so rejecting it elsewhere loses no valid file and keeps that code path unreachable.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace rmcp {

// 1-based line of the first non-ASCII byte outside strings and comments, if any.
std::optional<std::size_t> toml_non_ascii_outside_strings(std::string_view text);

}  // namespace rmcp
