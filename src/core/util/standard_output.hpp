// The one way rmcp writes its standard output (docs/security.md, "Output"): every byte goes
// through StandardOutput, which checks every write(2); the first failure (ENOSPC on
// /dev/full, EPIPE from a reader that went away, EIO) is kept, later writes are dropped,
// and the CLI turns it into `rmcp: error: writing standard output: <cause>` and exit 3
// at the end of every command (src/cli/run_cli.cpp). Nothing else in src/ writes to fd 1:
// tests/unit/stdout_writer_check.py fails the build's tests if something does.
#pragma once

#include "util/error.hpp"

#include <fmt/format.h>

#include <optional>
#include <string_view>
#include <utility>

namespace rmcp {

class StandardOutput {
public:
    // `fd` is 1 for the process's writer; tests give another descriptor.
    explicit StandardOutput(int fd) : m_fd(fd) {}
    StandardOutput(const StandardOutput&) = delete;
    StandardOutput& operator=(const StandardOutput&) = delete;

    // Writes all of `bytes` (unbuffered: what rmcp prints keeps its order with stderr and
    // with a child's relayed output). SIGPIPE is blocked around the write, so a closed
    // reader is an EPIPE here, never rmcp's death; the child processes rmcp starts keep the
    // signal disposition they would have had.
    void write(std::string_view bytes);
    template <class... T>
    void print(fmt::format_string<T...> format, T&&... args) {
        write(fmt::format(format, std::forward<T>(args)...));
    }

    // -q's gate (src/cli/context.hpp, "-q and -v"): while held, write() drops what it is
    // given (the text report of a command run with -q); write_always() writes regardless
    // (the command's summary line). Failures are recorded the same way.
    void set_held(bool held) { m_held = held; }
    [[nodiscard]] bool held() const { return m_held; }
    void write_always(std::string_view bytes);

    // Checks what other code may have left in C's and C++'s stdout buffers (libraries):
    // flushes them and records a failure like any other. Called once, before exiting.
    void finish();

    // The errno of the first failed write, or 0.
    [[nodiscard]] int error() const { return m_error; }
    // "writing standard output: <cause>" (exit code 3) when a write failed.
    [[nodiscard]] std::optional<Error> failure() const;
    [[nodiscard]] int fd() const { return m_fd; }

private:
    int m_fd;
    int m_error = 0;
    bool m_held = false;
};

// The process's writer on fd 1.
StandardOutput& standard_output();

}  // namespace rmcp
