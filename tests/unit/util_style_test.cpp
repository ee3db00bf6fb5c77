// util/style: the escape sequences Style wraps text in (none without colour), and how
// use_color resolves --color against the stream and NO_COLOR (https://no-color.org: set and
// not empty turns automatic colour off; --color always/never win over it).
#include "util/style.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <string>
#include <unistd.h>

namespace rmcp {
namespace {

TEST(Style, WithoutColourTextIsUnchanged) {
    const Style plain;
    EXPECT_FALSE(plain.color());
    EXPECT_EQ(plain.bold("x"), "x");
    EXPECT_EQ(plain.red("error"), "error");
    EXPECT_EQ(plain.yellow("warning"), "warning");
    EXPECT_EQ(plain.green("ok"), "ok");
    EXPECT_EQ(plain.dim(""), "");
}

TEST(Style, WithColourEachStyleHasItsSgrCodeAndAReset) {
    const Style c(true);
    EXPECT_TRUE(c.color());
    EXPECT_EQ(c.bold("x"), "\x1b[1mx\x1b[0m");
    EXPECT_EQ(c.red("error"), "\x1b[31merror\x1b[0m");
    EXPECT_EQ(c.yellow("warning"), "\x1b[33mwarning\x1b[0m");
    EXPECT_EQ(c.green("ok"), "\x1b[32mok\x1b[0m");
    EXPECT_EQ(c.dim("d"), "\x1b[2md\x1b[0m");
}

// NO_COLOR set to `value` (nullopt: unset) for the test's lifetime; the old value restored.
class UseColor : public ::testing::Test {
protected:
    void SetUp() override {
        if (const char* old = std::getenv("NO_COLOR")) m_old = old;
        // A terminal: the slave side of a fresh pseudo-terminal.
        m_master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        ASSERT_GE(m_master, 0);
        ASSERT_EQ(::grantpt(m_master), 0);
        ASSERT_EQ(::unlockpt(m_master), 0);
        const char* name = ::ptsname(m_master);
        ASSERT_NE(name, nullptr);
        m_tty = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        ASSERT_GE(m_tty, 0);
        int fds[2];
        ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
        m_pipe_read = fds[0];
        m_pipe = fds[1];
    }
    void TearDown() override {
        if (m_old) ::setenv("NO_COLOR", m_old->c_str(), 1);
        else ::unsetenv("NO_COLOR");
        for (const int fd : {m_tty, m_master, m_pipe, m_pipe_read})
            if (fd >= 0) ::close(fd);
    }
    static void no_color(const std::optional<std::string>& value) {
        if (value) ::setenv("NO_COLOR", value->c_str(), 1);
        else ::unsetenv("NO_COLOR");
    }

    std::optional<std::string> m_old;
    int m_master = -1, m_tty = -1, m_pipe = -1, m_pipe_read = -1;
};

TEST_F(UseColor, AutomaticFollowsTheStreamWhenNoColorIsUnset) {
    no_color(std::nullopt);
    EXPECT_TRUE(use_color(ColorMode::automatic, m_tty));
    EXPECT_FALSE(use_color(ColorMode::automatic, m_pipe));
    EXPECT_FALSE(use_color(ColorMode::automatic, -1));  // not a descriptor at all
}

TEST_F(UseColor, NoColorWithAValueTurnsAutomaticColourOffEvenOnATerminal) {
    for (const char* value : {"1", "0", "no", "anything"}) {
        no_color(std::string(value));
        EXPECT_FALSE(use_color(ColorMode::automatic, m_tty)) << value;
    }
}

TEST_F(UseColor, AnEmptyNoColorIsIgnored) {
    no_color(std::string());
    EXPECT_TRUE(use_color(ColorMode::automatic, m_tty));
    EXPECT_FALSE(use_color(ColorMode::automatic, m_pipe));
}

TEST_F(UseColor, AlwaysAndNeverWinOverTheStreamAndNoColor) {
    for (const auto& value : {std::optional<std::string>{}, std::optional<std::string>{"1"}}) {
        no_color(value);
        EXPECT_TRUE(use_color(ColorMode::always, m_pipe));
        EXPECT_TRUE(use_color(ColorMode::always, m_tty));
        EXPECT_FALSE(use_color(ColorMode::never, m_tty));
        EXPECT_FALSE(use_color(ColorMode::never, m_pipe));
    }
}

}  // namespace
}  // namespace rmcp
