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
#include <unistd.h>

namespace rmcp::probe {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_keep_bytes = 64 * 1024;         // output tail kept per child and for the server
constexpr std::size_t k_max_message = 1 << 20;          // python/rmcp/zygote.py MAX_MESSAGE
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
    // Its own process group: the terminal's ^C reaches rmcp, which then closes the socket;
    // the server kills its children and exits (python/rmcp/zygote.py).
    process::SpawnRequest request;
    request.argv = {options.python, "-m", "rmcp.worker", "--serve", "--control-fd", "3"};
    request.env = options.env;
    request.fds = {process::FdMapping::dev_null(STDIN_FILENO, O_RDONLY),
                   process::FdMapping::copy_of(log_write.get(), STDOUT_FILENO),
                   process::FdMapping::copy_of(log_write.get(), STDERR_FILENO),
                   process::FdMapping::copy_of(ctl_for_server.get(), 3)};
    request.group = process::ProcessGroup::own;
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

    nlohmann::json hello;
    switch (server->next_message(hello, started + options.handshake_timeout)) {
    case Wait::timeout:
        return fail("checking the interpreter",
                    fmt::format("no answer within {:g} s: is it a Python 3 interpreter?",
                                std::chrono::duration<double>(options.handshake_timeout).count()));
    case Wait::closed: return fail("checking the interpreter", "it ended without answering (" + ended() + ")");
    case Wait::message: break;
    }
    if (hello.value("event", "") != "hello" || !hello.contains("torch"))
        return fail("checking the interpreter", "it answered something other than the worker's handshake");
    Handshake& h = server->m_handshake;
    h.hello_s = seconds_since(started);
    h.python_version = hello.value("python", "");
    h.executable = hello.value("executable", "");
    const auto& torch = hello["torch"];
    h.torch_origin = torch.value("origin", "");
    h.torch_version = torch.value("version", "");

    nlohmann::json ready;
    switch (server->next_message(ready, started + options.import_timeout)) {
    case Wait::timeout:
        return fail("importing torch with", fmt::format("no answer within {:g} s (--timeout)",
                                                        std::chrono::duration<double>(options.import_timeout).count()));
    case Wait::closed: return fail("importing torch with", "the interpreter ended (" + ended() + ")");
    case Wait::message: break;
    }
    if (ready.value("event", "") == "no_torch")
        return fail("checking the interpreter",
                    fmt::format("Python {}: {}", h.python_version, ready.value("message", "import torch failed")));
    if (ready.value("event", "") != "ready") return fail("importing torch with", "unexpected answer from the worker");
    h.ready_s = seconds_since(started);
    h.torch_version = ready.value("torch_version", h.torch_version);
    h.gpu_build = ready["gpu_build"].is_string() ? ready["gpu_build"].get<std::string>() : "";
    h.cuda_initialized = ready.value("cuda_initialized", false);
    h.threads = ready.value("threads", 0);
    if (ready.contains("device_calls") && ready["device_calls"].is_array())
        for (const auto& c : ready["device_calls"]) h.device_calls.push_back(c.get<std::string>());
    return server;
}

ForkServer::~ForkServer() { stop(std::chrono::seconds(2)); }

void ForkServer::stop(std::chrono::milliseconds grace) {
    m_ctl.reset();  // end of file: the server kills its children's groups and exits
    if (m_pid > 0) {
        int status = 0;
        const auto deadline = Clock::now() + grace;
        pid_t got = 0;
        while ((got = ::waitpid(m_pid, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
            if (m_log) {
                pollfd p{m_log.get(), POLLIN, 0};
                if (::poll(&p, 1, 20) > 0) drain_log();
            } else {
                ::usleep(20'000);
            }
        }
        if (got == 0) {
            ::kill(-m_pid, SIGKILL);
            while ((got = ::waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {}
        }
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
        // It closed its socket: it is gone or going. Reap it (bounded) to say how it ended.
        int status = 0;
        pid_t got = 0;
        for (int i = 0; i < 50 && (got = ::waitpid(m_pid, &status, WNOHANG)) == 0; ++i) ::usleep(20'000);
        if (got == 0) {
            ::kill(-m_pid, SIGKILL);
            while ((got = ::waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {}
        }
        if (got > 0) m_death = status_text(status);
        m_pid = -1;
    }
    if (m_log) {
        // What it printed last says why; its output ends with it.
        pollfd p{m_log.get(), POLLIN, 0};
        while (m_log && ::poll(&p, 1, 100) > 0) drain_log();
    }
}

ForkServer::Wait ForkServer::next_message(nlohmann::json& message, Clock::time_point deadline) {
    std::vector<char> buf(k_max_message);
    for (;;) {
        if (!m_ctl) return Wait::closed;
        pollfd fds[2] = {{m_ctl.get(), POLLIN, 0}, {m_log.get(), POLLIN, 0}};
        const int n = ::poll(fds, m_log ? 2 : 1, ms_until(deadline));
        if (n < 0 && errno != EINTR) return Wait::closed;
        if (n > 0 && m_log && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) drain_log();
        if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            const ssize_t got = ::recv(m_ctl.get(), buf.data(), buf.size(), 0);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got <= 0) {
                mark_dead();
                return Wait::closed;
            }
            auto parsed = nlohmann::json::parse(buf.data(), buf.data() + got, nullptr, false);
            if (parsed.is_discarded() || !parsed.is_object()) continue;
            message = std::move(parsed);
            return Wait::message;
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

    bool exited = false, killed = false, leftovers_killed = false;
    Clock::time_point deadline = started + timeout;
    Clock::time_point kill_at{}, give_up_at{}, drain_until{};
    std::vector<char> buf(k_max_message);
    for (;;) {
        const auto now = Clock::now();
        if (exited && !out_fd && !err_fd) break;
        if (exited && !leftovers_killed) {
            // Processes the child left behind in its group would keep the pipes open.
            ::kill(-run.pid, SIGKILL);
            leftovers_killed = true;
            drain_until = now + k_drain_wait;
        }
        if (exited && now >= drain_until) break;
        if (!exited && !run.timed_out && now >= deadline) {
            run.timed_out = true;
            if (run.pid <= 0) {  // the server never said it forked: it is stuck
                ::kill(-m_pid, SIGKILL);
                mark_dead();
                run.server_died = true;
                break;
            }
            // A hung GPU kernel may ignore SIGTERM; the whole group goes, the child first.
            ::kill(-run.pid, SIGTERM);
            kill_at = now + k_term_grace;
            give_up_at = now + k_term_grace + k_reap_wait;
        }
        if (run.timed_out && !killed && now >= kill_at) {
            ::kill(-run.pid, SIGKILL);
            killed = true;
        }
        if (run.timed_out && !exited && now >= give_up_at) {  // the server does not reap: broken
            ::kill(-m_pid, SIGKILL);
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
            const ssize_t got = ::recv(m_ctl.get(), buf.data(), buf.size(), 0);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got <= 0) {
                // The server died with the child running: the child is an orphan now.
                if (run.pid > 0) ::kill(-run.pid, SIGKILL);
                mark_dead();
                run.server_died = true;
                break;
            }
            const auto reply = nlohmann::json::parse(buf.data(), buf.data() + got, nullptr, false);
            if (reply.is_discarded() || !reply.is_object() || reply.value("id", -1L) != id) continue;
            const std::string event = reply.value("event", "");
            if (event == "started") {
                run.pid = reply.value("pid", -1);
            } else if (event == "exited") {
                run.wait_status = reply.value("wait_status", 0);
                exited = true;
            } else if (event == "rejected") {
                return Error{"running a probe child with", m_python,
                             "the fork server rejected the request: " + reply.value("message", ""),
                             ExitCode::environment};
            }
        }
    }
    out_fd.reset();
    err_fd.reset();
    run.wall_s = seconds_since(started);
    return run;
}

}  // namespace rmcp::probe
