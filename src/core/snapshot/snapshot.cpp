#include "snapshot/snapshot.hpp"

#include "detect/detect.hpp"
#include "detect/parsers.hpp"
#include "facts/facts_json.hpp"
#include "snapshot/libarchive.hpp"
#include "util/atomic_file.hpp"
#include "util/standard_output.hpp"

#include <fmt/format.h>

#include "util/strings.hpp"
#include "util/unique_fd.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp {

namespace {

namespace fs = std::filesystem;

// "libamdhip64.so.5.2.21153" → "5.2.21153": what a library's file name says of its version.
std::string version_from_name(const std::string& name) {
    const auto so = name.find(".so.");
    return so == std::string::npos ? std::string() : name.substr(so + 4);
}

// Which reduction a file gets, by where detect asked for it or where it really is.
enum class Reduction { none, environ, passwd, group, dpkg_status };

Reduction reduction_for(const std::string& path) {
    if (path == "/proc/self/environ") return Reduction::environ;
    if (path == "/etc/passwd") return Reduction::passwd;
    if (path == "/etc/group") return Reduction::group;
    if (path == "/var/lib/dpkg/status") return Reduction::dpkg_status;
    return Reduction::none;
}

// What goes into the archive, keyed by root-relative absolute path.
struct Plan {
    std::map<std::string, std::string> links;  // path → link target as stored
    std::set<std::string> directories;
    std::map<std::string, std::string> files;  // path → content
    std::map<std::string, std::uint32_t> modes;
    std::set<std::string> binaries;
    std::vector<std::string> meta;
    std::map<std::string, std::string> omitted;  // path as detect asked → why its content is not in
};

class Planner {
public:
    Planner(const Root& root, const Facts& facts, Plan& plan) : m_root(root), m_facts(facts), m_plan(plan) {}

    // Device-node groups first: the /etc/group reduction keeps exactly those.
    void note_devices(const std::set<std::string>& recorded) {
        for (const auto& p : recorded)
            if (p.starts_with("/dev/"))
                if (const auto s = m_root.stat(p);
                    s && (s->type == FileType::char_device || s->type == FileType::block_device))
                    m_device_gids.push_back(s->gid);
    }

    void add(const std::string& recorded) {
        if (recorded == Root::k_meta_file) return;
        // Errors and device nodes are what the metadata file is for. Ask the Root first: it
        // knows the errors and device nodes an unpacked snapshot or fixture carries in metadata.
        if (const auto err = m_root.recorded_error(recorded)) {
            m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(*err)));
            keep_directory_of(recorded);
            return;
        }
        const auto s = m_root.stat(recorded);
        if (s && (s->type == FileType::char_device || s->type == FileType::block_device)) {
            m_plan.meta.push_back(format_meta_stat(recorded, *s));
            return;
        }
        // /proc/self points at the capturing process: keep its files as plain files there.
        const bool proc_self = recorded.starts_with("/proc/self/");
        // One walk resolves the path, reports the links it crosses (kept as links) and opens
        // what it found: what is archived is what was resolved, inside the root.
        std::map<std::string, std::string> crossed;
        const LinkObserver observer = [&](const std::string& link, const std::string& target) {
            crossed.emplace(link, target);
        };
        auto w = m_root.walk(recorded, O_RDONLY | O_NONBLOCK | O_NOCTTY, LinkPolicy::follow, &observer);
        if (!proc_self) m_plan.links.insert(crossed.begin(), crossed.end());
        if (w.error != 0) {
            // A missing file is a fact too, but its directory must survive: an empty
            // /opt/rocm-X.Y.Z or a KFD node whose files all fail still shows up in a listing.
            if (w.error != ENOENT && w.error != ENOTDIR)
                m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(w.error)));
            // The resolver opens only regular files and directories: say what else was there.
            if (w.error == EINVAL) omit(recorded, "not a regular file (" + special_kind(recorded) + ")");
            if (!proc_self) keep_directory(w.resolved);
            return;
        }
        const std::string path = proc_self ? recorded : w.resolved;
        struct stat st {};
        if (::fstat(w.fd.get(), &st) != 0) {
            m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(errno)));
            return;
        }
        if (S_ISDIR(st.st_mode)) {
            if (const int err = listing_error(w.fd.get()); err != 0)
                m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(err)));
            m_plan.directories.insert(path);
            return;
        }
        if (!S_ISREG(st.st_mode)) {  // the resolver's rule; checked here too, on what was opened
            omit(recorded, "not a regular file");
            return;
        }
        // By value, not by path (D5): a link that leaves its directory does not bring another
        // file's bytes in (/proc/self's links are the kernel's, and its files plain files).
        if (!proc_self)
            for (const auto& [link, target] : crossed)
                if (!snapshot_link_allowed(link, link_destination(link, target))) {
                    omit(recorded, fmt::format("reached through the link {} -> {}, which leaves {}", link, target,
                                               dirname(link)));
                    return;
                }
        auto reduction = reduction_for(recorded);
        if (reduction == Reduction::none) reduction = reduction_for(path);
        // Detect named the file: its kind is what detect expects there.
        const SnapshotKind kind = reduction == Reduction::none ? snapshot_kind(recorded) : SnapshotKind::generic;
        // The dpkg status is read whole (it is reduced to a few paragraphs); the rest is cut
        // at the kind's cap, and the cut recorded (a kind with a schema is left out instead).
        const std::size_t cap = reduction == Reduction::dpkg_status ? std::size_t{64} << 20 : snapshot_kind_cap(kind);
        std::string content;
        bool truncated = false;
        if (const int err = read_fd(w.fd.get(), cap, content, &truncated); err != 0) {
            m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(err)));
            return;
        }
        if (kind != SnapshotKind::generic)
            if (auto why = snapshot_content_problem(kind, content, truncated); !why.empty()) {
                omit(recorded, std::move(why));
                return;
            }
        switch (reduction) {
        case Reduction::environ: content = filtered_environ(content); break;
        case Reduction::passwd:
            content = reduce_passwd(content,
                                    m_facts.user.uid ? std::optional<std::uint64_t>(*m_facts.user.uid) : std::nullopt);
            break;
        case Reduction::group: content = reduce_group(content, m_device_gids, m_facts.user.name.value_or("")); break;
        case Reduction::dpkg_status: content = reduce_dpkg_status(content); break;
        case Reduction::none:
            if (looks_binary(content)) {
                // Detect only asks whether a library exists: its size and version say enough.
                const auto version = version_from_name(std::string(basename(path)));
                m_plan.meta.push_back(
                    fmt::format("binary {} size={}{}", path, st.st_size, version.empty() ? "" : " version=" + version));
                m_plan.binaries.insert(path);
                content.clear();
                truncated = false;
            }
            break;
        }
        if (truncated)
            m_plan.meta.push_back(st.st_size > 0 ? fmt::format("truncated {} size={}", path, st.st_size)
                                                 : fmt::format("truncated {} size=>{}", path, cap));
        m_plan.files.insert_or_assign(path, std::move(content));
        m_plan.modes.insert_or_assign(path, static_cast<std::uint32_t>(st.st_mode & 07777));
    }

private:
    void omit(const std::string& recorded, std::string reason) {
        m_plan.meta.push_back(fmt::format("omitted {} {}", recorded, reason));
        m_plan.omitted.insert_or_assign(recorded, std::move(reason));
    }

    // What a path that is neither a regular file nor a directory is ("FIFO", "socket", ...).
    std::string special_kind(const std::string& recorded) const {
        const auto w = m_root.walk(recorded, O_PATH, LinkPolicy::follow);
        struct stat st {};
        if (w.error != 0 || ::fstat(w.fd.get(), &st) != 0) return "unknown type";
        if (S_ISFIFO(st.st_mode)) return "FIFO";
        if (S_ISSOCK(st.st_mode)) return "socket";
        if (S_ISCHR(st.st_mode)) return "character device";
        if (S_ISBLK(st.st_mode)) return "block device";
        return "special file";
    }

    // A link's target as a path inside the root (the link's own path has its links resolved).
    static std::string link_destination(const std::string& link, const std::string& target) {
        if (!target.empty() && target.front() == '/') return normalise_path(target);
        return normalise_path(std::string(dirname(link)) + "/" + target);
    }

    // Adds `dir` (a resolved directory) unless it is the root itself.
    void keep_directory(const std::string& dir) {
        if (dir != "/" && !dir.empty()) m_plan.directories.insert(dir);
    }

    // Keeps the directory holding `path` as it really is (through the links on the way,
    // which are kept as links), or the deepest one that exists.
    void keep_directory_of(const std::string& path) {
        if (path.starts_with("/proc/self/")) return;
        const LinkObserver observer = [&](const std::string& link, const std::string& target) {
            m_plan.links.emplace(link, target);
        };
        const auto w = m_root.walk(dirname(normalise_path(path)), O_PATH, LinkPolicy::follow, &observer);
        keep_directory(w.resolved);
    }

    // Whether the directory can be listed (EACCES on a directory detect lists is a fact).
    static int listing_error(int fd) {
        UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
        if (!copy) return errno;
        DIR* dir = ::fdopendir(copy.get());
        if (!dir) return errno;
        copy.release();  // the DIR owns it now
        errno = 0;
        while (::readdir(dir) != nullptr) {}
        const int err = errno;
        ::closedir(dir);
        return err;
    }

    // A support bundle must not leak secrets: keep only the variables detect reports.
    static std::string filtered_environ(const std::string& environ) {
        std::string out;
        for (const auto& [k, v] : parse_environ(environ))
            if (is_relevant_env(k) || k == "HOME") out += k + "=" + v + '\0';
        return out;
    }

    const Root& m_root;
    const Facts& m_facts;
    Plan& m_plan;
    std::vector<std::uint64_t> m_device_gids;
};

class ArchiveWriter {
public:
    // The archive is built in memory (snapshots are small) and written atomically.
    ArchiveWriter(const LibArchive& la, std::string& out) : m_la(la), m_archive(la.write_new()) {
        m_la.write_add_filter_gzip(m_archive);
        m_la.write_set_format_pax_restricted(m_archive);
        m_ok = m_la.write_open(m_archive, &out, nullptr, &append, nullptr) == ARCHIVE_OK;
    }
    ~ArchiveWriter() { m_la.write_free(m_archive); }
    ArchiveWriter(const ArchiveWriter&) = delete;
    ArchiveWriter& operator=(const ArchiveWriter&) = delete;

    [[nodiscard]] bool ok() const { return m_ok; }
    [[nodiscard]] std::string error() const {
        const char* e = m_la.error_string(m_archive);
        return e ? e : "unknown libarchive error";
    }
    void directory(const std::string& path) { entry(path, AE_IFDIR, 0755, {}, {}); }
    void link(const std::string& path, const std::string& target) { entry(path, AE_IFLNK, 0777, {}, target); }
    void file(const std::string& path, std::string_view content, std::uint32_t mode) {
        entry(path, AE_IFREG, mode, content, {});
    }
    bool close() { return m_ok && m_la.write_close(m_archive) == ARCHIVE_OK; }

private:
    static la_ssize_t append(archive*, void* out, const void* data, size_t size) {
        static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
        return static_cast<la_ssize_t>(size);
    }
    void entry(const std::string& path, unsigned type, std::uint32_t mode, std::string_view content,
               const std::string& link_target) {
        if (!m_ok) return;
        archive_entry* e = m_la.entry_new();
        const auto name = path.substr(1);  // archive paths are relative
        m_la.entry_set_pathname(e, name.c_str());
        m_la.entry_set_filetype(e, type);
        m_la.entry_set_perm(e, mode);
        m_la.entry_set_size(e, static_cast<la_int64_t>(content.size()));
        if (!link_target.empty()) m_la.entry_set_symlink(e, link_target.c_str());
        // ARCHIVE_WARN: a name that is not text in the current locale (rmcp runs in "C", so any
        // byte >= 0x80) cannot be translated for pax's UTF-8 header; libarchive then stores
        // the bytes as they are (hdrcharset=BINARY), which is what unpacking must give back.
        const int header = m_la.write_header(m_archive, e);
        m_ok = header == ARCHIVE_OK || header == ARCHIVE_WARN;
        if (m_ok && !content.empty())
            m_ok =
                m_la.write_data(m_archive, content.data(), content.size()) == static_cast<la_ssize_t>(content.size());
        m_la.entry_free(e);
    }

    const LibArchive& m_la;
    archive* m_archive;
    bool m_ok = false;
};

std::string meta_text(const Plan& plan) {
    std::string meta = "# rmcp snapshot metadata: what a plain file tree cannot hold\n";
    for (const auto& m : plan.meta) meta += m + "\n";
    return meta;
}

// Detect, recorded, then the plan of what goes in.
std::pair<Plan, Facts> make_plan(const Root& root) {
    root.start_recording();
    Facts facts = detect(root);
    root.stop_recording();
    const std::set<std::string> recorded = root.recorded();  // a copy: planning reads through the Root too
    Plan plan;
    Planner planner(root, facts, plan);
    planner.note_devices(recorded);
    for (const auto& path : recorded) planner.add(path);
    return {std::move(plan), std::move(facts)};
}

SnapshotSummary summarise(const Plan& plan, const std::string& meta, const std::string& facts_json) {
    SnapshotSummary s;
    s.files = plan.files.size();
    s.links = plan.links.size();
    s.directories = plan.directories.size();
    s.meta_records = plan.meta.size();
    for (const auto& [path, reason] : plan.omitted) s.omitted.push_back({path, reason});
    for (const auto& d : plan.directories) s.entries.push_back({d, "dir", 0});
    for (const auto& [p, target] : plan.links) s.entries.push_back({p, "link", target.size()});
    for (const auto& [p, content] : plan.files)
        s.entries.push_back({p, plan.binaries.contains(p) ? "binary" : "file", content.size()});
    s.entries.push_back({std::string(Root::k_meta_file), "meta", meta.size()});
    s.entries.push_back({"/facts.json", "meta", facts_json.size()});
    std::sort(s.entries.begin(), s.entries.end(),
              [](const SnapshotEntry& a, const SnapshotEntry& b) { return a.path < b.path; });
    return s;
}

}  // namespace

std::string reduce_passwd(std::string_view passwd, std::optional<std::uint64_t> uid) {
    std::string out;
    if (!uid) return out;
    for (auto line : split_lines(passwd)) {
        // name:password:uid:gid:gecos:home:shell (passwd(5))
        const auto first = line.find(':');
        const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
        const auto third = second == std::string_view::npos ? second : line.find(':', second + 1);
        if (third == std::string_view::npos) continue;
        if (parse_u64(line.substr(second + 1, third - second - 1)) == uid) {
            out += line;
            out += '\n';
        }
    }
    return out;
}

std::string reduce_group(std::string_view group, const std::vector<std::uint64_t>& gids, std::string_view user) {
    std::string out;
    for (const auto& g : parse_group_file(group)) {
        if (std::find(gids.begin(), gids.end(), g.gid) == gids.end()) continue;
        const bool member = !user.empty() && std::find(g.members.begin(), g.members.end(), user) != g.members.end();
        // Other people's names are not this bundle's business (group(5): name:password:gid:members).
        out += fmt::format("{}:x:{}:{}\n", g.name, g.gid, member ? std::string(user) : std::string());
    }
    return out;
}

std::string reduce_dpkg_status(std::string_view status) {
    // Package names of ROCm, HIP and PyTorch as Debian and Ubuntu ship them (libamdhip64-5,
    // hipcc, librocrand1, rocminfo, libhsa-runtime64-1, libmiopen*, python3-torch, libtorch*,
    // librccl1, ...), with "lib" and "python3-" taken off first.
    static constexpr std::string_view k_prefixes[] = {"amd",  "hip",   "hsa",   "roc",      "miopen",
                                                      "rccl", "torch", "comgr", "migraphx", "tensile"};
    std::string out;
    std::size_t pos = 0;
    while (pos < status.size()) {
        auto end = status.find("\n\n", pos);
        if (end == std::string_view::npos) end = status.size();
        auto paragraph = status.substr(pos, end - pos);
        pos = end + 2;
        while (!paragraph.empty() && paragraph.back() == '\n') paragraph.remove_suffix(1);
        std::string_view name;
        for (auto line : split_lines(paragraph))
            if (line.starts_with("Package:")) name = trim(line.substr(8));
        std::string n = to_lower(name);
        if (n.starts_with("lib")) n.erase(0, 3);
        if (n.starts_with("python3-")) n.erase(0, 8);
        if (name.empty() || std::none_of(std::begin(k_prefixes), std::end(k_prefixes),
                                         [&](std::string_view p) { return n.starts_with(p); }))
            continue;
        if (!out.empty()) out += '\n';
        out += paragraph;
        out += '\n';
    }
    return out;
}

SnapshotKind snapshot_kind(std::string_view path) {
    if (path.ends_with("/torch/version.py")) return SnapshotKind::torch_version;
    if (path == "/etc/os-release" || path == "/usr/lib/os-release") return SnapshotKind::os_release;
    if (path.find("/.info/version") != std::string_view::npos) return SnapshotKind::version_text;
    if (path.ends_with(".h")) return SnapshotKind::c_header;
    if (path.starts_with("/sys/")) return SnapshotKind::sysfs_value;
    return SnapshotKind::generic;
}

std::size_t snapshot_kind_cap(SnapshotKind kind) {
    switch (kind) {
    case SnapshotKind::generic: return k_snapshot_file_cap;
    case SnapshotKind::torch_version:
    case SnapshotKind::os_release:
    case SnapshotKind::sysfs_value: return std::size_t{64} << 10;
    case SnapshotKind::version_text: return std::size_t{4} << 10;
    case SnapshotKind::c_header: return std::size_t{1} << 20;
    }
    return k_snapshot_file_cap;
}

namespace {

std::string_view kind_words(SnapshotKind kind) {
    switch (kind) {
    case SnapshotKind::generic: return "a file";
    case SnapshotKind::torch_version: return "a torch version file";
    case SnapshotKind::os_release: return "an os-release file";
    case SnapshotKind::version_text: return "a ROCm version file";
    case SnapshotKind::c_header: return "a C header";
    case SnapshotKind::sysfs_value: return "a sysfs value";
    }
    return "a file";
}

bool os_release_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

}  // namespace

std::string snapshot_content_problem(SnapshotKind kind, std::string_view content, bool truncated) {
    if (kind == SnapshotKind::generic) return {};
    const auto what = kind_words(kind);
    if (truncated) return fmt::format("larger than the {} KiB cap for {}", snapshot_kind_cap(kind) >> 10, what);
    if (looks_binary(content)) return fmt::format("binary content where {} is expected", what);
    std::size_t line_no = 0;
    switch (kind) {
    case SnapshotKind::torch_version: {
        const auto vars = parse_python_assignments(content);
        const auto it = vars.find("__version__");
        if (it == vars.end() || !it->second || it->second->empty())
            return "does not parse as a torch version file (no __version__ = '...' assignment)";
        return {};
    }
    case SnapshotKind::os_release:
        // os-release(5): "newline-separated list of environment-like shell-compatible variable
        // assignments"; blank lines and lines starting with '#' are allowed.
        for (auto line : split_lines(content)) {
            ++line_no;
            line = trim(line);
            if (line.empty() || line.front() == '#') continue;
            const auto eq = line.find('=');
            if (eq == std::string_view::npos || !os_release_name(line.substr(0, eq)))
                return fmt::format("line {} is not KEY=value, as an os-release file has (os-release(5))", line_no);
        }
        return {};
    case SnapshotKind::version_text: {
        const auto text = trim(content);
        const bool version_like =
            !text.empty() && text.size() <= 256 && std::all_of(text.begin(), text.end(), [](char c) {
                return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                       c == '-' || c == '+' || c == '_' || c == '~';
            });
        if (!version_like) return "not one version line, as a ROCm .info/version file has";
        return {};
    }
    case SnapshotKind::c_header:
        if (parse_c_defines(content).empty()) return "no #define line, as the version headers detect reads have";
        return {};
    case SnapshotKind::sysfs_value:
    case SnapshotKind::generic: return {};
    }
    return {};
}

bool snapshot_link_allowed(std::string_view link, std::string_view destination) {
    const auto inside = [](std::string_view path, std::string_view dir) {
        return dir == "/" || path == dir ||
               (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
    };
    if (inside(destination, dirname(link))) return true;
    // The trees the package manager and the kernel own: their links (sysfs class links,
    // /etc/os-release -> ../usr/lib/os-release, /opt/rocm -> /etc/alternatives/rocm) are the
    // system's layout. The kind checks still apply to what is read through them.
    static constexpr std::string_view k_system[] = {"/sys",   "/proc",  "/dev",    "/etc", "/usr",  "/lib",
                                                    "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt"};
    const auto in_system = [&](std::string_view p) {
        return std::any_of(std::begin(k_system), std::end(k_system), [&](std::string_view t) { return inside(p, t); });
    };
    return in_system(link) && in_system(destination);
}

bool looks_binary(std::string_view bytes) {
    if (bytes.starts_with("\x7f"
                          "ELF"))
        return true;
    return bytes.substr(0, 4096).find('\0') != std::string_view::npos;
}

Result<SnapshotSummary> list_snapshot(const Root& root) {
    auto [plan, facts] = make_plan(root);
    return summarise(plan, meta_text(plan), json_text(facts_to_json(facts), 2) + "\n");
}

Result<SnapshotSummary> write_snapshot(const Root& root, const fs::path& output, const nlohmann::json& stamp) {
    // "-" is standard output (`rmcp snapshot -o - | ssh host ...`), through the one stdout
    // writer; any other path is an output file, refused before the work when it is not a
    // regular file or missing (util/atomic_file.hpp).
    const bool to_stdout = output == "-";
    if (!to_stdout)
        if (auto s = check_output_file(output.string()); !s) return s.error();
    auto [plan, facts] = make_plan(root);
    const auto la = libarchive();
    if (!la) return la.error();
    const std::string meta = meta_text(plan);
    auto facts_doc = facts_to_json(facts);
    facts_doc.update(stamp);
    const std::string facts_json = json_text(facts_doc, 2) + "\n";
    std::string bytes;
    {
        ArchiveWriter w(**la, bytes);
        if (!w.ok()) return Error{"writing snapshot", output.string(), w.error(), ExitCode::environment};
        for (const auto& d : plan.directories) w.directory(d);
        for (const auto& [p, target] : plan.links) w.link(p, target);
        for (const auto& [p, content] : plan.files) w.file(p, content, plan.modes.at(p));
        w.file(std::string(Root::k_meta_file), meta, 0644);
        w.file("/facts.json", facts_json, 0644);
        if (!w.close()) return Error{"writing snapshot", output.string(), w.error(), ExitCode::environment};
    }
    if (to_stdout) standard_output().write(bytes);
    else if (auto st = write_file_atomic(output.string(), bytes); !st) return st.error();
    auto summary = summarise(plan, meta, facts_json);
    summary.archive_bytes = bytes.size();
    return summary;
}

}  // namespace rmcp
