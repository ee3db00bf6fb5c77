// A fixed-size byte buffer that starts on a page boundary, for the buffers that read(2)
// fills from pipes and files (the supervisor's relay, explain's log reader).
//
// The kernel copies into such a buffer with `rep movsb`, whose speed depends on where the
// destination starts. A std::vector or std::string of 256 KiB comes from mmap with malloc's
// 16-byte header in front: every copy then starts 16 bytes past a cache line, and on an AMD
// EPYC VM reading 512 MiB from a pipe into it took twice the system time of the same reads
// into a page-aligned buffer (docs/PERFORMANCE.md, "rmcp run").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace rmcp {

class AlignedBuffer {
public:
    static constexpr std::size_t k_alignment = 4096;

    explicit AlignedBuffer(std::size_t size)
        : m_size(size), m_data(static_cast<char*>(std::aligned_alloc(k_alignment, round_up(size))), &std::free) {
        if (!m_data) throw std::bad_alloc();
    }

    [[nodiscard]] char* data() { return m_data.get(); }
    [[nodiscard]] const char* data() const { return m_data.get(); }
    [[nodiscard]] std::size_t size() const { return m_size; }

private:
    // aligned_alloc wants a multiple of the alignment.
    static std::size_t round_up(std::size_t n) {
        return (std::max<std::size_t>(n, 1) + k_alignment - 1) / k_alignment * k_alignment;
    }

    std::size_t m_size;
    std::unique_ptr<char, decltype(&std::free)> m_data;
};

}  // namespace rmcp
