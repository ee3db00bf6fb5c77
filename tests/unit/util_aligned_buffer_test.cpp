#include "util/aligned_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace rmcp {
namespace {

TEST(AlignedBuffer, StartsOnAPageBoundaryWhateverTheSize) {
    for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096},
                                   std::size_t{256} << 10, (std::size_t{256} << 10) + 16}) {
        AlignedBuffer buffer(size);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % AlignedBuffer::k_alignment, 0U) << size;
        EXPECT_EQ(buffer.size(), size);
        if (size > 0) {  // every byte asked for is writable (ASan checks the bounds)
            std::memset(buffer.data(), 0xab, size);
            EXPECT_EQ(static_cast<unsigned char>(buffer.data()[size - 1]), 0xab);
        }
    }
}

}  // namespace
}  // namespace rmcp
