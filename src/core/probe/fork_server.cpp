#include "probe/fork_server.hpp"

#include "process/spawn.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <variant>
#include <unistd.h>

namespace rmcp::probe {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_keep_bytes = 64 * 1024;         // output tail kept per child and for the server
constexpr auto k_term_grace = std::chrono::seconds(1);  // SIGTERM, then SIGKILL
constexpr auto k_reap_wait = std::chrono::seconds(5);   // for the server to report a killed child
constexpr auto k_drain_wait = std::chrono::seconds(2);  // for pipes a child's leftovers hold open

void append_bounded(std::string& to, const char* data, std::size_t n) {
    to.append(data, n);
    if (to.size() > 2 * k_keep_bytes) to.erase(0, to.size() - k_keep_bytes);
}

int ms_until(Clock::time_point t) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1000));
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string last_line(std::string_view text) {
    std::string last;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        const auto line = text.substr(pos, nl - pos);
        if (line.find_first_not_of(" \t\r") != std::string_view::npos) last = std::string(line.substr(0, 300));
        pos = nl + 1;
    }
    return last;
}

std::string status_text(int status) {
    if (WIFSIGNALED(status)) return "killed by " + signal_name(WTERMSIG(status));
    if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
    return fmt::format("wait status {}", status);
}

bool read_into(UniqueFd& fd, std::string& to) {
    char buf[16384];
    const ssize_t got = ::read(fd.get(), buf, sizeof buf);
    if (got > 0) {
        append_bounded(to, buf, static_cast<std::size_t>(got));
        return true;
    }
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    fd.reset();
    return false;
}

}  // namespace

std::string signal_name(int sig) {
    switch (sig) {
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return fmt::format("signal {}", sig);
    }
}

Result<std::unique_ptr<ForkServer>> ForkServer::start(const ForkServerOptions& options) {
    std::unique_ptr<ForkServer> server(new ForkServer());
    server->m_python = options.python;
    int sv[2] = {-1, -1};
    int log[2] = {-1, -1};
    const bool made = ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 && ::pipe2(log, O_CLOEXEC) == 0;
    const int made_errno = errno;
    UniqueFd ctl(sv[0]), ctl_for_server(sv[1]), log_read(log[0]), log_write(log[1]);
    if (!made) return os_error("creating the control socket for", "the probe worker", made_errno);
    // Its own session (so its own process group too): the terminal's ^C reaches rmcp, which
    // then closes the socket; the server kills its children and exits (python/rmcp/zygote.py).
    // Every process it forks stays in that session, whatever group it makes: a server that
    // does not end them is ended with all of them (kill_all), and no pid a message names is
    // ever signalled (docs/security.md, "Untrusted child replies").
    process::SpawnRequest request;
    request.argv = {options.python, "-m", "rmcp.worker", "--serve", "--control-fd", "3"};
    request.env = options.env;
    request.fds = {process::FdMapping::dev_null(STDIN_FILENO, O_RDONLY),
                   process::FdMapping::copy_of(log_write.get(), STDOUT_FILENO),
                   process::FdMapping::copy_of(log_write.get(), STDERR_FILENO),
                   process::FdMapping::copy_of(ctl_for_server.get(), 3)};
    request.group = process::ProcessGroup::session;
    sigset_t none;
    sigemptyset(&none);
    request.signal_mask = none;
    request.reset_sigpipe = true;

    // No core files: a faulting GPU process can dump gigabytes, and dozens of children would
    // fill the disk. The limit is inherited by the server and every child it forks.
    rlimit saved{};
    const bool have_limit = ::getrlimit(RLIMIT_CORE, &saved) == 0;
    if (have_limit) {
        rlimit none_limit = saved;
        none_limit.rlim_cur = 0;
        ::setrlimit(RLIMIT_CORE, &none_limit);
    }
    const auto started = Clock::now();
    auto spawned = process::spawn(request);
    if (have_limit) ::setrlimit(RLIMIT_CORE, &saved);
    ctl_for_server.reset();
    log_write.reset();
    server->m_ctl = std::move(ctl);
    server->m_log = std::move(log_read);
    if (!spawned) {
        server->m_pid = -1;
        const auto& e = spawned.error();
        return Error{"starting the probe worker with", options.python, e.cause, ExitCode::environment, e.os_error};
    }
    server->m_pid = spawned->pid;

    const auto fail = [&](std::string doing, std::string cause) -> Error {
        server->stop(std::chrono::milliseconds(0));
        return Error{std::move(doing), options.python, std::move(cause), ExitCode::environment};
    };
    const auto ended = [&]() {
        const std::string tail = last_line(server->m_log_tail);
        return server->m_death + (tail.empty() ? "" : ": " + tail);
    };

    protocol::Message hello_message;
    switch (server->next_message(hello_message, started + options.handshake_timeout)) {
    case Wait::timeout:
        return fail("checking the interpreter",
                    fmt::format("no answer within {:g} s: is it a Python 3 interpreter?",
                                std::chrono::duration<double>(options.handshake_timeout).count()));
    case Wait::closed: return fail("checking the interpreter", "it ended without answering (" + ended() + ")");
    case Wait::bad:
        return fail("checking the interpreter",
                    "it answered something other than the worker's handshake: " + server->m_protocol_error);
    case Wait::again:
    case Wait::message: break;
    }
    const auto* hello = std::get_if<protocol::Hello>(&hello_message);
    if (!hello) return fail("checking the interpreter", "it answered something other than the worker's handshake");
    Handshake& h = server->m_handshake;
    h.hello_s = seconds_since(started);
    h.python_version = hello->python;
    h.executable = hello->executable;
    h.torch_origin = hello->torch_origin;
    h.torch_version = hello->torch_version;

    protocol::Message ready_message;
    switch (server->next_message(ready_message, started + options.import_timeout)) {
    case Wait::timeout:
        return fail("importing torch with", fmt::format("no answer within {:g} s (--timeout)",
                                                        std::chrono::duration<double>(options.import_timeout).count()));
    case Wait::closed: return fail("importing torch with", "the interpreter ended (" + ended() + ")");
    case Wait::bad:
        return fail("importing torch with", "unexpected answer from the worker: " + server->m_protocol_error);
    case Wait::again:
    case Wait::message: break;
    }
    if (const auto* no_torch = std::get_if<protocol::NoTorch>(&ready_message))
        return fail("checking the interpreter",
                    fmt::format("Python {}: {}", h.python_version,
                                no_torch->message.empty() ? std::string("import torch failed") : no_torch->message));
    const auto* ready = std::get_if<protocol::Ready>(&ready_message);
    if (!ready) return fail("importing torch with", "unexpected answer from the worker");
    h.ready_s = seconds_since(started);
    h.torch_version = ready->torch_version;
    h.gpu_build = ready->gpu_build;
    h.cuda_initialized = ready->cuda_initialized;
    h.threads = ready->threads;
    h.device_calls = ready->device_calls;
    return server;
}

ForkServer::~ForkServer() { stop(std::chrono::seconds(2)); }

namespace {

// Whether `pid` (our unreaped child) has ended, without reaping it: while it is a zombie its
// pid, and so the id of the session it leads, cannot be reused (wait(2), WNOWAIT).
bool has_ended(pid_t pid) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return info.si_pid == pid;
}

}  // namespace

void ForkServer::kill_all() {
    if (m_pid > 0) process::kill_session(m_pid);
}

void ForkServer::stop(std::chrono::milliseconds grace) {
    m_ctl.reset();  // end of file: the server kills its children's groups and exits
    if (m_pid > 0) {
        const auto deadline = Clock::now() + grace;
        while (!has_ended(m_pid) && Clock::now() < deadline) {
            if (m_log) {
                pollfd p{m_log.get(), POLLIN, 0};
                if (::poll(&p, 1, 20) > 0) drain_log();
            } else {
                ::usleep(20'000);
            }
        }
        // Whatever is left of its session (it, or what a child left outside its group).
        kill_all();
        int status = 0;
        pid_t got = 0;
        while ((got = ::waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {}
        if (got > 0 && m_death.empty()) m_death = status_text(status);
        m_pid = -1;
    }
    m_log.reset();
    m_alive = false;
}

void ForkServer::drain_log() {
    if (m_log) read_into(m_log, m_log_tail);
}

void ForkServer::mark_dead() {
    if (!m_alive) return;
    m_alive = false;
    m_ctl.reset();
    if (m_pid > 0) {
        // It closed its socket, or broke the protocol: it is gone or going. Give it a moment
        // to end by itself (its status says why), then end its whole session: a child it was
        // running would otherwise be an orphan.
        for (int i = 0; i < 50 && !has_ended(m_pid); ++i) ::usleep(20'000);
        kill_all();
        int status = 0;
        pid_t got = 0;
        while ((got = ::waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {}
        if (got > 0) m_death = status_text(status);
        m_pid = -1;
    }
    if (m_log) {
        // What it printed last says why; its output ends with it.
        pollfd p{m_log.get(), POLLIN, 0};
        while (m_log && ::poll(&p, 1, 100) > 0) drain_log();
    }
}

ForkServer::Wait ForkServer::receive(protocol::Message& message) {
    m_buffer.resize(protocol::k_max_message);
    iovec iov{m_buffer.data(), m_buffer.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;  // no room for descriptors: any sent along are closed by the kernel
    const ssize_t got = ::recvmsg(m_ctl.get(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return Wait::again;
    if (got <= 0) {
        mark_dead();
        return Wait::closed;
    }
    auto parsed = protocol::parse_worker_message(std::string_view(m_buffer.data(), static_cast<std::size_t>(got)),
                                                 (msg.msg_flags & MSG_TRUNC) != 0);
    if (!parsed) {
        m_protocol_error = parsed.error().cause;
        return Wait::bad;
    }
    message = std::move(*parsed);
    return Wait::message;
}

void ForkServer::signal_child(long id, int sig) {
    if (!m_ctl) return;
    const std::string text =
        json_text(nlohmann::json{{"op", "signal"}, {"id", id}, {"signal", sig == SIGKILL ? "SIGKILL" : "SIGTERM"}});
    ssize_t sent = -1;
    do {
        sent = ::send(m_ctl.get(), text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    // Not sent: the server is gone or not reading; the caller's deadline ends it.
}

ForkServer::Wait ForkServer::next_message(protocol::Message& message, Clock::time_point deadline) {
    for (;;) {
        if (!m_ctl) return Wait::closed;
        pollfd fds[2] = {{m_ctl.get(), POLLIN, 0}, {m_log.get(), POLLIN, 0}};
        const int n = ::poll(fds, m_log ? 2 : 1, ms_until(deadline));
        if (n < 0 && errno != EINTR) return Wait::closed;
        if (n > 0 && m_log && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) drain_log();
        if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            const Wait got = receive(message);
            if (got != Wait::again) return got;
        }
        if (Clock::now() >= deadline) return Wait::timeout;
    }
}

Result<ChildRun> ForkServer::run_child(nlohmann::json request, std::chrono::milliseconds timeout) {
    ChildRun run;
    if (!m_alive) {
        run.server_died = true;
        return run;
    }
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    const bool made = ::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0;
    const int made_errno = errno;
    UniqueFd out_fd(out[0]), out_for_child(out[1]), err_fd(err[0]), err_for_child(err[1]);
    if (!made) return os_error("creating pipes for", "a probe child", made_errno);
    const long id = ++m_next_id;
    request["id"] = id;
    const std::string text = json_text(request);

    // The write ends travel to the server with the request; the child gets them as 1 and 2.
    iovec iov{const_cast<char*>(text.data()), text.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(2 * sizeof(int));
    const int passed[2] = {out_for_child.get(), err_for_child.get()};
    std::memcpy(CMSG_DATA(cmsg), passed, sizeof passed);
    const auto started = Clock::now();
    ssize_t sent = -1;
    do {
        sent = ::sendmsg(m_ctl.get(), &msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    out_for_child.reset();
    err_for_child.reset();
    if (sent < 0) {
        out_fd.reset();
        err_fd.reset();
        mark_dead();
        run.server_died = true;
        return run;
    }

    bool exited = false, killed = false, draining = false;
    Clock::time_point deadline = started + timeout;
    Clock::time_point kill_at{}, give_up_at{}, drain_until{};
    for (;;) {
        const auto now = Clock::now();
        if (exited && !out_fd && !err_fd) break;
        if (exited && !draining) {
            // The server ended what the child left in its group before it reaped the child
            // (zygote.py); a process that left the group may still hold the pipes: bounded.
            draining = true;
            drain_until = now + k_drain_wait;
        }
        if (exited && now >= drain_until) break;
        if (!exited && !run.timed_out && now >= deadline) {
            run.timed_out = true;
            if (!run.started) {  // the server never said it forked: it is stuck
                mark_dead();     // ends its session
                run.server_died = true;
                break;
            }
            // A hung GPU kernel may ignore SIGTERM; the server signals the child's group (it
            // made it), SIGKILL follows.
            signal_child(id, SIGTERM);
            kill_at = now + k_term_grace;
            give_up_at = now + k_term_grace + k_reap_wait;
        }
        if (run.timed_out && !killed && now >= kill_at) {
            signal_child(id, SIGKILL);
            killed = true;
        }
        if (run.timed_out && !exited && now >= give_up_at) {  // the server does not reap: broken
            mark_dead();
            run.server_died = true;
            break;
        }
        Clock::time_point next = exited ? drain_until : run.timed_out ? (killed ? give_up_at : kill_at) : deadline;
        pollfd fds[4] = {{out_fd.get(), POLLIN, 0},
                         {err_fd.get(), POLLIN, 0},
                         {m_ctl.get(), POLLIN, 0},
                         {m_log.get(), POLLIN, 0}};
        const int n = ::poll(fds, 4, ms_until(next));
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        if (fds[0].fd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) read_into(out_fd, run.out);
        if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) read_into(err_fd, run.err);
        if (fds[3].fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP | POLLERR))) drain_log();
        if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
            protocol::Message reply;
            const Wait got = receive(reply);
            if (got == Wait::again) continue;
            if (got == Wait::closed) {  // the server died with the child running: its session was ended
                run.server_died = true;
                break;
            }
            if (got == Wait::bad) {
                const std::string why = m_protocol_error;
                mark_dead();
                return Error{"running a probe child with", m_python, "the fork server broke the protocol: " + why,
                             ExitCode::environment};
            }
            if (const auto* s = std::get_if<protocol::Started>(&reply); s && s->id == id) {
                run.started = true;
            } else if (const auto* e = std::get_if<protocol::Exited>(&reply); e && e->id == id) {
                run.wait_status = e->wait_status;
                exited = true;
            } else if (const auto* r = std::get_if<protocol::Rejected>(&reply); r && r->id == id) {
                return Error{"running a probe child with", m_python,
                             "the fork server rejected the request: " + r->message, ExitCode::environment};
            } else if (std::holds_alternative<protocol::Hello>(reply) ||
                       std::holds_alternative<protocol::Ready>(reply) ||
                       std::holds_alternative<protocol::NoTorch>(reply)) {
                mark_dead();
                return Error{"running a probe child with", m_python,
                             "the fork server broke the protocol: a start-up message while a child runs",
                             ExitCode::environment};
            }
            // Anything else belongs to an earlier child (a late "exited"): not this one's.
        }
    }
    out_fd.reset();
    err_fd.reset();
    run.wall_s = seconds_since(started);
    return run;
}

}  // namespace rmcp::probe
