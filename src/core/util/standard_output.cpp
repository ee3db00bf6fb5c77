#include "util/standard_output.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <pthread.h>
#include <unistd.h>

namespace rmcp {

namespace {

// Blocks SIGPIPE in this thread for its lifetime; a SIGPIPE that a failed write raised while
// it was blocked is taken off the pending set before the old mask comes back, so it is not
// delivered late. One that was pending already (raised elsewhere) is left alone.
class SigpipeBlocked {
public:
    SigpipeBlocked() {
        sigemptyset(&m_pipe);
        sigaddset(&m_pipe, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old);
        sigset_t pending;
        sigemptyset(&pending);
        m_was_pending = ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    }
    ~SigpipeBlocked() {
        if (m_raised && !m_was_pending) {
            const timespec zero{};
            while (::sigtimedwait(&m_pipe, nullptr, &zero) < 0 && errno == EINTR) {}
        }
        ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }
    SigpipeBlocked(const SigpipeBlocked&) = delete;
    SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;
    void raised() { m_raised = true; }

private:
    sigset_t m_pipe{};
    sigset_t m_old{};
    bool m_was_pending = false;
    bool m_raised = false;
};

}  // namespace

void StandardOutput::write(std::string_view bytes) {
    if (m_held) return;
    write_always(bytes);
}

void StandardOutput::write_always(std::string_view bytes) {
    if (m_error != 0 || bytes.empty()) return;
    const int saved_errno = errno;
    SigpipeBlocked blocked;
    while (!bytes.empty()) {
        const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            m_error = errno;
            if (m_error == EPIPE) blocked.raised();
            break;
        }
        if (n == 0) {  // not an error write(2) reports, but no progress either
            m_error = EIO;
            break;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    errno = saved_errno;
}

void StandardOutput::finish() {
    if (m_fd != STDOUT_FILENO) return;
    SigpipeBlocked blocked;
    std::cout.flush();
    errno = 0;
    const bool c_failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
    const int err = errno;
    if (c_failed && m_error == 0) m_error = err != 0 ? err : EIO;
    if (!std::cout && m_error == 0) m_error = EIO;
    if (m_error == EPIPE) blocked.raised();
}

std::optional<Error> StandardOutput::failure() const {
    if (m_error == 0) return std::nullopt;
    return os_error("writing", "standard output", m_error);
}

StandardOutput& standard_output() {
    static StandardOutput out(STDOUT_FILENO);
    return out;
}

}  // namespace rmcp
