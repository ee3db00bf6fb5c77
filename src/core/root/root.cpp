#include "root/root.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rmcp {

namespace {

// errno values a snapshot may record; names are the portable spelling.
constexpr std::array<std::pair<std::string_view, int>, 16> k_errno_names{{
    {"EPERM", EPERM},
    {"EACCES", EACCES},
    {"ENOENT", ENOENT},
    {"EIO", EIO},
    {"ENODEV", ENODEV},
    {"ENXIO", ENXIO},
    {"EBUSY", EBUSY},
    {"EINVAL", EINVAL},
    {"ELOOP", ELOOP},
    {"ENOTDIR", ENOTDIR},
    {"EISDIR", EISDIR},
    {"ENAMETOOLONG", ENAMETOOLONG},
    {"EAGAIN", EAGAIN},
    {"EROFS", EROFS},
    {"ENOSPC", ENOSPC},
    {"EOPNOTSUPP", EOPNOTSUPP},
}};

// How often a resolution is tried again when the tree changed under it (openat2's EAGAIN
// for RESOLVE_IN_ROOT during a rename, or a name swapped between the walk's two opens).
constexpr int k_retries = 16;

FileType type_of(mode_t m) {
    if (S_ISREG(m)) return FileType::regular;
    if (S_ISDIR(m)) return FileType::directory;
    if (S_ISLNK(m)) return FileType::symlink;
    if (S_ISCHR(m)) return FileType::char_device;
    if (S_ISBLK(m)) return FileType::block_device;
    return FileType::other;
}

std::string_view type_name(FileType t) {
    switch (t) {
    case FileType::regular: return "file";
    case FileType::directory: return "dir";
    case FileType::symlink: return "link";
    case FileType::char_device: return "char";
    case FileType::block_device: return "block";
    case FileType::other: return "other";
    }
    return "other";
}

std::optional<FileType> type_from_name(std::string_view s) {
    for (auto t : {FileType::regular, FileType::directory, FileType::symlink, FileType::char_device,
                   FileType::block_device, FileType::other})
        if (type_name(t) == s) return t;
    return std::nullopt;
}

std::vector<std::string> components(std::string_view path) {
    std::vector<std::string> out;
    for (std::size_t pos = 0; pos <= path.size();) {
        const auto end = std::min(path.find('/', pos), path.size());
        if (end > pos) out.emplace_back(path.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

// "/a/b" from {"a", "b"}; "/" from none.
std::string absolute_path(const std::vector<std::string>& names) { return "/" + join(names, "/"); }

bool reads_content(int flags) { return (flags & O_PATH) == 0; }

// 0: not tried yet, 1: the kernel has openat2, -1: it does not (ENOSYS, or a seccomp
// filter that answers EPERM for system calls it does not know).
std::atomic<int> g_openat2_state{0};

long sys_openat2(int dirfd, const char* path, open_how* how) {
    return ::syscall(SYS_openat2, dirfd, path, how, sizeof(open_how));
}

}  // namespace

std::optional<int> errno_from_name(std::string_view name) {
    for (const auto& [n, v] : k_errno_names)
        if (n == name) return v;
    // E<number>: an errno without a portable name.
    if (name.size() > 1 && name.front() == 'E') {
        int v = 0;
        const auto [p, e] = std::from_chars(name.data() + 1, name.data() + name.size(), v);
        if (e == std::errc{} && p == name.data() + name.size() && v > 0 && v < 4096) return v;
    }
    return std::nullopt;
}

std::string errno_name(int err) {
    for (const auto& [n, v] : k_errno_names)
        if (v == err) return std::string(n);
    return fmt::format("E{}", err);
}

std::string format_meta_stat(std::string_view path, const FileStat& st) {
    return fmt::format("stat {} type={} mode={:04o} uid={} gid={}", path, type_name(st.type), st.mode, st.uid, st.gid);
}

std::string normalise_path(std::string_view path) {
    std::vector<std::string> parts;
    for (auto& c : components(path)) {
        if (c == ".") continue;
        if (c == "..") {
            if (!parts.empty()) parts.pop_back();
            continue;
        }
        parts.push_back(std::move(c));
    }
    return absolute_path(parts);
}

int read_fd(int fd, std::size_t limit, std::string& out, bool* truncated) {
    std::array<char, 65536> buf{};
    if (truncated) *truncated = false;
    while (true) {
        // One byte past the limit tells whether there was more.
        const std::size_t room = limit - std::min(limit, out.size());
        const std::size_t want = std::min(buf.size(), room + (truncated ? 1 : 0));
        if (want == 0) break;
        const ssize_t n = ::read(fd, buf.data(), want);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) break;
        const auto got = static_cast<std::size_t>(n);
        if (got > room) {
            out.append(buf.data(), room);
            *truncated = true;
            break;
        }
        out.append(buf.data(), got);
    }
    return 0;
}

bool Root::kernel_has_openat2() {
    if (g_openat2_state.load() == 0) {
        open_how how{};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
        const UniqueFd fd(static_cast<int>(sys_openat2(AT_FDCWD, "/", &how)));
        if (fd) {
            g_openat2_state = 1;
        } else {
            g_openat2_state = (errno == ENOSYS || errno == EPERM || errno == E2BIG || errno == EINVAL) ? -1 : 1;
        }
    }
    return g_openat2_state.load() > 0;
}

Resolver Root::resolver() const {
    return m_resolver == Resolver::walk || !kernel_has_openat2() ? Resolver::walk : Resolver::automatic;
}

Result<Root> Root::open(std::filesystem::path base, Resolver resolver) {
    std::error_code ec;
    if (!std::filesystem::is_directory(base, ec))
        return Error{"opening root", base.string(), ec ? ec.message() : "not a directory", ExitCode::usage};
    Root root;
    root.m_resolver = resolver;
    // Shown in messages as the user's machine names it (the base is the user's choice, so
    // following its own links is right).
    root.m_base = std::filesystem::canonical(base, ec);
    if (ec) root.m_base = std::filesystem::absolute(base).lexically_normal();
    // The base itself is the user's choice: the one path opened the ordinary way.
    const int fd = ::open(root.m_base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return os_error("opening root", root.m_base.string(), errno, ExitCode::usage);
    root.m_base_fd = std::make_shared<UniqueFd>(fd);

    // Metadata is read directly, never recorded: it describes the snapshot, not the host.
    if (root.is_live()) return root;
    const std::string meta_path = root.host_path(k_meta_file);
    auto meta_fd = root.open_fd(k_meta_file, O_RDONLY | O_NONBLOCK);
    if (!meta_fd) {
        if (meta_fd.error().os_error == ENOENT) return root;
        return meta_fd.error();
    }
    std::string meta;
    if (const int err = read_fd(meta_fd->get(), std::size_t{16} << 20, meta); err != 0)
        return root.failure("reading", k_meta_file, err);
    int line_no = 0;
    for (auto line : split_lines(meta)) {
        ++line_no;
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        const auto bad = [&](std::string_view why) {
            return Error{"parsing snapshot metadata", fmt::format("{}:{}", meta_path, line_no), std::string(why),
                         ExitCode::usage};
        };
        std::vector<std::string_view> words;
        for (std::size_t pos = 0; pos < line.size();) {
            const auto end = std::min(line.find(' ', pos), line.size());
            if (end > pos) words.push_back(line.substr(pos, end - pos));
            pos = end + 1;
        }
        if (words.size() < 3 || words[1].empty() || words[1].front() != '/')
            return bad("expected `stat PATH key=value...`, `error PATH ERRNO`, `binary PATH key=value...` or "
                       "`truncated PATH size=N` or `omitted PATH REASON`");
        if (words[0] == "error") {
            const auto err = errno_from_name(words[2]);
            if (!err || words.size() != 3) return bad(fmt::format("unknown errno name '{}'", words[2]));
            root.m_error_overrides.emplace(normalise_path(words[1]), *err);
        } else if (words[0] == "stat") {
            FileStat st;
            for (std::size_t i = 2; i < words.size(); ++i) {
                const auto eq = words[i].find('=');
                if (eq == std::string_view::npos) return bad(fmt::format("expected key=value, got '{}'", words[i]));
                const auto key = words[i].substr(0, eq);
                const auto val = words[i].substr(eq + 1);
                if (key == "type") {
                    const auto t = type_from_name(val);
                    if (!t) return bad(fmt::format("unknown file type '{}'", val));
                    st.type = *t;
                    continue;
                }
                if (key != "mode" && key != "uid" && key != "gid") return bad(fmt::format("unknown key '{}'", key));
                std::uint32_t number = 0;
                const int base_radix = key == "mode" ? 8 : 10;
                const auto [p, e] = std::from_chars(val.data(), val.data() + val.size(), number, base_radix);
                if (e != std::errc{} || p != val.data() + val.size() || (key == "mode" && number > 07777))
                    return bad(fmt::format("bad number in '{}'", words[i]));
                if (key == "mode") st.mode = number;
                else if (key == "uid") st.uid = number;
                else st.gid = number;
            }
            root.m_stat_overrides.emplace(normalise_path(words[1]), st);
        } else if (words[0] == "omitted") {
            // A file whose content the snapshot left out, and why in words (docs/security.md,
            // "Snapshot content by value"): informative, nothing to apply.
        } else if (words[0] == "binary" || words[0] == "truncated") {
            // What the snapshot left out (docs/security.md): informative, nothing to apply.
            for (std::size_t i = 2; i < words.size(); ++i)
                if (words[i].find('=') == std::string_view::npos)
                    return bad(fmt::format("expected key=value, got '{}'", words[i]));
        } else {
            return bad(fmt::format("unknown record '{}'", words[0]));
        }
    }
    return root;
}

std::string Root::host_path(std::string_view path) const {
    if (is_live()) return std::string(path);
    std::string out = m_base.string();
    if (!path.empty() && path.front() != '/') out += '/';
    out += path;
    return out;
}

Result<UniqueFd> Root::open_with_openat2(std::string_view path, int flags, LinkPolicy links, bool& unsupported) const {
    open_how how{};
    const unsigned open_flags =
        static_cast<unsigned>(flags | O_CLOEXEC | (links == LinkPolicy::keep_last ? O_NOFOLLOW : 0));
    const unsigned resolve =
        RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (links == LinkPolicy::refuse ? RESOLVE_NO_SYMLINKS : 0U);
    how.flags = open_flags;
    how.resolve = resolve;
    std::string_view relative = path;
    while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
    const std::string rel = relative.empty() ? std::string(".") : std::string(relative);
    for (int attempt = 0;; ++attempt) {
        const long fd = sys_openat2(m_base_fd->get(), rel.c_str(), &how);
        if (fd >= 0) {
            UniqueFd out(static_cast<int>(fd));
            if (reads_content(flags)) {
                struct stat st {};
                if (::fstat(out.get(), &st) != 0) return failure("inspecting", path, errno);
                if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return failure("opening", path, EINVAL);
            }
            return out;
        }
        const int err = errno;
        if (err == EAGAIN && attempt < k_retries) continue;  // a rename raced the lookup
        if (err == ENOSYS || err == E2BIG) {
            unsupported = true;
            g_openat2_state = -1;
        }
        return failure("opening", path, err);
    }
}

WalkResult Root::walk(std::string_view path, int flags, LinkPolicy links, const LinkObserver* observer) const {
    WalkResult out;
    for (int attempt = 0; attempt <= k_retries; ++attempt) {
        std::vector<UniqueFd> dirs;  // directories walked into; the root itself is m_base_fd
        std::vector<std::string> names;
        const auto cur = [&] { return dirs.empty() ? m_base_fd->get() : dirs.back().get(); };
        const auto fail = [&](int err, std::string component, const std::deque<std::string>& todo) {
            out.error = err;
            out.resolved = absolute_path(names);
            out.rest.assign(1, std::move(component));
            out.rest.insert(out.rest.end(), todo.begin(), todo.end());
            return std::move(out);
        };
        std::deque<std::string> todo;
        for (auto& c : components(path)) todo.push_back(std::move(c));
        int followed = 0;
        bool again = false;
        while (!todo.empty()) {
            std::string comp = std::move(todo.front());
            todo.pop_front();
            if (comp == ".") continue;
            if (comp == "..") {
                if (!dirs.empty()) {
                    dirs.pop_back();
                    names.pop_back();
                }
                continue;
            }
            const bool last = todo.empty();
            UniqueFd fd(::openat(cur(), comp.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
            if (!fd) return fail(errno, std::move(comp), todo);
            struct stat st {};
            if (::fstat(fd.get(), &st) != 0) return fail(errno, std::move(comp), todo);
            if (S_ISLNK(st.st_mode) && !(last && links == LinkPolicy::keep_last)) {
                if (links == LinkPolicy::refuse || ++followed > k_max_links) return fail(ELOOP, std::move(comp), todo);
                std::array<char, 4096> buf{};
                const ssize_t n = ::readlinkat(fd.get(), "", buf.data(), buf.size());
                if (n < 0) return fail(errno, std::move(comp), todo);
                if (static_cast<std::size_t>(n) >= buf.size()) return fail(ENAMETOOLONG, std::move(comp), todo);
                const std::string target(buf.data(), static_cast<std::size_t>(n));
                if (observer)
                    (*observer)(absolute_path(names) == "/" ? "/" + comp : absolute_path(names) + "/" + comp, target);
                if (target.empty()) return fail(ENOENT, std::move(comp), todo);
                if (target.front() == '/') {
                    dirs.clear();
                    names.clear();
                }
                auto parts = components(target);
                todo.insert(todo.begin(), parts.begin(), parts.end());
                continue;
            }
            if (last) {
                names.push_back(comp);
                out.resolved = absolute_path(names);
                if (!reads_content(flags)) {
                    // O_PATH: the object itself (a link when keep_last stopped at one).
                    out.fd = std::move(fd);
                    return out;
                }
                if (S_ISLNK(st.st_mode)) return fail(ELOOP, std::move(comp), todo);  // as O_NOFOLLOW says
                if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return fail(EINVAL, std::move(comp), todo);
                UniqueFd real(::openat(cur(), comp.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
                if (!real && errno == ELOOP) {  // a link was swapped in after the check: resolve again
                    again = true;
                    break;
                }
                if (!real) return fail(errno, std::move(comp), todo);
                struct stat now {};
                if (::fstat(real.get(), &now) != 0) return fail(errno, std::move(comp), todo);
                // Another object under the same name since the check: resolve again, so that
                // what was checked is what is read.
                if (now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
                    again = true;
                    break;
                }
                out.fd = std::move(real);
                return out;
            }
            if (!S_ISDIR(st.st_mode)) return fail(ENOTDIR, std::move(comp), todo);
            dirs.push_back(std::move(fd));
            names.push_back(std::move(comp));
        }
        if (again) continue;
        // The path ended on a directory (the root itself, or after "..").
        out.resolved = absolute_path(names);
        out.fd = UniqueFd(::openat(cur(), ".", flags | O_CLOEXEC));
        if (!out.fd) out.error = errno;
        return out;
    }
    out.error = EAGAIN;  // the tree kept changing under the walk
    return out;
}

Result<UniqueFd> Root::open_fd(std::string_view path, int flags, LinkPolicy links) const {
    if (resolver() == Resolver::automatic) {
        bool unsupported = false;
        auto fd = open_with_openat2(path, flags, links, unsupported);
        if (!unsupported) return fd;
    }
    auto w = walk(path, flags, links);
    if (w.error != 0) return failure("opening", path, w.error);
    return std::move(w.fd);
}

Result<std::string> Root::canonical(std::string_view path) const {
    record(path);
    auto w = walk(path, O_PATH, LinkPolicy::follow);
    if (w.error == 0) return w.resolved;
    if (w.error != ENOENT && w.error != ENOTDIR) return failure("resolving", path, w.error);
    // Missing: the rest as written, normalised, below what exists.
    std::string rest;
    for (const auto& c : w.rest) rest += "/" + c;
    return normalise_path(w.resolved + rest);
}

void Root::record(std::string_view path) const {
    if (m_recording) m_recorded.emplace(path);
}

std::optional<int> Root::recorded_error(std::string_view path) const {
    const auto it = m_error_overrides.find(path);
    if (it == m_error_overrides.end()) return std::nullopt;
    return it->second;
}

Error Root::failure(std::string_view doing, std::string_view path, int err) const {
    return os_error(doing, host_path(path), err);
}

Result<std::string> Root::read_file(std::string_view path, std::size_t limit, bool* truncated) const {
    record(path);
    if (const auto err = recorded_error(path)) return failure("reading", path, *err);
    auto fd = open_fd(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!fd) return failure("reading", path, fd.error().os_error);
    std::string out;
    if (const int err = read_fd(fd->get(), limit, out, truncated); err != 0) return failure("reading", path, err);
    return out;
}

Result<UniqueFd> Root::open_read(std::string_view path) const {
    record(path);
    if (const auto err = recorded_error(path)) return failure("opening", path, *err);
    return open_fd(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
}

Result<std::vector<std::string>> Root::list_dir(std::string_view path) const {
    record(path);
    if (const auto err = recorded_error(path)) return failure("listing", path, *err);
    auto fd = open_fd(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
    if (!fd) return failure("listing", path, fd.error().os_error);
    DIR* dir = ::fdopendir(fd->get());
    if (!dir) return failure("listing", path, errno);
    fd->release();  // the DIR owns it now
    std::set<std::string> names;
    errno = 0;
    while (const dirent* ent = ::readdir(dir)) {
        const std::string_view name = ent->d_name;
        if (name != "." && name != "..") names.emplace(name);
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0) return failure("listing", path, err);
    // A snapshot keeps what could not be read only in its metadata: list those names too,
    // so the reader meets the same error it met when the snapshot was taken.
    const std::string dir_path = normalise_path(path);
    const auto add_children = [&](const auto& overrides) {
        for (const auto& [p, _] : overrides)
            if (dirname(p) == dir_path && p.size() > dir_path.size()) names.emplace(p.substr(p.rfind('/') + 1));
    };
    add_children(m_error_overrides);
    add_children(m_stat_overrides);
    return std::vector<std::string>(names.begin(), names.end());
}

Result<std::string> Root::read_link(std::string_view path) const {
    record(path);
    if (const auto err = recorded_error(path)) return failure("reading link", path, *err);
    auto fd = open_fd(path, O_PATH, LinkPolicy::keep_last);
    if (!fd) return failure("reading link", path, fd.error().os_error);
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return failure("reading link", path, errno);
    if (!S_ISLNK(st.st_mode)) return failure("reading link", path, EINVAL);
    std::array<char, 4096> buf{};
    const ssize_t n = ::readlinkat(fd->get(), "", buf.data(), buf.size() - 1);
    if (n < 0) return failure("reading link", path, errno);
    return std::string(buf.data(), static_cast<std::size_t>(n));
}

Result<FileStat> Root::stat(std::string_view path) const {
    record(path);
    if (const auto it = m_stat_overrides.find(path); it != m_stat_overrides.end()) return it->second;
    if (const auto err = recorded_error(path)) return failure("inspecting", path, *err);
    auto fd = open_fd(path, O_PATH);
    if (!fd) return failure("inspecting", path, fd.error().os_error);
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return failure("inspecting", path, errno);
    return FileStat{type_of(st.st_mode), static_cast<std::uint32_t>(st.st_mode & 07777), st.st_uid, st.st_gid};
}

bool Root::exists(std::string_view path) const {
    record(path);
    if (m_stat_overrides.contains(path) || recorded_error(path).has_value()) return true;
    return open_fd(path, O_PATH).ok();
}

bool Root::is_dir(std::string_view path) const {
    const auto st = stat(path);
    return st && st->type == FileType::directory;
}

Result<UniqueFd> Root::open_dir(std::string_view path, LinkPolicy links) const {
    return open_fd(path, O_RDONLY | O_DIRECTORY, links);
}

Result<UniqueFd> Root::make_dirs(std::string_view path, unsigned mode, LinkPolicy links) const {
    // Create the first missing directory where resolution stops (after links, inside the
    // root: a dangling link's target is created, never a path outside), then try again.
    for (int created = 0;; ++created) {
        auto existing = open_dir(path, links);
        if (existing || existing.error().os_error != ENOENT || created > 256) return existing;
        auto w = walk(path, O_PATH, links);
        if (w.error == 0) continue;  // appeared meanwhile
        if (w.error != ENOENT || w.rest.empty()) return failure("creating directory", path, w.error);
        auto parent = open_dir(w.resolved, LinkPolicy::refuse);
        if (!parent) return failure("creating directory", path, parent.error().os_error);
        if (::mkdirat(parent->get(), w.rest.front().c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST)
            return failure("creating directory", (w.resolved == "/" ? "" : w.resolved) + "/" + w.rest.front(), errno);
    }
}

}  // namespace rmcp
