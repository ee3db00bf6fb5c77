// A snapshot is both the support bundle and the test fixture (ARCHITECTURE.md, principle 2):
// it holds what detect read under the root (files, directories, symlinks as links), a
// metadata file for what a tree cannot hold (device nodes, read errors, binaries left out,
// files cut at the cap), and facts.json. Unpacked, it works as --root and gives the same
// facts.
//
// It is sent to other people, so it holds no more than detect needs (docs/security.md,
// "snapshot"): the user's own /etc/passwd line, the /etc/group lines of the groups that own
// the GPU device nodes, the ROCm/HIP/PyTorch paragraphs of the dpkg status, only the
// environment variables detect reports, and no binary (its size and version go into the
// metadata instead).
#pragma once

#include "root/root.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rmcp {

// Files are cut here (and the cut recorded): detect's own largest read is 4 MiB.
inline constexpr std::size_t k_snapshot_file_cap = std::size_t{4} << 20;

struct SnapshotEntry {
    std::string path;        // inside the archive, with a leading '/'
    std::string kind;        // file | binary | link | dir | meta
    std::uint64_t size = 0;  // bytes stored (a link: its target's length)
};

struct SnapshotSummary {
    std::size_t files = 0;
    std::size_t links = 0;
    std::size_t directories = 0;
    std::size_t meta_records = 0;
    std::uint64_t archive_bytes = 0;     // 0 for a listing
    std::vector<SnapshotEntry> entries;  // sorted by path
};

// Runs detect on `root` while recording, then writes FILE.tar.gz atomically (temp + rename).
// `stamp`: keys added to facts.json (the CLI's rmcp_version and kb_version).
Result<SnapshotSummary> write_snapshot(const Root& root, const std::filesystem::path& output,
                                       const nlohmann::json& stamp = nlohmann::json::object());
// The same selection without writing anything (`rmcp snapshot --list`).
Result<SnapshotSummary> list_snapshot(const Root& root);

// The reductions, exposed for unit tests: the passwd line of `uid`; the group lines of
// `gids`, members cut to `user`; the dpkg status paragraphs of ROCm, HIP and PyTorch packages.
std::string reduce_passwd(std::string_view passwd, std::optional<std::uint64_t> uid);
std::string reduce_group(std::string_view group, const std::vector<std::uint64_t>& gids, std::string_view user);
std::string reduce_dpkg_status(std::string_view status);
// Whether bytes are a binary rather than text (ELF, or NUL bytes in the first 4 KiB).
bool looks_binary(std::string_view bytes);

}  // namespace rmcp
