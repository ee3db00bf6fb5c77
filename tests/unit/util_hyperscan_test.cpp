#include "util/hyperscan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rmcp::hyperscan {
namespace {

struct Piece {
    bool in_place;
    std::string bytes;
    std::uint64_t offset;
    std::uint64_t seen_until;
    bool padded;  // k_overread zero bytes follow the piece
};

std::vector<Piece> pieces(const std::string& input, std::size_t overlap) {
    std::vector<Piece> out;
    const int rc =
        scan_without_overread(input, overlap, 0,
                              [&](const char* data, std::size_t size, std::uint64_t offset, std::uint64_t seen_until) {
                                  const bool in_place = data >= input.data() && data < input.data() + input.size();
                                  bool padded = true;
                                  if (!in_place)
                                      for (std::size_t i = 0; i < k_overread; ++i)
                                          padded = padded && data[size + i] == '\0';
                                  out.push_back({in_place, std::string(data, size), offset, seen_until, padded});
                                  return 0;
                              });
    EXPECT_EQ(rc, 0);
    return out;
}

std::string numbered(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + i % 26);
    return s;
}

TEST(ScanWithoutOverread, LastBytesComeFromAPaddedCopy) {
    const std::string input = numbered(1000);
    const auto got = pieces(input, 0);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(got[0].in_place);
    EXPECT_EQ(got[0].bytes, input.substr(0, 1000 - k_overread));
    EXPECT_EQ(got[0].offset, 0u);
    EXPECT_FALSE(got[1].in_place);
    EXPECT_TRUE(got[1].padded);
    EXPECT_EQ(got[1].bytes, input.substr(1000 - k_overread));
    EXPECT_EQ(got[1].offset, 1000 - k_overread);
    EXPECT_EQ(got[1].seen_until, 1000 - k_overread);
}

TEST(ScanWithoutOverread, BlockModeCopyStartsOverlapBytesBeforeTheCut) {
    const std::string input = numbered(500);
    const auto got = pieces(input, 23);
    ASSERT_EQ(got.size(), 2u);
    const std::size_t cut = 500 - k_overread;
    EXPECT_EQ(got[0].bytes, input.substr(0, cut));
    EXPECT_EQ(got[1].bytes, input.substr(cut - 23));
    EXPECT_EQ(got[1].offset, cut - 23);
    EXPECT_EQ(got[1].seen_until, cut);
    EXPECT_TRUE(got[1].padded);
}

TEST(ScanWithoutOverread, ShortInputIsOneCopiedPiece) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{63}, k_overread}) {
        const std::string input = numbered(n);
        const auto got = pieces(input, 23);
        ASSERT_EQ(got.size(), 1u) << n;
        EXPECT_FALSE(got[0].in_place);
        EXPECT_TRUE(got[0].padded);
        EXPECT_EQ(got[0].bytes, input);
        EXPECT_EQ(got[0].offset, 0u);
        EXPECT_EQ(got[0].seen_until, 0u);
    }
}

TEST(ScanWithoutOverread, OverlapIsCappedAndStopsAtTheStart) {
    // 80 bytes: the cut is at 16, so the copy starts at 0 whatever the overlap asked for.
    const std::string input = numbered(80);
    const auto got = pieces(input, 1000);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].bytes, input.substr(0, 16));
    EXPECT_EQ(got[1].bytes, input);
    EXPECT_EQ(got[1].seen_until, 16u);
    EXPECT_TRUE(got[1].padded);
}

TEST(ScanWithoutOverread, FirstFailureIsReturnedAndStopsTheScan) {
    const std::string input = numbered(1000);
    int calls = 0;
    const int rc = scan_without_overread(input, 0, 0, [&](const char*, std::size_t, std::uint64_t, std::uint64_t) {
        ++calls;
        return -3;
    });
    EXPECT_EQ(rc, -3);
    EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace rmcp::hyperscan
