// process/pager: which pager (an argv, no shell) and when (a terminal, more lines than rows),
// and that the text reaches the pager's standard input whole.
#include "process/pager.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace rmcp::process {
namespace {

TEST(Pager, DefaultIsLessQuittingWhenTheTextFitsKeepingColour) {
    EXPECT_EQ(pager_command(std::nullopt), (std::vector<std::string>{"less", "-FRX"}));
}

TEST(Pager, PagerVariableIsSplitIntoWordsWithoutAShell) {
    EXPECT_EQ(pager_command("less -R"), (std::vector<std::string>{"less", "-R"}));
    EXPECT_EQ(pager_command("  most\t"), (std::vector<std::string>{"most"}));
    // A shell would run the second command; as an argv it is only words for `more`.
    EXPECT_EQ(pager_command("more; rm -rf x"), (std::vector<std::string>{"more;", "rm", "-rf", "x"}));
}

TEST(Pager, EmptyPagerOrCatMeansNoPager) {
    EXPECT_TRUE(pager_command("").empty());
    EXPECT_TRUE(pager_command("cat").empty());
}

TEST(Pager, OnlyATerminalAndOnlyTextLongerThanTheScreen) {
    EXPECT_FALSE(wants_pager(false, 1000, 24));
    EXPECT_FALSE(wants_pager(true, 24, 24));
    EXPECT_TRUE(wants_pager(true, 25, 24));
}

TEST(Pager, NotATerminalWritesTheTextDirectly) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    {
        StandardOutput out(fds[1]);
        page_or_write(out, "one\ntwo\n");
        EXPECT_EQ(out.error(), 0);
    }
    ::close(fds[1]);
    char buf[64] = {};
    const auto n = ::read(fds[0], buf, sizeof buf);
    ::close(fds[0]);
    EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "one\ntwo\n");
}

}  // namespace
}  // namespace rmcp::process
