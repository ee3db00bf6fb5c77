// util/terminal: the one place that decides colour (--color, NO_COLOR, TERM=dumb), glyphs
// (the locale's character set), the width text is wrapped to (the window, $COLUMNS, 80), and
// how text is wrapped.
#include "util/style.hpp"
#include "util/terminal.hpp"

#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <map>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

namespace rmcp {
namespace {

// Sets (or with nullopt unsets) environment variables for a test's lifetime.
class EnvGuard {
public:
    void set(const char* name, const std::optional<std::string>& value) {
        if (!m_saved.contains(name)) {
            const char* old = std::getenv(name);
            m_saved[name] = old ? std::optional<std::string>(old) : std::nullopt;
        }
        if (value) ::setenv(name, value->c_str(), 1);
        else ::unsetenv(name);
    }
    ~EnvGuard() {
        for (const auto& [name, value] : m_saved) {
            if (value) ::setenv(name.c_str(), value->c_str(), 1);
            else ::unsetenv(name.c_str());
        }
    }

private:
    std::map<std::string, std::optional<std::string>> m_saved;
};

// A pseudo-terminal of the given size: the slave is a terminal, the master keeps it open.
struct Pty {
    int master = -1, slave = -1;
    Pty(unsigned short cols, unsigned short rows) {
        master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return;
        slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        winsize ws{};
        ws.ws_col = cols;
        ws.ws_row = rows;
        ::ioctl(slave, TIOCSWINSZ, &ws);
    }
    ~Pty() {
        if (slave >= 0) ::close(slave);
        if (master >= 0) ::close(master);
    }
};

TEST(Terminal, DumbTerminalGetsNoAutomaticColourButAlwaysWins) {
    EnvGuard env;
    env.set("NO_COLOR", std::nullopt);
    Pty pty(80, 24);
    ASSERT_GE(pty.slave, 0);
    env.set("TERM", "xterm-256color");
    EXPECT_TRUE(use_color(ColorMode::automatic, pty.slave));
    env.set("TERM", "dumb");
    EXPECT_FALSE(use_color(ColorMode::automatic, pty.slave));
    EXPECT_TRUE(use_color(ColorMode::always, pty.slave));
}

TEST(Terminal, LocaleDecidesUtf8FromLcAllThenLcCtypeThenLang) {
    EnvGuard env;
    env.set("LC_ALL", std::nullopt);
    env.set("LC_CTYPE", std::nullopt);
    env.set("LANG", "C");
    EXPECT_FALSE(locale_is_utf8());
    env.set("LANG", "C.UTF-8");  // glibc 2.35+ has C.UTF-8 built in
    EXPECT_TRUE(locale_is_utf8());
    env.set("LC_CTYPE", "C");
    EXPECT_FALSE(locale_is_utf8());
    env.set("LC_ALL", "C.UTF-8");
    EXPECT_TRUE(locale_is_utf8());
    env.set("LC_ALL", "POSIX");
    EXPECT_FALSE(locale_is_utf8());
    // Named but not installed (no such locale here): the name says UTF-8.
    env.set("LC_ALL", "xx_NOWHERE.UTF-8");
    EXPECT_TRUE(locale_is_utf8());
    env.set("LC_ALL", "xx_NOWHERE.ISO-8859-1");
    EXPECT_FALSE(locale_is_utf8());
}

TEST(Terminal, TheProcessLocaleIsLeftAsItWas) {
    EnvGuard env;
    env.set("LC_ALL", "C.UTF-8");
    const std::string before = std::setlocale(LC_CTYPE, nullptr);
    EXPECT_TRUE(locale_is_utf8());
    EXPECT_EQ(std::setlocale(LC_CTYPE, nullptr), before);
}

TEST(Terminal, WidthIsTheWindowThenColumnsThen80) {
    EnvGuard env;
    Pty pty(132, 50);
    ASSERT_GE(pty.slave, 0);
    env.set("COLUMNS", "60");
    EXPECT_EQ(output_width(pty.slave), 132);
    EXPECT_EQ(output_height(pty.slave), 50);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    EXPECT_EQ(output_width(fds[1]), 60);
    env.set("COLUMNS", "not a number");
    EXPECT_EQ(output_width(fds[1]), 80);
    env.set("COLUMNS", std::nullopt);
    EXPECT_EQ(output_width(fds[1]), 80);
    env.set("COLUMNS", "5");
    EXPECT_EQ(output_width(fds[1]), 20);  // never narrower than 20
    env.set("LINES", std::nullopt);
    EXPECT_EQ(output_height(fds[1]), 24);
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST(Terminal, AsciiGlyphsSpellEveryGlyphOfTheTable) {
    EXPECT_EQ(ascii_glyphs("✓ ok ✗ bad — a → b … ≥ ≤"), "+ ok x bad -- a -> b ... >= <=");
    EXPECT_EQ(ascii_glyphs("plain, and ünïcode kept"), "plain, and ünïcode kept");
    for (std::size_t i = 0; i < std::size(k_unicode_glyphs); ++i) {
        EXPECT_EQ(ascii_glyphs(k_unicode_glyphs[i]), k_ascii_glyphs[i]);
        for (const char c : k_ascii_glyphs[i]) EXPECT_LT(static_cast<unsigned char>(c), 0x80);
    }
}

TEST(Terminal, StyleGivesGlyphsForItsLocale) {
    const Style utf8(false, true, 100);
    EXPECT_EQ(utf8.check(), "✓");
    EXPECT_EQ(utf8.arrow(), "→");
    EXPECT_EQ(utf8.width(), 100);
    const Style ascii(false, false, 40);
    EXPECT_EQ(ascii.check(), "+");
    EXPECT_EQ(ascii.cross(), "x");
    EXPECT_EQ(ascii.dash(), "--");
    EXPECT_EQ(ascii.arrow(), "->");
    EXPECT_EQ(ascii.wrapped("aaa bbb ccc ddd eee fff ggg hhh iii jjj kkk lll mmm nnn"),
              "aaa bbb ccc ddd eee fff ggg hhh iii jjj\nkkk lll mmm nnn");
}

TEST(Terminal, DisplayWidthCountsCharactersNotBytesOrColour) {
    EXPECT_EQ(display_width("abc"), 3U);
    EXPECT_EQ(display_width("✓ ok"), 4U);
    EXPECT_EQ(display_width("\x1b[1mbold\x1b[0m"), 4U);
}

TEST(Terminal, WrapKeepsShortLinesAndIndentsContinuations) {
    EXPECT_EQ(wrap_text("short\n\nlines\n", 20), "short\n\nlines\n");
    EXPECT_EQ(wrap_text("  Summary: one two three four five six\n", 20),
              "  Summary: one two\n  three four five\n  six\n");
    EXPECT_EQ(wrap_text("  - item one two three four five\n", 20), "  - item one two\n    three four five\n");
    // A word longer than the line stays whole on its own line.
    EXPECT_EQ(wrap_text("see https://example.org/a/very/long/path/here now", 20),
              "see\nhttps://example.org/a/very/long/path/here\nnow");
    // Every produced line fits, for a long paragraph.
    std::string para;
    for (int i = 0; i < 60; ++i) para += "word" + std::to_string(i) + " ";
    for (const int width : {20, 37, 80}) {
        const auto wrapped = wrap_text(para, width);
        std::size_t start = 0;
        while (start < wrapped.size()) {
            const auto nl = wrapped.find('\n', start);
            const auto line = wrapped.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
            EXPECT_LE(display_width(line), static_cast<std::size_t>(width)) << line;
            if (nl == std::string::npos) break;
            start = nl + 1;
        }
    }
}

}  // namespace
}  // namespace rmcp

// The one hanging-indent wrap (doctor's checklist, explain's labelled lines): the first line
// continues `first_cols`, the rest start at `indent`; a word longer than a line stays whole.
TEST(Terminal, WrapHangingIndentsContinuationAndKeepsLongWordsWhole) {
    EXPECT_EQ(rmcp::wrap_hanging("alpha beta gamma delta", 9, 9, 20), "alpha beta\n         gamma delta");
    EXPECT_EQ(rmcp::wrap_hanging("alpha beta gamma delta", 12, 2, 20), "alpha\n  beta gamma delta");
    EXPECT_EQ(rmcp::wrap_hanging("a  b\n c", 0, 2, 80), "a b c");
    EXPECT_EQ(rmcp::wrap_hanging("see /a/very/long/path/that/does/not/fit ok", 4, 4, 20),
              "see\n    /a/very/long/path/that/does/not/fit\n    ok");
    EXPECT_EQ(rmcp::wrap_hanging("", 3, 3, 20), "");
}
