// relay_floor: the cheapest possible observer of a child's standard output, as a reference
// for `rmcp run` (bench/run_bench.sh, docs/PERFORMANCE.md "rmcp run").
//
//   relay_floor CMD ARGS...
//
// Starts CMD with its stdout on a pipe of the same size rmcp uses (1 MiB) and moves what
// arrives to its own stdout with splice(2): no byte is copied into this process, none is
// looked at. Whatever watches a stream must at least make the child write into a pipe like
// this, so the time of `relay_floor cat FILE` against bare `cat FILE` is the most any relay
// can reach; rmcp's distance from relay_floor is what its log, tail and matcher cost.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: relay_floor CMD ARGS...\n");
        return 2;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::perror("pipe2"), 3;
    ::fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);
    const pid_t pid = ::fork();
    if (pid < 0) return std::perror("fork"), 3;
    if (pid == 0) {
        ::dup2(fds[1], STDOUT_FILENO);
        ::execvp(argv[1], argv + 1);
        std::perror(argv[1]);
        ::_exit(127);
    }
    ::close(fds[1]);
    for (;;) {
        const ssize_t n = ::splice(fds[0], nullptr, STDOUT_FILENO, nullptr, 1 << 20, SPLICE_F_MOVE);
        if (n > 0) continue;
        if (n == 0) break;
        if (errno == EINTR) continue;
        // stdout is not something splice can write to: read and write instead.
        static char buf[1 << 20];
        for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) != 0;) {
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) break;
            for (ssize_t w = 0; w < r;) {
                const ssize_t k = ::write(STDOUT_FILENO, buf + w, static_cast<std::size_t>(r - w));
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) break;
                w += k;
            }
        }
        break;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
