// Log sources for the scanner: a file, standard input or any descriptor, plain or gzip
// (decided on the first two bytes), read in large chunks.
#include "explain/log_source.hpp"

#include "util/aligned_buffer.hpp"
#include "util/unique_fd.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include <pthread.h>

#include <fcntl.h>
#include <unistd.h>

namespace rmcp::explain {

namespace {

constexpr std::size_t k_read_chunk = std::size_t{256} << 10;

Error read_error(std::string_view what, std::string cause) {
    return Error{"reading", std::string(what), std::move(cause), ExitCode::usage};
}

// Reads up to buf.size() bytes, retrying on EINTR; returns bytes read (0 at EOF) or -errno.
long read_some(int fd, char* buf, std::size_t size) {
    for (;;) {
        const auto n = ::read(fd, buf, size);
        if (n >= 0) return static_cast<long>(n);
        if (errno != EINTR) return -errno;
    }
}

class Inflater {
public:
    Inflater() { m_ok = inflateInit2(&m_zs, 15 + 32) == Z_OK; }
    ~Inflater() { inflateEnd(&m_zs); }
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;

    // Inflates `in` completely into `sink` (the scanner, after the relay when there is one).
    template <class Sink>
    Status push(std::string_view in, std::string_view what, Sink&& sink) {
        if (!m_ok) return read_error(what, "cannot initialise zlib");
        m_zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        m_zs.avail_in = static_cast<uInt>(in.size());
        while (m_zs.avail_in > 0) {
            if (m_member_done) {
                // Another gzip member follows (concatenated .gz files are valid gzip).
                inflateReset(&m_zs);
                m_member_done = false;
            }
            m_zs.next_out = reinterpret_cast<Bytef*>(m_out.data());
            m_zs.avail_out = static_cast<uInt>(m_out.size());
            const int rc = inflate(&m_zs, Z_NO_FLUSH);
            const std::size_t produced = m_out.size() - m_zs.avail_out;
            if (produced > 0)
                if (auto s = sink(std::string_view(m_out.data(), produced)); !s) return s;
            if (rc == Z_STREAM_END) {
                m_member_done = true;
            } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                return read_error(what, fmt::format("corrupt gzip data ({})", m_zs.msg ? m_zs.msg : zError(rc)));
            } else if (rc == Z_BUF_ERROR && produced == 0) {
                break;
            }
        }
        // Drain output held back inside zlib.
        for (;;) {
            m_zs.next_out = reinterpret_cast<Bytef*>(m_out.data());
            m_zs.avail_out = static_cast<uInt>(m_out.size());
            if (m_member_done) break;
            const int rc = inflate(&m_zs, Z_NO_FLUSH);
            const std::size_t produced = m_out.size() - m_zs.avail_out;
            if (produced > 0)
                if (auto s = sink(std::string_view(m_out.data(), produced)); !s) return s;
            if (rc == Z_STREAM_END) m_member_done = true;
            if (produced == 0 || rc == Z_STREAM_END) break;
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                return read_error(what, fmt::format("corrupt gzip data ({})", m_zs.msg ? m_zs.msg : zError(rc)));
        }
        return ok_status();
    }
    Status end(std::string_view what) const {
        if (!m_member_done) return read_error(what, "unexpected end of gzip data");
        return ok_status();
    }

private:
    z_stream m_zs{};
    bool m_ok = false;
    bool m_member_done = false;
    AlignedBuffer m_out{k_read_chunk * 4};
};

}  // namespace

Status scan_fd(int fd, std::string_view what, LogScanner& scanner, const ScanHooks& hooks) {
    AlignedBuffer buf(k_read_chunk);
    // Decide plain or gzip on the first two bytes (a pipe may deliver them one at a time).
    std::size_t have = 0;
    while (have < 2) {
        const long n = read_some(fd, buf.data() + have, buf.size() - have);
        if (n < 0) return os_error("reading", what, static_cast<int>(-n), ExitCode::usage);
        if (n == 0) break;
        have += static_cast<std::size_t>(n);
    }
    const auto* head = reinterpret_cast<const unsigned char*>(buf.data());
    const bool gzip = have >= 2 && head[0] == 0x1f && head[1] == 0x8b;
    std::unique_ptr<Inflater> inflater = gzip ? std::make_unique<Inflater>() : nullptr;
    const auto feed = [&](std::string_view text) -> Status { return scanner.feed(text); };
    auto consume = [&](std::string_view bytes) -> Status {
        Status s = inflater ? inflater->push(bytes, what, feed) : feed(bytes);
        if (s && hooks.after_read) hooks.after_read();
        return s;
    };
    if (have > 0)
        if (auto s = consume(std::string_view(buf.data(), have)); !s) return s;
    while (have >= 2) {  // fewer than two bytes means EOF was already seen
        const long n = read_some(fd, buf.data(), buf.size());
        if (n < 0) return os_error("reading", what, static_cast<int>(-n), ExitCode::usage);
        if (n == 0) break;
        if (auto s = consume(std::string_view(buf.data(), static_cast<std::size_t>(n))); !s) return s;
    }
    if (inflater)
        if (auto s = inflater->end(what); !s) return s;
    Status finished = scanner.finish();
    // Matches anchored at the end of the stream are only found now.
    if (finished && hooks.after_read) hooks.after_read();
    return finished;
}

Status scan_path(const std::string& path, LogScanner& scanner, const ScanHooks& hooks) {
    if (path == "-") return scan_fd(STDIN_FILENO, "standard input", scanner, hooks);
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return os_error("reading", path, errno, ExitCode::usage);
#ifdef POSIX_FADV_SEQUENTIAL
    (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    return scan_fd(fd.get(), path, scanner, hooks);
}

InputRelay::InputRelay(int in, StandardOutput& out) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        m_read_end = in;  // no pipe: the scan reads `in` itself, and nothing is relayed
        return;
    }
    m_read_end = fds[0];
    m_state->write_end = fds[1];
    m_thread = std::thread([in, &out, state = m_state] { copy(in, out, state); });
}

InputRelay::~InputRelay() {
    if (!m_thread.joinable()) return;
    // The scan is over: a thread still copying sees EPIPE on the pipe and only relays.
    ::close(m_read_end);
    // The input may never end (a command that fails before the scan, on a live pipe): the
    // thread then ends with the process, holding its own share of the state.
    if (m_state->done) m_thread.join();
    else m_thread.detach();
}

void InputRelay::copy(int in, StandardOutput& out, const std::shared_ptr<State>& state) {
    // The scan may stop reading: a write to the pipe is then EPIPE, not a signal.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    AlignedBuffer buf(std::size_t{64} << 10);
    bool scan_reading = true;
    for (;;) {
        const long n = read_some(in, buf.data(), buf.size());
        if (n <= 0) {
            if (n < 0) state->read_errno = static_cast<int>(-n);
            break;
        }
        const std::string_view bytes(buf.data(), static_cast<std::size_t>(n));
        out.write(bytes);
        for (std::string_view rest = bytes; scan_reading && !rest.empty();) {
            const auto w = ::write(state->write_end, rest.data(), rest.size());
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                scan_reading = false;
                break;
            }
            rest.remove_prefix(static_cast<std::size_t>(w));
        }
    }
    state->done = true;  // before the close that gives the scan its EOF: the relay then joins
    ::close(state->write_end);
}

Status InputRelay::status(std::string_view what) const {
    if (const int e = m_state->read_errno.load(); e != 0) return os_error("reading", what, e, ExitCode::usage);
    return ok_status();
}

}  // namespace rmcp::explain
