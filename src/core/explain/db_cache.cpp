#include "explain/db_cache.hpp"

#include "util/atomic_file.hpp"
#include "util/unique_fd.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp::explain::db_cache {

namespace {

constexpr std::string_view k_magic = "RMCPHSDB";
constexpr std::uint32_t k_format = 1;
constexpr std::size_t k_header = 8 + 4 + 8 + 8 + 8;           // magic, format, inputs size, db size, checksum
constexpr std::uint64_t k_max_file = std::uint64_t{1} << 30;  // far above any real database

// FNV-1a, 64 bits (http://www.isthe.com/chongo/tech/comp/fnv/): a name and a corruption
// check, not a defence (the stored inputs are compared byte for byte).
std::uint64_t fnv1a(std::string_view bytes) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

void put_u32(std::string& out, std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_u64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
std::uint64_t get_u64(const std::string& in, std::size_t at) {
    std::uint64_t v = 0;
    std::memcpy(&v, in.data() + at, sizeof v);
    return v;
}

}  // namespace

std::string inputs_blob(const std::vector<const char*>& expressions, const std::vector<unsigned>& flags,
                        const std::vector<unsigned>& ids, unsigned mode) {
    std::string out = "rmcp hyperscan inputs 1\n";
    out += hs_version();
    out += '\n';
    put_u32(out, mode);
    put_u64(out, expressions.size());
    for (std::size_t i = 0; i < expressions.size(); ++i) {
        const std::string_view e = expressions[i];
        put_u32(out, flags[i]);
        put_u32(out, ids[i]);
        put_u64(out, e.size());
        out.append(e);
    }
    return out;
}

std::filesystem::path directory() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return std::filesystem::path(xdg) / "rmcp";
    if (const char* home = std::getenv("HOME"); home && *home == '/')
        return std::filesystem::path(home) / ".cache" / "rmcp";
    return {};
}

std::filesystem::path file_for(std::string_view inputs) {
    const auto dir = directory();
    if (dir.empty()) return {};
    return dir / fmt::format("signatures-{:016x}.hsdb", fnv1a(inputs));
}

hyperscan::Database load(std::string_view inputs) {
    const auto path = file_for(inputs);
    if (path.empty()) return nullptr;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return nullptr;
    struct stat st {};
    // Only the user's own file, which nobody else may have written.
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0 ||
        static_cast<std::uint64_t>(st.st_size) > k_max_file || static_cast<std::size_t>(st.st_size) < k_header)
        return nullptr;
    std::string data(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < data.size()) {
        const ssize_t n = ::read(fd.get(), data.data() + got, data.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return nullptr;
        got += static_cast<std::size_t>(n);
    }
    std::uint32_t format = 0;
    std::memcpy(&format, data.data() + 8, sizeof format);
    const auto inputs_size = get_u64(data, 12);
    const auto db_size = get_u64(data, 20);
    const auto checksum = get_u64(data, 28);
    if (data.compare(0, k_magic.size(), k_magic) != 0 || format != k_format || inputs_size != inputs.size() ||
        db_size > data.size() || k_header + inputs_size + db_size != data.size())
        return nullptr;
    if (std::string_view(data).substr(k_header, inputs_size) != inputs) return nullptr;
    const std::string_view db_bytes = std::string_view(data).substr(k_header + inputs_size);
    if (fnv1a(db_bytes) != checksum) return nullptr;
    hs_database_t* db = nullptr;
    if (hs_deserialize_database(db_bytes.data(), db_bytes.size(), &db) != HS_SUCCESS) return nullptr;
    return hyperscan::Database(db);
}

void store(std::string_view inputs, const hs_database_t* db) {
    const auto path = file_for(inputs);
    if (path.empty()) return;
    char* bytes = nullptr;
    std::size_t length = 0;
    if (hs_serialize_database(db, &bytes, &length) != HS_SUCCESS) return;
    const std::string_view db_bytes(bytes, length);
    std::string out(k_magic);
    put_u32(out, k_format);
    put_u64(out, inputs.size());
    put_u64(out, db_bytes.size());
    put_u64(out, fnv1a(db_bytes));
    out.append(inputs);
    out.append(db_bytes);
    std::free(bytes);  // hs_serialize_database allocates with the misc allocator (malloc by default)
    // The cache directory and its base ($XDG_CACHE_HOME, or ~/.cache) are created (0700, as
    // the XDG base-directory spec asks) only inside a directory that exists: a HOME or
    // XDG_CACHE_HOME that names nothing (HOME=/nonexistent for a system user) gets no cache
    // rather than a new directory tree at that path.
    const auto dir = path.parent_path();
    const auto base = dir.parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(base.parent_path(), ec)) return;
    for (const auto& d : {base, dir})
        if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) return;
    static_cast<void>(write_file_atomic(path.string(), out, 0600));
}

}  // namespace rmcp::explain::db_cache
