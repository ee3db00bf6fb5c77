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
#include <string_view>
#include <vector>

namespace rmcp {

// Files are cut here (and the cut recorded): detect's own largest read is 4 MiB.
inline constexpr std::size_t k_snapshot_file_cap = std::size_t{4} << 20;

// Content by value, not by path (docs/security.md, "Snapshot content by value"; review
// 2026-11-28, D5): a file's bytes go into the bundle only when it is a regular file, was
// not reached through a link that leaves the directory holding the link (links between
// the system trees /sys /proc /dev /etc /usr /lib* /bin /sbin /opt are the distribution's
// layout and may), fits its kind's cap, and is of the kind detect expects there. Each kind:
enum class SnapshotKind {
    generic,        // anything else detect reads: cut at k_snapshot_file_cap, binaries left out
    torch_version,  // */torch/version.py: text with a `__version__ = '...'` assignment, <= 64 KiB
    os_release,     // /etc/os-release, /usr/lib/os-release: KEY=value lines (os-release(5)), <= 64 KiB
    version_text,   // */.info/version*: one short version line, <= 4 KiB
    c_header,       // *.h: text with #define lines, <= 1 MiB
    sysfs_value,    // /sys/...: small text, <= 64 KiB
};
// The kind of the file detect asked for at `path` (as detect named it).
SnapshotKind snapshot_kind(std::string_view path);
// Why `content` is not of `kind` (empty: it is). For the kinds with a cap, `truncated` says
// the file was larger than the cap.
std::string snapshot_content_problem(SnapshotKind kind, std::string_view content, bool truncated);
// The cap of a kind (what is read of it at most).
std::size_t snapshot_kind_cap(SnapshotKind kind);
// Whether a link at `link` whose target, resolved inside the root, is `destination` may be
// followed for content: the destination stays inside the link's directory, or both lie in
// the system trees.
bool snapshot_link_allowed(std::string_view link, std::string_view destination);

// A file detect read whose content was left out, and why (`omitted PATH REASON` in
// .rmcp-meta; counted in the command's output).
struct SnapshotOmission {
    std::string path;  // as detect asked for it
    std::string reason;
};

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
    std::uint64_t archive_bytes = 0;        // 0 for a listing
    std::vector<SnapshotEntry> entries;     // sorted by path
    std::vector<SnapshotOmission> omitted;  // sorted by path
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
