#include "util/toml_guard.hpp"

#include <gtest/gtest.h>

namespace rmcp {

TEST(TomlGuard, NonAsciiInStringsAndCommentsIsFine) {
    EXPECT_FALSE(toml_non_ascii_outside_strings("title = \"RX 7900 XTX — gfx1100\"\n# ≥ 5.7\n"));
    EXPECT_FALSE(toml_non_ascii_outside_strings("a = 'ü'\nb = \"\"\"\nmulti — line\n\"\"\"\nc = '''x ×\n'''\n"));
    EXPECT_FALSE(toml_non_ascii_outside_strings("a = \"escaped \\\" quote — ok\"\n"));
}

// Regression: tests/fuzz/fuzz_kb_loader found toml++ 3.3 reaching TOML_UNREACHABLE on U+045A.
TEST(TomlGuard, NonAsciiBetweenTokensIsReportedWithItsLine) {
    EXPECT_EQ(toml_non_ascii_outside_strings("\xd1\x9a"), 1U);
    EXPECT_EQ(toml_non_ascii_outside_strings("id = \"x\"\n\nkey\xc2\xa0= 1\n"), 3U);
    // A single-line string ends at the newline, so what follows is code again.
    EXPECT_EQ(toml_non_ascii_outside_strings("a = \"open\n\xe2\x80\x83"), 2U);
}

}  // namespace rmcp
