#include "scan/bytes.hpp"

#include "util/unique_fd.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace rmcp::scan {

Result<MappedFile> MappedFile::open(const std::string& path) {
    // O_NONBLOCK: a FIFO given by mistake must not hang the scan (map() refuses it).
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return os_error("opening", path, errno);
    return map(fd.get(), path);  // the mapping keeps the file alive once fd closes
}

Result<MappedFile> MappedFile::map(int fd, std::string_view shown) {
    const std::string path(shown);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return os_error("inspecting", path, errno);
    if (!S_ISREG(st.st_mode)) return Error{"opening", path, "not a regular file", ExitCode::usage, 0};
    MappedFile f;
    f.m_size = static_cast<std::size_t>(st.st_size);
    if (f.m_size > 0) {
        void* p = ::mmap(nullptr, f.m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) return os_error("mapping", path, errno);
        f.m_data = static_cast<const unsigned char*>(p);
        // Headers and tables are read here and there: no read-ahead and no fault-around,
        // which would otherwise map 64 KiB around every header touched (888 bundle
        // entries of librocsparse made a 52 MB resident set). Sweeps ask for pages
        // explicitly (prefetch).
        ::madvise(p, f.m_size, MADV_RANDOM);
    }
    return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        if (m_data) ::munmap(const_cast<unsigned char*>(m_data), m_size);
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
    }
    return *this;
}

MappedFile::~MappedFile() {
    if (m_data) ::munmap(const_cast<unsigned char*>(m_data), m_size);
}

void MappedFile::release(std::uint64_t offset, std::uint64_t length) const {
    if (!m_data || !in_bounds(m_size, offset, length)) return;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t begin = offset / page * page;
    const std::uint64_t end = offset + length;
    ::madvise(const_cast<unsigned char*>(m_data) + begin, static_cast<std::size_t>(end - begin), MADV_DONTNEED);
}

void MappedFile::prefetch(std::uint64_t offset, std::uint64_t length) const {
    if (!m_data || !in_bounds(m_size, offset, length)) return;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t begin = offset / page * page;
    void* at = const_cast<unsigned char*>(m_data) + begin;
    const auto bytes = static_cast<std::size_t>(offset + length - begin);
#ifdef MADV_POPULATE_READ
    // Linux 5.14+: fill the page tables for the range in one call instead of a fault per page.
    if (::madvise(at, bytes, MADV_POPULATE_READ) == 0) return;
#endif
    ::madvise(at, bytes, MADV_WILLNEED);
}

}  // namespace rmcp::scan
