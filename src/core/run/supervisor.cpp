#include "run/supervisor.hpp"

#include "util/aligned_buffer.hpp"
#include "util/strings.hpp"
#include "util/unique_fd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::run {

namespace {

using Clock = std::chrono::steady_clock;

// One read per wake-up, into a page-aligned buffer; large enough that relaying costs
// little more than cat's own copy loop (docs/PERFORMANCE.md, "rmcp run").
constexpr std::size_t k_read_size = std::size_t{256} << 10;
constexpr std::size_t k_tail_bytes = std::size_t{32} << 10;   // kept for the excerpt
constexpr std::size_t k_recent_bytes = std::size_t{4} << 10;  // per stream, for match lines
constexpr std::size_t k_excerpt_lines = 60;
constexpr std::size_t k_line_cap = 1000;

bool is_pipe(int fd) {
    struct stat st {};
    return fd >= 0 && ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

// Clamped, so that no value (NaN, inf, 1e99) reaches the conversion to an integer type,
// which would be undefined (C++ [conv.fpint]) and did kill healthy children at once.
std::chrono::milliseconds seconds_to_ms(double s) {
    if (!(s > 0)) return std::chrono::milliseconds(0);
    s = std::min(s, k_max_seconds);
    return std::chrono::milliseconds(static_cast<long long>(s * 1000.0 + 0.5));
}

// The processes of process group `pgid`, from /proc (those of the run left running).
std::vector<int> processes_in_group(pid_t pgid) {
    std::vector<int> out;
    DIR* proc = ::opendir("/proc");
    if (!proc) return out;
    while (const dirent* ent = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(ent->d_name, &end, 10);
        if (*end != '\0' || pid <= 0) continue;
        if (::getpgid(static_cast<pid_t>(pid)) == pgid) out.push_back(static_cast<int>(pid));
    }
    ::closedir(proc);
    std::sort(out.begin(), out.end());
    return out;
}

// Writes everything, waiting when the destination is non-blocking and full.
// Returns 0 or the errno that stopped it.
int write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                pollfd p{fd, POLLOUT, 0};
                ::poll(&p, 1, -1);
                continue;
            }
            return errno;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return 0;
}

// Blocks the signals the supervisor handles and reads them from a signalfd, so they are
// dealt with in the relay loop rather than in handlers. The child gets the old mask back.
class SignalState {
public:
    SignalState() {
        sigemptyset(&m_handled);
        for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH}) sigaddset(&m_handled, s);
        ::pthread_sigmask(SIG_BLOCK, &m_handled, &m_old_mask);
        m_fd.reset(::signalfd(-1, &m_handled, SFD_CLOEXEC | SFD_NONBLOCK));
        // A closed reader of our stdout must be an EPIPE we can act on, not our death.
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &m_old_pipe);
    }
    ~SignalState() {
        m_fd.reset();
        ::sigaction(SIGPIPE, &m_old_pipe, nullptr);
        ::pthread_sigmask(SIG_SETMASK, &m_old_mask, nullptr);
    }
    SignalState(const SignalState&) = delete;
    SignalState& operator=(const SignalState&) = delete;

    [[nodiscard]] int fd() const { return m_fd.get(); }
    [[nodiscard]] const sigset_t& child_mask() const { return m_old_mask; }
    [[nodiscard]] bool sigpipe_was_default() const { return m_old_pipe.sa_handler == SIG_DFL; }

    // Signals received since the last call, in order.
    std::vector<int> take() {
        std::vector<int> out;
        signalfd_siginfo info{};
        while (::read(m_fd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info))
            out.push_back(static_cast<int>(info.ssi_signo));
        return out;
    }

private:
    sigset_t m_handled{};
    sigset_t m_old_mask{};
    struct sigaction m_old_pipe {};
    UniqueFd m_fd;
};

class LogSink {
public:
    LogSink(const std::string& path, Diagnostics& diag) : m_path(path), m_diag(diag) {
        if (path.empty()) return;
        m_fd.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
        if (!m_fd) m_diag.warning(fmt::format("opening log {}: {}; not logging", path, std::strerror(errno)));
    }
    ~LogSink() = default;
    LogSink(const LogSink&) = delete;
    LogSink& operator=(const LogSink&) = delete;

    void write(std::string_view bytes) {
        if (!m_fd) return;
        if (const int err = write_all(m_fd.get(), bytes.data(), bytes.size()); err != 0) {
            m_diag.warning(fmt::format("writing log {}: {}; not logging any more", m_path, std::strerror(err)));
            m_fd.reset();
        }
    }

private:
    std::string m_path;
    Diagnostics& m_diag;
    UniqueFd m_fd;
};

// The line containing a match that ended at end_offset, from the bytes of this chunk and
// the few kilobytes of the stream before it.
std::string line_around(std::string_view recent, std::string_view chunk, std::uint64_t chunk_start,
                        std::uint64_t end_offset) {
    std::string buf;
    buf.reserve(recent.size() + std::min(chunk.size(), k_recent_bytes * 4));
    buf.append(recent);
    const std::uint64_t recent_start = chunk_start - recent.size();
    std::size_t pos = end_offset >= recent_start ? static_cast<std::size_t>(end_offset - recent_start) : 0;
    // Only the part of the chunk near the match matters.
    const std::size_t chunk_pos = pos > recent.size() ? pos - recent.size() : 0;
    const std::size_t take = std::min(chunk.size(), chunk_pos + k_line_cap);
    buf.append(chunk.substr(0, take));
    pos = std::min(pos, buf.size());
    if (pos > 0 && buf[pos - 1] == '\n') --pos;
    const std::size_t nl_before = pos == 0 ? std::string::npos : buf.rfind('\n', pos - 1);
    std::size_t begin = nl_before == std::string::npos ? 0 : nl_before + 1;
    std::size_t end = buf.find('\n', pos);
    if (end == std::string::npos) end = buf.size();
    if (end - begin > k_line_cap)
        begin = end - k_line_cap > pos ? (pos > k_line_cap / 2 ? pos - k_line_cap / 2 : 0) : end - k_line_cap;
    std::string line = buf.substr(begin, std::min(end - begin, k_line_cap));
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
    return line;
}

std::vector<std::string> last_lines(const std::string& tail, bool truncated) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    if (truncated) {
        const auto nl = tail.find('\n');
        start = nl == std::string::npos ? tail.size() : nl + 1;  // drop the cut-off first line
    }
    while (start < tail.size()) {
        auto nl = tail.find('\n', start);
        if (nl == std::string::npos) nl = tail.size();
        std::string line = tail.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        start = nl + 1;
    }
    if (lines.size() > k_excerpt_lines) lines.erase(lines.begin(), lines.end() - k_excerpt_lines);
    return lines;
}

std::string temp_dir() {
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

// The directory --trace-alloc's summary is written to (docs/security.md, "Private temporary
// files"). TMPDIR is shared: a predictable name there let another user plant a FIFO (rmcp
// blocked in open(), deaf to SIGTERM) or a link (its target read into the report; review
// 2026-11-28, D6). mkdtemp creates the directory exclusively, mode 0700: nobody else can
// put anything in it, and what the run itself leaves there is opened without following
// links or blocking, and read only when it is a regular file.
class PrivateTempDir {
public:
    // Empty path() when it could not be made; error() then says why.
    PrivateTempDir() {
        std::string templ = temp_dir() + "/rmcp-run-XXXXXX";
        if (::mkdtemp(templ.data()) != nullptr) m_path = std::move(templ);
        else m_errno = errno;
    }
    ~PrivateTempDir() {
        if (m_path.empty()) return;
        // One level: the shim writes one file; the run may have left others (it knows the path).
        if (DIR* d = ::opendir(m_path.c_str())) {
            const int dfd = ::dirfd(d);
            while (const dirent* e = ::readdir(d)) {
                const std::string_view name = e->d_name;
                if (name == "." || name == "..") continue;
                if (::unlinkat(dfd, e->d_name, 0) != 0 && errno == EISDIR) ::unlinkat(dfd, e->d_name, AT_REMOVEDIR);
            }
            ::closedir(d);
        }
        ::rmdir(m_path.c_str());
    }
    PrivateTempDir(const PrivateTempDir&) = delete;
    PrivateTempDir& operator=(const PrivateTempDir&) = delete;
    [[nodiscard]] const std::string& path() const { return m_path; }
    [[nodiscard]] int error() const { return m_errno; }

private:
    std::string m_path;
    int m_errno = 0;
};

// The summary the shim wrote: a regular file, opened without following a link or blocking
// on a FIFO, at most 1 MiB read. nullopt: nothing usable there (with `why` set when
// something else than a missing file was found).
std::optional<std::string> read_private_file(const std::string& path, std::string& why) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        if (errno != ENOENT) why = fmt::format("{}: {}", path, std::strerror(errno));
        return std::nullopt;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        why = fmt::format("{}: not a regular file", path);
        return std::nullopt;
    }
    constexpr std::size_t k_max_summary = std::size_t{1} << 20;
    std::string text;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > k_max_summary) {
            why = fmt::format("{}: larger than {} bytes", path, k_max_summary);
            return std::nullopt;
        }
    }
    return text;
}

class AttemptRunner {
public:
    AttemptRunner(const RunOptions& options, SignalState& signals, LogSink& log, Diagnostics& diag, Attempt& attempt)
        : m_options(options), m_signals(signals), m_log(log), m_diag(diag), m_attempt(attempt) {}

    void run(std::vector<std::string> env) {
        std::string alloc_log;
        std::optional<PrivateTempDir> private_dir;
        if (!m_options.preload_library.empty()) private_dir.emplace();
        if (private_dir && private_dir->path().empty())
            m_diag.note(fmt::format("--trace-alloc: cannot create a private directory in {}: {}; allocations are not "
                                    "traced in attempt {}",
                                    temp_dir(), std::strerror(private_dir->error()), m_attempt.number));
        if (private_dir && !private_dir->path().empty()) {
            alloc_log = private_dir->path() + "/alloc.json";
            const auto old = env_value(env, "LD_PRELOAD");
            env = apply_env(env, {{"LD_PRELOAD", old && !old->empty() ? m_options.preload_library + ":" + *old
                                                                      : m_options.preload_library},
                                  {"RMCP_ALLOC", "trace"},
                                  {"RMCP_ALLOC_LOG", alloc_log}});
        }
        process::SpawnRequest request;
        request.argv = m_options.argv;
        request.env = std::move(env);
        request.output = m_options.terminal;
        request.group = process::ProcessGroup::own;  // signals reach every process of the run, none of ours
        request.signal_mask = m_signals.child_mask();
        request.reset_sigpipe = m_signals.sigpipe_was_default();
        m_attempt.started = std::chrono::system_clock::now();
        const auto t0 = Clock::now();
        auto child = process::spawn(request);
        if (!child) {
            m_attempt.end = AttemptEnd::not_started;
            m_attempt.error = child.error().message();
            m_attempt.start_error = child.error();
            m_attempt.exit_status = child.error().os_error == ENOENT ? k_exit_not_found : k_exit_not_executable;
            return;
        }
        m_pid = child->pid;
        m_attempt.pid = child->pid;
        m_fds[0] = std::move(child->out_fd);
        m_fds[1] = std::move(child->err_fd);
        for (std::size_t i = 0; i < 2; ++i)
            m_tee[i] = is_pipe(m_fds[i].get()) && is_pipe(i == 0 ? m_options.out_fd : m_options.err_fd);
        relay_until_done(t0);
        m_attempt.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (m_watcher)
            for (auto& match : m_watcher->finish()) {
                const auto& recent = m_recent[static_cast<std::size_t>(match.stream)];
                if (match.line.empty())
                    match.line =
                        line_around(recent, {}, m_offsets[static_cast<std::size_t>(match.stream)], match.end_offset);
                add_match(std::move(match));
            }
        m_attempt.excerpt = last_lines(m_tail, m_tail_truncated);
        if (!alloc_log.empty()) read_allocations(alloc_log);
    }

private:
    void relay_until_done(Clock::time_point t0) {
        auto last_output = t0;
        std::optional<Clock::time_point> kill_at, drain_until, drain_limit;
        const bool watch_stall = m_options.stall_timeout_s > 0;
        const auto stall = seconds_to_ms(m_options.stall_timeout_s);
        for (;;) {
            const bool open = m_fds[0].valid() || m_fds[1].valid();
            if (m_done && !open) break;
            auto now = Clock::now();
            if (m_done && !drain_until) {
                drain_until = now + k_drain_quiet;
                drain_limit = now + k_drain_limit;
            }
            if (drain_until && (now >= *drain_until || now >= *drain_limit)) {
                stop_relaying();
                break;
            }
            if (m_end_at && now >= *m_end_at) {
                // SIGTERM/SIGHUP were forwarded --kill-grace ago and the run goes on: end it.
                ::kill(-m_pid, SIGKILL);
                // Named after the signal that ends rmcp (docs/run.md): the last SIGTERM or SIGHUP,
                // not an earlier SIGINT the child ignored.
                m_diag.note(fmt::format("still running {} s (--kill-grace) after SIG{}: killed process group {}; "
                                        "ending",
                                        m_options.kill_grace_s, ::sigabbrev_np(m_ending_signal), m_pid));
                m_attempt.ended_by_signal = m_ending_signal;
                reap_within(std::chrono::seconds(1));
                stop_relaying();
                break;
            }
            if (!m_done && watch_stall && !m_attempt.stalled && now - last_output >= stall) {
                m_attempt.stalled = true;
                m_diag.note(fmt::format("no output for {} s: suspected GPU hang; stopping process group {}",
                                        m_options.stall_timeout_s, m_pid));
                ::kill(-m_pid, SIGTERM);
                kill_at = now + seconds_to_ms(m_options.kill_grace_s);
            }
            if (kill_at && now >= *kill_at) {
                if (!m_done) ::kill(-m_pid, SIGKILL);
                kill_at.reset();
            }
            std::optional<Clock::time_point> wake;
            const auto consider = [&](std::optional<Clock::time_point> t) {
                if (t && (!wake || *t < *wake)) wake = t;
            };
            if (!m_done && watch_stall && !m_attempt.stalled) consider(last_output + stall);
            consider(kill_at);
            consider(drain_until);
            consider(drain_limit);
            consider(m_end_at);
            int timeout = -1;
            if (wake) {
                const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*wake - now).count();
                timeout = static_cast<int>(std::clamp<long long>(ms, 0, 1 << 30));
            }

            std::array<pollfd, 3> p{};
            p[0] = {m_signals.fd(), POLLIN, 0};
            p[1] = {m_fds[0].get(), POLLIN, 0};  // a negative fd is ignored by poll
            p[2] = {m_fds[1].get(), POLLIN, 0};
            const int ready = ::poll(p.data(), p.size(), timeout);
            if (ready < 0 && errno != EINTR) break;
            if (ready <= 0) continue;
            if (p[0].revents) handle_signals();
            for (std::size_t s = 0; s < 2; ++s)
                if (m_fds[s].valid() && p[s + 1].revents) {
                    if (read_stream(s)) {
                        last_output = Clock::now();
                        if (drain_until) drain_until = last_output + k_drain_quiet;
                    }
                }
        }
    }

    // Stops relaying with the pipes still open: whoever holds them is named in the report.
    void stop_relaying() {
        const bool open = m_fds[0].valid() || m_fds[1].valid();
        close_stream(0);
        close_stream(1);
        if (!open || m_pid <= 0) return;
        m_attempt.background_processes = processes_in_group(m_pid);
        if (m_attempt.background_processes.empty()) return;
        std::string pids;
        for (const int pid : m_attempt.background_processes) pids += (pids.empty() ? "" : " ") + std::to_string(pid);
        m_diag.note(fmt::format("the command exited but {} process(es) it started are still running and writing "
                                "(pid {}); rmcp stopped relaying their output and leaves them running",
                                m_attempt.background_processes.size(), pids));
    }

    // Waits (a bounded time: a process stuck in the GPU driver may not die at once) for the
    // child after SIGKILL.
    void reap_within(std::chrono::milliseconds limit) {
        const auto until = Clock::now() + limit;
        while (!m_done && Clock::now() < until) {
            reap();
            if (!m_done) ::usleep(10'000);
        }
    }

    // Returns whether bytes arrived.
    bool read_stream(std::size_t s) {
        const int dest = s == 0 ? m_options.out_fd : m_options.err_fd;
        // Pipe to pipe, the bytes are relayed by tee(2) (the kernel shares the pages; no
        // copy through rmcp) and then read once for the log and the matcher.
        std::size_t relayed = 0;
        if (m_tee[s] && !m_sink_broken[s]) {
            const int err = tee_to(s, dest, relayed);
            if (err != 0) relay_failed(s, err);
        }
        const std::size_t want = relayed > 0 ? relayed : m_buffer.size();
        ssize_t n = ::read(m_fds[s].get(), m_buffer.data(), want);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) return false;
            close_stream(s);  // EIO: the pty's last slave closed
            return false;
        }
        if (n == 0) {
            close_stream(s);
            return false;
        }
        // What tee() duplicated is in the pipe: take exactly that, or it would be relayed twice.
        while (static_cast<std::size_t>(n) < relayed) {
            const ssize_t more = ::read(m_fds[s].get(), m_buffer.data() + n, relayed - static_cast<std::size_t>(n));
            if (more > 0) n += more;
            else if (more == 0 || errno != EINTR) break;
        }
        const std::string_view chunk(m_buffer.data(), static_cast<std::size_t>(n));
        if (relayed == 0 && !m_sink_broken[s])
            if (const int err = write_all(dest, chunk.data(), chunk.size()); err != 0) relay_failed(s, err);
        m_log.write(chunk);
        (s == 0 ? m_attempt.bytes_out : m_attempt.bytes_err) += chunk.size();
        keep_tail(chunk);
        watch(static_cast<StreamId>(s), chunk);
        if (m_close_after) {
            m_close_after = false;
            close_stream(s);
        }
        return true;
    }

    // Duplicates what the child's pipe holds into `dest` (a pipe too), waiting while `dest`
    // is full as write() would. `relayed` gets the byte count; returns 0 or an errno.
    // EINVAL (not two pipes after all) turns tee off for the stream: read and write it is.
    int tee_to(std::size_t s, int dest, std::size_t& relayed) {
        for (;;) {
            const ssize_t n = ::tee(m_fds[s].get(), dest, m_buffer.size(), SPLICE_F_NONBLOCK);
            if (n >= 0) {
                relayed = static_cast<std::size_t>(n);
                return 0;
            }
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {  // poll() said there is input: the destination is full
                pollfd p{dest, POLLOUT, 0};
                ::poll(&p, 1, -1);
                if (p.revents & (POLLERR | POLLHUP)) return EPIPE;
                continue;
            }
            if (errno == EINVAL) {
                m_tee[s] = false;
                return 0;
            }
            return errno;
        }
    }

    void relay_failed(std::size_t s, int err) {
        // Our reader went away (`rmcp run -- cmd | head`): close the child's pipe too,
        // so it meets the same EPIPE/SIGPIPE it would have met without us.
        m_sink_broken[s] = true;
        if (s == 0 && m_attempt.stdout_relay_error == 0) m_attempt.stdout_relay_error = err;
        m_diag.verbose(fmt::format("relaying std{}: {}", s == 0 ? "out" : "err", std::strerror(err)));
        m_close_after = true;
    }

    void keep_tail(std::string_view chunk) {
        if (chunk.size() >= k_tail_bytes) {
            m_tail.assign(chunk.substr(chunk.size() - k_tail_bytes));
            m_tail_truncated = true;
            return;
        }
        m_tail.append(chunk);
        if (m_tail.size() > 2 * k_tail_bytes) {
            m_tail.erase(0, m_tail.size() - k_tail_bytes);
            m_tail_truncated = true;
        }
    }

    void watch(StreamId stream, std::string_view chunk) {
        const std::size_t s = static_cast<std::size_t>(stream);
        if (!m_watcher && !m_watcher_failed && m_options.watcher) {
            auto made = m_options.watcher();
            if (made) {
                m_watcher = std::move(*made);
            } else {
                m_watcher_failed = true;
                m_diag.warning(fmt::format("{}; output is relayed but not recognised", made.error().message()));
            }
        }
        if (m_watcher) {
            auto matches = m_watcher->feed(stream, chunk);
            for (auto& match : matches) {
                match.line = line_around(m_recent[s], chunk, m_offsets[s], match.end_offset);
                add_match(std::move(match));
            }
        }
        m_offsets[s] += chunk.size();
        auto& recent = m_recent[s];
        if (chunk.size() >= k_recent_bytes) {
            recent.assign(chunk.substr(chunk.size() - k_recent_bytes));
        } else {
            recent.append(chunk);
            if (recent.size() > k_recent_bytes) recent.erase(0, recent.size() - k_recent_bytes);
        }
    }

    void add_match(WatchMatch match) {
        for (auto& seen : m_attempt.matches)
            if (seen.first.entry_id == match.entry_id) {
                ++seen.count;
                return;
            }
        m_attempt.matches.push_back(MatchSummary{std::move(match), 1});
    }

    void handle_signals() {
        for (const int sig : m_signals.take()) {
            switch (sig) {
            case SIGCHLD: reap(); break;
            case SIGWINCH:
                if (m_options.terminal == Terminal::pty)
                    for (const auto& fd : m_fds)
                        if (fd) process::copy_window_size(fd.get());
                break;
            case SIGINT: {
                const auto now = Clock::now();
                if (m_last_interrupt && now - *m_last_interrupt <= seconds_to_ms(m_options.interrupt_window_s)) {
                    m_diag.note(fmt::format("second interrupt: killing process group {}", m_pid));
                    m_attempt.killed_after_interrupt = true;
                    ::kill(-m_pid, SIGKILL);
                    m_last_interrupt.reset();
                    break;
                }
                m_last_interrupt = now;
                forward(sig);
                break;
            }
            case SIGTERM:
            case SIGHUP:
                // The whole group hears it (even after the child exited: whatever it left
                // running is the run too); after --kill-grace rmcp ends itself.
                if (m_attempt.forwarded_signal == 0) m_attempt.forwarded_signal = sig;
                m_ending_signal = sig;  // the last one received is what ends rmcp
                ::kill(-m_pid, sig);
                if (!m_end_at) m_end_at = Clock::now() + seconds_to_ms(m_options.kill_grace_s);
                break;
            default: forward(sig); break;
            }
        }
    }

    void forward(int sig) {
        if (m_attempt.forwarded_signal == 0) m_attempt.forwarded_signal = sig;
        if (m_done) return;
        ::kill(-m_pid, sig);
    }

    // As a child subreaper we also collect the run's orphaned grandchildren: no zombies.
    void reap() {
        for (;;) {
            int status = 0;
            const pid_t pid = ::waitpid(-1, &status, WNOHANG);
            if (pid <= 0) break;
            if (pid != m_pid) continue;
            m_done = true;
            if (WIFSIGNALED(status)) {
                m_attempt.end = AttemptEnd::signaled;
                m_attempt.exit_status = WTERMSIG(status);
                m_attempt.core_dumped = WCOREDUMP(status);
            } else {
                m_attempt.end = AttemptEnd::exited;
                m_attempt.exit_status = WEXITSTATUS(status);
            }
        }
    }

    void close_stream(std::size_t s) { m_fds[s].reset(); }

    void read_allocations(const std::string& path) {
        std::string why;
        const auto read = read_private_file(path, why);
        if (!read) {  // the shim wrote nothing (not loaded, or the child never reached exit), or not a file
            if (!why.empty()) m_diag.note("--trace-alloc: allocation summary ignored: " + why);
            return;
        }
        const std::string& text = *read;
        auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        m_attempt.allocations = parsed.is_discarded() ? nlohmann::json{{"unparsed", text.substr(0, 4096)}} : parsed;
    }

    const RunOptions& m_options;
    SignalState& m_signals;
    LogSink& m_log;
    Diagnostics& m_diag;
    Attempt& m_attempt;
    pid_t m_pid = -1;
    bool m_done = false;
    std::array<UniqueFd, 2> m_fds;
    std::array<bool, 2> m_sink_broken{false, false};
    std::array<bool, 2> m_tee{false, false};  // relay by tee(2): both ends are pipes
    bool m_close_after = false;
    std::array<std::uint64_t, 2> m_offsets{0, 0};
    std::array<std::string, 2> m_recent;
    AlignedBuffer m_buffer{k_read_size};
    std::string m_tail;
    bool m_tail_truncated = false;
    std::unique_ptr<OutputWatcher> m_watcher;
    bool m_watcher_failed = false;
    std::optional<Clock::time_point> m_last_interrupt;
    std::optional<Clock::time_point> m_end_at;  // SIGTERM/SIGHUP + --kill-grace
    int m_ending_signal = 0;                    // the last SIGTERM/SIGHUP: what ends rmcp at m_end_at
};

}  // namespace

std::string rung_name(const Rung& rung) {
    std::string name = rung.profile.empty() ? "default" : rung.profile;
    if (rung.hide_gpu) name += " + GPU hidden";
    return name;
}

std::vector<const MatchSummary*> ranked_gpu_matches(const Attempt& attempt) {
    std::vector<const MatchSummary*> specific;
    std::vector<const MatchSummary*> family;
    for (const auto& m : attempt.matches)
        if (is_gpu_failure_category(m.first.category)) (m.first.family ? family : specific).push_back(&m);
    return specific.empty() ? family : specific;
}

std::string first_gpu_match(const Attempt& attempt) {
    const auto ranked = ranked_gpu_matches(attempt);
    return ranked.empty() ? "GPU failure" : ranked.front()->first.entry_id;
}

std::string_view stream_name(StreamId s) { return s == StreamId::out ? "stdout" : "stderr"; }

bool is_gpu_failure_category(std::string_view category) {
    static constexpr std::string_view k_gpu[] = {"gpu-memory-fault", "gpu-hang", "hsa-runtime-error", "miopen-failure",
                                                 "kernel-driver-fault"};
    return std::find(std::begin(k_gpu), std::end(k_gpu), category) != std::end(k_gpu);
}

int Attempt::shell_code() const {
    if (ended_by_signal != 0) return 128 + ended_by_signal;  // rmcp ended itself on that signal
    return end == AttemptEnd::signaled ? 128 + exit_status : exit_status;
}

Result<double> check_seconds(std::string_view text) {
    const std::string s(trim(text));
    char* end = nullptr;
    errno = 0;
    const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
    // Decimal only: strtod would also take hex floats, "inf" and "nan".
    if (s.empty() || end != s.c_str() + s.size() || s.find_first_not_of("0123456789.eE+-") != std::string::npos)
        return Error{"", std::string(text), "not a number of seconds", ExitCode::usage};
    if (!std::isfinite(v) || v < 0 || v > k_max_seconds)
        return Error{"", std::string(text),
                     fmt::format("must be finite seconds from 0 to {:.0f} (30 days)", k_max_seconds), ExitCode::usage};
    return v;
}

bool RunResult::incident() const {
    return std::any_of(attempts.begin(), attempts.end(), [](const Attempt& a) { return a.gpu_failure; });
}

RunResult supervise(const RunOptions& options, Diagnostics& diag) {
    RunResult result;
    result.started = std::chrono::system_clock::now();
    const auto t0 = Clock::now();
    SignalState signals;
    LogSink log(options.log_path, diag);
    // Orphans of the run are re-parented to us and reaped, instead of lingering as zombies
    // of whoever adopts them.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const auto base_env = process::current_environment();

    for (std::size_t i = 0; i < options.plan.size(); ++i) {
        const Rung& rung = options.plan[i];
        Attempt& attempt = result.attempts.emplace_back();
        attempt.number = static_cast<unsigned>(i + 1);
        attempt.rung = rung;
        auto env = apply_env(base_env, rung.env);
        // A faulting process dies with its stdio buffer; the last lines are the evidence.
        if (!env_value(env, "PYTHONUNBUFFERED")) env.emplace_back("PYTHONUNBUFFERED=1");
        AttemptRunner(options, signals, log, diag, attempt).run(std::move(env));

        const bool failed = attempt.end != AttemptEnd::exited || attempt.exit_status != 0;
        const bool gpu_match = std::any_of(attempt.matches.begin(), attempt.matches.end(), [](const MatchSummary& m) {
            return is_gpu_failure_category(m.first.category);
        });
        attempt.gpu_failure = attempt.end != AttemptEnd::not_started && failed && (gpu_match || attempt.stalled);
        if (attempt.end == AttemptEnd::not_started) {
            diag.report(MessageLevel::error, attempt.error);
            break;
        }
        const bool user_stopped = attempt.forwarded_signal != 0 || attempt.killed_after_interrupt;
        if (!attempt.gpu_failure || user_stopped || i + 1 >= options.plan.size()) break;
        // Whatever the failed attempt left running (DataLoader workers) may still hold the GPU.
        if (attempt.pid > 0) ::kill(-attempt.pid, SIGKILL);
        diag.note(
            fmt::format("attempt {} under profile {} ended with {} ({}); retrying under profile {} (attempt {} of {})",
                        attempt.number, rung_name(rung),
                        attempt.end == AttemptEnd::signaled ? fmt::format("signal {}", attempt.exit_status)
                                                            : fmt::format("exit {}", attempt.exit_status),
                        attempt.stalled ? std::string("stalled") : first_gpu_match(attempt),
                        rung_name(options.plan[i + 1]), i + 2, options.plan.size()));
    }
    result.exit_code = result.attempts.back().shell_code();
    result.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return result;
}

}  // namespace rmcp::run
