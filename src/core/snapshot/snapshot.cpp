#include "snapshot/snapshot.hpp"

#include "detect/detect.hpp"
#include "detect/parsers.hpp"
#include "facts/facts_json.hpp"
#include "snapshot/libarchive.hpp"
#include "util/atomic_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp {

namespace {

namespace fs = std::filesystem;

// "/a/b/../c" → "/a/c"; never climbs above "/".
std::string normalise(std::string_view path) {
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos <= path.size()) {
        const auto end = std::min(path.find('/', pos), path.size());
        const auto part = path.substr(pos, end - pos);
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.emplace_back(part);
        }
        pos = end + 1;
    }
    std::string out;
    for (const auto& p : parts) out += "/" + p;
    return out.empty() ? "/" : out;
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// What goes into the archive, keyed by root-relative absolute path.
struct Plan {
    std::map<std::string, std::string> links;  // path → link target as stored
    std::set<std::string> directories;
    std::map<std::string, std::string> files;   // path → content
    std::map<std::string, std::uint32_t> modes;
    std::vector<std::string> meta;
};

class Planner {
public:
    Planner(const Root& root, Plan& plan) : m_root(root), m_plan(plan) {}

    // Walks `path` component by component so every symlink on the way is kept as a link;
    // returns the resolved path (within the root).
    std::string resolve(const std::string& path, int depth = 0) {
        if (depth > 32) return path;
        // /proc/self points at the capturing process: keep its files as plain files.
        if (path.starts_with("/proc/self/") || path == "/proc/self") return path;
        std::string current;
        std::size_t pos = 1;
        while (pos <= path.size()) {
            const auto end = std::min(path.find('/', pos), path.size());
            current += "/" + path.substr(pos, end - pos);
            pos = end + 1;
            struct stat st {};
            const auto hp = m_root.host_path(current);
            if (::lstat(hp.c_str(), &st) != 0) return path;
            if (S_ISLNK(st.st_mode)) {
                auto target = m_root.read_link(current);
                if (!target) return path;
                m_plan.links.emplace(current, *target);
                const auto base = target->starts_with('/') ? *target : parent_of(current) + "/" + *target;
                const auto rest = pos <= path.size() ? path.substr(pos - 1) : std::string();
                return resolve(normalise(base + rest), depth + 1);
            }
        }
        return path;
    }

    void add(const std::string& recorded) {
        if (recorded == Root::k_meta_file) return;
        const auto path = resolve(recorded);
        struct stat st {};
        const auto hp = m_root.host_path(path);
        // Errors and device nodes are what the metadata file is for. Ask the Root first: it
        // knows the errors and device nodes an unpacked snapshot or fixture carries in metadata.
        const auto s = m_root.stat(recorded);
        if (s && (s->type == FileType::char_device || s->type == FileType::block_device)) {
            m_plan.meta.push_back(format_meta_stat(recorded, *s));
            return;
        }
        if (!s && s.error().os_error != ENOENT && s.error().os_error != ENOTDIR) {
            m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(s.error().os_error)));
            keep_parent(path);
            return;
        }
        if (::lstat(hp.c_str(), &st) != 0) {
            if (errno != ENOENT && errno != ENOTDIR)
                m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(errno)));
            // A missing file is a fact too, but its directory must survive: an empty
            // /opt/rocm-X.Y.Z or a KFD node whose files all fail still shows up in a listing.
            keep_parent(path);
            return;
        }
        if (S_ISDIR(st.st_mode)) {
            if (auto listing = m_root.list_dir(path); !listing)
                m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(listing.error().os_error)));
            m_plan.directories.insert(path);
            return;
        }
        if (!S_ISREG(st.st_mode)) return;
        auto content = m_root.read_file(path, std::size_t{64} << 20);
        if (!content) {
            m_plan.meta.push_back(fmt::format("error {} {}", recorded, errno_name(content.error().os_error)));
            return;
        }
        if (path == "/proc/self/environ") *content = filtered_environ(*content);
        m_plan.files.emplace(path, std::move(*content));
        m_plan.modes.emplace(path, static_cast<std::uint32_t>(st.st_mode & 07777));
    }

private:
    // Adds the deepest existing directory above `path` (never "/" itself).
    void keep_parent(std::string path) {
        while (true) {
            path = parent_of(path);
            if (path == "/") return;
            struct stat st {};
            if (::lstat(m_root.host_path(path).c_str(), &st) == 0) {
                if (S_ISDIR(st.st_mode)) m_plan.directories.insert(path);
                return;
            }
        }
    }

    // A support bundle must not leak secrets: keep only the variables detect reports.
    static std::string filtered_environ(const std::string& environ) {
        std::string out;
        for (const auto& [k, v] : parse_environ(environ))
            if (is_relevant_env(k) || k == "HOME") out += k + "=" + v + '\0';
        return out;
    }

    const Root& m_root;
    Plan& m_plan;
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
        m_ok = m_la.write_header(m_archive, e) == ARCHIVE_OK;
        if (m_ok && !content.empty())
            m_ok = m_la.write_data(m_archive, content.data(), content.size()) ==
                   static_cast<la_ssize_t>(content.size());
        m_la.entry_free(e);
    }

    const LibArchive& m_la;
    archive* m_archive;
    bool m_ok = false;
};

}  // namespace

Result<SnapshotSummary> write_snapshot(const Root& root, const fs::path& output, const nlohmann::json& stamp) {
    root.start_recording();
    const Facts facts = detect(root);
    Plan plan;
    Planner planner(root, plan);
    for (const auto& path : root.recorded()) planner.add(path);

    const auto la = libarchive();
    if (!la) return la.error();
    std::string bytes;
    {
        ArchiveWriter w(**la, bytes);
        if (!w.ok()) return Error{"writing snapshot", output.string(), w.error(), ExitCode::environment};
        for (const auto& d : plan.directories) w.directory(d);
        for (const auto& [p, target] : plan.links) w.link(p, target);
        for (const auto& [p, content] : plan.files) w.file(p, content, plan.modes.at(p));
        std::string meta = "# rmcp snapshot metadata: what a plain file tree cannot hold\n";
        for (const auto& m : plan.meta) meta += m + "\n";
        w.file(std::string(Root::k_meta_file), meta, 0644);
        auto facts_doc = facts_to_json(facts);
        facts_doc.update(stamp);
        w.file("/facts.json", facts_doc.dump(2) + "\n", 0644);
        if (!w.close()) return Error{"writing snapshot", output.string(), w.error(), ExitCode::environment};
    }
    if (auto st = write_file_atomic(output.string(), bytes); !st) return st.error();
    return SnapshotSummary{plan.files.size(), plan.links.size(), plan.directories.size(), plan.meta.size()};
}

}  // namespace rmcp
