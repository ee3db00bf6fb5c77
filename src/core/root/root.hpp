// Every read of the host goes through one Root (ARCHITECTURE.md, principle 1), and so does every
// write rmcp makes (the patch applier, its journal and lock).
//
// A Root maps absolute paths ("/sys/class/kfd/...") onto a directory: "/" on a live system,
// an unpacked snapshot or a test fixture otherwise. It holds a directory file descriptor of
// that directory and resolves every path against it as a chroot would (docs/security.md,
// "One resolver"): an absolute link target starts again at the root, ".." stops there, and
// a chain of more than 40 links is ELOOP. Two implementations of the same rule:
//
//   * openat2(2) with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS (Linux 5.6 and later), the
//     kernel's own confinement, checked at run time (ENOSYS: use the walk);
//   * a walk in user space, one component at a time with O_PATH | O_NOFOLLOW, which also
//     tells an observer every link it crosses (snapshot keeps links as links).
//
// Callers get file descriptors, never a path to open again, so what was resolved is what
// is read or written.
//
// A snapshot can also carry a metadata file (k_meta_file) with what a plain file tree
// cannot hold: device-node ownership and mode, read errors such as EPERM seen when it was
// captured, binaries left out and files cut at the size cap.
#pragma once

#include "util/error.hpp"
#include "util/unique_fd.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
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

// What happens to symbolic links on the way to a path.
enum class LinkPolicy {
    follow,     // every link is followed (inside the root)
    keep_last,  // links before the last component are followed; the last one is the result
    refuse,     // any link is ELOOP: for writes to a path that was canonicalised before
};

// Which implementation resolves paths.
enum class Resolver {
    automatic,  // openat2 where the kernel has it, else the walk
    walk,       // always the user-space walk (tests force it to check both)
};

// Told about each link a walk crosses: its path inside the root and its target as stored.
using LinkObserver = std::function<void(const std::string& link, const std::string& target)>;

struct WalkResult {
    UniqueFd fd;                    // the object, opened with the requested flags; invalid on failure
    int error = 0;                  // errno on failure
    std::string resolved;           // success: the path inside the root, links resolved;
                                    // failure: the deepest directory reached
    std::vector<std::string> rest;  // failure: the components not resolved, the failing one first
};

class Root {
public:
    static constexpr std::string_view k_meta_file = "/.rmcp-meta";
    // Links followed before ELOOP: the kernel's own limit (MAXSYMLINKS, fs/namei.c).
    static constexpr int k_max_links = 40;

    // Opens `base` (a directory) and loads base/.rmcp-meta when present; a malformed one is
    // an error naming file:line.
    static Result<Root> open(std::filesystem::path base, Resolver resolver = Resolver::automatic);

    [[nodiscard]] const std::filesystem::path& base() const { return m_base; }
    [[nodiscard]] bool is_live() const { return m_base == "/"; }
    // The path as it would be shown on this machine (base + path): for messages only; never
    // open it.
    [[nodiscard]] std::string host_path(std::string_view path) const;
    // The implementation this Root uses (walk when forced or when the kernel has no openat2).
    [[nodiscard]] Resolver resolver() const;
    static bool kernel_has_openat2();

    // ---- the one resolver ---------------------------------------------------------------
    // Opens `path` inside the root with open(2) `flags` (O_CLOEXEC is added). Reading flags
    // open only regular files and directories (anything else: EINVAL), so a FIFO or device
    // planted in a tree never blocks or wakes a driver. Errors carry the errno.
    Result<UniqueFd> open_fd(std::string_view path, int flags, LinkPolicy links = LinkPolicy::follow) const;
    // The user-space walk itself, with an optional observer of the links it crosses.
    WalkResult walk(std::string_view path, int flags, LinkPolicy links, const LinkObserver* observer = nullptr) const;

    // ---- reads (recorded for snapshots; metadata applied) --------------------------------
    // Reads at most `limit` bytes; `truncated` (when given) says whether there was more.
    Result<std::string> read_file(std::string_view path, std::size_t limit = std::size_t{1} << 20,
                                  bool* truncated = nullptr) const;
    // A regular file opened for reading (scan maps it).
    Result<UniqueFd> open_read(std::string_view path) const;
    // Sorted entry names; "." and ".." excluded; names the metadata file knows (files that
    // could not be read when a snapshot was taken) included.
    Result<std::vector<std::string>> list_dir(std::string_view path) const;
    Result<std::string> read_link(std::string_view path) const;
    Result<FileStat> stat(std::string_view path) const;
    [[nodiscard]] bool exists(std::string_view path) const;
    [[nodiscard]] bool is_dir(std::string_view path) const;
    // The path with every symlink resolved inside the root ("/opt/rocm" → "/opt/rocm-6.1.0");
    // a missing component ends resolution and the rest is kept, normalised.
    Result<std::string> canonical(std::string_view path) const;

    // ---- writes (the patch applier) -------------------------------------------------------
    // The directory `path`, opened for use as a directory fd (O_RDONLY | O_DIRECTORY).
    Result<UniqueFd> open_dir(std::string_view path, LinkPolicy links = LinkPolicy::follow) const;
    // Like open_dir, creating missing directories (with `mode`) one at a time inside the root.
    Result<UniqueFd> make_dirs(std::string_view path, unsigned mode, LinkPolicy links = LinkPolicy::follow) const;

    // Snapshot support: while recording, every path consulted is remembered.
    void start_recording() const { m_recording = true; }
    void stop_recording() const { m_recording = false; }
    [[nodiscard]] const std::set<std::string>& recorded() const { return m_recorded; }
    // What the metadata file says about a path (snapshot of a snapshot keeps it).
    [[nodiscard]] std::optional<int> recorded_error(std::string_view path) const;

private:
    Root() = default;
    void record(std::string_view path) const;
    Error failure(std::string_view doing, std::string_view path, int err) const;
    Result<UniqueFd> open_with_openat2(std::string_view path, int flags, LinkPolicy links, bool& unsupported) const;

    std::filesystem::path m_base;
    std::shared_ptr<UniqueFd> m_base_fd;  // O_PATH | O_DIRECTORY; shared by copies
    Resolver m_resolver = Resolver::automatic;
    std::map<std::string, FileStat, std::less<>> m_stat_overrides;
    std::map<std::string, int, std::less<>> m_error_overrides;
    mutable bool m_recording = false;
    mutable std::set<std::string> m_recorded;
};

// Parsing helpers for the metadata file, exposed for tests and the snapshot writer. Errno
// names are the portable spelling (EACCES); an errno without one is written E<number>.
std::optional<int> errno_from_name(std::string_view name);
std::string errno_name(int err);
std::string format_meta_stat(std::string_view path, const FileStat& st);

// "/a/./b/../c" → "/a/c"; never above "/". Lexical only.
std::string normalise_path(std::string_view path);

// Reads from `fd` until EOF or `limit` bytes; `truncated` says whether more was there.
// Returns 0 or the errno.
int read_fd(int fd, std::size_t limit, std::string& out, bool* truncated = nullptr);

}  // namespace rmcp
