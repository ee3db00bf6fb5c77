// Every read of the host goes through one Root (STYLE.md, principle 1).
//
// A Root maps absolute host paths ("/sys/class/kfd/...") onto a directory: "/" on a live
// system, an unpacked snapshot or a test fixture otherwise. A snapshot can also carry a
// metadata file (kMetaFile) with what a plain file tree cannot hold: device-node ownership
// and mode, and read errors such as EPERM seen when it was captured.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp {

enum class FileType { regular, directory, symlink, char_device, block_device, other };

struct FileStat {
    FileType type = FileType::other;
    std::uint32_t mode = 0;  // permission bits only (07777)
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
};

class Root {
public:
    static constexpr std::string_view k_meta_file = "/.rmcp-meta";

    // Loads base/.rmcp-meta when present; a malformed one is an error naming file:line.
    static Result<Root> open(std::filesystem::path base);

    [[nodiscard]] const std::filesystem::path& base() const { return m_base; }
    [[nodiscard]] bool is_live() const { return m_base == "/"; }
    // The path as it exists on this machine (base + path).
    [[nodiscard]] std::string host_path(std::string_view path) const;

    // Reads at most `limit` bytes. Failures carry the errno in Error::os_error.
    Result<std::string> read_file(std::string_view path, std::size_t limit = std::size_t{1} << 20) const;
    // Sorted entry names; "." and ".." excluded.
    Result<std::vector<std::string>> list_dir(std::string_view path) const;
    Result<std::string> read_link(std::string_view path) const;
    Result<FileStat> stat(std::string_view path) const;
    [[nodiscard]] bool exists(std::string_view path) const;
    [[nodiscard]] bool is_dir(std::string_view path) const;
    // The path with every symlink resolved inside the root ("/opt/rocm" → "/opt/rocm-6.1.0");
    // a missing component ends resolution and the rest is kept as written.
    Result<std::string> canonical(std::string_view path) const;

    // Snapshot support: while recording, every path consulted is remembered.
    void start_recording() const { m_recording = true; }
    [[nodiscard]] const std::set<std::string>& recorded() const { return m_recorded; }

private:
    explicit Root(std::filesystem::path base) : m_base(std::move(base)) {}
    void record(std::string_view path) const;
    [[nodiscard]] std::optional<int> injected_error(std::string_view path) const;
    Error failure(std::string_view doing, std::string_view path, int err) const;
    enum class LastLink { follow, keep };
    // Resolves `path` the way a chroot into the base would: an absolute link target starts
    // again at the base and ".." stops there, so a fixture or unpacked snapshot never reads
    // the build machine's own files through a link such as /opt/rocm -> /etc/alternatives/rocm.
    // Returns the in-root path, or ELOOP after too many links.
    [[nodiscard]] Result<std::string> resolve(std::string_view path, LastLink last) const;
    // host_path() of resolve(); on a live root the kernel resolves, so this is host_path().
    [[nodiscard]] Result<std::string> resolved_host_path(std::string_view path, LastLink last) const;

    std::filesystem::path m_base;
    std::map<std::string, FileStat, std::less<>> m_stat_overrides;
    std::map<std::string, int, std::less<>> m_error_overrides;
    mutable bool m_recording = false;
    mutable std::set<std::string> m_recorded;
};

// Parsing helpers for the metadata file, exposed for tests and the snapshot writer.
std::optional<int> errno_from_name(std::string_view name);
std::string errno_name(int err);
std::string format_meta_stat(std::string_view path, const FileStat& st);

}  // namespace rmcp
