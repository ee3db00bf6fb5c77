#include "util/strings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace rmcp {
namespace {

std::size_t reference_count(std::string_view s, char c) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), c));
}

TEST(CountByte, SmallInputsAndEdges) {
    EXPECT_EQ(count_byte("", '\n'), 0u);
    EXPECT_EQ(count_byte("\n", '\n'), 1u);
    EXPECT_EQ(count_byte("abc", '\n'), 0u);
    EXPECT_EQ(count_byte(std::string(15, '\n'), '\n'), 15u);
    EXPECT_EQ(count_byte(std::string(16, '\n'), '\n'), 16u);
    EXPECT_EQ(count_byte(std::string(17, '\n'), '\n'), 17u);
    EXPECT_EQ(count_byte(std::string(31, '\n'), '\n'), 31u);
    EXPECT_EQ(count_byte(std::string(32, '\n'), '\n'), 32u);
    EXPECT_EQ(count_byte(std::string(33, '\n'), '\n'), 33u);
    // 0xff bytes: the lane value an equal compare produces must not be mistaken for a match.
    EXPECT_EQ(count_byte(std::string(64, '\xff'), '\n'), 0u);
    EXPECT_EQ(count_byte(std::string(64, '\xff'), '\xff'), 64u);
}

TEST(CountByte, LaneCountersDoNotOverflow) {
    // Every byte matches: each 8-bit lane counter sees one hit per block, so runs longer
    // than 255 blocks (8160 bytes of 32-byte blocks) overflow unless the counters are summed
    // in time.
    for (const std::size_t n : {4079u, 4080u, 4081u, 8159u, 8160u, 8161u, 8192u, 65536u + 7u, 1000000u}) {
        const std::string all(n, '\n');
        EXPECT_EQ(count_byte(all, '\n'), n) << n;
    }
}

TEST(CountByte, MatchesStdCountOnRandomDataAtEveryAlignment) {
    std::mt19937 rng(42);
    std::string data(100000, '\0');
    for (auto& ch : data) ch = static_cast<char>(rng() % 8 == 0 ? '\n' : rng() & 0xff);
    for (std::size_t start = 0; start < 17; ++start)
        for (const std::size_t len : {0u, 1u, 15u, 16u, 31u, 4095u, 50000u}) {
            const std::string_view s = std::string_view(data).substr(start, len);
            ASSERT_EQ(count_byte(s, '\n'), reference_count(s, '\n')) << start << " " << len;
        }
    EXPECT_EQ(count_byte(data, '\n'), reference_count(data, '\n'));
}

TEST(Split, KeepsEmptyPieces) {
    EXPECT_EQ(split("a,,b", ','), (std::vector<std::string_view>{"a", "", "b"}));
    EXPECT_EQ(split("", ','), (std::vector<std::string_view>{""}));
    EXPECT_EQ(split("a,", ','), (std::vector<std::string_view>{"a", ""}));
    EXPECT_EQ(split(std::string_view("x\0y", 3), '\0'), (std::vector<std::string_view>{"x", "y"}));
}

TEST(Join, PutsTheSeparatorBetweenEachTwo) {
    EXPECT_EQ(join(std::vector<std::string>{}, ", "), "");
    EXPECT_EQ(join(std::vector<std::string>{"a"}, ", "), "a");
    EXPECT_EQ(join(std::vector<std::string>{"a", "", "c"}, ", "), "a, , c");
    EXPECT_EQ(join(std::vector<std::string_view>{"usr", "lib"}, "/"), "usr/lib");
}

TEST(SplitJoin, RoundTrip) {
    const std::string text = "gfx1030,gfx1100,,gfx90a";
    EXPECT_EQ(join(split(text, ','), ","), text);
}

TEST(PathText, DirnameAndBasename) {
    EXPECT_EQ(dirname("/sys/module/amdgpu"), "/sys/module");
    EXPECT_EQ(dirname("/etc"), "/");
    EXPECT_EQ(dirname("/"), "/");
    EXPECT_EQ(dirname("relative"), ".");
    EXPECT_EQ(dirname("a/b"), "a");
    EXPECT_EQ(basename("/sys/module/amdgpu"), "amdgpu");
    EXPECT_EQ(basename("name"), "name");
    EXPECT_EQ(basename("/dir/"), "");
    EXPECT_EQ(basename("../../0000:03:00.0"), "0000:03:00.0");
}

TEST(ShQuote, OnlyTheSingleQuoteNeedsCare) {
    EXPECT_EQ(sh_quote(""), "''");
    EXPECT_EQ(sh_quote("gfx1030 $HOME `x` \\ \"q\""), "'gfx1030 $HOME `x` \\ \"q\"'");
    EXPECT_EQ(sh_quote("it's"), "'it'\\''s'");
}

TEST(ShWord, PlainWordsStayAndEverythingElseIsQuoted) {
    EXPECT_EQ(sh_word("/tmp/r-1_x.y+z"), "/tmp/r-1_x.y+z");
    EXPECT_EQ(sh_word("20261128T102611.123456789"), "20261128T102611.123456789");
    EXPECT_EQ(sh_word(""), "''");
    // D16: a --root that a shell would split or expand
    EXPECT_EQ(sh_word("/tmp/r x;$(touch PWNED)"), "'/tmp/r x;$(touch PWNED)'");
    EXPECT_EQ(sh_word("fix;touch X;"), "'fix;touch X;'");
    EXPECT_EQ(sh_word("a`b`"), "'a`b`'");
    EXPECT_EQ(sh_word("it's"), "'it'\\''s'");
    EXPECT_EQ(sh_word("~user"), "'~user'");
    EXPECT_EQ(sh_word("*"), "'*'");
}

TEST(IsLowerName, TheConservativeAlphabet) {
    EXPECT_TRUE(is_lower_name("miopen-no-gemm"));
    EXPECT_TRUE(is_lower_name("0x"));
    EXPECT_FALSE(is_lower_name(""));
    EXPECT_FALSE(is_lower_name("-a"));
    EXPECT_FALSE(is_lower_name("A"));
    EXPECT_FALSE(is_lower_name("a.b"));
    EXPECT_TRUE(is_lower_name("a.b_c-d", "._-"));
    EXPECT_FALSE(is_lower_name(".a", "._-"));
    EXPECT_FALSE(is_lower_name("fix;touch X;", "._-"));
    EXPECT_FALSE(is_lower_name("../../etc", "._-"));
    EXPECT_FALSE(is_lower_name("a/b", "._-"));
    EXPECT_TRUE(all_digits("0123"));
    EXPECT_FALSE(all_digits(""));
    EXPECT_FALSE(all_digits("1a"));
}

TEST(FishQuote, BackslashAndSingleQuoteAreEscaped) {
    EXPECT_EQ(fish_quote(""), "''");
    EXPECT_EQ(fish_quote("a $b"), "'a $b'");
    EXPECT_EQ(fish_quote("it's \\n"), "'it\\'s \\\\n'");
}

}  // namespace
}  // namespace rmcp
