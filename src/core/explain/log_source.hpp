// Byte sources for the matcher: a whole file, stdin or descriptor read into a LogScanner,
// gzip data inflated transparently (detected by its magic bytes, any number of members).
#pragma once

#include "explain/matcher.hpp"
#include "util/error.hpp"
#include "util/standard_output.hpp"

#include <atomic>
#include <memory>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace rmcp::explain {

// What `rmcp explain -` adds to a scan (docs/explain.md, "Streaming"): `after_read` runs
// after each read(2) has been scanned, so that what the scanner found in it is announced
// while the input is still arriving. A plain scan has none and pays nothing for it (one test
// per read chunk).
struct ScanHooks {
    std::function<void()> after_read;
};

// A tee for a stream on `in` (standard input of `rmcp explain -`): a thread, started at
// construction, copies every byte to `out` the moment read(2) returns it, and into a pipe
// that the scan reads (fd()). The copy does not wait for the knowledge base to load or for the
// scanner: the relayed output stays live, byte for byte, whatever the scan costs. A scan that
// falls behind by more than a pipe's buffer holds the copy back until it catches up (the
// scanner runs at GB/s, a program's output far slower). A failed write to `out` is kept by
// StandardOutput (exit 3 at the end); the scan goes on.
class InputRelay {
public:
    InputRelay(int in, StandardOutput& out);
    ~InputRelay();  // joins the thread once the input ended; detaches it otherwise
    InputRelay(const InputRelay&) = delete;
    InputRelay& operator=(const InputRelay&) = delete;

    // What the scan reads; EOF once `in` ended (or failed). `in` itself when no pipe could be
    // made (relaying() is then false).
    [[nodiscard]] int fd() const { return m_read_end; }
    [[nodiscard]] bool relaying() const { return m_thread.joinable(); }
    // The error reading `in` ("reading standard input: <cause>"), once fd() gave EOF.
    [[nodiscard]] Status status(std::string_view what) const;

private:
    // Shared with the thread, which may outlive the relay (see the destructor).
    struct State {
        int write_end = -1;
        std::atomic<int> read_errno{0};
        std::atomic<bool> done{false};
    };
    static void copy(int in, StandardOutput& out, const std::shared_ptr<State>& state);
    int m_read_end = -1;
    std::shared_ptr<State> m_state = std::make_shared<State>();
    std::thread m_thread;
};

// `fd` is read until EOF and not closed; `what` names the source in errors
// ("reading <what>: <cause>").
Status scan_fd(int fd, std::string_view what, LogScanner& scanner, const ScanHooks& hooks = {});
// Opens and scans a file; "-" is stdin. Errors carry ExitCode::usage (unreadable log).
Status scan_path(const std::string& path, LogScanner& scanner, const ScanHooks& hooks = {});

}  // namespace rmcp::explain
