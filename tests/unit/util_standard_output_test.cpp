// The one stdout writer (util/standard_output.hpp): every write checked, the first failure
// kept and reported as "writing standard output: <cause>", SIGPIPE never fatal.
#include "util/standard_output.hpp"
#include "util/unique_fd.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <string>
#include <unistd.h>

using namespace rmcp;

namespace {
std::string drain(int fd) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
}
}  // namespace

TEST(StandardOutput, WritesEverythingInOrder) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    UniqueFd read_end(fds[0]);
    {
        UniqueFd write_end(fds[1]);
        StandardOutput out(write_end.get());
        out.write("one\n");
        out.print("{} {}\n", "two", 3);
        EXPECT_EQ(out.error(), 0);
        EXPECT_FALSE(out.failure());
    }
    EXPECT_EQ(drain(read_end.get()), "one\ntwo 3\n");
}

TEST(StandardOutput, AFullDeviceIsAnErrorNamingTheCause) {
    UniqueFd full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
    if (!full) GTEST_SKIP() << "no /dev/full here";
    StandardOutput out(full.get());
    out.write("lost\n");
    EXPECT_EQ(out.error(), ENOSPC);
    ASSERT_TRUE(out.failure());
    EXPECT_EQ(out.failure()->message(), "writing standard output: No space left on device");
    EXPECT_EQ(out.failure()->code, ExitCode::environment);
}

TEST(StandardOutput, AClosedReaderIsEpipeNotDeathAndNoSignalIsLeftPending) {
    // SIGPIPE at its default action, as a shell leaves it: without the writer's blocking, the
    // write below would end this test binary.
    struct sigaction dfl {
    }, old{};
    dfl.sa_handler = SIG_DFL;
    ASSERT_EQ(::sigaction(SIGPIPE, &dfl, &old), 0);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    UniqueFd write_end(fds[1]);
    StandardOutput out(write_end.get());
    out.write("nobody reads this\n");
    EXPECT_EQ(out.error(), EPIPE);
    out.write("nor this\n");  // dropped: the first failure is the one reported
    EXPECT_EQ(out.error(), EPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    ASSERT_EQ(::sigpending(&pending), 0);
    EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
    ::sigaction(SIGPIPE, &old, nullptr);
}
