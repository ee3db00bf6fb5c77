#include "scan/magic_search.hpp"

#include "scan/bundle.hpp"
#include "util/hyperscan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

namespace rmcp::scan {
namespace {

Bytes view(const std::string& s) { return {reinterpret_cast<const unsigned char*>(s.data()), s.size()}; }

TEST(MagicSearch, FindsEveryMagicInOrder) {
    const std::string elf("\x7f"
                          "ELF\x02\x01\x01",
                          7);
    // 3 bytes, CCOB at 3, ELF at 20, the bundle magic at 50.
    const std::string data = std::string(3, 'x') + std::string(k_compressed_magic) + std::string(13, 'x') + elf +
                             std::string(23, 'x') + std::string(k_bundle_magic) + std::string(26, 'x');
    std::vector<std::uint64_t> hits{999};  // appended to, not replaced
    find_magics(view(data), data.size(), hits);
    EXPECT_EQ(hits, (std::vector<std::uint64_t>{999, 3, 20, 50}));
}

TEST(MagicSearch, OnlyMatchesStartingBeforeTheLimitAndWhollyInside) {
    // CCOB at 10 and 40; a cut-off "CCO" at the end of the range is no match.
    const std::string data =
        std::string(10, '\0') + "CCOB" + std::string(26, '\0') + "CCOB" + std::string(20, '\0') + "CCO";
    std::vector<std::uint64_t> hits;
    find_magics(view(data), 40, hits);
    EXPECT_EQ(hits, (std::vector<std::uint64_t>{10}));
    hits.clear();
    find_magics(view(data), data.size(), hits);
    EXPECT_EQ(hits, (std::vector<std::uint64_t>{10, 40}));
}

TEST(MagicSearch, ElfMagicNeedsClassAndEndianness) {
    // A 32-bit or big-endian ELF is no AMDGPU code object: only ELF64LE is a candidate.
    const std::string elf32("\x7f"
                            "ELF\x01\x01\x01",
                            7);
    const std::string elf64be("\x7f"
                              "ELF\x02\x02\x01",
                              7);
    const std::string data = elf32 + elf64be + std::string(10, ' ');
    std::vector<std::uint64_t> hits;
    find_magics(view(data), data.size(), hits);
    EXPECT_TRUE(hits.empty());
}

// Magics on both sides of the cut where Hyperscan stops reading in place
// (util/hyperscan.hpp): each is reported once, at its start.
TEST(MagicSearch, MagicsAroundTheInPlaceCutAreFoundOnce) {
    const std::size_t n = 300;
    const std::size_t cut = n - hyperscan::k_overread;
    struct Case {
        std::size_t at;
        std::string_view magic;
    };
    for (const auto& [at, magic] : {Case{cut - k_bundle_magic.size(), k_bundle_magic},        // ends at the cut
                                    Case{cut - k_bundle_magic.size() + 1, k_bundle_magic},    // one byte over
                                    Case{cut - 2, k_compressed_magic},                        // straddles it
                                    Case{cut, k_compressed_magic},                            // starts at it
                                    Case{n - k_compressed_magic.size(), k_compressed_magic},  // ends at the end
                                    Case{cut - 100, k_compressed_magic}}) {                   // well before
        std::string data(n, '\0');
        data.replace(at, magic.size(), magic);
        std::vector<std::uint64_t> hits;
        find_magics(view(data), n, hits);
        EXPECT_EQ(hits, (std::vector<std::uint64_t>{at})) << magic << " at " << at;
    }
}

// Regression (fuzz_scan crash on the CI machine, Hyperscan's AVX512VBMI Teddy): a range that
// ends where readable memory ends, followed by a page that faults on any access.
TEST(MagicSearch, RangeEndingAtAGuardPageIsSearchedWithoutReadingPastIt) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(map, MAP_FAILED);
    auto* base = static_cast<unsigned char*>(map);
    ASSERT_EQ(::mprotect(base + page, page, PROT_NONE), 0);
    // The CI crash input (tests/fuzz/corpus/scan/ci-crash-hyperscan-overread.bin): CCOB
    // candidates packed up to its last byte.
    const std::string tail("\x43\x43\x4f\x4f\x42\xc1\xd2\x43\x43\x4f\x42\xbd\x29\x43\x43\x4f"
                           "\x42\xb4\x43\x43\x4f\x42\xc1\xd2\x43\x43\x4f\x42\xbd\x29\x43\x43"
                           "\x4f\x42\xb4\x43\x43\x4f\x42\x4f\x3e\xff\xff\xff\xff\xff\xff\xff"
                           "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x3f\xff\xff\xff\xff",
                           64);
    for (const std::size_t size :
         {std::size_t{16}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{4000}}) {
        unsigned char* begin = base + page - size;
        std::memset(begin, 'x', size);
        std::memcpy(base + page - std::min(size, tail.size()),
                    tail.data() + (tail.size() - std::min(size, tail.size())), std::min(size, tail.size()));
        std::vector<std::uint64_t> hits;
        find_magics(Bytes{begin, size}, size, hits);
        std::vector<std::uint64_t> expected;
        for (std::size_t i = 0; i + 4 <= size; ++i)
            if (std::memcmp(begin + i, "CCOB", 4) == 0) expected.push_back(i);
        EXPECT_EQ(hits, expected) << "size " << size;
    }
    ::munmap(map, 2 * page);
}

}  // namespace
}  // namespace rmcp::scan
