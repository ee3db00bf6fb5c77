// Bounds-checked views of untrusted bytes and a read-only file mapping (scan reads
// libraries that may be truncated, corrupted or hostile: every offset is checked here).
#pragma once

#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rmcp::scan {

using Bytes = std::span<const unsigned char>;

// [offset, offset+length) lies inside a buffer of `size` bytes, without overflow.
constexpr bool in_bounds(std::uint64_t size, std::uint64_t offset, std::uint64_t length) {
    return offset <= size && length <= size - offset;
}

// Sub-view, or nullopt when it does not fit.
inline std::optional<Bytes> sub(Bytes b, std::uint64_t offset, std::uint64_t length) {
    if (!in_bounds(b.size(), offset, length)) return std::nullopt;
    return b.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

// Little-endian reads (ELF64LE and offload bundles are little-endian by definition).
template <class T>
std::optional<T> read_le(Bytes b, std::uint64_t offset) {
    if (!in_bounds(b.size(), offset, sizeof(T))) return std::nullopt;
    T v{};
    std::memcpy(&v, b.data() + offset, sizeof(T));  // x86-64 and arm64 hosts are little-endian
    return v;
}

inline bool has_prefix(Bytes b, std::uint64_t offset, std::string_view magic) {
    return in_bounds(b.size(), offset, magic.size()) && std::memcmp(b.data() + offset, magic.data(), magic.size()) == 0;
}

inline std::string_view as_chars(Bytes b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// A file mapped read-only. Touching the mapping is what costs memory, so callers read
// headers and tables only, and release() ranges they had to sweep (embedded-object search)
// so the resident set does not grow with the file.
class MappedFile {
public:
    // A file on this machine by path (tests, benchmarks); rmcp itself maps what Root opened.
    static Result<MappedFile> open(const std::string& path);
    // Maps the regular file `fd` refers to (the descriptor may be closed afterwards);
    // `shown` names it in errors.
    static Result<MappedFile> map(int fd, std::string_view shown);
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    [[nodiscard]] Bytes bytes() const { return {m_data, m_size}; }
    [[nodiscard]] std::uint64_t size() const { return m_size; }
    // Drops the pages of [offset, offset+length) from this process (they stay in the page cache).
    void release(std::uint64_t offset, std::uint64_t length) const;
    // About to read [offset, offset+length) from end to end (a sweep): map it in one go.
    void prefetch(std::uint64_t offset, std::uint64_t length) const;

private:
    MappedFile() = default;
    const unsigned char* m_data = nullptr;
    std::size_t m_size = 0;
};

}  // namespace rmcp::scan
