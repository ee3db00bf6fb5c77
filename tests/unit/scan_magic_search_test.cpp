#include "scan/magic_search.hpp"

#include "scan/bundle.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rmcp::scan {
namespace {

Bytes view(const std::string& s) { return {reinterpret_cast<const unsigned char*>(s.data()), s.size()}; }

TEST(MagicSearch, FindsEveryMagicInOrder) {
    const std::string elf("\x7f" "ELF\x02\x01\x01", 7);
    // 3 bytes, CCOB at 3, ELF at 20, the bundle magic at 50.
    const std::string data = std::string(3, 'x') + std::string(k_compressed_magic) + std::string(13, 'x') + elf +
                             std::string(23, 'x') + std::string(k_bundle_magic) + std::string(26, 'x');
    std::vector<std::uint64_t> hits{999};  // appended to, not replaced
    find_magics(view(data), data.size(), hits);
    EXPECT_EQ(hits, (std::vector<std::uint64_t>{999, 3, 20, 50}));
}

TEST(MagicSearch, OnlyMatchesStartingBeforeTheLimitAndWhollyInside) {
    // CCOB at 10 and 40; a cut-off "CCO" at the end of the range is no match.
    const std::string data = std::string(10, '\0') + "CCOB" + std::string(26, '\0') + "CCOB" + std::string(20, '\0') + "CCO";
    std::vector<std::uint64_t> hits;
    find_magics(view(data), 40, hits);
    EXPECT_EQ(hits, (std::vector<std::uint64_t>{10}));
    hits.clear();
    find_magics(view(data), data.size(), hits);
    EXPECT_EQ(hits, (std::vector<std::uint64_t>{10, 40}));
}

TEST(MagicSearch, ElfMagicNeedsClassAndEndianness) {
    // A 32-bit or big-endian ELF is no AMDGPU code object: only ELF64LE is a candidate.
    const std::string elf32("\x7f" "ELF\x01\x01\x01", 7);
    const std::string elf64be("\x7f" "ELF\x02\x02\x01", 7);
    const std::string data = elf32 + elf64be + std::string(10, ' ');
    std::vector<std::uint64_t> hits;
    find_magics(view(data), data.size(), hits);
    EXPECT_TRUE(hits.empty());
}

}  // namespace
}  // namespace rmcp::scan
