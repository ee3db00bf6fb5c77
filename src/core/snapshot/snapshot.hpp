// A snapshot is both the support bundle and the test fixture (STYLE.md, principle 2):
// it holds exactly what detect read under the root (files, directories, symlinks as
// links), a metadata file for what a tree cannot hold (device nodes, read errors), and
// facts.json. Unpacked, it works as --root and gives the same facts.
#pragma once

#include "root/root.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace rmcp {

struct SnapshotSummary {
    std::size_t files = 0;
    std::size_t links = 0;
    std::size_t directories = 0;
    std::size_t meta_records = 0;
};

// Runs detect on `root` while recording, then writes FILE.tar.gz atomically (temp + rename).
// `stamp`: keys added to facts.json (the CLI's rmcp_version and kb_version).
Result<SnapshotSummary> write_snapshot(const Root& root, const std::filesystem::path& output,
                                       const nlohmann::json& stamp = nlohmann::json::object());

}  // namespace rmcp
