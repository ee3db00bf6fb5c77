// The knowledge base's version: a hash of its content, so that two outputs made with the same
// entries say so whatever the program's version (docs/install.md, "Versions").
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>

namespace rmcp::kb {

// The first 16 hex digits of the SHA-256 of the `sha256sum` listing of the *.toml files
// that kb::load reads (the directory's top level, in byte order of their names), i.e.
//   (cd DIR && LC_ALL=C sha256sum *.toml | sha256sum | cut -c1-16)
Result<std::string> content_hash(const std::filesystem::path& dir);

}  // namespace rmcp::kb
