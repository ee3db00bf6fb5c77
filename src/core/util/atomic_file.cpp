#include "util/atomic_file.hpp"

#include "util/strings.hpp"
#include "util/test_delay.hpp"
#include "util/unique_fd.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp {

namespace {

std::string random_suffix() {
    static constexpr std::string_view k_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    thread_local std::mt19937_64 engine{std::random_device{}()};
    std::string out(6, 'X');
    for (auto& c : out) c = k_chars[engine() % k_chars.size()];
    return out;
}

std::string_view kind_name(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISLNK(m)) return "a symbolic link";
    return "not a regular file";
}

Error not_regular(const std::string& shown, std::string_view what, std::string_view advice = "choose another path") {
    return Error{"writing", shown,
                 fmt::format("{}, not a regular file; rmcp replaces only regular files ({})", what, advice),
                 ExitCode::usage};
}

// What is at the target now. `refuse_links`: a link at the name is refused, whatever it
// leads to (path-based writes of a file the user named: replacing the link would destroy
// it, and following it would write wherever it points: `/dev/stdout` is a link to
// /proc/self/fd/1, which may well be a regular file); the message says what it leads to.
// Otherwise (writes under a Root) a link is replaced as it is, never followed.
struct Target {
    bool present = false;  // something (a regular file, or a link) is at the name
    bool keep_mode = false;
    mode_t mode = 0;  // the regular file's permission bits, when keep_mode
};
Result<Target> check_target(int dirfd, const std::string& name, const std::string& shown, bool refuse_links) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return Target{};
        return os_error("writing", shown, errno);
    }
    // Permission bits only: a set-id bit is not carried over to new content.
    if (S_ISREG(st.st_mode)) return Target{true, true, static_cast<mode_t>(st.st_mode & 0777)};
    if (!S_ISLNK(st.st_mode)) return not_regular(shown, kind_name(st.st_mode));
    if (!refuse_links) return Target{true, false, 0};  // the link itself is replaced
    struct stat to {};
    if (::fstatat(dirfd, name.c_str(), &to, 0) != 0) return not_regular(shown, "a symbolic link to nothing");
    return not_regular(shown,
                       fmt::format("a symbolic link to {}",
                                   S_ISREG(to.st_mode) ? "a regular file" : kind_name(to.st_mode)),
                       "name the file itself, or another path");
}

Status write_at(int dirfd, const std::string& name, std::string_view content, std::optional<mode_t> exact_mode,
                mode_t new_mode, const std::string& shown, bool refuse_links, bool hidden_temp) {
    auto target = check_target(dirfd, name, shown, refuse_links);
    if (!target) return target.error();
    const mode_t mode = exact_mode ? *exact_mode : (target->keep_mode ? target->mode : new_mode);
    std::string temp;
    UniqueFd fd;
    for (int attempt = 0; attempt < 100 && !fd; ++attempt) {
        temp = (hidden_temp ? "." : "") + name + std::string(k_temp_infix) + random_suffix();
        fd.reset(::openat(dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!fd && errno != EEXIST) return os_error("creating temporary file for", shown, errno);
    }
    if (!fd) return os_error("creating temporary file for", shown, EEXIST);
    const auto fail = [&](std::string_view doing, int err) {
        fd.reset();
        ::unlinkat(dirfd, temp.c_str(), 0);
        return os_error(doing, shown, err);
    };
    std::size_t written = 0;
    while (written < content.size()) {
        const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("writing", errno);
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd.get(), mode) != 0) return fail("setting mode of", errno);
    if (::fsync(fd.get()) != 0) return fail("syncing", errno);
    if (::close(fd.release()) != 0) return fail("closing", errno);
    // Checked again just before the rename: what was missing or a file when we started
    // must not have become a node in the meantime. A path that was missing is only
    // created, never replaced (RENAME_NOREPLACE), where the file system supports it.
    test_hooks::delay_at("rename");  // test-only (util/test_delay.hpp); off by default
    auto now = check_target(dirfd, name, shown, refuse_links);
    if (!now) {
        ::unlinkat(dirfd, temp.c_str(), 0);
        return now.error();
    }
    int rc = -1;
    if (!now->present) {
        rc = ::renameat2(dirfd, temp.c_str(), dirfd, name.c_str(), RENAME_NOREPLACE);
        if (rc != 0 && errno == EEXIST) {
            // Something appeared at the name after the check: judged like any other target.
            if (auto again = check_target(dirfd, name, shown, refuse_links); !again) {
                ::unlinkat(dirfd, temp.c_str(), 0);
                return again.error();
            }
            rc = ::renameat(dirfd, temp.c_str(), dirfd, name.c_str());
        } else if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
            rc = ::renameat(dirfd, temp.c_str(), dirfd, name.c_str());
        }
    } else {
        rc = ::renameat(dirfd, temp.c_str(), dirfd, name.c_str());
    }
    if (rc != 0) {
        const int err = errno;
        ::unlinkat(dirfd, temp.c_str(), 0);
        return os_error("renaming into place", shown, err);
    }
    ::fsync(dirfd);  // the rename itself; a failure here cannot be undone any more
    return ok_status();
}

}  // namespace

Status write_file_atomic_at(int dirfd, std::string_view name, std::string_view content, mode_t mode,
                            const std::string& shown) {
    return write_at(dirfd, std::string(name), content, mode, mode, shown, false, false);
}

namespace {
Status check_output_name(const std::string& path) {
    if (path == "-")
        return Error{"writing", path, "this option writes a file, not standard output (name a file called - as ./-)",
                     ExitCode::usage};
    if (path.empty() || path.back() == '/')
        return Error{"writing", path.empty() ? "''" : path, "an output file needs a file name", ExitCode::usage};
    return ok_status();
}
std::string base_name(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode) {
    if (auto s = check_output_name(path); !s) return s;
    UniqueFd dir(::open(std::string(dirname(path)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return os_error("creating temporary file for", path, errno);
    // A hidden temporary name: the directories rmcp's outputs go to are read by others that
    // skip dot files (NFD's features.d, watched with inotify: a visible temporary file would
    // be read half-written; docs/fleet.md).
    return write_at(dir.get(), base_name(path), content, std::nullopt, mode, path, true, true);
}

Status check_output_file(const std::string& path) {
    if (auto s = check_output_name(path); !s) return s;
    UniqueFd dir(::open(std::string(dirname(path)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return ok_status();  // a directory still to be made, or an error the write will name
    auto target = check_target(dir.get(), base_name(path), path, true);
    if (!target) return target.error();
    return ok_status();
}

}  // namespace rmcp
