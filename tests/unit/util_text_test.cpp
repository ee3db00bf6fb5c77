// The two ways text from input leaves rmcp (util/text.hpp): JSON that never throws and parses
// back, and terminal text without controls. Property tests over random bytes with a fixed
// seed, weighted towards what attacks each path: invalid UTF-8, C1 controls raw and encoded,
// ESC sequences, NUL, DEL, bidi overrides.
#include "util/text.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <random>
#include <string>
#include <string_view>

namespace rmcp {
namespace {

// Pieces random strings are made of: single bytes of every class and whole sequences.
constexpr std::array<std::string_view, 26> k_pieces{
    "a",
    "Z",
    " ",
    "\t",
    "\n",
    "\r",
    std::string_view("\0", 1),
    "\x1b",
    "\x1b[2J",
    "\x1b]0;title\x07",
    "\x1b[31m",
    "\x1b[0m",
    "\x7f",
    "\x80",
    "\x9b",
    "\x9f",
    "\xc2\x9b",
    "\xc2\x9d",
    "\xc2\x85",
    "\xe2\x80\xae",
    "\xe2\x81\xa6",
    "\xff",
    "\xc3",
    "\xe2\x82",
    "\xc3\xa9",
    "\xf0\x9f\x98\x80",
};

std::string random_bytes(std::mt19937& rng) {
    std::uniform_int_distribution<std::size_t> length(0, 40);
    std::uniform_int_distribution<std::size_t> piece(0, k_pieces.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> coin(0, 3);
    std::string s;
    for (std::size_t n = length(rng); n > 0; --n) {
        if (coin(rng) == 0) s += static_cast<char>(byte(rng));  // any byte at all
        else s += k_pieces[piece(rng)];
    }
    return s;
}

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_length(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

// The first control a terminal would act on, or npos: C0 other than `allowed`, DEL, C1 raw or
// encoded, the bidi overrides and isolates.
std::size_t first_control(std::string_view s, std::string_view allowed) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c < 0x20 && allowed.find(static_cast<char>(c)) == std::string_view::npos) || c == 0x7f) return i;
        // (a raw byte 0x80..0x9f outside a sequence is invalid UTF-8: the callers check that too)
        if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return i;
        if (c == 0xe2 && i + 2 < s.size()) {
            const auto b1 = static_cast<unsigned char>(s[i + 1]);
            const auto b2 = static_cast<unsigned char>(s[i + 2]);
            if ((b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9)) return i;
        }
    }
    return std::string_view::npos;
}

// Bounded for CI: about 3 s (JSON: dump, parse back) and 1 s (terminal) at -O0.
constexpr int k_json_iterations = 4000;
constexpr int k_terminal_iterations = 20000;

TEST(JsonText, RandomBytesNeverThrowAndParseBackWithoutControls) {
    std::mt19937 rng(20261128);
    for (int i = 0; i < k_json_iterations; ++i) {
        const std::string value = random_bytes(rng);
        const std::string key = random_bytes(rng);
        const nlohmann::json doc{{"value", value}, {key, {value, 1, nullptr}}, {"nested", {{"k", value}}}};
        for (const int indent : {-1, 2}) {
            std::string text;
            ASSERT_NO_THROW(text = json_text(doc, indent)) << i;
            ASSERT_TRUE(valid_utf8(text)) << i;
            ASSERT_EQ(first_control(text, indent < 0 ? "" : "\n"), std::string_view::npos) << i << ": " << text;
            nlohmann::json back;
            ASSERT_NO_THROW(back = nlohmann::json::parse(text)) << i << ": " << text;
            // Valid UTF-8 comes back as it was: the \u escapes change no character.
            if (valid_utf8(value)) {
                ASSERT_EQ(back["value"].get<std::string>(), value) << i;
                if (valid_utf8(key)) ASSERT_EQ(back[key][0].get<std::string>(), value) << i;
            }
        }
    }
}

TEST(JsonText, EscapesWhatATerminalWouldActOn) {
    EXPECT_EQ(json_text(nlohmann::json("a\xc2\x9b"
                                       "b")),
              R"("a\u009bb")");
    EXPECT_EQ(json_text(nlohmann::json("\xe2\x80\xae")), R"("\u202e")");
    EXPECT_EQ(json_text(nlohmann::json("\x7f")), R"("\u007f")");
    EXPECT_EQ(json_text(nlohmann::json("\x1b")), R"("\u001b")");
    EXPECT_EQ(json_text(nlohmann::json("Deb\xff")), "\"Deb\xef\xbf\xbd\"");  // D4: U+FFFD, no throw
    EXPECT_EQ(json_text(nlohmann::json("é €")), "\"é €\"");                  // printable text as it is
    EXPECT_EQ(json_text(nlohmann::json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(TerminalSafe, RandomBytesLeaveNoControl) {
    std::mt19937 rng(1128);
    for (int i = 0; i < k_terminal_iterations; ++i) {
        const std::string s = random_bytes(rng);
        const std::string line = terminal_safe(s, Shown::line);
        ASSERT_TRUE(valid_utf8(line)) << i;
        ASSERT_EQ(first_control(line, "\t"), std::string_view::npos) << i;
        const std::string lines = terminal_safe(s, Shown::lines);
        ASSERT_TRUE(valid_utf8(lines)) << i;
        ASSERT_EQ(first_control(lines, "\t\n"), std::string_view::npos) << i;
        // Styled text keeps ESC only as the start of a colour sequence Style writes.
        const std::string styled = terminal_safe(s, Shown::styled_lines);
        for (auto e = styled.find('\x1b'); e != std::string::npos; e = styled.find('\x1b', e + 1)) {
            const auto m = styled.find('m', e);
            ASSERT_NE(m, std::string::npos) << i;
            const std::string seq = styled.substr(e, m - e + 1);
            ASSERT_TRUE(seq == "\x1b[0m" || seq == "\x1b[1m" || seq == "\x1b[2m" || seq == "\x1b[31m" ||
                        seq == "\x1b[32m" || seq == "\x1b[33m")
                << i << ": " << seq;
        }
        // Shown once is shown: nothing left to replace.
        ASSERT_EQ(terminal_safe(line, Shown::line), line) << i;
        ASSERT_FALSE(has_terminal_controls(lines, Shown::lines)) << i;
        // has_terminal_controls says whether a '?' replaced something (for text without '?').
        if (s.find('?') == std::string::npos)
            ASSERT_EQ(has_terminal_controls(s, Shown::line), line.find('?') != std::string::npos) << i;
    }
}

TEST(TerminalSafe, Examples) {
    EXPECT_EQ(terminal_safe("\x1b[2J\x1b]0;T\x07"), "?[2J?]0;T?");  // ESC sequences inert
    EXPECT_EQ(terminal_safe("a\xc2\x9b"
                            "2J\xc2\x9d"
                            "0;T\xc2\x9c"),
              "a?2J?0;T?");  // D18: C1 as UTF-8
    EXPECT_EQ(terminal_safe("\x9b"
                            "2J"),
              "?2J");                                                      // C1 as a raw byte
    EXPECT_EQ(terminal_safe("x\xff\xfey"), "x\xef\xbf\xbd\xef\xbf\xbdy");  // invalid UTF-8
    EXPECT_EQ(terminal_safe("left\xe2\x80\xaeright"), "left?right");       // RLO
    EXPECT_EQ(terminal_safe(std::string_view("a\0b\x7f", 4)), "a?b?");
    EXPECT_EQ(terminal_safe("a\tb\nc"), "a\tb?c");
    EXPECT_EQ(terminal_safe("a\tb\nc\r", Shown::lines), "a\tb\nc?");
    EXPECT_EQ(terminal_safe("Grüße — ✓ 😀"), "Grüße — ✓ 😀");
    EXPECT_EQ(terminal_safe("\x1b[31mred\x1b[0m", Shown::styled_lines), "\x1b[31mred\x1b[0m");
    EXPECT_EQ(terminal_safe("\x1b[31mred\x1b[0m", Shown::lines), "?[31mred?[0m");
    EXPECT_EQ(terminal_safe("\x1b[8mhidden", Shown::styled_lines), "?[8mhidden");
}

}  // namespace
}  // namespace rmcp
