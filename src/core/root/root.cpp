#include "root/root.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

namespace rmcp {

namespace {

// errno values a snapshot may record; names are the portable spelling.
constexpr std::array<std::pair<std::string_view, int>, 8> k_errno_names{{
    {"EPERM", EPERM},
    {"EACCES", EACCES},
    {"ENOENT", ENOENT},
    {"EIO", EIO},
    {"ENODEV", ENODEV},
    {"ENXIO", ENXIO},
    {"EBUSY", EBUSY},
    {"EINVAL", EINVAL},
}};

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

}  // namespace

std::optional<int> errno_from_name(std::string_view name) {
    for (const auto& [n, v] : k_errno_names)
        if (n == name) return v;
    return std::nullopt;
}

std::string errno_name(int err) {
    for (const auto& [n, v] : k_errno_names)
        if (v == err) return std::string(n);
    return fmt::format("E{}", err);
}

std::string format_meta_stat(std::string_view path, const FileStat& st) {
    return fmt::format("stat {} type={} mode={:04o} uid={} gid={}", path, type_name(st.type), st.mode, st.uid,
                       st.gid);
}

Result<Root> Root::open(std::filesystem::path base) {
    std::error_code ec;
    if (!std::filesystem::is_directory(base, ec))
        return Error{"opening root", base.string(), ec ? ec.message() : "not a directory", ExitCode::usage};
    Root root(std::filesystem::weakly_canonical(base, ec));
    if (ec) root.m_base = base;

    // Metadata is read directly, never recorded: it describes the snapshot, not the host.
    const std::string meta_path = root.host_path(k_meta_file);
    if (root.is_live() || ::access(meta_path.c_str(), F_OK) != 0) return root;
    auto text = root.read_file(k_meta_file);
    root.m_recorded.clear();
    if (!text) return text.error();
    int line_no = 0;
    for (auto line : split_lines(*text)) {
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
            return bad("expected `stat PATH key=value...` or `error PATH ERRNO`");
        if (words[0] == "error") {
            const auto err = errno_from_name(words[2]);
            if (!err || words.size() != 3) return bad(fmt::format("unknown errno name '{}'", words[2]));
            root.m_error_overrides.emplace(std::string(words[1]), *err);
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
                if (key != "mode" && key != "uid" && key != "gid")
                    return bad(fmt::format("unknown key '{}'", key));
                std::uint32_t number = 0;
                const int base_radix = key == "mode" ? 8 : 10;
                const auto [p, e] = std::from_chars(val.data(), val.data() + val.size(), number, base_radix);
                if (e != std::errc{} || p != val.data() + val.size())
                    return bad(fmt::format("bad number in '{}'", words[i]));
                if (key == "mode") st.mode = number;
                else if (key == "uid") st.uid = number;
                else st.gid = number;
            }
            root.m_stat_overrides.emplace(std::string(words[1]), st);
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

Result<std::string> Root::resolve(std::string_view path, LastLink last) const {
    constexpr int k_max_links = 40;  // the kernel's limit (MAXSYMLINKS)
    const std::string base = is_live() ? std::string() : m_base.string();
    std::vector<std::string> done;
    std::vector<std::string> todo;  // pending components, next one last
    const auto push = [&](std::string_view p) {
        std::vector<std::string> parts;
        for (std::size_t pos = 0; pos <= p.size();) {
            const auto end = std::min(p.find('/', pos), p.size());
            if (end > pos) parts.emplace_back(p.substr(pos, end - pos));
            pos = end + 1;
        }
        todo.insert(todo.end(), parts.rbegin(), parts.rend());
    };
    const auto join = [](const std::vector<std::string>& parts) {
        std::string out;
        for (const auto& p : parts) out += "/" + p;
        return out.empty() ? std::string("/") : out;
    };
    push(path);
    int links = 0;
    while (!todo.empty()) {
        std::string component = std::move(todo.back());
        todo.pop_back();
        if (component == ".") continue;
        if (component == "..") {
            if (!done.empty()) done.pop_back();
            continue;
        }
        done.push_back(std::move(component));
        if (todo.empty() && last == LastLink::keep) break;
        const std::string in_root = join(done);
        const std::string hp = base + in_root;
        struct stat st {};
        if (::lstat(hp.c_str(), &st) != 0) {
            // Missing (or unreadable): the caller's own call reports it; keep the rest as written.
            done.insert(done.end(), todo.rbegin(), todo.rend());
            return join(done);
        }
        if (!S_ISLNK(st.st_mode)) continue;
        if (++links > k_max_links) return failure("resolving", path, ELOOP);
        std::array<char, 4096> buf{};
        const ssize_t n = ::readlink(hp.c_str(), buf.data(), buf.size() - 1);
        if (n < 0) return failure("resolving", path, errno);
        const std::string_view target(buf.data(), static_cast<std::size_t>(n));
        done.pop_back();
        if (target.starts_with('/')) done.clear();
        push(target);
    }
    return join(done);
}

Result<std::string> Root::resolved_host_path(std::string_view path, LastLink last) const {
    if (is_live()) return std::string(path);
    auto in_root = resolve(path, last);
    if (!in_root) return in_root.error();
    return host_path(*in_root);
}

Result<std::string> Root::canonical(std::string_view path) const {
    record(path);
    return resolve(path, LastLink::follow);
}

void Root::record(std::string_view path) const {
    if (m_recording) m_recorded.emplace(path);
}

std::optional<int> Root::injected_error(std::string_view path) const {
    const auto it = m_error_overrides.find(path);
    if (it == m_error_overrides.end()) return std::nullopt;
    return it->second;
}

Error Root::failure(std::string_view doing, std::string_view path, int err) const {
    return Error{std::string(doing), host_path(path), std::strerror(err), ExitCode::environment, err};
}

Result<std::string> Root::read_file(std::string_view path, std::size_t limit) const {
    record(path);
    if (const auto err = injected_error(path)) return failure("reading", path, *err);
    const auto resolved = resolved_host_path(path, LastLink::follow);
    if (!resolved) return resolved.error();
    const std::string& hp = *resolved;
    const int fd = ::open(hp.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return failure("reading", path, errno);
    std::string out;
    std::array<char, 8192> buf{};
    while (out.size() < limit) {
        const ssize_t n = ::read(fd, buf.data(), std::min(buf.size(), limit - out.size()));
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return failure("reading", path, err);
        }
        if (n == 0) break;
        out.append(buf.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

Result<std::vector<std::string>> Root::list_dir(std::string_view path) const {
    record(path);
    if (const auto err = injected_error(path)) return failure("listing", path, *err);
    const auto resolved = resolved_host_path(path, LastLink::follow);
    if (!resolved) return resolved.error();
    const std::string& hp = *resolved;
    DIR* dir = ::opendir(hp.c_str());
    if (!dir) return failure("listing", path, errno);
    std::vector<std::string> names;
    while (const dirent* ent = ::readdir(dir)) {
        const std::string_view name = ent->d_name;
        if (name == "." || name == "..") continue;
        names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

Result<std::string> Root::read_link(std::string_view path) const {
    record(path);
    if (const auto err = injected_error(path)) return failure("reading link", path, *err);
    const auto resolved = resolved_host_path(path, LastLink::keep);
    if (!resolved) return resolved.error();
    const std::string& hp = *resolved;
    std::array<char, 4096> buf{};
    const ssize_t n = ::readlink(hp.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) return failure("reading link", path, errno);
    return std::string(buf.data(), static_cast<std::size_t>(n));
}

Result<FileStat> Root::stat(std::string_view path) const {
    record(path);
    if (const auto it = m_stat_overrides.find(path); it != m_stat_overrides.end()) return it->second;
    if (const auto err = injected_error(path)) return failure("inspecting", path, *err);
    struct stat st {};
    const auto resolved = resolved_host_path(path, LastLink::follow);
    if (!resolved) return resolved.error();
    if (::stat(resolved->c_str(), &st) != 0) return failure("inspecting", path, errno);
    return FileStat{type_of(st.st_mode), static_cast<std::uint32_t>(st.st_mode & 07777), st.st_uid, st.st_gid};
}

bool Root::exists(std::string_view path) const {
    record(path);
    if (m_stat_overrides.contains(path) || injected_error(path).has_value()) return true;
    const auto resolved = resolved_host_path(path, LastLink::follow);
    return resolved && ::access(resolved->c_str(), F_OK) == 0;
}

bool Root::is_dir(std::string_view path) const {
    const auto st = stat(path);
    return st && st->type == FileType::directory;
}

}  // namespace rmcp
